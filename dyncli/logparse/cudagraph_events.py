"""The CUDA-graph events (``dyncli.logparse.cudagraphs`` makes them from logs and traces).

Frozen, with the common fields of ``dyncli.logparse.events.Event``; every field beyond them is
defaulted, so that a release that drops a detail still yields the event.
"""

from __future__ import annotations

from dataclasses import dataclass

from dyncli.logparse import events as ev

# torch's reasons, by the words they hold (cudagraph_utils, compile_fx, output_code, lowering)
_SKIP_KINDS = (
    ("cudagraph_dynamic_shape_rerecord_limit", "dynamic-shape-rerecord-limit"),
    ("cudagraph_skip_dynamic_graphs", "skip-dynamic-graphs"),
    ("max re-recording limit", "rerecord-limit"),
    ("cudagraph-managed input re-recording threshold", "managed-input-rerecord"),
    ("mutat", "mutated-inputs"),
    ("cpu device", "device"), ("multiple devices", "device"), ("non-cuda", "device"),
    ("multple devices", "device"),  # (torchinductor's own spelling, 2022: torchdynamo#748)
    ("incompatible op", "incompatible-op"), ("control flow operator", "incompatible-op"),
    ("index_put_", "incompatible-op"), ("sparsity", "incompatible-op"),
    ("unbacked", "unbacked"), ("striding", "striding"), ("non-Tensor inputs", "non-tensor-inputs"),
)


@dataclass(frozen=True, kw_only=True)
class CudagraphTree(ev.Event):
    """A graph meets a new size: ``Recording cudagraph tree for symint key 4`` (``key`` "" for
    ``graph without symints``). Its CUDA graph is recorded on a later call (after a warmup)."""

    key: str = ""


@dataclass(frozen=True, kw_only=True)
class CudagraphWarmup(ev.Event):
    """``Running warmup …``: the first run of a new tree function (before 2.11 ``function`` is
    the tree manager's function id, unique per size; from 2.11 the graph's name)."""

    function: str = ""
    mode: str = ""


@dataclass(frozen=True, kw_only=True)
class CudagraphRecording(ev.Event):
    """One CUDA graph recorded (``Recording function…``): ``ints`` are the int inputs the
    record line shows (the size key), ``shapes`` its tensor inputs' (index, sizes); both empty
    before torch 2.11, which prints no inputs."""

    function: str = ""
    graph_id: int | None = None
    mode: str = ""
    ints: tuple[int, ...] = ()
    shapes: tuple[tuple[int, tuple[int, ...]], ...] = ()


@dataclass(frozen=True, kw_only=True)
class CudagraphRerecord(ev.Event):
    """``Re-recording function=…, reason=…`` (2.11+, debug): a size recorded again."""

    function: str = ""
    mode: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class CudagraphSkip(ev.Event):
    """A graph (or a call) runs without CUDA graphs, and why; ``source``: log or trace."""

    reason: str
    kind: str = "other"
    user: ev.UserLoc | None = None
    source: str = "log"
    # frames of its stack in code torch resumed after a graph break (torch_dynamo_resume_in_f_at_N:
    # the stack's first frame is the compiled one, ultralytics#21975), each proving a break
    resumes: tuple[ev.UserLoc, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CudagraphLimit(ev.Event):
    """2.15: ``forward graph hit cudagraph_dynamic_shape_rerecord_limit=8``: new sizes run eager."""

    limit: int | None = None
    mode: str = ""


@dataclass(frozen=True, kw_only=True)
class CudagraphManySizes(ev.Event):
    """The warning ``… We have observed N distinct sizes …`` (2.5+)."""

    sizes: int = 0


@dataclass(frozen=True, kw_only=True)
class CudagraphPartitions(ev.Event):
    """``Created N graph partitions: A cudagraphable, B non-cudagraphable``, or one op kept out
    of them and why (``op3: reason=…``: ``reasons`` holds it, the counts are 0)."""

    cudagraphable: int = 0
    other: int = 0
    reasons: tuple[str, ...] = ()
    ops: tuple[str, ...] = ()  # the IR of each op kept out (``AssertScalar``), beside its reason


@dataclass(frozen=True, kw_only=True)
class CudagraphRecordTime(ev.Event):
    """A ``CUDAGraphNode.record`` span of the trace: one recording and how long it took."""

    seconds: float
    backward: bool = False


@dataclass(frozen=True, kw_only=True)
class CudagraphError(ev.Event):
    """An error (or warning) of the CUDA-graph trees while graphs run (cudagraph_trees.py,
    raised or warned: no logger prints it), of a ``kind`` of ``ERROR_KINDS``; ``user``: the
    innermost frame of the stack torch puts in it (the line whose output was overwritten);
    ``raised``: the log shows it raised (an exception's class before it, as a traceback ends in
    it, or ComfyUI's head for an exception): the program stopped there. Not where it shows a
    warning, or torch's words alone (quoted, in a table cell, an application's log line)."""

    kind: str
    message: str = ""
    user: ev.UserLoc | None = None
    raised: bool = False


# torch's words (_inductor/cudagraph_trees.py, 2.3-2.15) -> the kind of the error
ERROR_KINDS = (
    ("accessing gradient tensor output of CUDAGraphs that has been overwritten", "overwritten-grad"),
    ("accessing tensor output of CUDAGraphs that has been overwritten", "overwritten"),
    ("graph recording observed an input tensor deallocate", "deallocated-while-recording"),
    ("tensor(s) in the cudagraph pool not tracked as outputs", "untracked-pool-tensors"),
    ("Unable to hit fast path of CUDAGraphs", "pending-backward"),
    # check_static_inputs_are_stable's torch._check (2.3: "… changed from A to B"; 2.4 on:
    # "static input data pointer changed.", then "input name: primals_2. data pointer changed
    # from A to B. input stack trace: …" per input, pytorch#127145): a parameter or buffer the
    # graph was recorded with has a new address; raised only where the node does not re-record
    # for it (inline_inbuilt_nn_modules and triton.cudagraph_support_input_mutation off, the
    # first on by default from 2.5; a later torch always re-records: rerecord_if_static_inputs_change
    # = True)
    ("static input data pointer changed", "static-input-moved"),
    # c10's CUDAAllocator::checkPoolLiveAllocations of an allocator backend other than the
    # native one ("cudaMallocAsync does not yet support …", "pluggable …": its name() first),
    # which torch calls only from the trees' check_memory_pool (torch._C.
    # _cuda_checkPoolLiveAllocations, under triton.slow_path_cudagraph_asserts, on by default)
    ("does not yet support checkPoolLiveAllocations", "allocator-no-pool-check"),
)


EVENTS: tuple[type[ev.Event], ...] = (
    CudagraphTree, CudagraphWarmup, CudagraphRecording, CudagraphRerecord, CudagraphSkip,
    CudagraphLimit, CudagraphManySizes, CudagraphPartitions, CudagraphRecordTime,
    CudagraphError)


def skip_kind(reason: str) -> str:
    """The kind of a skip reason (``mutated-inputs``, ``device``, ``incompatible-op``…)."""
    head = reason[:400]
    return next((kind for words, kind in _SKIP_KINDS if words in head), "other")

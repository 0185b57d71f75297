"""Errors that come as a compiled graph runs under CUDA graphs, not while it compiles (paste
hunt 16): suppress_errors wraps frame conversion only (torch 2.15 _dynamo/convert_frame.py), so
it is never their fix; compiling without CUDA graphs is. The pastes are in tests/data/pasted
(read only: CUDA graphs need CUDA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.cudagraph_advice import MODES, WITHOUT_CUDAGRAPHS
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.cudagraph_events import CudagraphError
from dyncli.logparse.cudagraphs import error_start
from dyncli.logparse.events import Event
from dyncli.logparse.textlog import parse_lines
from dyncli.logparse.torchtree import is_compiler_file

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"
_ALLOCATOR = ("cudaMallocAsync does not yet support checkPoolLiveAllocations. If you need it, "
              "please file an issue describing your use case.")


def _read(line: str) -> list[Event]:
    """The events the parser makes of ``line`` alone (error_start's raised carried as the
    parser carries it to runtime_error)."""
    return [e for e in parse_lines([line.encode()]) if isinstance(e, CudagraphError)]


@pytest.mark.parametrize("line,raised", [
    (f"RuntimeError: {_ALLOCATOR}", True),
    (f"!!! Exception during processing !!! {_ALLOCATOR}", True),  # ComfyUI's console
    (f"- **Exception Message:** {_ALLOCATOR}", True),  # ComfyUI's error report
    (f"> {_ALLOCATOR}", False),  # a quote (ComfyUI-WanVideoWrapper#1584)
    (_ALLOCATOR, False),
])
def test_the_allocators_message_is_read_behind_the_heads_that_print_it(
        line: str, raised: bool) -> None:
    """The message is torch's words whatever the head; the head says whether it was raised."""
    start = error_start(line.encode())
    assert start is not None and (start.text, start.raised) == (_ALLOCATOR, raised)
    (e,) = _read(line)
    assert isinstance(e, CudagraphError)
    assert (e.kind, e.message, e.raised) == ("allocator-no-pool-check", _ALLOCATOR, raised)


_OVERWRITTEN = ("Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
                "subsequent run.")


@pytest.mark.parametrize("line,raised", [
    (f"RuntimeError: {_OVERWRITTEN}", True),  # a traceback's last line (gpt-fast#232)
    (f"torch.AcceleratorError: {_OVERWRITTEN}", True),
    (f"  <td>{_OVERWRITTEN}</td>", False),  # a table cell (minerva-benchmarks#41)
    (f"ERROR:app.routes:Request failed: {_OVERWRITTEN}", False),  # a server that goes on
    (f"{_OVERWRITTEN}", False),
    # torch's warning (2.10's wording) is never a raise, whatever file prints it
    ("/x/torch/_inductor/cudagraph_trees.py:3291: UserWarning: Unable to hit fast path of "
     "CUDAGraphs because of pending, uninvoked backwards.", False),
])
def test_an_error_is_raised_only_where_its_exception_shows(line: str, raised: bool) -> None:
    start = error_start(line.encode())
    assert start is not None and start.raised is raised
    (e,) = _read(line)
    assert isinstance(e, CudagraphError)
    assert e.raised is raised
    assert not e.message.startswith(("RuntimeError", "torch.", "UserWarning", "ERROR"))


def test_prose_about_the_allocators_message_is_not_the_error() -> None:
    assert error_start(f"I also get {_ALLOCATOR}".encode()) is None


@pytest.mark.parametrize("name,backend", [
    ("comfyui_yue-11", "cudaMallocAsync"), ("comfyui-6831", "cudaMallocAsync"),
    ("pytorch-163257", "pluggable")])
def test_an_allocator_without_the_pool_check_is_a_cudagraph_error_of_its_own(
        name: str, backend: str) -> None:
    """ComfyUI's message alone (refused as "not a torch log" before round 21) and the
    traceback that ends in it (a crash of the compile, "suppress_errors", before): the
    CUDA-graph trees under an allocator backend other than the native caching allocator."""
    diag = diagnose_logs([PASTED / f"{name}.log"])
    assert not diag.compile_crashes
    assert diag.cudagraphs is not None
    (x,) = diag.cudagraphs.errors
    assert x.kind == "allocator-no-pool-check" and x.user is None
    assert x.message.startswith(f"{backend} does not yet support checkPoolLiveAllocations")
    (a,) = diag.suggestions
    assert a.kind is AdviceKind.CUDAGRAPH_ERROR
    assert "not while compiling" in a.message and "native caching allocator" in a.message
    assert a.fix.startswith("use the native caching allocator in that process: take "
                            "backend:cudaMallocAsync out of PYTORCH_CUDA_ALLOC_CONF (ComfyUI "
                            "sets it unless started with --disable-cuda-malloc")
    assert a.fix.endswith(f"or compile without CUDA graphs ({MODES})")
    assert "suppress_errors" not in a.fix
    assert diag.causes[0].line().startswith("[CUDA-graph error]")
    (row,) = diag.to_json()["cudagraphs"]["errors"]
    assert row["kind"] == "allocator-no-pool-check"


def test_a_traceback_through_the_cudagraph_trees_ran_and_is_not_a_failed_compile() -> None:
    """ComfyUI#6831's stack, cut at add_function: the trees are built at the compiled graph's
    first call. The fix is the graphs off, never suppress_errors = True (which does nothing)."""
    diag = diagnose_logs([PASTED / "comfyui-6831-b.log"])
    (c,) = diag.compile_crashes
    assert c.cudagraph_run and c.cut
    (a,) = diag.suggestions
    assert a.kind is AdviceKind.COMPILE_CRASH and a.ran
    assert "came as the compiled graph ran under CUDA graphs (not while compiling)" in a.message
    assert a.fix.startswith("the error came as the compiled graph ran under CUDA graphs, not "
                            "while compiling, so torch._dynamo.config.suppress_errors (which "
                            f"covers compiling only) does not apply: {WITHOUT_CUDAGRAPHS}")
    assert '"triton.cudagraphs": False' in a.fix and "checkPoolLiveAllocations" in a.fix
    assert "suppress_errors = True" not in a.fix
    cause = diag.causes[0]
    assert cause.stops and cause.line().startswith("[CUDA-graph error] ")
    assert diag.to_json()["compile_crashes"][0]["cudagraph_run"] is True


def test_a_kernels_launch_in_the_cudagraph_warmup_asks_for_its_exception() -> None:
    """ultralytics#21998: the kernel's launch inside the trees' warm-up (triton-windows'
    OverflowError past the excerpt): said as a launch, CUDA graphs off only to tell whether
    they play a part, never suppress_errors = True."""
    diag = diagnose_logs([PASTED / "ultralytics-21998-tb.log"])
    (c,) = diag.compile_crashes
    assert c.cudagraph_run and c.at is not None and c.at.function == "run"
    (a,) = diag.suggestions
    assert "a kernel inductor generated raised as it launched" in a.fix
    assert "triton-windows" in a.fix and a.fix.endswith(
        f"to tell whether CUDA graphs play a part, {WITHOUT_CUDAGRAPHS}")
    assert "suppress_errors = True" not in a.fix
    # the module inductor wrote (TORCHINDUCTOR_CACHE_DIR moved it out of torchinductor_<user>/)
    # is never the user's line: every frame of the excerpt is torch's or generated
    assert c.user is None and "called from" not in diag.causes[0].findings[0].message
    assert c.deepest is not None and c.deepest.file.endswith("triton_heuristics.py")


@pytest.mark.parametrize("path,generated", [
    (r"C:\tools\train\temp\inductor\gg\cggv7ohpsvpnb5ijrbgckcrbtl4tnuf65mdh2q7twndn2t6ghlmr.py", True),
    ("/tmp/cache/ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrs.py", True),
    ("/tmp/torchinductor_u/ab/cabzz.py", True),  # (inductor's default directory, any name)
    ("/home/u/ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrs.py", True),
    ("/home/u/ab/cxyzdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrs.py", False),  # not its dir
    ("/home/u/proj/ab/cab.py", False), ("/home/u/proj/model.py", False)])
def test_code_inductor_wrote_is_the_compiler_s_wherever_its_cache_is(path: str, generated: bool) -> None:
    assert is_compiler_file(path) is generated


def test_the_crash_under_cudagraphs_ranks_before_recompiles(tmp_path: Path) -> None:
    """It stopped the program: first, before a recompile limit the same log shows."""
    log = tmp_path / "run.log"
    log.write_bytes((PASTED / "comfyui-8342.log").read_bytes()
                    + (PASTED / "comfyui-6831-b.log").read_bytes())
    diag = diagnose_logs([log])
    assert len(diag.causes) >= 2
    first = diag.causes[0]
    assert first.stops and [a.kind for a in first.findings] == [AdviceKind.COMPILE_CRASH]


def test_a_compile_that_raised_keeps_suppress_errors() -> None:
    """keras-22282: dynamo's own frame raised while compiling: suppress_errors applies."""
    diag = diagnose_logs([PASTED / "keras-22282.log"])
    (c,) = diag.compile_crashes
    assert not c.cudagraph_run
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "suppress_errors = True" in a.fix and not a.ran


def _log(tmp_path: Path, *names: str) -> Path:
    log = tmp_path / "run.log"
    log.write_bytes(b"\n".join((PASTED / name).read_bytes() for name in names))
    return log


@pytest.mark.parametrize("name", ["gpt-fast-232.log", "pytorch-183313.log", "senpai-1597.log",
                                  "comfyui_yue-11.log", "pytorch-163257.log"])
def test_a_cudagraph_error_the_log_shows_raised_ranks_first_as_a_stop(
        tmp_path: Path, name: str) -> None:
    """The paste shows its exception (RuntimeError, a traceback's end, ComfyUI's exception
    heads): the program stopped there, so it is first, before a recompile limit's 8 compiles
    that the same log shows, as a compile's crash would be."""
    diag = diagnose_logs([_log(tmp_path, "comfyui-8342.log", name)])
    assert diag.cudagraphs is not None and all(x.raised for x in diag.cudagraphs.errors)
    assert diag.to_json()["cudagraphs"]["errors"][0]["raised"] is True
    first = diag.causes[0]
    assert first.stops and [a.kind for a in first.findings] == [AdviceKind.CUDAGRAPH_ERROR]
    (a,) = first.findings
    assert a.ran and a.message.startswith("the program stopped: CUDA graphs: ")
    assert first.line().startswith("[CUDA-graph error] the program stopped: ")
    assert any(c.recompiles or c.compiles for c in diag.causes[1:])


@pytest.mark.parametrize("name", ["pytorch-176846.log", "simpletuner-3155.log",
                                  "docker-fish-speech-server-4.log", "minerva-benchmarks-41.log",
                                  "comfyui-wanvideowrapper-1584.log"])
def test_a_cudagraph_error_warned_or_said_without_its_exception_keeps_its_place(
        tmp_path: Path, name: str) -> None:
    """A warning (the slow path: the run goes on), torch's words alone, a table cell, a
    server's log line, a quote: nothing shows that the program stopped; the limit's compiles
    rank first, as before."""
    diag = diagnose_logs([_log(tmp_path, "comfyui-8342.log", name)])
    assert diag.cudagraphs is not None and diag.cudagraphs.errors
    assert not any(x.raised for x in diag.cudagraphs.errors)
    assert not any(c.stops for c in diag.causes)
    assert diag.causes[0].compiles and not any(
        a.kind is AdviceKind.CUDAGRAPH_ERROR for a in diag.causes[0].findings)
    errors = [a for a in diag.suggestions if a.kind is AdviceKind.CUDAGRAPH_ERROR]
    assert errors and not any(a.ran or "stopped" in a.message for a in errors)

"""Paste hunt 33b (round 33, CUDA graphs and compile modes): where torch's stack in the
overwritten-output error ends, and the AOTAutograd cache's record of an entry it wrote.

The CUDA-graph trees' overwritten-output error carries the stack of the tensor that was read
after a later run overwrote it, between "Stack trace:" and "To prevent overwriting, …"
(cudagraph_trees.py, 2.3-2.15). A paste that puts the message before the program's traceback
(VS Code's exception box, diffusers#7420) has the program's frames after those words: they are
not torch's stack, and the line is the innermost frame of torch's.
The AOTAutograd cache logs "Writing AOTAutograd cache entry to …" (INFO, autograd_cache.py
2.5-2.15) beside its cache miss; it was "not understood", so a log of a compile and its CUDA
graphs said it could not tell whether anything was left to fix (pytorch#132294)."""

from __future__ import annotations

from pathlib import Path

from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import cudagraphs as cg

_TORCH_TAIL = ("To prevent overwriting, clone the tensor outside of torch.compile() or call "
               "torch.compiler.cudagraph_mark_step_begin() before each model invocation.")


def test_frames_after_torchs_words_are_the_programs_not_the_overwritten_line() -> None:
    """diffusers#7420: the message, then main.py's frame of the traceback; the line is
    transformers' CLIP forward (it was main.py:67, the pipeline's call)."""
    diag = diagnose_logs([PASTED / "diffusers-7420.log"])
    assert diag.cudagraphs is not None
    (error,) = diag.cudagraphs.errors
    assert error.kind == "overwritten" and error.user is not None
    assert (error.user.file.endswith("transformers/models/clip/modeling_clip.py"),
            error.user.line, error.user.function) == (True, 1227, "forward")
    assert not error.raised  # (its exception line is cut before torch's words)


def test_the_stack_is_torchs_up_to_its_words_in_every_layout() -> None:
    """The innermost frame before torch's words, whether the words follow the code line on its
    line (2.3-2.15 as printed) or a paste's wrap put them on a line of their own; with no words
    (a cut message) every frame the message holds is torch's, as before."""
    head = ("Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
            "subsequent run. Stack trace: File \"/m/model.py\", line 7, in forward")
    after = ['  File "/app/main.py", line 67, in <module>', "    image = pipe("]
    for lines in ([head, "    y = self.proj(x). " + _TORCH_TAIL, *after],
                  [head, "    y = self.proj(x).", _TORCH_TAIL, *after],
                  [head, "    y = self.proj(x)"]):
        (event,) = cg.runtime_error(lines, {"line": 1})
        assert isinstance(event, cg.CudagraphError)
        assert event.user is not None and (event.user.file, event.user.line) == ("/m/model.py", 7)
    # (and a cut message keeps reading the frames it has, the innermost last)
    (event,) = cg.runtime_error([head, "    y = f(x)", *after], {"line": 1})
    assert isinstance(event, cg.CudagraphError)
    assert event.user is not None and event.user.line == 67


def test_torchs_words_cannot_slow_the_stack_down(tmp_path: Path) -> None:
    """A hostile message: dots and blanks where torch's words would be, never them: linear in
    the message's length, and read as the error it is."""
    head = ("Error: accessing tensor output of CUDAGraphs that has been overwritten by a "
            "subsequent run. Stack trace: ")

    def make(n: int) -> list[str]:
        return [head + ".      " * (n // 7)]

    assert_linear(lambda lines: cg.runtime_error(lines, {"line": 1}), make, 56_000)
    diag = diagnose_text(tmp_path, make(56_000)[0] + "\n")
    assert diag.cudagraphs is not None and [x.kind for x in diag.cudagraphs.errors] == ["overwritten"]


def test_the_aotautograd_caches_entry_is_known_and_leaves_nothing_unread() -> None:
    """pytorch#132294: the cache's miss, the entry it wrote, the CUDA-graph tree and its
    warmup: every torch record read (the entry was "not understood", so the run said it could
    not tell whether anything was left to fix)."""
    diag = diagnose_logs([PASTED / "pytorch-132294.log"])
    assert diag.stats.unread == 0
    assert [(f.frame_id, f.compiles) for f in diag.frames] == [("2", 1)]
    assert diag.cudagraphs is not None and diag.cudagraphs.tree_lines == 1


def test_the_aotautograd_caches_bypass_is_known(tmp_path: Path) -> None:
    """Its other INFO beside a miss (autograd_cache.py 2.5-2.15: "Bypassing autograd cache due
    to: %s", the reason an exception's text, two lines in pytorch#192555's)."""
    text = ("I0813 11:03:02.344000 1005502 torch/_functorch/_aot_autograd/autograd_cache.py:"
            "1036] [0/0] Bypassing autograd cache due to: Unsupported call_function target "
            "<function _enter_autocast>.\n    Function module: torch.amp.autocast_mode\n")
    assert diagnose_text(tmp_path, text).stats.unread == 0


def test_a_rank_tag_without_its_colon_is_the_ranks_traceback() -> None:
    """pytorch#148439: "[rank3]   File …" (the thread's glog lines lost the colon too,
    "[rank3]V0304 …"): rank 3's traceback, cut as the CUDA-graph trees recorded a graph; it was
    "not a torch log"."""
    diag = diagnose_logs([PASTED / "pytorch-148439.log"])
    (crash,) = diag.compile_crashes
    assert crash.rank == 3
    assert diag.causes[0].stops and "CUDA graphs" in diag.causes[0].title


def test_only_torchs_rank_tag_loses_its_colon(tmp_path: Path) -> None:
    """A program's own bracketed word before a blank ("[step3] …") is its text, not a rank's
    tag: a traceback behind it is not untagged, and nothing is given a rank."""
    frames = ('  File "/usr/local/lib/python3.10/site-packages/torch/_inductor/cudagraph_trees.py",'
              " line 2004, in record_function\n    node = CUDAGraphNode(\n")
    tagged = "".join(f"[rank3] {line}\n" for line in frames.splitlines())
    assert [c.rank for c in diagnose_text(tmp_path, tagged).compile_crashes] == [3]
    other = "".join(f"[step3] {line}\n" for line in frames.splitlines())
    diag = diagnose_text(tmp_path, "I0304 17:18:44.752000 1 torch/_dynamo/x.py:1] hi\n" + other)
    assert not diag.compile_crashes


# pytorch#132043's Case #2 as the store's excerpt has it (cut inside its last code line)
_CASE_2 = (
    "static input data pointer changed.\n"
    "input name: primals_2. data pointer changed from 139852509086720 to 139852509088256. "
    "input stack trace: None\n"
    "input name: primals_3. data pointer changed from 139852509085696 to 139852509087744. "
    'input stack trace:   File "/dev/shm/uid-30083/f61ee184-seed-nspid4026560782_cgpid769179-'
    'ns-4026560865/caffe2/test/inductor/test_cudagraph_trees.py", line 1825, in forward\n'
    "    self.static_tensor.add_(torch.ones((2, 2), de\n")


def test_a_static_inputs_new_address_is_an_error_of_the_trees(tmp_path: Path) -> None:
    """pytorch#132043: check_static_inputs_are_stable's message, each moved input on a line of
    its own at the margin with the stack where the graph reads it ("None" where it has none):
    one error, at the innermost frame of those stacks, with the fix of an in-place update; it
    was "not a torch log". 2.3's one-line form ("… changed from A to B", its format string)
    too, raised as torch._check raises it."""
    for diag in (diagnose_logs([PASTED / "pytorch-132043.log"]), diagnose_text(tmp_path, _CASE_2)):
        assert diag.cudagraphs is not None
        (error,) = diag.cudagraphs.errors
        assert (error.kind, error.message) == ("static-input-moved", "static input data pointer changed.")
        assert error.user is not None and (error.user.line, error.user.function) == (1825, "forward")
        assert not error.raised
        assert "copy_(new)" in diag.suggestions[0].fix
    old = "RuntimeError: static input data pointer changed from 139852509086720 to 139852509088256\n"
    (error,) = diagnose_text(tmp_path, old).cudagraphs.errors  # type: ignore[union-attr]
    assert (error.kind, error.raised, error.user) == ("static-input-moved", True, None)


def test_a_nightlys_recording_with_the_graphs_name_and_inputs_is_a_recording() -> None:
    """pytorch#170218's example: "Recording function 1 (f) of graph recording id 1, inputs:
    [0]: int(3), …" and "Running warmup of function 1 (f)" (a Dec 2025 nightly, before 2.11's
    "function=" form): one recording of the size key 3 (it was none)."""
    events = cg.text_record(["Recording function 1 (f) of graph recording id 1, inputs: [0]: "
                             "int(3), [1]: Tensor(size=[3], stride=(1,), dtype=torch.float32, "
                             "data_ptr=0x7F4763000200)", "Running warmup of function 1 (f)"],
                            {"line": 1})
    record, warmup = events
    assert isinstance(record, cg.CudagraphRecording) and isinstance(warmup, cg.CudagraphWarmup)
    assert (record.function, record.graph_id, record.ints, record.shapes) == ("1", 1, (3,), ((1, (3,)),))
    assert warmup.function == "1"
    diag = diagnose_logs([PASTED / "pytorch-170218.log"])
    assert diag.cudagraphs is not None
    assert [(r.graph_id, r.size) for r in diag.cudagraphs.recordings] == [(1, "symint 3")]

"""torch's own output that needs no fix, read as notes (paste hunt 16, problems 3-5 and 8):
max-autotune's tuning report and the candidates that failed while tuning (inductor's
select_algorithm.py writes them itself, in every release's form), a CUDA graph captured empty
(CUDAGraph.cpp's warning), too few SMs for inductor's GEMM templates (utils.is_big_gpu); and
recompiles that only inductor's compile ids prove, a note rather than what to fix first. The
real pastes are in tests/data/pasted (sam2-501, openpi-654, heavyball-30, pytorch-150980,
pytorch-149653, kernl-331, zonos-168, …)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

from linear_time import assert_linear
from rich.console import Console

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.html import render_html
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.render import render_terminal
from dyncli.logparse import events as ev
from dyncli.logparse.textautotune import line_kind
from dyncli.logparse.textlog import TextLogParser

_HEAD = "E0912 11:54:57.366000 1121181 torch/_inductor/select_algorithm.py:2100] [7/0] "


def _events(text: str) -> tuple[list[ev.Event], ev.ParseStats]:
    stats = ev.ParseStats()
    return list(TextLogParser(stats).parse(text.encode().splitlines())), stats


def _notes(text: str) -> list[ev.TorchNote]:
    return [e for e in _events(text)[0] if isinstance(e, ev.TorchNote)]


def _read(tmp_path: Path, text: str) -> Diagnosis:
    log = tmp_path / "run.log"
    log.write_text(text)
    return diagnose_logs([log])


def _said(diag: Diagnosis) -> str:
    out = io.StringIO()
    render_terminal(diag, console=Console(file=out, width=200, color_system=None))
    return out.getvalue()


# each release's form of the report (select_algorithm.py: 2.3 :1069-1084, 2.6 :1804-1821,
# 2.11 :4349-4378 with strides, dtypes and the stats at :4660, 2.15 :6137-6166 with prescreening)
_REPORTS = {
    "2.3": """AUTOTUNE convolution(30x256x64x64, 256x256x3x3)
  convolution 1.3814 ms 100.0%
  triton_convolution_1839 3.9660 ms 34.8%
SingleProcess AUTOTUNE takes 6.9797 seconds
""",
    "2.6": """AUTOTUNE mm(4096x2048, 2048x256)
  mm 0.0154 ms 100.0%
  triton_mm_4780 0.0162 ms 95.4% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=128, num_stages=4, num_warps=4
  triton_mm_4781 inf ms 0.0% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=256, num_stages=5, num_warps=8
  triton_mm_4782 0.0000 ms <DIVIDED BY ZERO ERROR>
SubProcess AUTOTUNE benchmarking takes 0.9773 seconds and 0.6039 seconds precompiling for 17 choices
""",
    "2.15": """Autotune Choices Stats:
{"num_choices": 20, "num_triton_choices": 19, "best_kernel": "mm", "best_time": 0.38}
AUTOTUNE mm(3840x1152, 1152x49136)
strides: [1, 3840], [49152, 1]
dtypes: torch.bfloat16, torch.bfloat16
  mm 0.3848 ms 100.0%
  triton_mm_16 0.6288 ms 61.2% ACC_TYPE='tl.float32', ALLOW_TF32=False, BLOCK_K=32, num_stages=3, num_warps=4
SingleProcess AUTOTUNE benchmarking takes 1.2000 seconds and 0.5000 seconds precompiling for 20 choices and 0.1000 seconds prescreening
""".replace("100.0%\n", "100.0% \n"),  # (a row without a description keeps its blank)
}


def test_every_releases_tuning_report_is_read_whole_as_one_note(tmp_path: Path) -> None:
    for release, text in _REPORTS.items():
        events, stats = _events(text)
        assert stats.unrecognized == 0 and stats.recognized == stats.lines, release
        notes = [e for e in events if isinstance(e, ev.TorchNote)]
        assert {e.kind for e in notes} == {"autotune"}, release
        assert [e.what for e in notes if e.what != "stats"] == ["table", "summary"], release
        diag = _read(tmp_path, text)  # a paste of the report alone is torch's output
        (note,) = diag.notes
        assert note.kind is AdviceKind.AUTOTUNE_OUTPUT and not diag.suggestions, release
        assert not diag.causes, release
        assert "TORCHINDUCTOR_AUTOTUNE_NUM_CHOICES_DISPLAYED=0" in note.fix
        assert "autotune_num_choices_displayed = 0 (torch 2.6 on" in note.fix
        assert 'id="notes"' in render_html(diag), release
        assert ("TORCHINDUCTOR_MAX_AUTOTUNE_REPORT_CHOICES_STATS=0" in note.fix) == (
            release == "2.15"), release
        assert "Nothing to fix" in _said(diag), release


def test_a_table_begun_before_the_paste_and_a_log_viewers_line_numbers() -> None:
    """sam2-592 begins inside a table; heavyball#30's viewer put a line number before each
    line: a row outside a table is a table of its own, the numbers are not part of torch's."""
    notes = _notes("  triton_mm_769 0.0285 ms 97.9% ACC_TYPE='tl.float32', num_warps=2\n"
                   "  triton_mm_770 0.0288 ms 97.0% ACC_TYPE='tl.float32', num_warps=2\n")
    assert [e.what for e in notes] == ["table"]
    assert line_kind(b"  36   triton_bmm_36 0.0072 ms 100.0% ACC_TYPE='tl.float32'", False) == "row"
    assert line_kind(b"  43 AUTOTUNE bmm(1x256x256, 1x256x256)", False) == "table"
    assert line_kind(b"  38 SingleProcess AUTOTUNE benchmarking takes 3.2068 seconds", False) \
        == "summary"


def test_prose_about_the_report_is_not_the_report() -> None:
    for line in (b"I see AUTOTUNE mm(1x2, 2x3) lines everywhere", b"AUTOTUNE is slow",
                 b"the step took 0.0154 ms", b"strides: [1, 2]", b"SingleProcess AUTOTUNE",
                 b"Autotune Choices Stats: are noisy"):
        assert line_kind(line, False) is None, line
    assert line_kind(b"strides: [1, 2]", True) == "head"  # (only under a table's head)


def test_a_candidate_that_failed_is_skipped_and_said_so() -> None:
    """The logger's records (2.11 :3895-3940, 2.15 :5496-5540; 2.6 :1478's precompile): each
    failed candidate gets an infinite time, tuning goes on; openpi#654's "out of resources"."""
    text = (f"{_HEAD}Runtime error during autotuning: \n"
            f"{_HEAD}No valid triton configs. OutOfResources: out of resource: shared memory, "
            "Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.. \n"
            f"{_HEAD}Ignoring this choice.\n"
            "W0306 14:40:15.990000 17 torch/_inductor/select_algorithm.py:1517] [2/0] out of "
            "resource: shared memory, Required: 262144, Hardware limit: 101376. Reducing block "
            "sizes or `num_stages` may help.\n"
            "[rank0]:E0410 07:53:02.558000 255947 torch/_inductor/select_algorithm.py:1905] [15/4] "
            "Exception No valid triton configs. for benchmark choice TritonTemplateCaller(x)\n"
            "W0410 07:53:03.000000 255947 torch/_inductor/select_algorithm.py:4424] [15/4] All "
            "autotuning benchmarks failed (timing=inf). Falling back to ExternKernelCaller: mm\n")
    events, stats = _events(text)
    assert stats.unrecognized == 0
    notes = [e for e in events if isinstance(e, ev.TorchNote)]
    assert [e.what for e in notes] == ["failed", "failed", "failed", "fallback"]
    assert notes[0].text.startswith("Runtime error during autotuning: No valid triton configs.")


def test_the_failures_note_says_they_are_benign(tmp_path: Path) -> None:
    diag = _read(tmp_path, f"{_HEAD}Runtime error during autotuning: \n"
                           f"{_HEAD}No valid triton configs.\n{_HEAD}Ignoring this choice.\n")
    (note,) = diag.notes
    assert "1 candidate(s) failed" in note.message and "tunes on" in note.message
    assert 'TORCH_LOGS="-inductor"' in note.fix
    assert not diag.causes and not diag.stats.unread


def test_compile_ids_only_inductors_records_carry_are_a_note_not_what_to_fix(
        tmp_path: Path) -> None:
    """pytorch#150980: [15/4] on select_algorithm's record proves five compiles of frame 15;
    ranked first, "fix the recompiles" pointed away from the paste (SGLang compiles a graph per
    batch size). The count stays; its finding is a note."""
    text = ("SingleProcess AUTOTUNE benchmarking takes 0.3201 seconds and 3.5530 seconds "
            "precompiling for 18 choices\n"
            "[rank0]:E0410 07:53:02.558000 255947 torch/_inductor/select_algorithm.py:1905] "
            "[15/4] Exception No valid triton configs.\n")
    diag = _read(tmp_path, text)
    assert diag.compiles == 5 and diag.recompiles_proven == 4
    assert diag.frames[0].backend_proven == 5  # (the first compile too)
    assert not diag.causes and not diag.suggestions
    assert [a.kind for a in diag.notes] == [AdviceKind.AUTOTUNE_OUTPUT, AdviceKind.UNEXPLAINED]
    assert "Only inductor's records carry those ids" in diag.notes[1].message
    said = _said(diag)
    assert "What to fix first" not in said and "Nothing to fix" not in said
    assert "the compile ids prove 4 recompile(s) whose reasons the log does not hold" in said
    # (a partial paste's count is a lower bound, as its summary says)
    # (sd-webui-forge-classic#1006: a glog head the paste cut, "at least 5 compile(s)")
    partial = diagnose_logs([Path(__file__).parents[1] / "data" / "pasted"
                             / "sd-webui-forge-classic-1006.log"])
    assert "prove at least 4 recompile(s)" in _said(partial)
    doc = json.loads(json.dumps(diag.to_json()))
    assert [n["kind"] for n in doc["notes"]] == ["autotune-output", "unexplained-recompiles"]
    assert doc["torch_notes"][0]["counts"] == {"summary": 1, "failed": 1}


def test_a_dynamo_record_of_the_ids_keeps_the_recompiles_a_cause(tmp_path: Path) -> None:
    """The same id on a dynamo record (after inductor's, as a paste that begins mid-compile has
    it) is dynamo's proof: the unexplained recompiles rank as before."""
    backend = ("E0410 07:53:02.558000 7 torch/_inductor/select_algorithm.py:1905] [15/4] "
               "Exception No valid triton configs.\n")
    dynamo = ("I0410 07:53:03.000000 7 torch/_dynamo/convert_frame.py:1000] [15/4] Step 1: "
              "torchdynamo start tracing forward /app/model.py:5\n")
    for text in (backend + dynamo, dynamo + backend):
        diag = _read(tmp_path, text)
        assert diag.frames[0].backend_proven == 0 and not diag.notes[1:]
        assert [a.kind for a in diag.suggestions] == [AdviceKind.UNEXPLAINED]
        assert diag.causes and "Only inductor's" not in diag.suggestions[0].message
    # dynamo proves [15/1] only: the compiles after it are inductor's proof alone
    diag = _read(tmp_path, dynamo.replace("[15/4]", "[15/1]") + backend)
    assert diag.frames[0].compiles == 5 and diag.frames[0].backend_proven == 3
    assert [a.kind for a in diag.suggestions] == [AdviceKind.UNEXPLAINED]


_EMPTY = ("/home/u/.venv/lib/python3.12/site-packages/torch/cuda/graphs.py:84: UserWarning: The "
          "CUDA Graph is empty. This usually means that the graph was attempted to be captured "
          "on wrong device or stream. (Triggered internally at "
          "/pytorch/aten/src/ATen/cuda/CUDAGraph.cpp:206.)\n")


def test_an_empty_cuda_graph_is_a_harmless_note(tmp_path: Path) -> None:
    """pytorch#149653 (one line, refused before) and kernl#331 (each warning with the code line
    Python prints under it; 2023's "ususally")."""
    text = (_EMPTY + "  super().capture_end()\n") * 3 + _EMPTY.replace("usually", "ususally")
    events, stats = _events(text)
    assert stats.unrecognized == 0
    assert [e.kind for e in events if isinstance(e, ev.TorchNote)] == ["empty-cudagraph"] * 4
    diag = _read(tmp_path, text)
    (note,) = diag.notes
    assert note.kind is AdviceKind.EMPTY_CUDAGRAPH and "4 time(s)" in note.message
    assert "harmless" in note.message and "pytorch#185760" in note.fix
    assert not diag.causes
    # pasted without Python's head
    assert [e.kind for e in _notes("UserWarning: The CUDA Graph is empty. (Triggered …)\n")] \
        == ["empty-cudagraph"]


def test_too_few_sms_is_a_warning_explained(tmp_path: Path) -> None:
    """Zonos#168 took it for an install error: a note that max-autotune tunes no GEMM template
    on a GPU below inductor's threshold, and that the program runs on. 2.6-2.15's glog record,
    2.3's lower-case one in 2.1/2.2's logging layout, ROCm's by architecture, the line bare."""
    forms = ("W0301 14:50:21.667000 3157 .venv/lib/python3.12/site-packages/torch/_inductor/"
             "utils.py:1137] [2/0] Not enough SMs to use max_autotune_gemm mode\n",
             "[2024-04-25 10:00:00,000] [0/0] torch._inductor.utils: [WARNING] not enough SMs to "
             "use max_autotune_gemm mode\n",
             "W0301 14:50:21.667000 3157 torch/_inductor/utils.py:2136] GPU arch does not support "
             "max_autotune_gemm mode usage\n",
             "Not enough SMs to use max_autotune_gemm mode\n")
    for text in forms:
        events, stats = _events(text)
        assert stats.unrecognized == 0, text
        assert [e.kind for e in events if isinstance(e, ev.TorchNote)] == ["gemm-templates-off"]
        (note,) = _read(tmp_path, text).notes
        assert note.kind is AdviceKind.GEMM_TEMPLATES_OFF and "not an error" in note.message
        assert ("architecture" in note.message) == ("GPU arch" in text), text


def test_the_readers_stay_linear_on_hostile_lines() -> None:
    """Bounded patterns: lines of 200k characters built to tempt the row, head and warning
    patterns cost milliseconds, and are not read as torch's."""
    hostile: list[Callable[[int], str]] = [
        lambda n: "  " + "a" * n + " 0.0154 ms 100.0%",
        lambda n: "AUTOTUNE mm(" + "(" * n,
        lambda n: "  x 0.0154 ms " + "9" * n,
        lambda n: "/" * n + "torch/cuda/graphs.py:84: UserWarning: The CUDA Graph is empty.",
        lambda n: "SingleProcess AUTOTUNE takes " + "1" * n]
    for make in hostile:
        events, _ = _events(make(200_000))
        assert not [e for e in events if isinstance(e, ev.TorchNote)]
        assert_linear(_events, make, 200_000)

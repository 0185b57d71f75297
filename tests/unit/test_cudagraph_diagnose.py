"""diagnose on a real CUDA-graph recording (H200, torch 2.11; tests/data/2.11.0/cudagraphs/).

Under reduce-overhead the program recorded 5 CUDA graphs, one per batch size 2, 4, 8, 12, 16
(README.md there). The log names each recording's graph and size, the trace times it; read
together, every recording has both.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from dyncli.diagnose import run
from dyncli.diagnose.findings import CauseKind
from dyncli.diagnose.html import render_html
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.render import render_terminal
from dyncli.errors import StrictError, UsageError

DATA = Path(__file__).resolve().parents[1] / "data"
CG = DATA / "2.11.0" / "cudagraphs"
LOG, TRACE = CG / "cuda_run.log.gz", CG / "trace.log.gz"
SIZES = ["2x16x64", "4x16x64 (symint 4)", "8x16x64 (symint 8)", "12x16x64 (symint 12)",
         "16x16x64 (symint 16)"]
# the trace's CUDAGraphNode.record spans, E.ts - B.ts, in microseconds
SPANS_US = [1724.25, 1088.5, 997.0, 836.75, 1021.0]


def logged_recordings() -> list[str]:
    """What torch itself logged: its ``Recording function=…`` lines, in order."""
    text = gzip.decompress(LOG.read_bytes()).decode()
    return re.findall(r"\[(\d+/\d+)\] Recording function=(\w+), cuda_graph_id=(\d+)", text)


@pytest.fixture(scope="module")
def joined() -> Diagnosis:
    return run([LOG, TRACE])


def test_the_log_alone_counts_the_recordings_torch_logged_per_size() -> None:
    diag = run(LOG)
    c = diag.cudagraphs
    assert c is not None
    logged = logged_recordings()
    assert len(logged) == 5 and len(c.recordings) == len(logged)
    assert [(r.compile_id, r.graph, str(r.graph_id)) for r in c.recordings] == logged
    assert [r.key for r in c.recordings] == ["", "4", "8", "12", "16"]
    (frame,) = c.frames
    assert (frame.function, frame.compile_ids, frame.recordings, frame.distinct_sizes) == (
        "forward", ("4/0", "4/1"), 5, 5)
    assert [s for s, _, _ in frame.sizes] == SIZES
    assert all(secs is None for _, _, secs in frame.sizes) and not c.timed  # no trace, no time
    assert c.captured_compiles == ("4/0", "4/1")  # the partitions with CUDA graphs on
    # the [__cudagraphs] lines are now read, and torch's own TF32 UserWarning (compile_fx.py)
    # with its code line is torch's text: only the program's own prints stay unknown
    assert diag.stats.unrecognized == 4 and diag.stats.seen == {"torch-warning": 2}


def test_the_trace_alone_has_the_seconds_per_compile_but_not_the_sizes() -> None:
    c = run(TRACE).cudagraphs
    assert c is not None and c.timed
    assert [r.seconds for r in c.recordings] == pytest.approx([u / 1e6 for u in SPANS_US])
    assert [r.compile_id for r in c.recordings] == ["4/0", "4/1", "4/1", "4/1", "4/1"]
    assert [(s, n) for s, n, _ in c.frames[0].sizes] == [("? (4/0)", 1), ("? (4/1)", 4)]
    assert c.frames[0].distinct_sizes == 0  # a trace does not say which size each one was


def test_log_and_trace_joined_give_each_size_its_seconds(joined: Diagnosis) -> None:
    c = joined.cudagraphs
    assert c is not None and not c.notes
    (frame,) = c.frames
    assert [s for s, _, _ in frame.sizes] == SIZES
    assert [n for _, n, _ in frame.sizes] == [1] * 5
    assert [secs for _, _, secs in frame.sizes] == pytest.approx([u / 1e6 for u in SPANS_US])
    assert frame.seconds == pytest.approx(sum(SPANS_US) / 1e6)
    assert {r.source for r in c.recordings} == {"log+trace"}
    assert any("read for its 70 CUDA-graph record(s) only" in w for w in joined.warnings)


def test_recording_is_a_cause_with_its_fix(joined: Diagnosis) -> None:
    kinds = [c.kind for c in joined.causes]
    cause = joined.causes[kinds.index(CauseKind.CUDAGRAPH)]
    assert "5 CUDA graph(s) recorded for 5 sizes" in cause.title
    assert (cause.recordings, cause.compiles) == (5, 0)
    assert cause.record_s == pytest.approx(sum(SPANS_US) / 1e6)
    # ranked by the seconds it spares: after the compiles' causes, before 0-second ones
    assert [c.kind for c in joined.causes[:5]] == [
        CauseKind.ALLOW_LIST, CauseKind.USER_CODE, CauseKind.GRAPH_BREAK, CauseKind.CUDAGRAPH,
        CauseKind.USER_CODE]
    assert "[0.00 s, 0 compile(s), 5 CUDA-graph recording(s) (5.67 ms)]" in cause.line()
    doc = cause.to_json(4)
    assert (doc["kind"], doc["recordings"]) == ("cudagraph", 5)
    assert '"triton.cudagraph_capture_sizes": (4, 8, 16)' in cause.fix  # 2 is its own compile
    assert "cudagraph_dynamic_shape_rerecord_limit" in cause.fix and "torch >= 2.15" in cause.fix
    (finding,) = [a for a in joined.suggestions if a.kind == "cudagraph-sizes"]
    assert finding.evidence[1] == ("log line 1353: [4/1] recorded partition_0 for 4x16x64 "
                                   "(symint 4) in 1.09 ms")


def test_json_html_and_terminal_views(joined: Diagnosis) -> None:
    doc = json.loads(json.dumps(joined.to_dict()))
    cg = doc["cudagraphs"]
    assert (cg["recordings"], cg["timed"]) == (5, True)
    assert cg["record_s"] == pytest.approx(sum(SPANS_US) / 1e6, abs=1e-6)
    assert [s["size"] for s in cg["per_frame"][0]["sizes"]] == SIZES
    assert [r["key"] for r in cg["per_recording"]] == ["", "4", "8", "12", "16"]
    assert "cudagraphs" not in json.loads(json.dumps(run(DATA / "logs" / "int_specialization.log")
                                                     .to_dict()))
    html = render_html(joined)
    assert 'id="cudagraphs"' in html and "12x16x64 (symint 12): 1 (0.84 ms)" in html
    out = Console(file=io.StringIO(), width=200, color_system=None)
    render_terminal(joined, console=out)
    text = out.file.getvalue()  # type: ignore[attr-defined]
    assert "CUDA graphs: 5 recording(s) in 1 frame(s) for 5 size(s), 5.67 ms of recording" in text
    assert "16x16x64 (symint 16): 1 (1.02 ms)" in text


def test_a_log_without_cuda_graph_records_is_not_read_beside_a_trace() -> None:
    with pytest.raises(UsageError, match="cannot mix"):
        run([DATA / "logs" / "int_specialization.log", TRACE])


def test_strict_applies_to_the_log_beside_a_trace() -> None:
    # the recording's log holds the program's own prints (torch's UserWarning is torch's text)
    with pytest.raises(StrictError, match=r"cuda_run\.log\.gz:821: unrecognized"):
        run([LOG, TRACE], strict=True)


def test_a_size_re_recorded_under_the_dynamic_graph_is_a_recording_of_its_own() -> None:
    # A second real recording (tests/data/2.11.0/gpu-modes/, H200): resnet18 under
    # reduce-overhead with automatic dynamism, run twice in one process (bench, then an
    # independent timing). Batch 16 is recorded under the static graph and again under the
    # dynamic one; diagnose counts what torch logged, 12, over 6 sizes.
    log = DATA / "2.11.0" / "gpu-modes" / "automatic-reduce-overhead.log.gz"
    text = gzip.decompress(log.read_bytes()).decode()
    logged = re.findall(r"\[(\d+/\d+)\] Recording function=\w+, cuda_graph_id=(\d+)", text)
    assert len(logged) == 12
    c = run(log).cudagraphs
    assert c is not None
    assert [(r.compile_id, str(r.graph_id)) for r in c.recordings] == logged
    assert [r.key for r in c.recordings[:6]] == ["", "24", "32", "48", "64", "16"]
    (frame,) = c.frames
    assert (frame.compile_ids, frame.recordings, frame.distinct_sizes) == (("0/0", "0/1"), 12, 6)
    assert [s for s, _, _ in frame.sizes][0::5] == ["16x3x224x224", "16x3x224x224 (symint 16)"]


# torch's warning of many sizes (cudagraph_utils.maybe_warning_due_to_dynamic_shape), as torch
# logs it on one line and as pytorch#188150's reporter re-wrapped it: read either way, and a
# finding with torch's own options where nothing else in the log names the sizes
WARNED = ("CUDAGraph supports dynamic shapes by recording a new graph for each distinct input "
          "size. Recording too many CUDAGraphs may lead to extra overhead. We have observed 9 "
          "distinct sizes. Please consider the following options for better performance: a) "
          "padding inputs to a few fixed number of shapes; or b) set "
          "torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True. Set "
          "torch._inductor.config.triton.cudagraph_dynamic_shape_warn_limit=None to silence "
          "this warning.")


@pytest.mark.parametrize("text", [
    WARNED,
    "CUDAGraph supports dynamic shapes by recording a new graph for each distinct\n"
    "input size. Recording too many CUDAGraphs may lead to extra overhead.\n"
    "We have observed 9 distinct sizes.\n"
    "training step 12 took 25.1 s\n"])  # the program's own line ends it
def test_torchs_warning_of_many_sizes_is_a_finding(tmp_path: Path, text: str) -> None:
    log = tmp_path / "run.log"
    log.write_text(text)
    d = run(log)
    assert d.cudagraphs is not None and d.cudagraphs.distinct_sizes_warned == 9
    (a,) = [s for s in d.suggestions if s.key == "sizes:warned"]
    assert "9 distinct sizes" in a.message
    assert "cudagraph_skip_dynamic_graphs" in a.fix and "cudagraph_capture_sizes" in a.fix
    assert d.stats.unrecognized == (1 if "training step" in text else 0)


def test_a_tree_key_that_is_no_plain_size_is_left_out(tmp_path: Path) -> None:
    # "10²": str.isdigit takes "²" and int refuses it (a traceback before round 24)
    log = tmp_path / "keys.log"
    log.write_text("".join(f"Recording cudagraph tree for symint key {k}\n"
                           for k in ("10", "13", "10\u00b2")), encoding="utf-8")
    diag = run([log])
    assert diag.cudagraphs is not None and "10\u00b2" in diag.cudagraphs.tree_keys

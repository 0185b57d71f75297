"""One run, two views: the TORCH_LOGS text log and the TORCH_TRACE trace of the same run
(tests/data/make_logs.py captures both) give the same frames, compile counts,
specializations, recompile causes and dynamic decisions through the one analysis.

Known, documented differences (docs/diagnose-trace.md): a trace also knows the first line
(and the name, where no text record places it) of frames that never recompiled (the text log
does not), it has no record for ``set_replacement`` equalities between symbols or for
data-dependent guard messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read_trace import diagnose_traces
from dyncli.logparse.textlog import parse_lines

DATA = Path(__file__).resolve().parents[1] / "data"
CASES = sorted(p.stem for p in (DATA / "logs").glob("*.log") if (DATA / "traces" / p.stem).is_dir())
TRACE_ONLY = {"similar-graphs", "pgo-allow-list", "rank-divergence"}


def _base(path: str | None) -> str | None:
    return path.rsplit("/", 1)[-1] if path else None


def _guard(reason: str) -> str:
    """The guard text of a reason, without torch's ``# user code  # file:line`` comment."""
    return reason.split("  #", 1)[0].split(" # ", 1)[0].strip()


def facts(d: Diagnosis) -> dict[str, Any]:
    return {
        "frames": sorted((f.rank, f.frame_id, f.function, f.compiles, f.compile_ids) for f in d.frames),
        "recompiles": sorted((r.rank, r.compile_id, r.function, r.cause,
                              tuple(_guard(x) for x in r.reasons)) for r in d.recompiles),
        "specializations": sorted(
            (s.rank, s.compile_id, s.symbol, s.sources, s.value, s.reason,
             _base(s.user.file) if s.user else None, s.user.line if s.user else None,
             s.user.code if s.user else None) for s in d.specializations),
        "graph_breaks": sorted((b.rank, _base(b.file), b.user_line, b.count) for b in d.graph_breaks),
        "dynamic_sources": sorted(d.dynamic_sources),
        "dynamic_inputs": sorted((f.rank, x.source, x.origin, x.compile_id)
                                 for f in d.frames for x in f.dynamic_inputs),
        "dynamic_dims": sorted((f.rank, f.frame_id, f.dynamic_dims) for f in d.frames),
        "unbacked": sorted((u.rank, u.compile_id, u.symbol) for u in d.unbacked),
        "zero_one_guards": len(d.zero_one_guards),
        "suggestions": sorted(s.kind for s in d.suggestions if s.kind not in TRACE_ONLY),
        # compiled autograd's misses: compiled_autograd_verbose's lines, the trace's
        # compiled_autograd_compile_reasons
        "autograd_misses": [(x.rank, x.capture, x.reason, x.node, x.call, x.key_size, x.previous,
                             x.changed, x.total, x.sizes, x.first, x.after.split("_")[0])
                            for x in d.autograd_misses],
    }


@pytest.mark.parametrize("case", CASES)
def test_text_log_and_trace_agree(case: str) -> None:
    _agree(DATA, case)


# The same captures made by newer torch releases (tests/data/<version>/, make_logs.py).
NEWER = {"2.15.0": DATA / "2.15.0"}
NEWER_CASES = [(v, p.stem) for v, d in NEWER.items() for p in sorted((d / "logs").glob("*.log"))
               if (d / "traces" / p.stem).is_dir()]


@pytest.mark.parametrize(("version", "case"), NEWER_CASES)
def test_text_log_and_trace_agree_on_newer_torch(version: str, case: str) -> None:
    _agree(NEWER[version], case)


def _agree(data: Path, case: str) -> None:
    with (data / "logs" / f"{case}.log").open("rb") as fh:
        text = analyze(parse_lines(fh))
    trace = diagnose_traces([data / "traces" / case], strict=True)
    got, want = facts(trace), facts(text)
    # a frame that compiled once and that no record of the text log places (frames dynamo
    # traced inside compiled autograd's capture: inspect's isclass, a resume function): the
    # trace names it, the text log cannot
    unnamed = {(f.rank, f.frame_id) for f in text.frames if not f.function}
    got["frames"] = sorted((r, fid, "" if (r, fid) in unnamed else fn, *rest)
                           for r, fid, fn, *rest in got["frames"])
    assert got == want
    assert trace.frames, "every captured case compiled something"
    for t, x in zip(trace.frames, text.frames, strict=True):
        if x.first_line is not None:  # the text log knows it only for recompiled frames
            assert t.first_line == x.first_line


def test_cases_cover_the_issue() -> None:
    assert {"auto_dynamic_batch", "graph_break_frames", "int_specialization",
            "constraint_violation", "multi_rank", "hf_tiny_bert"} <= set(CASES)

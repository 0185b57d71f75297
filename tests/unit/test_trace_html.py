"""The single-file HTML report: self-contained, escaped, with every section."""

from __future__ import annotations

import re
from pathlib import Path

from dyncli.diagnose.html import render_html, write_html
from dyncli.diagnose.read_trace import diagnose_traces

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_report_has_every_section_and_fetches_nothing() -> None:
    html = render_html(diagnose_traces([TRACES / "two_rank_diverge"]))
    for anchor in ("summary", "suggestions", "frames", "recompiles", "specializations",
                   "graph-breaks", "compiles", "similar", "ranks"):
        assert f'id="{anchor}"' in html
    assert "dynamic dims differ across ranks" in html and "norm_rows" in html
    # nothing external: no src/href to another document, no @import, no url()
    assert not re.search(r'\b(?:src|href)="(?!#)', html)
    assert "@import" not in html and "url(" not in html
    assert html.count("<script>") == 1 and html.count("<style>") == 1


def test_pgo_and_failures_sections() -> None:
    pgo = render_html(diagnose_traces([TRACES / "pgo_recompile"]))
    assert 'id="pgo"' in pgo and "L[&#x27;y&#x27;]:1" in pgo
    failed = render_html(diagnose_traces([TRACES / "constraint_violation"]))
    assert "ConstraintViolationError" in failed and "if x.shape[0] == 8:" in failed


def test_text_is_escaped(tmp_path: Path) -> None:
    d = diagnose_traces([TRACES / "int_specialization"])
    html = render_html(d)
    assert "<code>if n == 33:</code>" in html
    assert "L['n']" not in html and "L[&#x27;n&#x27;]" in html
    out = tmp_path / "report.html"
    write_html(out, d)
    assert out.read_text(encoding="utf-8") == html


def test_text_log_diagnosis_renders_without_trace_sections() -> None:
    from dyncli.diagnose.analyzer import analyze
    from dyncli.logparse.textlog import parse_lines

    log = Path(__file__).resolve().parents[1] / "data" / "logs" / "graph_break_frames.log"
    with log.open("rb") as fh:
        html = render_html(analyze(parse_lines(fh)))
    assert 'id="graph-breaks"' in html and "print(" in html
    assert 'id="compiles"' not in html and 'id="similar"' not in html

"""Issue 21: root causes, size branches, PGO explanations, text/trace agreement, graph-break codes.

Every case here reads output recorded from real torch (2.15.0 and 2.14.1) by
``tests/data/make_causes.py`` (recipe: ``tests/data/<version>/causes/RECIPE.md``), and the
invariants run over every log and trace in tests/data.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import tomllib
from recorded_registry import recorded

from dyncli.diagnose.api import run
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.read_trace import diagnose_traces

DATA = Path(__file__).resolve().parents[1] / "data"
VERSIONS = sorted(p.parent.name for p in DATA.glob("2.*/causes"))


def _case(version: str, case: str) -> Path:
    return DATA / version / "causes" / case


def _log(version: str, case: str) -> Diagnosis:
    return diagnose_logs([_case(version, case) / "run.log"], strict=True, registry=recorded)


def _trace(version: str, case: str) -> Diagnosis:
    return diagnose_traces([_case(version, case) / "trace"], jobs=1, registry=recorded)


def test_both_versions_recorded() -> None:
    assert {"2.14.1", "2.15.0"} <= set(VERSIONS)


# ------------------------------------------------------------ invariants on all data


def _refused() -> set[Path]:
    """The pasted cases diagnose refuses (the manifest's ``refused``): no torch log to read."""
    pasted = DATA / "pasted"
    cases = tomllib.loads((pasted / "manifest.toml").read_text())["case"]
    return {pasted / c["file"] for c in cases if "refused" in c["expect"]}


def _all_inputs() -> list[Path]:
    """Every text log and trace under tests/data (any torch version's folder), fuzz cases and
    refused pastes aside."""
    out: list[Path] = []
    refused = _refused()
    for p in sorted(DATA.rglob("*")):
        if "fuzz" in p.relative_to(DATA).parts or p in refused:
            continue
        if p.is_dir() and any(p.glob("dedicated_log_torch_trace*")):
            out.append(p)  # a TORCH_TRACE directory (one file per rank)
        elif p.is_file() and ((p.name.endswith(".log") and not p.name.startswith("dedicated_"))
                              or (p.name.startswith("trace") and p.name.endswith(".log.gz"))):
            out.append(p)  # a text log, or a trace kept as one file
    return out


def test_all_inputs_found() -> None:
    found = {p.relative_to(DATA).parts[0] for p in _all_inputs()}
    assert {"logs", "traces", "pgo", "2.15.0", "2.14.1"} <= found


@pytest.mark.parametrize("path", _all_inputs(), ids=lambda p: str(p.relative_to(DATA)))
def test_cause_invariants(path: Path) -> None:
    diag = run(path, jobs=1)
    causes = diag.causes
    fixes = [c.fix for c in causes if c.fix]
    assert len(fixes) == len(set(fixes)), "two causes carry the same fix"
    keys = [k for c in causes for k in c.compile_ids]
    assert len(keys) == len(set(keys)), "a compile is charged to two causes"
    assert sum(c.compiles for c in causes) <= diag.compiles
    if diag.trace is not None and diag.trace.timed:
        total = diag.trace.total_compile_s
        for c in causes:
            assert c.compile_s is not None and c.compile_s <= total + 1e-9
        assert sum(c.compile_s or 0.0 for c in causes) <= total + 1e-9
    else:  # a text log, or a trace without compile seconds (torch 2.3): unknown, never 0
        assert all(c.compile_s is None for c in causes)
    # ranked: by compile seconds, then compiles
    costs = [(c.compile_s or 0.0, c.compiles) for c in causes]
    assert [x[0] for x in costs] == sorted((x[0] for x in costs), reverse=True)
    # every suggestion is under exactly one cause
    assert sum(len(c.findings) for c in causes) == len(diag.suggestions)
    doc = diag.to_json()
    assert [c["fix"] for c in doc["causes"]] == [c.fix for c in causes]


def test_same_fix_is_given_once_on_bert_trace() -> None:
    """The issue's example: mark-dynamic and similar-graphs printed the same allow-list."""
    diag = run(DATA / "traces" / "hf_tiny_bert", jobs=1)
    (cause,) = [c for c in diag.causes if c.kind == "allow-list"]
    # (since issue 26 the similar graphs print no second list where mark-dynamic decides it)
    assert "mark-dynamic" in {a.kind for a in cause.findings}
    assert sum(1 for s in diag.suggestions if s.fix and cause.fix in s.fix) <= 1
    assert cause.compiles == 2 and cause.compile_s == pytest.approx(
        sum(c.seconds for c in diag.trace.compile_times if c.compile_id != "0/0"))  # type: ignore[union-attr]


# ------------------------------------------------------------ size branch (not 0/1)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("reader", [_log, _trace], ids=["log", "trace"])
def test_size_branch_is_not_zero_one(version: str, reader: Any) -> None:
    diag = reader(version, "size_branch")
    kinds = [s.kind for s in diag.suggestions]
    assert "zero-one-specialization" not in kinds
    (branch,) = [s for s in diag.suggestions if s.kind == "size-branch"]
    assert "x.size()[0] = 12 failed the upper bound 8" in branch.message
    assert "causes/size_branch.py:17 `if x.shape[0] > 8:`" in branch.message
    assert "1 extra compile" in branch.message
    assert "torch.cond" in branch.fix and "one graph per side" in branch.fix
    # the branch is its own cause, keyed by the user line, charged with compile 0/2
    (cause,) = [c for c in diag.causes if c.key.startswith("line:")]
    assert cause.key.endswith("causes/size_branch.py:17") and cause.key.startswith("line:/")
    assert list(cause.compile_ids) == [(None, "0/2")]


def test_real_zero_one_stays_zero_one() -> None:
    diag = diagnose_logs([DATA / "logs" / "zero_one_specialization.log"])
    assert [s.kind for s in diag.suggestions].count("zero-one-specialization") == 1
    assert "size-branch" not in [s.kind for s in diag.suggestions]


# ------------------------------------------------------------ PGO loaded + branch


@pytest.mark.parametrize("version", VERSIONS)
def test_pgo_text_log_finds_the_size_too(version: str) -> None:
    (branch,) = [s for s in _log(version, "pgo_branch").suggestions if s.kind == "size-branch"]
    assert "x.size()[0] = 12 failed the upper bound 8" in branch.message


@pytest.mark.parametrize("version", VERSIONS)
def test_pgo_recompile_names_its_cause(version: str) -> None:
    diag = _trace(version, "pgo_branch")
    assert diag.trace is not None and diag.trace.pgo_loaded
    assert not any("Allow-list the sources instead" in s.message and not s.fix
                   for s in diag.suggestions)
    (pgo,) = [s for s in diag.suggestions if s.kind.startswith("pgo")]
    assert pgo.kind == "pgo-recompile"
    assert "size branch" in pgo.message and "causes/pgo_branch.py:17" in pgo.message
    (branch,) = [s for s in diag.suggestions if s.kind == "size-branch"]
    # x was dynamic from the start (no size mismatch): the size is the new compile's symbol
    assert "x.size()[0] = 12 failed the upper bound 8" in branch.message
    (finding,) = diag.trace.pgo
    assert finding.allow_list == () and finding.explained[0][0] == "0/1"
    # the PGO note and the branch advice are one cause: the branch's line
    (cause,) = diag.causes
    assert {a.kind for a in cause.findings} == {"size-branch", "pgo-recompile"}


# ------------------------------------------------------------ text log == trace


def _comparable(diag: Diagnosis) -> dict[str, Any]:
    doc = diag.to_json()
    for r in doc["recompiles"]:
        r.pop("line", None)
    for b in doc["graph_breaks"]:
        b.pop("line", None)
    trace_only = {"similar-graphs", "pgo-allow-list", "pgo-recompile", "rank-divergence"}
    doc["suggestions"] = [(s["kind"], s["message"], s["fix"]) for s in doc["suggestions"]
                          if s["kind"] not in trace_only]
    return {k: doc[k] for k in ("summary", "recompiles", "specializations", "graph_breaks",
                                "dynamic_sources", "suggestions", "distinct_graph_breaks",
                                "releases")}


# what a fix adds for the releases before 2.13 where the log does not say its release
_PER_DIM_NOTE = re.compile(r"  \[a list entry's ':N' needs torch 2\.13; .*\]\Z")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", ["size_branch", "graph_break_codes", "four_frames"])
def test_text_and_trace_agree(version: str, case: str) -> None:
    text, trace = _comparable(_log(version, case)), _comparable(_trace(version, case))
    # the trace states its torch (2.10 on: compilation_metrics' pytorch_version), the text log
    # only what its graph-break records' form tells: where that is the release, a fix for it
    # drops the note for releases before 2.13
    told = trace.pop("releases"), text.pop("releases")
    if told[0] is not None:
        assert told[0]["version"].startswith(version)
        # (what the text log's forms tell holds the trace's release)
        minor = lambda x: int(x.split(".")[1])  # noqa: E731
        assert told[1] is None or minor(told[1]["low"]) <= minor(version)
        if int(version.split(".")[1]) >= 13:
            text["suggestions"] = [(k, m, _PER_DIM_NOTE.sub("", f)) for k, m, f in text["suggestions"]]
    # the text log suppresses the user stack of a repeated break ("user stack suppressed
    # due to duplicate graph break"); the trace keeps it: the call sites the text
    # log knows are a subset there
    for key in ("graph_breaks", "distinct_graph_breaks"):
        for a, b in zip(text[key], trace[key], strict=True):
            assert set(a.pop("call_sites")) <= set(b.pop("call_sites"))
    # a text log without +dynamo cannot name every frame (no "start tracing" line): the
    # frame ids agree, the names where the text log has one
    for a, b in zip(text["distinct_graph_breaks"], trace["distinct_graph_breaks"], strict=True):
        fa, fb = a.pop("frames"), b.pop("frames")
        assert [f.split(" ")[-1] for f in fa] == [f.split(" ")[-1] for f in fb]
        assert all(x == y for x, y in zip(fa, fb, strict=True) if not x.startswith("?"))
    assert text == trace


@pytest.mark.parametrize("version", VERSIONS)
def test_trace_guard_text_and_user_file(version: str) -> None:
    diag = _trace(version, "size_branch")
    r = diag.recompiles[-1]
    assert r.reasons[0] == "0/1: 2 <= x.size()[0] <= 8"  # torch's note is not in the guard
    assert r.user is not None and r.user.file.startswith("/")  # resolved from "wt/…/x.py"
    assert r.user.file.endswith("tests/data/programs/causes/size_branch.py")
    assert r.user.line == 17 and r.user.code == "if x.shape[0] > 8:"


# ------------------------------------------------------------ distinct graph breaks


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("reader", [_log, _trace], ids=["log", "trace"])
def test_distinct_graph_breaks_with_codes(version: str, reader: Any) -> None:
    diag = reader(version, "graph_break_codes")
    breaks = diag.distinct_graph_breaks
    got = [(b.code, Path(b.file).name, b.line, b.count) for b in breaks]
    # helper's graph_break() reached from twice:21 and twice:22 (3 times: the first call
    # breaks in twice's frame and again in helper's own); print() inside the loop once (the
    # frame is then skipped: graph breaks in loops fall back to eager)
    assert got == [("GB0025", "graph_break_codes.py", 16, 3),
                   ("GB0059", "graph_break_codes.py", 28, 1)]
    gb25, gb59 = breaks
    sites = ["graph_break_codes.py:21 in twice", "graph_break_codes.py:22 in twice"]
    if reader is _log:
        sites = sites[:1]  # the text log suppresses the stack of a repeated break
    assert [s.rsplit("/", 1)[1] for s in gb25.call_sites] == sites
    assert gb25.gb_type == "Call to `torch._dynamo.graph_break()`"
    assert gb25.hints == ("Remove the `torch._dynamo.graph_break()` call.",)
    assert gb59.gb_type == "Failed to trace builtin operator"
    assert "print" in gb59.explanation and gb59.user_code == 'print("step", i)'
    assert gb25.known and gb59.known  # the registry passed in (torch 2.15.0's) knows both
    assert diag.graph_break_registry == "2.15.0"
    # the frames it split: twice (0), helper's own frame (1), the resume function (3)
    assert [f.rsplit(" ", 1)[1] for f in gb25.frames] == ["(0)", "(1)", "(3)"]


def test_unknown_code_is_shown_as_found() -> None:
    from dyncli.diagnose import graph_breaks as gbm

    other = gbm._build({"GB0001": [{"Gb_type": "t", "Explanation": "e", "Hints": ["h"]}]}, "x")
    diag = diagnose_logs([_case(VERSIONS[-1], "graph_break_codes") / "run.log"],
                         registry=lambda: other)
    assert [(b.code, b.known) for b in diag.distinct_graph_breaks] == [("GB0025", False),
                                                                       ("GB0059", False)]
    assert diag.graph_break_registry == "x"


def test_no_registry_gives_the_logs_words_only() -> None:
    """Without a registry (no torch installed and none passed): codes the log names, unknown."""
    diag = diagnose_logs([_case(VERSIONS[-1], "graph_break_codes") / "run.log"])
    assert [(b.code, b.known) for b in diag.distinct_graph_breaks] == [("GB0025", False),
                                                                       ("GB0059", False)]
    assert diag.graph_break_registry is None
    assert diag.to_json()["graph_break_registry"] is None


def test_the_registry_is_asked_for_only_with_graph_breaks() -> None:
    asked: list[int] = []
    diag = diagnose_logs([DATA / "logs" / "int_specialization.log"],
                         registry=lambda: asked.append(1) or recorded())  # type: ignore[func-returns-value]
    assert not diag.graph_breaks and not asked and diag.graph_break_registry is None


def test_registry_is_found_without_importing_torch() -> None:
    import subprocess
    import sys

    code = ("import sys; from dyncli.diagnose.graph_breaks import installed_registry; "
            "r = installed_registry(); "
            "print(r is not None and 'GB0025' in r.by_code, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[1] == "False"
    try:
        import importlib.util

        has_torch = importlib.util.find_spec("torch") is not None
    except ImportError:  # pragma: no cover
        has_torch = False
    assert out[0] == str(has_torch)


# ------------------------------------------------------------ one answer with suggest


def test_dynamic_sources_leave_module_attributes_out() -> None:
    diag = diagnose_logs([DATA / "logs" / "module_int_attr.log"])
    assert diag.dynamic_sources == ()
    # the module int's own allow-list entry (issue 26: 4 -> 1 compiles in the advice corpus,
    # allow_unspec_int_on_nn_module 4 -> 2)
    assert any("L['self'].k" in s.fix for s in diag.suggestions)


@pytest.mark.parametrize("version", VERSIONS)
def test_suggest_python_marks_every_frame(version: str) -> None:
    from dyncli.suggest.api import run as suggest
    from dyncli.suggest.render import render_fix

    allow = suggest(pgo_dir=str(_case(version, "four_frames") / "pgo"))
    text = render_fix(allow, "python")
    frames = re.findall(r"^# \S+four_frames\.py:\d+ (\w+): before calling it", text, re.M)
    assert frames == ["first", "second", "third", "fourth"]
    assert text.count("torch._dynamo.maybe_mark_dynamic(x, 0)") == 4  # PGO cannot see pins
    # diagnose and suggest give one answer for the same run
    assert list(_log(version, "four_frames").dynamic_sources) == list(allow.entries)


def test_html_starts_with_the_causes() -> None:
    from dyncli.diagnose.html import render_html

    diag = _trace(VERSIONS[-1], "size_branch")
    page = render_html(diag)
    causes, suggestions = page.index('id="causes"'), page.index('id="suggestions"')
    assert causes < suggestions < page.index('id="frames"')
    top = page[causes:suggestions]
    assert "size branch" in top and "TORCH_COMPILE_DYNAMIC_SOURCES=&quot;L[&#x27;x&#x27;]:0&quot;" in top


# ------------------------------------------------------------ fields, not sentences


def _renamed(diag: Diagnosis) -> Diagnosis:
    """``diag`` with every finding's sentences replaced by unrelated words (each distinct fix
    by its own token, so that fixes equal before are equal after), fields kept."""
    import dataclasses

    tokens: dict[str, str] = {}

    def token(text: str) -> str:
        return tokens.setdefault(text, f"zz{len(tokens)} qq") if text else ""

    return dataclasses.replace(diag, suggestions=tuple(
        dataclasses.replace(a, message=token("m" + a.message), fix=token(a.fix),
                            evidence=("e",)) for a in diag.suggestions))


def _groups(causes: tuple[Any, ...]) -> list[Any]:
    return [(c.key, c.kind, c.compile_ids, c.recompiles, c.graph_breaks, c.ranks,
             [(a.kind, a.rank, a.entries, a.sites) for a in c.findings]) for c in causes]


@pytest.mark.parametrize("path", [p for p in _all_inputs() if p.parts[-2] in (
    "logs", "size_branch", "pgo_branch", "four_frames", "graph_break_codes", "hf_tiny_bert",
    "two_rank_diverge", "int_specialization", "advice")][:60],
    ids=lambda p: str(p.relative_to(DATA)))
def test_causes_are_grouped_by_fields_not_sentences(path: Path) -> None:
    """The root causes read the rules' typed fields: with every message and fix rewritten into
    unrelated words, the same findings make the same causes with the same compiles."""
    from dyncli.diagnose.causes import rank_causes

    diag = run(path, jobs=1)
    assert _groups(rank_causes(_renamed(diag))) == _groups(diag.causes)

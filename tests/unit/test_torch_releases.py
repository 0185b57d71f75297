"""Which torch releases diagnose judges an input to come from (round 26,
dyncli.diagnose.releases), and the fixes whose API depends on it, read in the logs and traces
recorded under each release (tests/data/<release>/, real runs)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.html import render_html
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.read_trace import diagnose_traces
from dyncli.diagnose.releases import FIRST, NAMES, TRACE_WORDS, Releases, judge, stated_range
from dyncli.diagnose.render import render_terminal
from dyncli.logparse.events import FORM_AFTER, FORM_FIRST, FORM_INLINE, FORM_NEW, FORM_SKIP

DATA = Path(__file__).parent.parent / "data"
PASTED = DATA / "pasted"
RELEASES = sorted(p.name for p in DATA.glob("2.*") if p.is_dir())


def _text_log(release: str) -> Path:
    (log,) = [p for p in (DATA / release / "old_log" / "text.log",
                          DATA / release / "compat" / "text.log") if p.exists()]
    return log


def _minor(release: str) -> int:
    return int(release.split(".")[1])


def _holds(r: Releases, release: str) -> bool:
    return r.low <= _minor(release) and (r.high is None or _minor(release) <= r.high)


@pytest.mark.parametrize("release", RELEASES)
def test_each_releases_text_log_is_judged_to_a_range_that_holds_it(release: str) -> None:
    r = diagnose_logs([_text_log(release)]).releases
    assert r is not None and _holds(r, release) and not r.version, r
    assert r.sources and "graph-break records'" in r.sources[0]


@pytest.mark.parametrize("release", [r for r in RELEASES if (DATA / r / "compat" / "trace").is_dir()])
def test_a_trace_states_its_release_from_2_10(release: str) -> None:
    # compilation_metrics' pytorch_version (torch 2.10 on); an older trace tells what its
    # graph-break records do, or nothing
    r = diagnose_traces(sorted((DATA / release / "compat" / "trace").glob("*.log")), jobs=1).releases
    if _minor(release) >= 10:
        assert r is not None and r.version.startswith(release) and (r.low, r.high) == (
            _minor(release), _minor(release)), r
        assert r.sources == (f"the trace's compilation_metrics (pytorch_version {r.version})",)
    else:
        assert r is None or (_holds(r, release) and not r.version), r


def test_torch_2_0s_form_and_convert_frames_skip_tell_their_releases() -> None:
    # pytorch#93698: torch 2.0's "Graph break: … from user code at   File …" (the first frame
    # on the head's line); pytorch#140394: convert_frame.py's "Graph break: skip: …" (2.4-2.7),
    # read as 2.1-2.2's before
    r = diagnose_logs([PASTED / "pytorch-93698-breaks.log"]).releases
    assert r is not None and (r.low, r.high) == (0, 0)
    assert r.text == "torch 2.0 (or torchdynamo before it)" and r.to_json()["range"] == "2.0"
    r = diagnose_logs([PASTED / "pytorch-140394.log"]).releases
    assert r is not None and (r.low, r.high) == (4, 7) and r.to_json()["range"] == "2.4-2.7"


def test_facts_narrow_together_and_contradicting_forms_tell_nothing() -> None:
    r = judge([(FORM_AFTER, False), (FORM_SKIP, False)], ())
    assert r is not None and (r.low, r.high) == (4, 5) and len(r.sources) == 2
    assert judge([(FORM_INLINE, False), (FORM_NEW, False)], ()) is None
    assert judge([(FORM_NEW, True)], ()) == Releases(7, None, "", (
        "the graph-break records' Developer debug context",))
    assert judge([("", False)], ()) is None
    assert judge([], [("garbage", "x"), ("3.1", "x"), ("1.14.0a0+44dac51", "x")]) is None
    r = judge([(FORM_NEW, False)], [("2.12.1+cu130", "metrics")])
    assert r is not None and r.version == "2.12.1+cu130" and r.sources == ("metrics",)
    assert r.has("TORCH_COMPILE_DYNAMIC_SOURCES") and r.has("mark_unbacked") and not r.conflicts
    assert Releases(3, 5).has("mark_unbacked") is None and Releases(3, 4).has("mark_unbacked") is False
    assert all(0 < v <= 15 for v in FIRST.values())


def test_a_stated_version_beats_the_form_and_a_conflict_is_said() -> None:
    # (round 27) a version the input states is the release; a form that disagrees (a log of
    # another install pasted beside it) is said, not taken, and not a reason to say nothing
    r = judge([(FORM_FIRST, False)], [("2.12.1", "metrics")])
    assert r is not None and (r.low, r.high, r.version) == (12, 12, "2.12.1")
    assert r.conflicts == ("the graph-break records' form (\"Graph break: … from user code at "
                           "File …\", the first frame on its line) tells torch 2.0 (or "
                           "torchdynamo before it)",)
    assert r.line().endswith("(from metrics; but the graph-break records' form (\"Graph break: "
                             "… from user code at File …\", the first frame on its line) tells "
                             "torch 2.0 (or torchdynamo before it))")
    assert r.to_json()["conflicts"] == list(r.conflicts)
    # two versions of different releases: the span of both, neither one, and said
    r = judge([], [("2.4.0", "pip"), ("2.5.1+cu124", "collect_env")])
    assert r is not None and (r.low, r.high, r.version) == (4, 5, "")
    assert r.conflicts == ("the input states different versions: 2.4.0, 2.5.1+cu124",)
    # one release's two spellings agree
    r = judge([], [("2.5.1+cu124", "collect_env"), ("2.5.1", "pip")])
    assert r is not None and r.version == "2.5.1+cu124" and not r.conflicts
    assert r.sources == ("collect_env", "pip")
    # a nightly or a source build of 2.x is between 2.(x-1) and 2.x: its form may be the older
    # one's (pytorch#121349), which then narrows it, no conflict
    assert stated_range("2.10.0.dev20251021+cu128") == (9, 10)
    assert stated_range("2.3.0a0+git1234567") == (2, 3) and stated_range("2.4.0rc1") == (4, 4)
    r = judge([(FORM_INLINE, False)], [("2.3.0.dev20240301", "collect_env")])
    assert r is not None and (r.low, r.high) == (2, 2) and not r.conflicts
    assert r.version == "2.3.0.dev20240301" and len(r.sources) == 2
    # a TORCH_TRACE trace is 2.3's on: said where nothing else tells more
    r = judge([], (), trace=True)
    assert r is not None and (r.low, r.high) == (3, None) and r.sources == (TRACE_WORDS,)


def test_the_json_and_the_terminal_say_the_release_and_what_told_it() -> None:
    diag = diagnose_logs([_text_log("2.3.1")])
    doc = json.loads(json.dumps(diag.to_json()))
    assert doc["releases"] == {
        "range": "2.3-2.5", "low": "2.3", "high": "2.5", "version": None,
        "from": ['the graph-break records\' form ("Graph break: from user code at:", the '
                 "exception after the stack)"], "conflicts": []}
    out = io.StringIO()
    render_terminal(diag, console=Console(file=out, width=400, color_system=None))
    (line,) = [t for t in out.getvalue().splitlines() if t.startswith("torch release:")]
    assert line.startswith("torch release: 2.3-2.5 (from the graph-break records' form")
    assert "<p>torch release: 2.3-2.5 (from the graph-break records&#x27; form" in render_html(diag)
    # nothing tells: the key is null, and no line
    quiet = diagnose_logs([DATA / "logs" / "auto_dynamic_batch.log"])
    assert quiet.releases is None and quiet.to_json()["releases"] is None
    out = io.StringIO()
    render_terminal(quiet, console=Console(file=out, width=400, color_system=None))
    assert "torch release:" not in out.getvalue()


def _listed_fix(diag) -> str:  # type: ignore[no-untyped-def]
    (fix,) = [s.fix for s in diag.suggestions if "TORCH_COMPILE_DYNAMIC_SOURCES=" in (s.fix or "")]
    return fix


@pytest.mark.parametrize("release", ["2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1"])
def test_the_dynamic_sources_fix_says_a_release_before_2_7_has_no_such_setting(release: str) -> None:
    # TORCH_COMPILE_DYNAMIC_SOURCES is 2.7's (2.7.1 compiler/config.py:67; 2.6.0 has none):
    # the mark in code is the fix there, so it comes first (round 27), in the finding and in
    # its root cause ("What to fix first"), and the list after it, for torch 2.7 on
    diag = diagnose_logs([_text_log(release)])
    fix = _listed_fix(diag)
    assert fix == ("before each call of scale: torch._dynamo.maybe_mark_dynamic(x, 0)  [the "
                   f"log's torch {'2.1-2.2' if _minor(release) < 3 else '2.3-2.5'} has no "
                   "TORCH_COMPILE_DYNAMIC_SOURCES (torch 2.7's) and ignores it; from torch 2.7: "
                   "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\"]"), fix
    assert diag.causes[0].fix == fix, diag.causes[0]


def test_the_per_dim_note_follows_the_release_a_trace_states() -> None:
    def fix(release: str) -> str:
        return _listed_fix(diagnose_traces(
            sorted((DATA / release / "compat" / "trace").glob("*.log")), jobs=1))
    # 2.12 reads no ':N': the whole-source entry, for that release
    assert fix("2.12.1").endswith("[the log's torch 2.12.1+cu130 reads no list entry's ':N' "
                                  "(torch 2.13 does); there: TORCH_COMPILE_DYNAMIC_SOURCES="
                                  "\"L['x']\" (every dim of those inputs)]"), fix("2.12.1")
    # 2.15 reads it: no note; 2.9.1's trace states no version: the note for any release
    assert fix("2.15.0").startswith("TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\"")
    assert "[" not in fix("2.15.0").replace("L['x']", "")
    assert "a list entry's ':N' needs torch 2.13" in fix("2.9.1")


@pytest.mark.parametrize("release", ["2.4.1", "2.5.1", "2.6.0"])
def test_set_stance_is_named_only_where_the_release_has_it(tmp_path: Path, release: str) -> None:
    # "Observed exception" is 2.4's on (2.4.0 symbolic_convert.py:1303); set_stance 2.6's
    whole = _text_log(release)
    (b,) = [x for x in diagnose_logs([whole]).graph_breaks if x.user_line == 38]
    log = tmp_path / "observed.log"
    log.write_text(whole.read_text().replace(b.reason, "Observed exception"))
    (fix,) = [s.fix for s in diagnose_logs([log]).suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "run it uncompiled (remove torch.compile" in fix, fix
    assert ("set_stance" in fix) is (release >= "2.6"), fix


def test_a_raised_break_takes_the_api_of_the_release_the_other_records_tell(tmp_path: Path) -> None:
    # vllm-ascend#1962's raised break tells no release (any of 2.1-2.6 raise it alike); read
    # with a 2.3.1 log, whose records' form is 2.3-2.5's, it names those releases' APIs only
    log = tmp_path / "both.log"
    log.write_text(_text_log("2.3.1").read_text() + (PASTED / "vllm-ascend-1962.log").read_text())
    diag = diagnose_logs([log])
    (fix,) = [s.fix for s in diag.suggestions if "rotary_embedding" in (s.fix or "")]
    assert ('torch.library.register_fake("_C::rotary_embedding") (torch 2.4-2.5; '
            'torch.library.impl_abstract("_C::rotary_embedding") on torch 2.3)') in fix, fix
    assert "_custom_ops" not in fix


_ZERO_ONE = DATA / "traces" / "zero_one_specialization" / "dedicated_log_torch_trace_d5gv_eiv.log"


@pytest.mark.parametrize(("version", "note"), [
    ("2.14.1+cu130", ""),  # as recorded: 2.14.1 reads L['x']:0
    ("2.10.0+cu128", "  [the log's torch 2.10.0+cu128 reads no entry's ':N' in "
     "TORCH_COMPILE_UNBACKED_SOURCES (torch 2.13 does); the mark_unbacked call above does it "
     "there]"),
    # (2.5-2.7: the mark_unbacked call first, the list after it for 2.8 on: round 27)
    ("2.7.1", "  [the log's torch 2.7.1 has no TORCH_COMPILE_UNBACKED_SOURCES (torch 2.8's) and "
     "ignores it; from torch 2.8: TORCH_COMPILE_UNBACKED_SOURCES=\"L['x']:0\"]"),
])
def test_the_unbacked_list_is_said_for_the_release_the_trace_states(
        tmp_path: Path, version: str, note: str) -> None:
    # the recorded 2.14.1 trace, its pytorch_version made that of an older release:
    # TORCH_COMPILE_UNBACKED_SOURCES is 2.8's (2.8.0 compiler/config.py:81), ':N' 2.13's
    trace = tmp_path / _ZERO_ONE.name
    text = _ZERO_ONE.read_text()
    assert text.count('"pytorch_version": "2.14.1+cu130"') == 4
    trace.write_text(text.replace('"pytorch_version": "2.14.1+cu130"',
                                  f'"pytorch_version": "{version}"'))
    diag = diagnose_traces([trace], jobs=1)
    assert diag.releases is not None and diag.releases.version == version
    (fix,) = [s.fix for s in diag.suggestions if "UNBACKED_SOURCES" in (s.fix or "")]
    code = "before each call of normalize: torch._dynamo.decorators.mark_unbacked(x, 0)"
    written = ("TORCH_COMPILE_UNBACKED_SOURCES=\"L['x']:0\"  (or, in code, " + code + ")"
               if "from torch 2.8" not in note else code)
    assert fix == written + note + "; or accept one extra compile", fix


def test_a_debug_context_narrows_a_forms_range_and_keeps_its_end() -> None:
    """Round 27: a debug context (2.7 on) on convert_frame's skip form (2.4-2.7) read as
    "2.7 and later": the form's end was dropped; both facts hold, so 2.7."""
    r = judge([(FORM_SKIP, True)], ())
    assert r is not None and (r.low, r.high) == (7, 7) and len(r.sources) == 2
    assert judge([(FORM_AFTER, True)], ()) is None  # 2.3-2.5 with 2.7's context: nothing
    assert judge([(FORM_NEW, True)], ()) == Releases(7, None, "", (
        "the graph-break records' Developer debug context",))


def test_the_stated_version_is_kept_whatever_iterable_or_other_majors_come() -> None:
    """Round 27: ``versions`` read twice (an iterator was empty the second time) and counted
    a version of another major, so the one stated 2.x version was lost."""
    for versions in (iter(["2.12.1"]), ["2.12.1", "1.13.1"], ("2.12.1", "")):
        r = judge([], ((v, f"the input's {v}") for v in versions))
        assert r is not None and r.version == "2.12.1" and r.text == "torch 2.12.1", versions


def test_has_and_named_agree_on_a_renamed_api() -> None:
    """Round 27: FIRST restated NAMES' first release of a renamed API, and differently
    (recompile_limit 7, though every release has it, as cache_size_limit before 2.7)."""
    for api in NAMES:
        assert api not in FIRST, api  # (its first release is NAMES' first row, said once)
        for low in range(16):
            for high in (low, None):
                known = Releases(low, high)
                assert (known.has(api) is not False) == (known.named(api) is not None), \
                    (api, low, high)
    assert Releases(1, 5).has("recompile_limit") and Releases(1, 5).has("fail_on_recompile_limit_hit") is False


def test_a_traces_own_fact_is_said_only_where_nothing_tells_more() -> None:
    # (round 27) a 2.7.1 trace's records carry a debug context (2.7 on): that is what told it
    r = judge([(FORM_NEW, True)], (), trace=True)
    assert r is not None and (r.low, r.high) == (7, None), r
    assert r.sources == ("the graph-break records' Developer debug context",)

"""Each API, config and environment variable a diagnose fix names, in what the releases that
wrote the log have (round 26: dyncli.diagnose.releases FIRST, NAMES, ``named``), read in the
logs recorded under old releases and the pasted ones whose release their records tell."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.advice import _absent_apis
from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.read_trace import diagnose_traces
from dyncli.diagnose.releases import EVERY_SIZE, Releases, listed_fix, named

DATA = Path(__file__).parent.parent / "data"
PASTED = DATA / "pasted"
OLD_LOG = DATA / "2.1.2" / "old_log" / "text.log"  # records of 2.1-2.2's form
COMPAT_23 = DATA / "2.3.1" / "compat" / "text.log"  # records of 2.3-2.5's form
TORCH_20 = PASTED / "pytorch-93698-breaks.log"  # torch 2.0's form (MANIFEST)


def _joined(tmp_path: Path, *logs: Path) -> Path:
    out = tmp_path / "joined.log"
    out.write_text("".join(p.read_text() for p in logs))
    return out


def test_each_release_gets_its_own_name_and_nothing_where_it_has_none() -> None:
    assert Releases(1, 2).named("recompile_limit") == "cache_size_limit"
    assert Releases(7, None).named("recompile_limit") == "recompile_limit"
    # a range across the rename keeps the newest name (today's text)
    assert Releases(6, None).named("recompile_limit") == "recompile_limit"
    assert Releases(6, 6).named("fail_on_recompile_limit_hit") == "fail_on_cache_limit_hit"
    assert Releases(3, 5).named("fail_on_recompile_limit_hit") is None
    assert Releases(0, 0).named("torch.export") == "torch._dynamo.export"
    assert Releases(0, 0).named("torch.compiler.disable") == "torch._dynamo.disable"
    assert Releases(0, 0).named("TORCH_LOGS") is None
    assert Releases(1, 2).named("TORCH_TRACE") is None
    assert Releases(3, 5).named("torch._dynamo.error_on_graph_break") is None
    assert Releases(3, None).named("torch._dynamo.error_on_graph_break") == \
        "torch._dynamo.error_on_graph_break"
    # nothing told: the newest name
    assert named("fail_on_recompile_limit_hit", None) == "fail_on_recompile_limit_hit"


def test_a_raised_break_names_error_on_graph_break_only_where_the_release_has_it(
        tmp_path: Path) -> None:
    # vllm-ascend#1962's raised break tells no release; read with a 2.3.1 log it is 2.3-2.5's,
    # which have no torch._dynamo.error_on_graph_break (2.9.1 decorators.py:941, 2.8.0 none)
    alone = diagnose_logs([PASTED / "vllm-ascend-1962.log"])
    (said,) = [s.message for s in alone.suggestions if "raised as an error" in s.message]
    assert ("(fullgraph=True, torch.export or torch._dynamo.error_on_graph_break(True) make "
            "every graph break one)") in said, said
    diag = diagnose_logs([_joined(tmp_path, COMPAT_23, PASTED / "vllm-ascend-1962.log")])
    (said,) = [s.message for s in diag.suggestions if "raised as an error" in s.message]
    assert "(fullgraph=True or torch.export make every graph break one)" in said, said
    titles = [c.title for c in diag.causes if "raised as an error" in c.title]
    assert titles and not any("error_on_graph_break" in t for t in titles), titles


def test_the_richer_log_names_only_what_the_release_reads() -> None:
    # TORCH_LOGS is 2.1's (torch/_logging), TORCH_TRACE 2.3's (2.3.1 _logging/_internal.py:34)
    old = diagnose_logs([OLD_LOG])
    assert old.richer_log == "", old.richer_log  # (what only a trace would give)
    paste = diagnose_logs([PASTED / "pytorch-107865.log"])
    assert paste.releases is not None and paste.releases.high == 2
    assert paste.richer_log.startswith('TORCH_LOGS="+dynamic,recompiles,guards,graph_breaks" '
                                       "would also show"), paste.richer_log
    first = diagnose_logs([TORCH_20])
    assert first.richer_log.startswith(
        "the log's torch 2.0 (or torchdynamo before it) reads neither TORCH_LOGS (torch 2.1 on) "
        "nor TORCH_TRACE (2.3 on): a rerun on a later torch"), first.richer_log
    assert "mark_dynamic" not in first.richer_log


def test_torch_2_0_is_told_its_own_disable(tmp_path: Path) -> None:
    # torch.compiler.disable is 2.1's (2.1.0 compiler/__init__.py:83); 2.0 has
    # torch._dynamo.disable (2.0.1 eval_frame.py:711)
    diag = diagnose_logs([_joined(tmp_path, PASTED / "pytorch-lightning-17214.log", TORCH_20)])
    assert diag.releases is not None and diag.releases.high == 0
    fixes = [s.fix for s in diag.suggestions if "disable" in (s.fix or "")]
    assert fixes and all("torch._dynamo.disable" in f and "torch.compiler" not in f
                         for f in fixes), fixes
    assert any("torch.compiler.disable" in (s.fix or "")
               for s in diagnose_logs([PASTED / "pytorch-lightning-17214.log"]).suggestions)


def test_the_guard_stack_variable_is_named_only_from_2_3(tmp_path: Path) -> None:
    # TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED: 2.3.1 fx/experimental/_config.py:37, 2.2.2 none
    def fix(*logs: Path) -> str:
        (f,) = [s.fix for s in diagnose_logs(list(logs)).suggestions
                if "[guard added]" in (s.fix or "")]
        return f
    assert "TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED" in fix(PASTED / "pytorch-121080.log")
    old = fix(_joined(tmp_path, OLD_LOG, PASTED / "pytorch-121080.log"))
    assert "EXTENDED_DEBUG" not in old and old.endswith("it names the code; paste it"), old


def test_raising_the_limit_on_every_thread_is_said_from_2_12(tmp_path: Path) -> None:
    # torch.compile's recompile_limit= and a config assignment per thread are 2.12's (2.12.0
    # torch/__init__.py:2610; 2.11.0's compile has no such argument, its assignment holds for
    # the process): the recorded 2.15 trace, its pytorch_version made an older release's
    (trace,) = (DATA / "2.15.0" / "traces" / "module_int_attr").glob("*.log")

    def fixes(version: str) -> list[str]:
        out = tmp_path / version / trace.name
        out.parent.mkdir()
        out.write_text(trace.read_text().replace('"pytorch_version": "2.15.0+cu132"',
                                                 f'"pytorch_version": "{version}"'))
        diag = diagnose_traces([out], jobs=1)
        assert diag.releases is not None and diag.releases.version == version
        return [s.fix for s in diag.suggestions if "recompile limit" in (s.fix or "")]

    new, old = fixes("2.12.0"), fixes("2.11.0")
    assert new and all("recompile_limit=N" in f for f in new), new
    assert old and not any("recompile_limit=N" in f or "thread" in f for f in old), old


def test_torch_2_0_is_told_it_has_no_mark_either() -> None:
    # mark_dynamic and maybe_mark_dynamic are 2.1's (2.1.0 decorators.py:163, :200); torch
    # 2.0's torch.compile(dynamic=True) makes every size dynamic (2.0.1 eval_frame.py:124):
    # the call that works there comes first (round 27), the list after it for a later torch
    listed = "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\""
    code = "before each call of f: torch._dynamo.maybe_mark_dynamic(x, 0)"
    fix = listed_fix("TORCH_COMPILE_DYNAMIC_SOURCES", listed, code, (), Releases(0, 0),
                     "maybe_mark_dynamic", EVERY_SIZE)
    assert fix == ("torch.compile(…, dynamic=True), which makes every size dynamic  [the log's "
                   "torch 2.0 (or torchdynamo before it) has neither TORCH_COMPILE_DYNAMIC_SOURCES "
                   "(torch 2.7's) nor maybe_mark_dynamic (torch 2.1's); from torch 2.7: "
                   f"{listed}]"), fix
    # 2.1-2.6: the mark first; 2.7 on (or nothing told): the list, then the mark, as written
    assert listed_fix("TORCH_COMPILE_DYNAMIC_SOURCES", listed, code, (), Releases(1, 2),
                      "maybe_mark_dynamic", EVERY_SIZE).startswith(code + "  [the log's torch 2.1-2.2 "
                                                                   "has no TORCH_COMPILE_DYNAMIC_SOURCES")
    for known in (Releases(7, None), None):
        assert listed_fix("TORCH_COMPILE_DYNAMIC_SOURCES", listed, code, (), known,
                          "maybe_mark_dynamic", EVERY_SIZE) == f"{listed}  (or, in code, {code})"
    # the unbacked list has no such way out before mark_unbacked (2.5): dynamic=True
    # specializes 0 and 1 too, so the list stays, said ignored, and no dynamic=True
    zero = listed_fix("TORCH_COMPILE_UNBACKED_SOURCES", "TORCH_COMPILE_UNBACKED_SOURCES=\"L['x']:0\"",
                      "before each call of f: torch._dynamo.decorators.mark_unbacked(x, 0)", (),
                      Releases(3, 4), "mark_unbacked")
    assert "dynamic=True" not in zero and zero.endswith(
        "[TORCH_COMPILE_UNBACKED_SOURCES is torch 2.8's: the log's torch 2.3-2.4 has no such "
        "setting, nor mark_unbacked (torch 2.5's) and ignores it; torch 2.8 or later reads it]"), zero


def test_a_fix_naming_an_api_torch_2_0_lacks_says_so() -> None:
    # (round 27) TORCH_LOGS, torch._check and mark_static are 2.1's (2.1.0 torch/_logging/,
    # torch/__init__.py:992, _dynamo/decorators.py:218; 2.0.1 has none): a fix that names one
    # says so on a 2.0 log, with 2.0's print_graph_breaks (2.0.1 config.py:98) for the logs
    a = Advice(kind=AdviceKind.GRAPH_BREAK, message="m",
               fix='TORCH_LOGS="graph_breaks" shows it; or torch._check(n >= 0)')
    fix = _absent_apis(a, Releases(0, 0)).fix
    assert fix.endswith("  [the log's torch 2.0 (or torchdynamo before it) has no TORCH_LOGS "
                        "(torch 2.1's); there torch._dynamo.config.print_graph_breaks = True "
                        "prints its graph breaks; what else it names needs a later torch]"
                        "  [the log's torch 2.0 (or torchdynamo before it) has no torch._check "
                        "(torch 2.1's)]"), fix
    for known in (Releases(1, 2), None):
        assert _absent_apis(a, known) is a

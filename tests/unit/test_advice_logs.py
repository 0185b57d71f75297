"""diagnose's fixes on the advice corpus's recorded logs, each level, both torch versions.

The logs are tests/data/<torch version>/advice/ (tests/advice/record.py). Each test is the
regression test of one defect of issue 26; tests/integration/test_advice.py applies the fixes
to the running programs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.api import run as diagnose
from dyncli.diagnose.model import Diagnosis

DATA = Path(__file__).resolve().parents[1] / "data"
VERSIONS = sorted(p.parent.parent.name for p in DATA.glob("*/advice/compiles.json"))


def log(version: str, program: str, level: str) -> Diagnosis:
    return diagnose(str(DATA / version / "advice" / f"{program}.{level}.log.gz"))


def kinds(d: Diagnosis) -> list[str]:
    return [s.kind for s in d.suggestions]


def fix(d: Diagnosis, kind: str) -> str:
    return next(s.fix for s in d.suggestions if s.kind == kind)


pytestmark = pytest.mark.parametrize("v", VERSIONS)


def test_recorded_for_both_versions(v: str) -> None:
    assert {"2.14.1", "2.15.0"} <= set(VERSIONS)


@pytest.mark.parametrize("program", ["batch", "seq", "two_inputs", "zero_one", "several_frames",
                                     "linear_pins_last", "guard_limit", "param_shape"])
def test_a_recompiles_log_counts_the_first_compile(v: str, program: str) -> None:
    """The first compile of a frame is implied by its recompiles (was '1 compile, 1 recompile')."""
    import json

    want = json.loads((DATA / v / "advice" / "compiles.json").read_text())[program]
    assert log(v, program, "recompiles").compiles == want == log(v, program, "full").compiles


def test_size_recompiles_get_a_fix_from_a_recompiles_log(v: str) -> None:
    d = log(v, "batch", "recompiles")
    s = next(x for x in d.suggestions if x.kind == "mark-dynamic")
    assert "L['x']:0" in s.message and "first guard" in s.message
    assert s.fix.startswith('TORCH_COMPILE_DYNAMIC_SOURCES=".*:0"  [a list entry\'s \':N\' needs')
    assert s.fix.endswith('TORCH_COMPILE_DYNAMIC_SOURCES=".*" (every dim of every input, as '
                          'dynamic=True)]')  # what torch before 2.13 reads
    assert d.log_level == "recompiles" and "+dynamic" in d.richer_log


@pytest.mark.parametrize("program", ["two_inputs", "list_input", "kwargs_input", "graph_break"])
def test_first_guard_only_the_list_covers_every_input(v: str, program: str) -> None:
    """A recompiles log names only the first failed guard per compile: `L['x']:0` left the
    second input (y, xs[1], mask, the resume frame's y) recompiling (2 -> 2 compiles); the list
    covers dim 0 of every input, and the ranked cause prints the same list."""
    d = log(v, program, "recompiles")
    assert fix(d, "mark-dynamic").startswith('TORCH_COMPILE_DYNAMIC_SOURCES=".*:0"  [')
    assert all("TORCH_COMPILE" not in s.fix or s.fix.startswith('TORCH_COMPILE_DYNAMIC_SOURCES='
                                                                 '".*:0"') for s in d.suggestions)
    assert d.causes[0].fix == 'TORCH_COMPILE_DYNAMIC_SOURCES=".*:0"'
    assert d.causes[0].compiles >= 1


def test_torchs_default_warning_names_the_size_and_why_no_fix(v: str) -> None:
    """No TORCH_LOGS: the recompile-limit warning's last reason names the source and dim, in
    a compile after the first: dynamic=False, mark_static or code that specializes the size
    keep it static, and the warning cannot tell which (the list helps the first only)."""
    d = log(v, "recompile_limit", "none")
    assert d.compiles == 2 and d.log_level == "warnings"
    s = next(x for x in d.suggestions if x.kind == "size-pinned")
    assert s.message.startswith("L['x']:0: ") and "dynamic=False" in s.message
    assert "+dynamic" in s.fix
    assert all("TORCH_COMPILE" not in x.fix for x in d.suggestions)
    assert "size-pinned" in fix(d, "recompile-limit")
    assert all("TORCH_COMPILE" not in c.fix for c in d.causes)


@pytest.mark.parametrize("program", ["guard_limit", "mark_static_batch", "dynamic_false",
                                     "recompile_limit"])
def test_a_size_kept_static_gets_no_fix_from_a_recompiles_log(v: str, program: str) -> None:
    """The same dim recompiling again after a compile made for its change kept it static:
    the guard limit and mark_static (no list helps: 4 -> 4, 3 -> 3) look the same in a
    recompiles log as dynamic=False (the list helps). No fix; the richer log gives one."""
    d = log(v, program, "recompiles")
    assert "size-pinned" in kinds(d) and "mark-dynamic" not in kinds(d)
    assert all("TORCH_COMPILE" not in s.fix and "(in code" not in s.fix for s in d.suggestions)
    assert all("TORCH_COMPILE" not in c.fix for c in d.causes)


def test_a_size_kept_static_gets_the_fix_from_the_full_log(v: str) -> None:
    for program in ("dynamic_false", "recompile_limit"):
        assert "L['x']:0" in fix(log(v, program, "full"), "mark-dynamic")


def test_an_int_specialized_again_gets_no_list_from_a_recompiles_log(v: str) -> None:
    """`range(n)`: the guard on n failed in the compile made once n was dynamic; the list
    changed nothing (3 -> 3). The log names the code; +dynamic tells every value from one."""
    d = log(v, "int_loop", "recompiles")
    f = fix(d, "scalar-recompile")
    assert "TORCH_COMPILE" not in f and "range(n)" in f and "+dynamic" in f
    assert all("TORCH_COMPILE" not in c.fix for c in d.causes)
    assert "\"L['n']\"" in fix(log(v, "int_input", "recompiles"), "scalar-recompile")


def test_closure_cell_spelled_as_torch(v: str) -> None:
    for level in ("recompiles", "full"):
        assert "\"L['g'].__closure__[0].cell_contents\"" in fix(log(v, "closure_int", level),
                                                               "scalar-recompile")


def test_sources_of_globals_lists_and_module_wrappers(v: str) -> None:
    for level in ("recompiles", "full"):  # recompiles: named in the message, listed as `.*:0`
        def text(program: str) -> str:
            s = next(x for x in log(v, program, level).suggestions  # noqa: B023
                     if x.kind == "mark-dynamic")
            return s.message + s.fix
        assert "G['TABLE']['t']:0" in text("global_tensor")
        assert "L['xs'][0]:0" in text("list_input")
        assert "L['self'].cache:0" in text("module_tensor_attr")


def test_a_float_is_not_allow_listed(v: str) -> None:
    d = log(v, "float_input", "recompiles")
    s = next(x for x in d.suggestions if x.kind == "scalar-recompile")
    assert "float" in s.message and "TORCH_COMPILE" not in s.fix


def test_an_int_the_code_specializes_is_not_allow_listed(v: str) -> None:
    d = log(v, "int_loop", "full")
    assert "user-specialization" in kinds(d)
    assert "TORCH_COMPILE" not in fix(d, "scalar-recompile")


def test_module_int_gets_its_source(v: str) -> None:
    assert "\"L['self'].k\"" in fix(log(v, "module_int_attr", "recompiles"), "scalar-recompile")


def test_parameters_matched_by_torchs_reason(v: str) -> None:
    f = fix(log(v, "param_shape", "recompiles"), "static-parameters")
    assert "L['self']._parameters['w']:1" in f and "force_parameter_static_shapes = False" in f


def test_changed_mark_dynamic_dims_are_not_a_dtype_change(v: str) -> None:
    d = log(v, "mark_dynamic_indices", "recompiles")
    assert [r.cause for r in d.recompiles] == ["size"]
    assert "non-shape-recompile" not in kinds(d)
    assert "mark-dynamic-dims-changed" in kinds(d)
    full = log(v, "mark_dynamic_indices", "full")
    assert "mark_dynamic(x, [0, 1])" in fix(full, "mark-dynamic-dims-changed")


def test_guard_limit_specialization(v: str) -> None:
    d = log(v, "guard_limit", "full")
    assert kinds(d).count("guard-limit-specialization") == 1
    assert "user-specialization" not in kinds(d) and "mark-dynamic" not in kinds(d)
    assert d.stats.unrecognized == 0


def test_linear_pins_a_dim_framework_not_user(v: str) -> None:
    d = log(v, "linear_pins_last", "full")
    fw = next(s for s in d.suggestions if s.kind == "framework-specialization")
    assert "linear.py" in fw.message
    f = fix(d, "mark-dynamic")
    assert "mark_dynamic(x, 0)" in f and "maybe_mark_dynamic(x, 1)" in f
    assert "mark_dynamic(x, [0, 1])" not in f


def test_pinned_size_uses_maybe_mark_dynamic(v: str) -> None:
    f = fix(log(v, "size_branch", "full"), "mark-dynamic")
    assert "maybe_mark_dynamic(x, 0)" in f and "torch._dynamo.mark_dynamic(" not in f


def test_one_list_for_every_frame(v: str) -> None:
    d = log(v, "several_frames", "full")
    assert kinds(d).count("mark-dynamic") == 1
    assert "L['x']:0,L['y']:1" in fix(d, "mark-dynamic")


def test_zero_one_gets_the_unbacked_list(v: str) -> None:
    f = fix(log(v, "zero_one", "full"), "zero-one-specialization")
    assert "TORCH_COMPILE_UNBACKED_SOURCES=\"L['x']:0\"" in f and "mark_unbacked(x, 0)" in f


@pytest.mark.parametrize("level", ["recompiles", "full"])
def test_no_fix_for_non_shape_changes(v: str, level: str) -> None:
    for program in ("dtype_change", "grad_mode", "bool_flip"):
        d = log(v, program, level)
        assert all("TORCH_COMPILE" not in s.fix and " = " not in s.fix for s in d.suggestions)


def test_suggest_from_trace_keeps_torchs_state(v: str) -> None:
    """dynamic=False with a recompile limit: torch wrote two static snapshots ([2, 3] then
    [3, 3]); joining them made a dynamic dim and a "torch's own hint" torch never gave."""
    from dyncli.suggest.api import run as suggest

    a = suggest(from_trace=DATA / v / "advice" / "recompile_limit.trace.log.gz")
    assert a.value == "" and a.torch_hint == ""
    [row] = [r for fr in a.frames for r in fr.inputs]
    assert (row.source, row.status) == ("L['x']", "static")


def test_mark_static_is_respected(v: str) -> None:
    """An explicit mark_static: no allow-list for that dim (it changed nothing), say so."""
    d = log(v, "mark_static_batch", "full")
    assert d.marked_static == ((None, "L['x']", (0,)),)
    assert "mark-dynamic" not in kinds(d) and "mark-static" in kinds(d)
    both = log(v, "mark_static", "full")  # dim 1 changes too: only it is listed
    assert "L['x']:1" in fix(both, "mark-dynamic") and "L['x']:0" not in fix(both, "mark-dynamic")


TRACED = ("guard_limit", "float_input", "int_loop", "mark_dynamic_indices", "mark_static_batch")


@pytest.mark.parametrize("program", TRACED)
def test_suggest_from_trace_leaves_out_what_the_trace_shows_no_list_helps(v: str,
                                                                          program: str) -> None:
    """The PGO state in these traces lists the input dynamic (torch's hint lowered nothing:
    4 -> 4, 2 -> 2, 3 -> 3, 2 -> 2, 3 -> 3); the trace's guards and specializations show why
    (the guard limit, a float, range(n), changing mark_dynamic dims, mark_static)."""
    from dyncli.suggest.api import run as suggest

    a = suggest(from_trace=DATA / v / "advice" / f"{program}.trace.log.gz")
    assert a.value == "" and a.torch_hint
    assert any(n.startswith("left out L[") for n in a.notes)


def test_mark_static_is_read_from_a_trace(v: str) -> None:
    """The trace's guards tree has the mark_static marking guard too (it printed the
    allow-list there, which changed nothing: 3 -> 3)."""
    d = diagnose(str(DATA / v / "advice" / "mark_static_batch.trace.log.gz"))
    assert d.marked_static == ((None, "L['x']", (0,)),)
    assert "mark-dynamic" not in kinds(d) and "mark-static" in kinds(d)
    # nor does the trace's similar-graphs suggestion list it
    assert all("TORCH_COMPILE" not in x.fix for x in (*d.suggestions, *d.causes))


def test_inputs_that_change_in_the_same_run_are_listed_together(v: str) -> None:
    """Issue 33, pattern 9: int_branch's batch grows beside an int with `if n == 33`. Each entry
    alone leaves 3 compiles (applied: tests/integration/test_advice.py); torch's hint lists
    both (2). Every listed fix of the full log holds both, as one list; the `recompiles` log
    names only the int's guard (the batch's change is not in it) and lists nothing, saying
    which log tells."""
    if not (DATA / v / "advice" / "int_branch.full.log.gz").exists():
        pytest.skip(f"int_branch was recorded under a later torch than {v}")
    d = log(v, "int_branch", "full")
    listed = [s.fix for s in d.suggestions if s.fix.startswith("TORCH_COMPILE_DYNAMIC_SOURCES=")]
    assert listed and all("L['n']" in f and "L['x']:0" in f for f in listed), listed
    coarse = log(v, "int_branch", "recompiles")
    assert not any(s.listed for s in coarse.suggestions)
    assert any(s.needs_richer_log and "+dynamic" in s.fix for s in coarse.suggestions)

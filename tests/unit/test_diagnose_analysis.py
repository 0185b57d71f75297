"""Facts that dyncli diagnose finds in the real torch 2.14 logs of tests/data/logs (no torch).

Each log was captured by tests/data/make_logs.py from the program of the same name in
tests/data/programs/; the expected facts follow from what those programs do.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import events as ev
from dyncli.logparse.guardtext import classify

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"

LOGS = Path(__file__).resolve().parents[1] / "data" / "logs"


@cache
def case(name: str) -> Diagnosis:
    return diagnose_logs([LOGS / f"{name}.log"], strict=True)


def kinds(d: Diagnosis) -> list[str]:
    return [s.kind for s in d.suggestions]


def test_auto_dynamic_batch() -> None:
    d = case("auto_dynamic_batch")
    (f,) = d.frames
    assert (f.function, f.first_line, f.compiles, f.compile_ids) == ("scale_and_center", 7, 2, ("0/0", "0/1"))
    assert [(x.source, x.origin, x.compile_id) for x in f.dynamic_inputs] == [
        ("L['x']", "automatic dynamic/PGO", "0/1")]
    assert dict(f.dynamic_dims) == {"L['x']": (0,)}
    (r,) = d.recompiles
    assert (r.compile_id, r.cause, r.reasons) == (
        "0/1", "size", ("0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6",))
    assert d.dynamic_sources == ("L['x']:0",)
    assert kinds(d) == ["mark-dynamic"]
    (s,) = d.suggestions
    assert 'TORCH_COMPILE_DYNAMIC_SOURCES="L[\'x\']:0"' in s.fix and "mark_dynamic(x, 0)" in s.fix
    assert any("size mismatch" in e for e in s.evidence) and any("marking L['x']" in e for e in s.evidence)
    assert not d.specializations and not d.graph_breaks


def test_user_size_specialization() -> None:
    d = case("user_size_specialization")
    assert d.frames[0].compiles == 3
    assert [r.cause for r in d.recompiles] == ["size", "size"]
    (s,) = d.specializations
    assert (s.compile_id, s.symbol, s.sources, s.value, s.reason, s.guard) == (
        "0/1", "s77", ("L['x'].size()[0]",), "10", "range_refined_to_singleton", "Eq(s77, 10)")
    # torch prints the path relative to the working dir; it is resolved against the frame's file
    assert s.user is not None and s.user.file.startswith("/")
    assert s.user.file.endswith("/tests/data/programs/user_size_specialization.py")
    assert (s.user.line, s.user.function, s.user.code) == (8, "pick", "if x.shape[0] == 10:")
    assert "user-specialization" in kinds(d)
    # marking up front saves the first recompile only; the second is the specialization's
    mark = next(x for x in d.suggestions if x.kind == "mark-dynamic")
    assert "recompiled 1x" in mark.message


def test_int_specialization_is_scalar() -> None:
    d = case("int_specialization")
    assert [(r.compile_id, r.cause) for r in d.recompiles] == [("0/1", "scalar"), ("0/2", "scalar")]
    assert d.recompiles[1].reasons == ("0/1: n == 33", "0/0: n == 31")
    assert d.recompiles[0].user is not None and d.recompiles[0].user.line == 11
    (s,) = d.specializations
    assert (s.sources, s.value, s.user.line if s.user else None) == (("L['n']",), "33", 11)
    assert d.dynamic_sources == ("L['n']",)
    scalar = next(x for x in d.suggestions if x.kind == "scalar-recompile")
    assert "L['n']" in scalar.fix and "2x" in scalar.message


def test_zero_one_specialization() -> None:
    d = case("zero_one_specialization")
    assert [r.cause for r in d.recompiles] == ["size", "size"]
    assert d.recompiles[1].reasons[0] == "0/1: 2 <= x.size()[0]"
    assert d.dynamic_sources == ("L['x']:0",)  # the size-1 compile does not hide the dynamic dim
    assert d.zero_one_guards and "2 <= L['x'].size()[0]" in d.zero_one_guards[0][1]
    z = next(x for x in d.suggestions if x.kind == "zero-one-specialization")
    assert "mark_unbacked" in z.fix and "2 <= x.size()[0]" in z.evidence[0]


def test_graph_break_two_frames_both_recompile() -> None:
    d = case("graph_break_frames")
    assert [(f.frame_id, f.function, f.compiles) for f in d.frames] == [
        ("0", "two_halves", 2), ("1", "torch_dynamo_resume_in_two_halves_at_9", 2)]
    assert [(r.compile_id, r.cause) for r in d.recompiles] == [("0/1", "size"), ("1/1", "size")]
    (b,) = d.graph_breaks  # the duplicate (suppressed-stack) break is the same site
    assert (b.user_line, b.count, b.reason, b.compile_ids) == (
        9, 2, "Failed to trace builtin operator", ("0/0", "0/1"))
    assert b.file.endswith("graph_break_frames.py") and b.code.startswith("print(")
    assert d.dynamic_sources == ("L['x']:0", "L['y']:0")
    # one allow-list for both frames (the list is global; one per frame left the other's compiles)
    assert kinds(d).count("mark-dynamic") == 1 and "graph-break" in kinds(d)
    mark = next(x for x in d.suggestions if x.kind == "mark-dynamic")
    assert "L['x']:0" in mark.fix and "L['y']:0" in mark.fix


def test_constraint_violation() -> None:
    d = case("constraint_violation")
    (s,) = d.specializations  # the refinement and the error are one specialization
    assert (s.reason, s.value, s.sources, s.symbol) == ("constraint_violation", "8", ("L['x'].size()[0]",), "s77")
    assert s.user is not None and (s.user.line, s.user.code) == (9, "if x.shape[0] == 8:")
    assert d.frames[0].dynamic_inputs[0].origin == "mark_dynamic"
    (sg,) = d.suggestions
    assert sg.kind == "constraint-violation" and "maybe_mark_dynamic" in sg.fix
    assert not d.dynamic_sources  # mark_dynamic, not automatic: nothing to add


def test_unbacked_symbols() -> None:
    d = case("unbacked_symbols")
    assert [u.symbol for u in d.unbacked] == ["u0", "u1", "u2", "u3", "u4"]
    nonzero = d.unbacked[0]
    assert nonzero.user is not None and nonzero.user.code == "idx = x.nonzero()"
    assert d.data_dependent == 18
    assert not d.relations  # rename_unbacked_to is torch-internal, not shown
    assert not d.recompiles and d.frames[0].compiles == 1


def test_hf_tiny_bert_batch_and_sequence() -> None:
    d = case("hf_tiny_bert")
    (f,) = d.frames
    assert (f.function, f.compiles) == ("wrapper", 3)
    assert dict(f.dynamic_dims) == {"L['kwargs']['attention_mask']": (0, 1),
                                    "L['kwargs']['input_ids']": (0, 1)}
    assert [r.reasons[0] for r in d.recompiles] == [
        "0/0: tensor 'kwargs['input_ids']' size mismatch at index 0. expected 2, actual 3",
        "0/1: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 8, actual 12"]
    (rel,) = d.relations
    assert (rel.symbol, rel.target, rel.reason) == ("s27", "s16", "solve")
    assert (rel.lhs, rel.rhs) == ("L['kwargs']['input_ids'].size()[1]", "L['kwargs']['attention_mask'].size()[1]")
    mark = next(x for x in d.suggestions if x.kind == "mark-dynamic")
    assert "recompiled 2x" in mark.message and "L['kwargs']['input_ids']:1" in mark.fix
    assert "mark_dynamic(" not in mark.fix  # no one-line mark_dynamic for nested sources


def test_multi_rank_is_per_rank() -> None:
    d = case("multi_rank")
    assert d.ranks == (0, 1)
    assert [(f.rank, f.function, f.compiles) for f in d.frames] == [(0, "local", 2), (1, "local", 2)]
    assert [(r.rank, r.reasons[0]) for r in d.recompiles] == [
        (0, "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"),
        (1, "0/0: tensor 'x' size mismatch at index 0. expected 3, actual 5")]
    assert [s.rank for s in d.suggestions] == [0, 1]
    assert d.stats.unrecognized == 0  # atexit lines without [rankN]: map to the rank by pid


@pytest.mark.parametrize(("reason", "cause"), [
    ("tensor 'x' size mismatch at index 0. expected 4, actual 6", "size"),
    ("tensor 'x' stride mismatch at index 0. expected 8, actual 4", "stride"),
    ("x.stride()[0] == 12", "stride"),
    ("2 <= x.size()[0]", "size"),
    ("n == 31", "scalar"),
    ("self.k != 4", "scalar"),
    ("L['cfg']['eps'] == 1e-05", "scalar"),
    ("tensor 'x' dtype mismatch. expected Float, actual Half", "other"),
    ("tensor 'x' rank mismatch. expected 2, actual 3", "other"),
    ("___check_type_id(x, 94323)", "other"),
    ("___check_obj_id(fn, 1402)", "other"),
    ("flag == True", "other"),
    ("GLOBAL_STATE changed: grad_mode ", "other"),
])
def test_classify(reason: str, cause: str) -> None:
    assert classify(reason) == cause


def test_analysis_takes_any_event_iterable() -> None:
    """A second parser only has to produce events: here, hand-made ones."""
    cid = ev.CompileId.parse
    events = [
        ev.CompileStart(function="step", file="t.py", first_line=3, compile_id=cid("0/0"), line=1),
        ev.Recompile(function="step", file="t.py", first_line=3, compile_id=cid("0/1"), line=2,
                     failures=(ev.GuardFailure(failed="0/0", reason="tensor 'x' dtype mismatch. expected Float, actual Half"),)),
        ev.RecompileLimit(limit_name="recompile_limit", limit="8", function="step", file="t.py",
                          compile_id=cid("0/8"), line=3, last_reason="0/7: ..."),
        ev.Recompile(function="step", file="t.py", first_line=3, compile_id=cid("0/1_1"), line=4),
    ]
    d = analyze(events)
    (f,) = d.frames
    # 0/1_1 is a restart of 0/1, and 0/8 was refused by the recompile limit: 0/0 … 0/7
    # compiled (torch refuses the 9th compile of a limit of 8), though only two are in the log
    assert (f.function, f.first_line, f.compiles) == ("step", 3, 8)
    assert f.compile_ids == tuple(f"0/{i}" for i in range(8))
    assert [r.cause for r in d.recompiles] == ["other"]
    assert {"non-shape-recompile", "recompile-limit"} <= set(kinds(d))
    other = next(s for s in d.suggestions if s.kind == "non-shape-recompile")
    assert "dtype" in other.message and "will not fix" in other.message


def test_recompile_limit_real_log() -> None:
    d = case("recompile_limit_dtype")
    (f,) = d.frames
    assert (f.function, f.compiles, f.compile_ids) == ("double", 2, ("0/0", "0/1"))
    assert [(r.compile_id, r.cause, r.compiled) for r in d.recompiles] == [
        ("0/1", "other", True), ("0/2", "other", False)]
    (lim,) = d.recompile_limits
    assert (lim.limit_name, lim.limit, lim.function, lim.first_line) == ("recompile_limit", "2", "double", 10)
    assert kinds(d) == ["non-shape-recompile", "recompile-limit"]
    assert "dtype" in d.suggestions[0].message and not d.dynamic_sources


def test_module_int_attribute_real_log() -> None:
    d = case("module_int_attr")
    assert [(r.compile_id, r.cause, r.reasons) for r in d.recompiles] == [
        ("0/1", "scalar", ("0/0: self.k == 2",)),
        ("0/2", "scalar", ("0/1: self.k == 3", "0/0: self.k == 2"))]  # one user stack per reason
    assert d.recompiles[0].user is not None and d.recompiles[0].user.code == "return x * self.k"
    (s,) = d.suggestions
    # the allow-list entry, spelled as torch matches it: 4 -> 1 compiles in the advice corpus,
    # where allow_unspec_int_on_nn_module took 4 -> 2
    assert s.kind == "scalar-recompile" and "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['self'].k\"" in s.fix


def test_parameter_shapes_name_the_config_flag() -> None:
    cid = ev.CompileId.parse
    d = analyze([ev.Recompile(function="forward", compile_id=cid("0/1"), line=1, failures=(
        ev.GuardFailure(failed="0/0", reason="tensor 'self._modules['lin']._parameters['weight']' size mismatch at index 0. expected 4, actual 8"),))])
    s = next(x for x in d.suggestions if x.kind == "static-parameters")
    assert "torch._dynamo.config.force_parameter_static_shapes = False" in s.fix
    assert "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['self']._modules['lin']._parameters['weight']:0\"" in s.fix
    m = analyze([ev.Recompile(function="forward", compile_id=cid("0/1"), line=1, failures=(
        ev.GuardFailure(failed="0/0", reason="self.n == 4"),))])
    assert "L['self'].n" in next(x for x in m.suggestions if x.kind == "scalar-recompile").fix
    old = analyze([ev.Recompile(function="f", compile_id=cid("0/1"), line=1, failures=(
        ev.GuardFailure(failed="", reason="L['n'] == 4"),))])  # torch < 2.5 kept L[...]
    assert 'TORCH_COMPILE_DYNAMIC_SOURCES="L[\'n\']"' in old.suggestions[0].fix


def test_inputs_dynamic_in_the_guards_are_listed_once() -> None:
    """A log with no automatic-dynamic marking (torch before 2.13, or a run with the
    allow-list already set): inputs whose guards say size=None are listed from the guards,
    but not again when a marking already names them, per dim (``L['x']:0``) or whole."""
    cid = ev.CompileId.parse("0/0")
    events = [
        ev.MarkedDynamic(source="L['x']", origin="dynamic-sources", dim=0, compile_id=cid, line=1),
        ev.MarkedDynamic(source="L['z']", origin="mark_dynamic", compile_id=cid, line=2),
        ev.TensorMatch(source="L['x']", sizes=(None, 3), compile_id=cid, line=3),
        ev.TensorMatch(source="L['y']", sizes=(None, 2), compile_id=cid, line=4),
        ev.TensorMatch(source="L['z']", sizes=(None,), compile_id=cid, line=5),
    ]
    (frame,) = analyze(events).frames
    assert [(d.source, d.origin) for d in frame.dynamic_inputs] == [
        ("L['x']:0", "dynamic-sources"), ("L['z']", "mark_dynamic"),
        ("L['y']", "dynamic in the guards")]
    auto = [ev.MarkedDynamic(source="L['w']", origin="automatic dynamic/PGO", compile_id=cid)]
    (frame,) = analyze(auto + events).frames  # automatic marks logged: nothing inferred
    assert "dynamic in the guards" not in {d.origin for d in frame.dynamic_inputs}


_HEAD = ("V1129 07:26:33.923000 1 torch/_dynamo/guards.py:2611] [0/1] [__recompiles] Recompiling "
         "function f in /tmp/t.py:3\n"
         "V1129 07:26:33.923000 1 torch/_dynamo/guards.py:2611] [0/1] [__recompiles]     "
         "triggered by the following guard failure(s):\n")
_LINE = "V1129 07:26:33.923000 1 torch/_dynamo/guards.py:2611] [0/1] [__recompiles] "


@pytest.mark.parametrize(("body", "kind"), [
    (_LINE + "\n", "no_guard"),  # torch 2.4: the reason line is there, empty
    (_LINE + "    - 0/0: \n", "no_guard"),  # 2.5-2.9: the entry, and nothing after it
    (_LINE + "    - 0/0: BACKEND_MATCH failure: torch.compile detected different backend "
     "callables.\n", "backend"),  # 2.10 on
    ("", "unknown"),  # the paste ends at the header: no reason in the log
    (_LINE + "    - 0/0: tensor 'L['x']' size mismatch at index 0. expected 4, actual 5\n",
     "size"),
])
def test_an_empty_reason_is_no_failed_guard_not_a_cut_paste(tmp_path: Path, body: str,
                                                             kind: str) -> None:
    log = tmp_path / "r.log"
    log.write_text(_HEAD + body)
    (r,) = diagnose_logs([log]).recompiles
    assert r.kind == kind
    if kind == "no_guard":
        other = next(s for s in diagnose_logs([log]).suggestions
                     if s.kind == "non-shape-recompile")
        assert "another backend or another torch.compile call" in other.message
        assert other.fix.startswith("compile the function once and call that")


@pytest.mark.parametrize(("last", "kind"), [
    ("Unable to find recompilation reasons", "no_guard"),  # torch 2.4
    ("0/1: ", "no_guard"),  # 2.5-2.9
    ("0/1: ___check_type_id(L['m'], 94)", "type"),
])
def test_a_limits_empty_last_reason_is_no_failed_guard(last: str, kind: str) -> None:
    from dyncli.logparse.guardtext import checked, split_failed

    assert checked(split_failed(last)[1]) == kind


def _limit_warning(cid: str, fn: str = "foo", limit: int = 8, last: str = "0/7: x == 3") -> str:
    """torch 2.5+'s recompile-limit warning at ``[cid]`` (convert_frame.py's lines)."""
    p = f"W1129 07:26:33.923000 1 torch/_dynamo/convert_frame.py:1016] [{cid}]"
    return (f"{p} torch._dynamo hit config.recompile_limit ({limit})\n"
            f"{p}    function: '{fn}' (/tmp/prog.py:7)\n"
            f"{p}    last reason: {last}\n"
            f'{p} To log all recompilation reasons, use TORCH_LOGS="recompiles".\n')


@pytest.mark.parametrize(("cids", "last", "compiles"), [
    (["0/8"], "0/7: x == 3", 8),  # one thread: [0/8] proves 0/0..0/7
    # one refusal past the limit (entries of other objects did not count, or died): still the
    # ids before it, each an attempt of the one thread that compiled them
    (["0/12"], "0/11: x == 3", 12),
    # threads refused side by side (pytorch#123177): the ids between refusals, and before the
    # first the paste shows, are refusals too; the limit and the last reason's entry prove 8
    (["0/15", "0/16", "0/27"], "0/7: x == 3", 8),
    (["0/15", "0/16"], "0/9: x == 3", 10),  # the entry named proves more than the limit
])
def test_refusals_of_one_frame_prove_what_the_limit_and_the_last_reason_do(
        tmp_path: Path, cids: list[str], last: str, compiles: int) -> None:
    log = tmp_path / "r.log"
    log.write_text("".join(_limit_warning(c, last=last) for c in cids))
    diag = diagnose_logs([log])
    (frame,) = diag.frames
    assert (frame.frame_id, frame.function, frame.compiles) == ("0", "foo", compiles)
    (limit,) = diag.recompile_limits  # one frame's refusals: one hit
    assert limit.function == "foo" and limit.last_reason == last


def test_a_refusal_whose_paste_began_inside_it_joins_its_frames_named_one(tmp_path: Path) -> None:
    """The orphaned last line of [0/26] (no function, no limit) and the whole [0/27]: one hit
    of foo, its reason and limit from the record that has them."""
    p = "W1129 07:26:33.923000 1 torch/_dynamo/convert_frame.py:1016]"
    log = tmp_path / "r.log"
    log.write_text(f'{p} [0/26] To log all recompilation reasons, use TORCH_LOGS="recompiles".\n'
                   + _limit_warning("0/27"))
    diag = diagnose_logs([log])
    (limit,) = diag.recompile_limits
    assert (limit.function, limit.limit, limit.last_reason) == ("foo", "8", "0/7: x == 3")
    assert [f.function for f in diag.frames] == ["foo"]
    assert [c.title.split(" hit ")[0] for c in diag.causes] == ["foo"]


@pytest.mark.parametrize(("reason", "kind"), [
    ("0/7: Unexpected recompilation: runtime guards failed even though they passed during "
     "recompilation-reason analysis. Please open an issue", "unexpected"),
    ("66/1: Cache line invalidated because list.__getitem__(L['self'], 0) got deallocated",
     "invalidated"),
    ("___check_obj_id(self, 140121548765216)", "instance"),
    ("0/3: ___check_obj_id(L['self'], 140121548765216)", "instance"),
    ("0/3: ___check_obj_id(L['self'].proc, 140121548765216)", "identity"),
    ("0/3: ___check_obj_id(L['processor'], 140121548765216)", "identity"),
    ("4/7: KeyError on self._parameters['bias']", "instance"),  # sageattention#12
    ("4/7: KeyError on L['cache']['k']", "value"),
])
def test_torchs_own_failures_and_an_instance_guard_are_kinds_of_their_own(reason: str,
                                                                         kind: str) -> None:
    from dyncli.diagnose import guard_kinds
    from dyncli.logparse.guardtext import checked, split_failed

    assert checked(split_failed(reason)[1]) == kind
    assert guard_kinds.text(kind) is not guard_kinds.text("other")


def test_a_global_state_fix_names_the_setting_torch_says_changed() -> None:
    """comfy-wavespeed#12: "GLOBAL_STATE changed: allow_tf32" is the TF32 flag, not grad mode."""
    from dyncli.diagnose import guard_kinds

    row = guard_kinds.text("global_state", ["2/7: GLOBAL_STATE changed: allow_tf32 "])
    assert "allow_tf32" in row.what and "torch.backends.cuda.matmul.allow_tf32" in row.fix
    assert "no_grad" not in row.fix
    both = guard_kinds.text("global_state", ["GLOBAL_STATE changed: grad_mode num_threads "])
    assert "torch.no_grad" in both.fix and "torch.set_num_threads" in both.fix
    assert guard_kinds.text("global_state", ["___check_global_state()"]) is \
        guard_kinds.KINDS["global_state"]  # torch 2.1's form names nothing: the general row
    diag = diagnose_logs([PASTED / "comfy-wavespeed-12.log"])
    (finding,) = [s for s in diag.suggestions if s.kind == "recompile-limit"]
    assert "allow_tf32" in finding.fix and "no_grad" not in finding.fix


def test_a_record_begun_before_the_paste_is_named_from_its_frame() -> None:
    """kjnodes#446: the orphaned record of frame 0 and a whole one: both of forward."""
    diag = diagnose_logs([PASTED / "kjnodes-446.log"])
    assert {r.function for r in diag.recompiles} == {"forward"}
    assert not any("?" in s.message for s in diag.suggestions if s.kind == "non-shape-recompile")


def test_a_backend_exception_warning_is_a_graph_break_at_the_failing_nodes_line(
        tmp_path: Path) -> None:
    """torch 2.9's exc.py warning (prime-rl#999's head; its graph as prime-rl#996 printed it,
    the same break of the same run's other rank, joined under one prefix here): the place is the
    "# File:" comment above the node that failed (%item), and the fix is about .item()."""
    head = (PASTED / "prime-rl-999.log").read_text().splitlines()
    body = (PASTED / "prime-rl-996.log").read_text().splitlines()
    prefix = head[-1].split("] [5/0_2]")[0] + "] [5/0_2]"
    lines = [t for t in head if "exc.py" in t] + [prefix + t.split("] [5/0_2]", 1)[1]
                                                   for t in body[1:]]
    log = tmp_path / "r.log"
    log.write_text("\n".join(lines) + "\n")
    diag = diagnose_logs([log])
    (b,) = diag.graph_breaks
    assert b.file.endswith("custom_models/layers/moe.py") and b.user_line == 76
    assert b.gb_type == "Backend compiler exception" and "_local_scalar_dense" in b.explanation
    (finding,) = [s for s in diag.suggestions if s.kind == "graph-break"]
    assert ".item()" in finding.fix and diag.stats.malformed == 0


# torch 2.15.0's log of tests/advice/corpus.py's duck_sizes (dynamic=True, sizes (4, 4), (6, 7))
DUCK_LOG = """\
V1129 20:11:28.589000 10449 torch/_dynamo/guards.py:6374] [0/1] [__recompiles] Recompiling function f in /tmp/duck/duck.py:2
V1129 20:11:28.589000 10449 torch/_dynamo/guards.py:6374] [0/1] [__recompiles]     triggered by the following guard failure(s):
V1129 20:11:28.589000 10449 torch/_dynamo/guards.py:6374] [0/1] [__recompiles]     - 0/0: y.size()[0] == x.size()[0]  # duck sizing added this equality because these variables had the same size 4 (to avoid this specialization, set torch.fx.experimental._config.use_duck_shape = False)
"""


def test_a_guard_duck_sizing_added_gets_torchs_flag_not_a_user_line(tmp_path: Path) -> None:
    from dyncli.diagnose.read import diagnose_logs

    log = tmp_path / "duck.log"
    log.write_text(DUCK_LOG)
    d = diagnose_logs([log])
    (r,) = d.recompiles
    assert (r.cause, r.kinds, r.user) == ("size", ("duck",), None)  # the note is no location
    (a,) = [s for s in d.suggestions if s.kind == "duck-sizing"]
    assert "`y.size()[0] == x.size()[0]`" in a.message
    assert a.fix.startswith("torch.fx.experimental._config.use_duck_shape = False before")
    assert not [s for s in d.suggestions if s.kind == "non-shape-recompile"]
    (c,) = d.causes
    assert c.title.startswith("duck sizing") and c.fix == a.fix and c.compiles == 1


def test_a_frame_whose_records_name_two_functions_is_not_named_by_either() -> None:
    # pytorch#174704 (quoted): [8/47]'s guard is at nn/modules/linear.py:134 in forward, its
    # create_symbol at rmsnorm.py:310 in forward: torch logs the innermost user frame, so both
    # are calls inlined into frame 8 (it read "forward, defined at …/rmsnorm.py")
    d = diagnose_logs([PASTED / "pytorch-174704-c.log"])
    (f,) = d.frames
    assert (f.frame_id, f.function, f.file, f.compiles) == ("8", "", "", 48)
    assert all("rmsnorm" not in s.message for s in d.suggestions)


def test_one_function_in_every_record_still_names_its_frame() -> None:
    # pytorch#145587: two records of mark_dynamic.py:6 in fn, their paths edited apart by the
    # user ("…/home_dir/misc_experiments/…" in one): one function, so the frame is fn
    (f,) = diagnose_logs([PASTED / "pytorch-145587.log"]).frames
    assert f.function == "fn" and f.file.endswith("mark_dynamic.py")


def test_a_resume_function_in_a_record_names_its_frame_past_an_inlined_call(tmp_path: Path) -> None:
    # torch never inlines a resume function: its line is the frame's own, whatever else is there
    head = "I0210 20:26:04.059000 12259 torch/fx/experimental/symbolic_shapes.py:5225] [3/0] "
    lines = [
        head + "create_symbol s0 = 4 for L['x'].size()[0] [2, int_oo] return x * 2  # "
        "/home/u/helpers.py:7 in double (_dynamo/variables/builder.py:3702 in <lambda>)",
        head + "create_symbol s1 = 5 for L['y'].size()[0] [2, int_oo] y = y + 1  # "
        "/home/u/prog.py:40 in torch_dynamo_resume_in_split_at_38 "
        "(_dynamo/variables/builder.py:3702 in <lambda>)",
    ]
    log = tmp_path / "resume.log"
    log.write_text("\n".join(lines) + "\n")
    (f,) = diagnose_logs([log]).frames
    assert f.function == "torch_dynamo_resume_in_split_at_38"


def test_a_frame_named_by_its_resume_function_keeps_it_past_a_later_inlined_call(
        tmp_path: Path) -> None:
    # (round 24: the order above reversed, a branch no test reached) the resume function's
    # record first: a later record in a call inlined there does not unname the frame
    head = "I0210 20:26:04.059000 12259 torch/fx/experimental/symbolic_shapes.py:5225] [3/0] "
    lines = [
        head + "create_symbol s1 = 5 for L['y'].size()[0] [2, int_oo] y = y + 1  # "
        "/home/u/prog.py:40 in torch_dynamo_resume_in_split_at_38 "
        "(_dynamo/variables/builder.py:3702 in <lambda>)",
        head + "create_symbol s0 = 4 for L['x'].size()[0] [2, int_oo] return x * 2  # "
        "/home/u/helpers.py:7 in double (_dynamo/variables/builder.py:3702 in <lambda>)",
    ]
    log = tmp_path / "resume.log"
    log.write_text("\n".join(lines) + "\n")
    (f,) = diagnose_logs([log]).frames
    assert f.function == "torch_dynamo_resume_in_split_at_38" and f.file == "/home/u/prog.py"

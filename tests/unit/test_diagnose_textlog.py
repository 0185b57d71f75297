"""The glog prefix regex and the streaming TORCH_LOGS text parser (no torch)."""

from __future__ import annotations

from collections import Counter

import pytest

from dyncli.logparse import events as ev
from dyncli.logparse.glog import parse_prefix
from dyncli.logparse.textlog import MAX_RECORD_LINES, parse_lines
from dyncli.logparse.textmsg import parse_sloc

P = "V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:5621] [0/1] [__recompiles]"
SS = "I1122 01:19:36.629000 7042 torch/fx/experimental/symbolic_shapes.py:5960] [0/1]"


def parse(text: str | bytes) -> tuple[list[ev.Event], ev.ParseStats]:
    """Events of ``text``, without the ``CreateEnv`` that marks each compile id's first record
    (tests/unit/test_compat_reading.py tests those)."""
    data = text.encode() if isinstance(text, str) else text
    stats = ev.ParseStats()
    events = parse_lines(data.splitlines(keepends=True), stats)
    return [e for e in events if not isinstance(e, ev.CreateEnv)], stats


# ---------------------------------------------------------------- glog prefix


@pytest.mark.parametrize(("line", "rank", "cid", "artifact"), [
    (P + " Recompiling function f in a.py:1", None, "0/1", "recompiles"),
    ("[rank3]:" + SS + " create_env", 3, "0/1", None),
    ("V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:5621] [0/0_1] [__guards] x", None, "0/0_1", "guards"),
    ("I1122 01:19:36.607000 7042 torch/_dynamo/x.py:1] [!0/2/1] msg", None, "!0/2/1", None),
    ("I1122 01:19:36.607000 7042 torch/_dynamo/x.py:1] [!4] msg", None, "!4", None),
    ("W1122 01:19:36.607000 7042 torch/_dynamo/convert_frame.py:2009] torch._dynamo hit", None, None, None),
    ("V1122 01:19:36.607000 7042 torch/_dynamo/guards.py:4693] [0/0] [__guards] ", None, "0/0", "guards"),
])
def test_prefix_fields(line: str, rank: int | None, cid: str | None, artifact: str | None) -> None:
    p = parse_prefix(line)
    assert p is not None
    assert (p.rank, p.compile_id, p.artifact, p.pid) == (rank, cid, artifact, 7042)
    assert p.level in "VIWEC" and p.lineno > 0 and p.file.endswith(".py")


@pytest.mark.parametrize("line", ["", "hello world", "Traceback (most recent call last):",
                                  "I1122 01:19 7042 x.py:1] short time", "[rank1]: no level"])
def test_prefix_rejects_non_glog(line: str) -> None:
    assert parse_prefix(line) is None


def test_compile_id_forms() -> None:
    cid = ev.CompileId.parse("0/3_2")
    assert cid is not None and (cid.frame, cid.compile, cid.attempt, cid.key) == (0, 3, 2, "0/3")
    ca = ev.CompileId.parse("!1/2/0")
    assert ca is not None and (ca.autograd, ca.frame, ca.key, str(ca)) == (1, 2, "!1/2/0", "!1/2/0")
    assert ev.CompileId.parse("guard added") is None


# ---------------------------------------------------------------- records


def test_multiline_recompile_with_user_stack() -> None:
    log = "\n".join([
        f"{P} Recompiling function add_n in /w/int_specialization.py:10",
        f"{P}     triggered by the following guard failure(s):",
        f"{P}     - 0/1: n == 33  # if n == 33:  # w/int_specialization.py:11 in add_n (_dynamo/variables/tensor.py:2849 in evaluate_expr)",
        f"{P}     - 0/0: n == 31                                                  # if n == 33:  # w/int_specialization.py:11 in add_n",
        f"{P}     - User stack trace:",
        f'{P}     -   File "/w/int_specialization.py", line 11, in add_n',
        f"{P}     -     if n == 33:",
    ]) + "\n"
    events, stats = parse(log)
    (rec,) = events
    assert isinstance(rec, ev.Recompile)
    assert (rec.function, rec.file, rec.first_line, str(rec.compile_id)) == (
        "add_n", "/w/int_specialization.py", 10, "0/1")
    assert [(f.failed, f.reason) for f in rec.failures] == [("0/1", "n == 33"), ("0/0", "n == 31")]
    assert rec.failures[1].user == ev.UserLoc("w/int_specialization.py", 11, "add_n", "if n == 33:")
    assert rec.user_stack == (ev.UserLoc("/w/int_specialization.py", 11, "add_n", "if n == 33:"),)
    assert (stats.lines, stats.recognized, stats.unrecognized) == (7, 7, 0)


def test_recompile_reason_without_cache_entry_id() -> None:
    """torch < 2.5 wrote the guard failure without the failed entry's "0/0: "."""
    (rec,), _ = parse(f"{P} Recompiling function f in a.py:1\n"
                      f"{P}     triggered by the following guard failure(s):\n"
                      f"{P}     - tensor 'L['x']' size mismatch at index 0. expected 4, actual 6\n")
    assert isinstance(rec, ev.Recompile)
    assert [(f.failed, f.reason) for f in rec.failures] == [
        ("", "tensor 'L['x']' size mismatch at index 0. expected 4, actual 6")]


def test_recompiles_verbose_headers_are_not_reasons() -> None:
    (rec,), _ = parse(f"{P} Recompiling function f in a.py:1\n"
                      f"{P}     triggered by the following guard failure(s):\n"
                      f"{P}     guard 0 failures:\n"
                      f"{P}     - 0/0: n == 3\n")
    assert isinstance(rec, ev.Recompile) and [f.reason for f in rec.failures] == ["n == 3"]


def test_interleaved_processes_do_not_split_records() -> None:
    r0 = "[rank0]:" + P
    r1 = "[rank1]:" + P.replace(" 7042 ", " 7043 ")
    log = "\n".join([
        f"{r0} Recompiling function f in a.py:1",
        f"{r1} Recompiling function g in b.py:2",
        f"{r0}     triggered by the following guard failure(s):",
        f"{r1}     triggered by the following guard failure(s):",
        f"{r0}     - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4",
        f"{r1}     - 0/0: tensor 'y' size mismatch at index 1. expected 3, actual 5",
        # a line of rank 0's process after destroy_process_group: no [rank0]: but same pid
        "V1122 01:19:37.000000 7042 torch/fx/experimental/symbolic_shapes.py:4110] [0/2] create_env",
    ])
    events, stats = parse(log)
    by_rank = {e.rank: e for e in events if isinstance(e, ev.Recompile)}
    assert by_rank[0].function == "f" and by_rank[0].failures[0].reason.startswith("tensor 'x'")
    assert by_rank[1].function == "g" and by_rank[1].failures[0].reason.startswith("tensor 'y'")
    assert stats.unrecognized == 0 and stats.recognized == 7


def test_a_rank_tag_whose_colon_a_paste_lost_keeps_its_rank() -> None:
    """pytorch#148439's paste: "[rank3]V0304 17:57:43…" (torch writes "[rank3]:V…")."""
    events, stats = parse("\n".join([
        f"[rank3]{P} Recompiling function f in a.py:1",
        f"[rank3]{P}     triggered by the following guard failure(s):",
        f"[rank3]{P}     - 0/0: n == 3",
    ]))
    (rec,) = [e for e in events if isinstance(e, ev.Recompile)]
    assert rec.rank == 3 and [f.reason for f in rec.failures] == ["n == 3"]
    assert stats.unrecognized == 0 and not stats.pasted


def test_identical_prefix_one_line_records_are_separate() -> None:
    # Two set_replacement calls in the same microsecond from the same line share the prefix.
    pre = "I1122 01:19:39.593000 7081 torch/fx/experimental/symbolic_shapes.py:8081] [0/0]"
    events, _ = parse(f"{pre} set_replacement s1 = 8 (range_refined_to_singleton) VR[8, 8]\n"
                      f"{pre} set_replacement s2 = s1 (solve) VR[2, 64]\n")
    assert [(e.symbol, e.target) for e in events if isinstance(e, ev.SetReplacement)] == [
        ("s1", "8"), ("s2", "s1")]


def test_crlf_bad_bytes_truncated_last_line_and_noise() -> None:
    data = (
        f"{SS} create_symbol s77 = 6 for L['x'].size()[0] [2, int_oo] y = x @ w  # a.py:8 in f "
        "(_dynamo/variables/builder.py:4970 in <lambda>), for more info run with X\r\n"
    ).encode() + b"between halves \xff\xfe not utf-8\r\n" + (
        f"{SS} set_replacement s77 = 10 (range_refined_to_singleton) VR[10, 10]"  # no newline
    ).encode()
    events, stats = parse(data)
    sym = next(e for e in events if isinstance(e, ev.CreateSymbol))
    assert (sym.symbol, sym.value, sym.source, sym.lower, sym.upper) == (
        "s77", "6", "L['x'].size()[0]", "2", "int_oo")
    assert sym.user == ev.UserLoc("a.py", 8, "f", "y = x @ w")
    assert sym.framework == "_dynamo/variables/builder.py:4970 in <lambda>"
    assert any(isinstance(e, ev.SetReplacement) and e.target == "10" for e in events)
    assert (stats.lines, stats.unrecognized) == (3, 1)
    assert stats.samples and "between halves" in stats.samples[0][1]


def test_unknown_and_malformed_are_counted_not_raised() -> None:
    log = (f"{SS} brand_new_torch_message 1 2 3\n"
           f"{SS}     its continuation\n"
           f"{SS} create_symbol garbage\n"
           f"{SS} create_env\n")
    events, stats = parse(log)
    assert events == []
    assert (stats.unrecognized, stats.malformed, stats.recognized) == (2, 1, 1)


def test_guard_added_variants() -> None:
    log = "\n".join([
        f"{SS} eval Eq(s77, 10) [guard added] if x.shape[0] == 10:  # a.py:8 in pick (_dynamo/variables/tensor.py:2849 in evaluate_expr), for more info run with T=\"Eq(s77, 10)\"",
        f"{SS} eval [guard suppressed] Ne(s94, 0) [guard added] return n  # a.py:15 in g (utils/_stats.py:29 in wrapper), for more info run with T",
        f"{SS} eval (forcing_spec) Eq(s3, 4) [guard added] (_refs/__init__.py:1 in f)",
        f"{SS} runtime_assert u1 >= 0 [guard added] (_ops.py:916 in __call__), for more info run with T",
        f"{SS} eval False == False [statically known]",
    ])
    events, stats = parse(log)
    guards = [e for e in events if isinstance(e, ev.GuardAdded)]
    assert [(g.expr, g.prefix, g.suppressed, g.forcing_spec) for g in guards] == [
        ("Eq(s77, 10)", "eval", False, False), ("Ne(s94, 0)", "eval", True, False),
        ("Eq(s3, 4)", "eval", False, True), ("u1 >= 0", "runtime_assert", False, False)]
    assert guards[0].user == ev.UserLoc("a.py", 8, "pick", "if x.shape[0] == 10:")
    assert guards[3].user is None and guards[3].framework == "_ops.py:916 in __call__"
    assert stats.unrecognized == stats.malformed == 0


def test_guards_tree_lines() -> None:
    g = "V1122 01:19:36.669000 7042 torch/_dynamo/guards.py:4693] [0/1] [__guards]"
    log = "\n".join([
        f"{g} ", f"{g} TREE_GUARD_MANAGER:", f"{g} +- RootGuardManager",
        f"{g} | +- LAMBDA_GUARD: torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None  # _dynamo/output_graph.py:1194 in init_ambient_guards",
        f"{g} | | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[None, 8], stride=[8, 1])  # y = x @ w  # a.py:8 in f",
        f"{g} +- LAMBDA_GUARD: 2 <= L['x'].size()[0]  # y = x @ w  # a.py:8 in f (user code shown is first use of this value--the guard itself is not due user code but due to 0/1 specialization in the framework; to avoid specialization try torch._dynamo.decorators.mark_unbacked(tensor, dim))",
    ])
    events, stats = parse(log)
    tm = next(e for e in events if isinstance(e, ev.TensorMatch))
    assert (tm.source, tm.sizes, tm.strides, tm.dtype) == ("L['x']", (None, 8), (8, 1), "torch.float32")
    assert tm.user == ev.UserLoc("a.py", 8, "f", "y = x @ w")
    (sg,) = [e for e in events if isinstance(e, ev.ShapeGuard)]
    assert sg.expr == "2 <= L['x'].size()[0]" and sg.zero_one and sg.user is not None
    assert stats.recognized == 6 and stats.unrecognized == 0


def test_graph_break_record() -> None:
    gb = "V1122 01:19:42.479000 7103 torch/_dynamo/symbolic_convert.py:5368] [0/0] [__graph_breaks]"
    log = "\n".join(f"{gb} {t}" for t in [
        "Graph break in user code at /w/g.py:9",
        "Graph Break Reason: Encountered graph break when attempting to trace CALL: a function call, e.g. f(x, y):",
        "", "Failed to trace builtin operator",
        "  Explanation: Dynamo does not know how to trace builtin operator `print`",
        "  Hint: Avoid calling builtin `print`.", "  Hint: Please report an issue to PyTorch.",
        "", "User code traceback:", '  File "/w/g.py", line 15, in <module>', "    f(x)",
        '  File "/w/g.py", line 9, in two_halves', '    print("between halves")', ""])
    (e,), _ = parse(log)
    assert isinstance(e, ev.GraphBreak)
    assert (e.file, e.user_line, e.reason, e.duplicate) == ("/w/g.py", 9, "Failed to trace builtin operator", False)
    assert e.explanation.startswith("Dynamo does not know") and len(e.hints) == 2
    assert e.user_stack[-1] == ev.UserLoc("/w/g.py", 9, "two_halves", 'print("between halves")')


def test_recompile_limit_and_dynamic_sources() -> None:
    w = "W1122 01:19:42.479000 7103 torch/_dynamo/convert_frame.py:2009] [0/8]"
    b = "I1122 01:19:42.479000 7103 torch/_dynamo/variables/builder.py:4432] [0/0]"
    log = "\n".join([
        f"{w} torch._dynamo hit config.recompile_limit (8)",
        f"{w}    function: 'f' (/w/a.py:3)",
        f"{w}    last reason: 0/7: tensor 'x' dtype mismatch. expected Float, actual Half",
        f'{w} To log all recompilation reasons, use TORCH_LOGS="recompiles".',
        f"{b} L['x'] was marked dynamic due to dynamic-sources entry: L['x']:1",
    ])
    events, stats = parse(log)
    lim = next(e for e in events if isinstance(e, ev.RecompileLimit))
    assert (lim.limit_name, lim.limit, lim.function, lim.first_line) == ("recompile_limit", "8", "f", 3)
    assert lim.last_reason.startswith("0/7: tensor 'x' dtype mismatch")
    md = next(e for e in events if isinstance(e, ev.MarkedDynamic))
    assert (md.source, md.origin, md.dim, md.entry) == ("L['x']", "dynamic-sources", 1, "L['x']:1")
    assert stats.unrecognized == 0


def test_dynamo_step_names_the_frame() -> None:
    pre = "I1122 01:19:36.607000 7042 torch/_dynamo/symbolic_convert.py:5584] [0/0]"
    events, stats = parse(f"{pre} Step 1: torchdynamo start tracing fwd /w/m.py:12\n"
                          f"{pre.replace('5584', '5861')} Step 1: torchdynamo done tracing fwd (RETURN_VALUE)\n")
    e, done = events
    assert isinstance(e, ev.CompileStart) and (e.function, e.file, e.first_line) == ("fwd", "/w/m.py", 12)
    # "done tracing" names the frame too, where a paste cut its start (pytorch#164924)
    assert isinstance(done, ev.CompileStart) and (done.function, done.file) == ("fwd", "")
    assert stats.recognized == 2


def test_huge_record_is_capped() -> None:
    lines = [f"{P} Recompiling function f in a.py:1", f"{P}     triggered by the following guard failure(s):"]
    lines += [f"{P}     - 0/{i}: n == {i}" for i in range(MAX_RECORD_LINES + 500)]
    (rec,), stats = parse("\n".join(lines))
    assert isinstance(rec, ev.Recompile) and len(rec.failures) == MAX_RECORD_LINES - 2
    assert stats.recognized == len(lines)


@pytest.mark.parametrize(("text", "user", "framework"), [
    ("if n == 33:  # a.py:11 in add_n (_dynamo/variables/tensor.py:2849 in evaluate_expr), for more info run with X",
     ev.UserLoc("a.py", 11, "add_n", "if n == 33:"), "_dynamo/variables/tensor.py:2849 in evaluate_expr"),
    ("(_ops.py:916 in __call__)", None, "_ops.py:916 in __call__"),
    ('print("x")  # graph break: print  # g.py:9 in two_halves', ev.UserLoc("g.py", 9, "two_halves", 'print("x")  # graph break: print'), ""),
    ("", None, ""),
])
def test_parse_sloc(text: str, user: ev.UserLoc | None, framework: str) -> None:
    assert parse_sloc(text) == (user, framework)


def test_every_captured_log_is_fully_recognized() -> None:
    """All lines of the real torch 2.14 logs are understood (what --strict enforces)."""
    from pathlib import Path
    logs = sorted((Path(__file__).resolve().parents[1] / "data" / "logs").glob("*.log"))
    assert len(logs) >= 9
    for path in logs:
        stats = ev.ParseStats()
        with path.open("rb") as fh:
            kinds = Counter(type(e).__name__ for e in parse_lines(fh, stats))
        assert stats.unrecognized == stats.malformed == 0, (path.name, stats.samples)
        assert stats.recognized == stats.lines > 0
        assert kinds, path.name


# A recompile of the real H200 recording (torch 2.11, shared/recordings/h200-torch2.11/
# cuda_run.log line 536): torch joined two origins of `2 <= x.size()[1] <= 40` in one comment.
_JOINED = ("V1128 08:57:48.680000 856 torch/_dynamo/guards.py:4760] [0/3] [__recompiles]     - 0/2: "
           "2 <= x.size()[1] <= 40  # return F.linear(input, self.weight, self.bias)  # "
           "nn/modules/linear.py:134 in forward (user code shown is first use of this value--the "
           "guard itself is not due user code but due to 0/1 specialization in the framework; to "
           "avoid specialization try torch._dynamo.decorators.mark_unbacked(tensor, dim)) and if "
           "x.shape[1] > 40:          # a size branch on the sequence dim  # "
           "ome/alice/project/gpu/cuda_logs.py:23 in forward (_dynamo/variables/tensor.py:1951 in "
           "evaluate_expr)")


def test_the_users_line_of_a_guard_torch_joins_from_two_origins() -> None:
    """Issue 33, pattern 7: the size branch is the user's line after "and" (cuda_logs.py:23),
    not the first use torch's own code made of the size (nn/modules/linear.py:134)."""
    head = _JOINED.split("[__recompiles]")[0] + "[__recompiles] "
    events, _ = parse("\n".join([head + "Recompiling function forward in /home/alice/project/gpu/cuda_logs.py:20",
                                 head + "    triggered by the following guard failure(s):", _JOINED]))
    (rec,) = [e for e in events if isinstance(e, ev.Recompile)]
    (failure,) = rec.failures
    assert failure.reason == "2 <= x.size()[1] <= 40" and failure.first_use
    assert failure.user is not None and (failure.user.file, failure.user.line) == (
        "ome/alice/project/gpu/cuda_logs.py", 23)
    assert failure.user.code.startswith("if x.shape[1] > 40:")


# ---------------------------------------------------------------- track_symint (produce_guards)

TS = "V1129 15:18:14.839000 32153 torch/fx/experimental/symbolic_shapes.py:6444] [0/0] track_symint"
OLD_TS = "[2023-12-09 15:28:05,619] [0/0] torch.fx.experimental.symbolic_shapes: [DEBUG] track_symint"


@pytest.mark.parametrize(("line", "violated"), [
    # torch 2.15's own line (tests/integration/test_diagnose_capture.py's program), pytorch#135005
    (f"{TS} L['x'].size()[0] 1 StrictMinMaxConstraint(warn_only=False, vr=VR[1, 8196])", ("L['x'].size()[0]", "1")),
    (f"{TS} L['args1'][0].size()[0] 1 StrictMinMaxConstraint(warn_only=False, vr=VR[1, 8196])",
     ("L['args1'][0].size()[0]", "1")),
    # torch before 2.3 printed the range as ValueRanges(...)
    (f"{OLD_TS} L['x'].size()[0] 3 StrictMinMaxConstraint(warn_only=False, vr=ValueRanges(lower=2, upper=64, is_bool=False))",
     ("L['x'].size()[0]", "3")),
    (f"{TS} L['x'].size()[0] 8 RelaxedUnspecConstraint(warn_only=False)", ("L['x'].size()[0]", "8")),
    # not violated: a plain mark on 0 or 1, a range of that one value, a symbol, a hint
    (f"{TS} L['x'].size()[0] 1 RelaxedUnspecConstraint(warn_only=False)", None),
    (f"{TS} L['x'].size()[0] 4 StrictMinMaxConstraint(warn_only=False, vr=VR[4, 4])", None),
    (f"{TS} L['x'].size()[0] s77 StrictMinMaxConstraint(warn_only=False, vr=VR[1, 8196])", None),
    (f"{TS} L['x'].stride()[0] 4 RelaxedUnspecConstraint(warn_only=True)", None),
    (f"{TS} L['x'].size()[1] 4 None", None),
])
def test_track_symint_reads_what_mark_dynamic_demanded(
        line: str, violated: tuple[str, str] | None) -> None:
    events, stats = parse(line + "\n")
    cv = [(e.source, e.value) for e in events if isinstance(e, ev.ConstraintViolation)]
    assert cv == ([violated] if violated else [])
    assert (stats.recognized, stats.unrecognized) == (1, 0)


def test_two_processes_without_rank_tags_count_their_own_compiles() -> None:
    """Two runs in one log (pytorch#141790) each compile [0/0]: two compiles. A prefix a paste
    lost and dyncli rebuilt has pid 0, which is any process, not a third one."""
    rec = "torch/_dynamo/guards.py:5621] [0/1] [__recompiles] Recompiling function f in /a.py:3\n"
    a = f"V1128 17:54:16.961000 1579551 {rec}"
    b = f"V1128 17:54:26.680000 1582644 {rec}"
    events, _ = parse(a + b)
    assert [str(e.compile_id) for e in events if isinstance(e, ev.Recompile)] == [
        "0/1", "pid1582644:0/1"]
    events, _ = parse(a + "[0/1] [__recompiles] Recompiling function f in /a.py:3\n")
    assert {str(e.compile_id) for e in events if isinstance(e, ev.Recompile)} == {"0/1"}

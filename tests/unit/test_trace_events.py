"""Trace records → events: the shared event classes and the trace-only ones."""

from __future__ import annotations

import json

from trace_records import envelope as rec
from trace_records import intern

from dyncli.logparse import events as ev
from dyncli.logparse import trace_events as te
from dyncli.logparse.trace_map import trace_events

GRAPH = '''class GraphModule(torch.nn.Module):
    def forward(self, s77: "Sym(s77)", L_x_: "f32[s77, 4][4, 1]cpu"):
        l_x_ = L_x_

        # File: /tmp/prog.py:4 in f, code: y = x * 2
        y: "f32[s77, 4][4, 1]cpu" = l_x_ * 2;  l_x_ = None
        getitem_19: "f32[4][1]cpu" = y[0]
        return (getitem_19,)'''


CID = {"frame_id": 0, "frame_compile_id": 1, "attempt": 0}


def test_dynamo_start_names_the_frame_and_recompile_uses_it() -> None:
    lines = [*intern("/tmp/prog.py", 0),
             *rec("dynamo_start", {"stack": [{"line": 2, "name": "f", "filename": 0}]}, **CID),
             *rec("artifact", {"name": "recompile_reasons", "encoding": "json"},
                  "0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3", **CID)]
    start, recompile = list(trace_events(lines, strict=True))
    assert isinstance(start, ev.CompileStart)
    assert (start.function, start.file, start.first_line) == ("f", "/tmp/prog.py", 2)
    assert start.compile_id == ev.CompileId(0, 1)
    assert isinstance(recompile, ev.Recompile) and recompile.function == "f"
    assert recompile.failures == (ev.GuardFailure(
        failed="0/0", reason="tensor 'x' size mismatch at index 0. expected 2, actual 3"),)


def test_several_recompile_reasons_with_user_stack() -> None:
    reasons = ["0/1: n == 5  # if n == 33:  # prog.py:5 in f\nUser stack trace:\n"
               '  File "/tmp/prog.py", line 5, in f\n    if n == 33:', "0/0: n == 4"]
    payload = "[\n" + ",\n".join(json.dumps(r) for r in reasons) + "\n]"
    (event,) = trace_events(rec("artifact", {"name": "recompile_reasons", "encoding": "json"},
                                payload, **CID), strict=True)
    assert isinstance(event, ev.Recompile)
    first, second = event.failures
    # the guard alone, as the text log gives it (issue 21); the comment's code is the user's
    assert first.failed == "0/1" and first.reason == "n == 5"
    assert first.user == ev.UserLoc("/tmp/prog.py", 5, "f", "if n == 33:")
    assert second == ev.GuardFailure(failed="0/0", reason="n == 4")


def test_a_reason_with_no_guard_before_its_user_stack_keeps_its_entry() -> None:
    """The trace's reason goes on past a newline: the entry alone before torch's user stack is
    still the entry (one reader of it, guardtext.FAILED_RE, for the text log and the trace)."""
    reasons = ["0/1:\nUser stack trace:\n  File \"/tmp/prog.py\", line 5, in f\n    y = g(x)",
               "0/0: \nUser stack trace:\n  File \"/tmp/prog.py\", line 5, in f\n    y = g(x)"]
    payload = "[\n" + ",\n".join(json.dumps(r) for r in reasons) + "\n]"
    (event,) = trace_events(rec("artifact", {"name": "recompile_reasons", "encoding": "json"},
                                payload, **CID), strict=True)
    assert isinstance(event, ev.Recompile)
    assert [(f.failed, f.reason) for f in event.failures] == [("0/1", ""), ("0/0", "")]
    assert all(f.user == ev.UserLoc("/tmp/prog.py", 5, "f", "y = g(x)") for f in event.failures)


def test_symbol_guard_and_specialization_with_user_code() -> None:
    user = [{"line": 5, "name": "f", "filename": 0, "loc": "if n == 33:"}]
    stack = [{"line": 3072, "name": "wrap_tensor", "filename": 1, "loc": ""},
             {"line": 9, "name": "_log", "filename": 2, "loc": ""}]
    lines = [*intern("/tmp/prog.py", 0),
             *intern("/x/site-packages/torch/_dynamo/variables/builder.py", 1),
             *intern("/x/site-packages/torch/fx/experimental/symbolic_shapes.py", 2),
             *rec("create_symbol", {"symbol": "s86", "val": "33", "vr": "[-int_oo, int_oo]",
                                    "source": "L['n']", "user_stack": user, "stack": stack}, **CID),
             *rec("guard_added_fast", {"expr": "Eq(s86, 33)", "user_stack": user, "stack": stack}, **CID),
             *rec("symbolic_shape_specialization", {"symbol": "s86", "sources": ["L['n']"],
                                                    "value": "33", "reason": "range_refined_to_singleton"},
                  **CID)]
    sym, guard, spec = trace_events(lines, strict=True)
    assert isinstance(sym, ev.CreateSymbol)
    assert (sym.symbol, sym.value, sym.source, sym.lower, sym.upper) == ("s86", "33", "L['n']",
                                                                         "-int_oo", "int_oo")
    assert sym.user == ev.UserLoc("/tmp/prog.py", 5, "f", "if n == 33:")
    assert sym.framework == "_dynamo/variables/builder.py:3072 in wrap_tensor"
    assert isinstance(guard, ev.GuardAdded) and guard.expr == "Eq(s86, 33)"
    assert isinstance(spec, ev.SetReplacement)
    assert (spec.symbol, spec.target, spec.reason) == ("s86", "33", "range_refined_to_singleton")


def test_graph_break_payload() -> None:
    payload = ("Graph break in user code at /tmp/prog.py:9\nGraph Break Reason: Unsupported call\n\n"
               "Failed to trace builtin operator\n  Explanation: no print\n  Hint: remove print\n\n"
               "User code traceback:\n  File \"/tmp/prog.py\", line 9, in f\n    print('x')\n\n"
               "Traceback (most recent call last):\n  File \"/torch/x.py\", line 1, in g\n    boom()")
    (gb,) = trace_events(rec("artifact", {"name": "dynamo_graph_break_reason",
                                          "encoding": "string"}, payload, **CID), strict=True)
    assert isinstance(gb, ev.GraphBreak)
    # reason = torch's graph-break type, as the text log gives it (issue 21)
    assert (gb.file, gb.user_line, gb.reason, gb.explanation, gb.hints) == (
        "/tmp/prog.py", 9, "Failed to trace builtin operator", "no print", ("remove print",))
    assert gb.gb_type == "Failed to trace builtin operator"
    assert gb.user_stack == (ev.UserLoc("/tmp/prog.py", 9, "f", "print('x')"),)


def test_failed_compile_yields_metrics_and_constraint_violation() -> None:
    reason = ("Constraints violated (L['x'].size()[0])!\n  - You marked L['x'].size()[0] as dynamic "
              "but your code specialized it to be a constant (8). If you're using mark_dynamic…\n\n"
              "User stack:\n  File \"/tmp/p.py\", line 9, in branchy\n    if x.shape[0] == 8:\n")
    meta = {"co_name": "branchy", "co_filename": "/tmp/p.py", "co_firstlineno": 8,
            "fail_type": "ConstraintViolationError", "fail_reason": reason,
            "entire_frame_compile_time_s": 0.5, "restart_reasons": []}
    # without a dynamo_start before it (torch 2.3-2.4 traces), the metrics name the frame
    metrics, start, cv = trace_events(rec("compilation_metrics", meta, **CID), strict=True)
    assert isinstance(start, ev.CompileStart) and start.function == "branchy"
    assert isinstance(metrics, te.CompileMetrics) and metrics.failed
    assert metrics.compile_time_s == 0.5 and metrics.function == "branchy"
    assert isinstance(cv, ev.ConstraintViolation)
    assert (cv.source, cv.value) == ("L['x'].size()[0]", "8")
    assert cv.user == ev.UserLoc("/tmp/p.py", 9, "branchy", "if x.shape[0] == 8:")


def test_guards_tree_and_chromium_marks() -> None:
    tree = ("TREE_GUARD_MANAGER:\n+- RootGuardManager\n| | +- TENSOR_MATCH: check_tensor(L['x'], "
            "Tensor, DispatchKeySet(CPU, BackendSelect), torch.float32, device=None, "
            "requires_grad=False, size=[None, 4], stride=[4, 1])  # y = x * 2  # p.py:4 in f\n"
            "+- LAMBDA_GUARD: 2 <= L['x'].size()[0]  # y = x * 2  # p.py:4 in f (… due to 0/1 "
            "specialization in the framework …)")
    chrome = json.dumps({"name": "automatic_dynamic", "ts": 1.0, "args": {
        "name": "L['x']", "dim_changed": 0, "reason": "size change"}, "ph": "i"}, indent=0)
    allow = json.dumps({"name": "pgo.dynamic_whitelist", "ts": 2.0, "args": {
        "recompile_dynamic_whitelist": "L['x'],L['n']", "missing_dynamic_whitelist": "L['n']"},
        "ph": "E"}, indent=0)
    lines = [*rec("dynamo_cpp_guards_str", {}, tree, **CID),
             *rec("chromium_event", {}, chrome, **CID), *rec("chromium_event", {}, allow, **CID),
             *rec("chromium_event", {}, json.dumps({"name": "dynamo", "args": {}}, indent=0))]
    tm, sg, marked, allowed = trace_events(lines, strict=True)
    assert isinstance(tm, ev.TensorMatch) and tm.sizes == (None, 4) and tm.source == "L['x']"
    assert isinstance(sg, ev.ShapeGuard) and sg.zero_one
    assert marked == ev.MarkedDynamic(source="L['x']", origin="automatic dynamic/PGO", line=marked.line,
                                      compile_id=ev.CompileId(0, 1))
    assert isinstance(allowed, te.DynamicAllowList)
    assert allowed.sources == ("L['x']", "L['n']") and allowed.missing == ("L['n']",)


def test_code_state_parsing() -> None:
    text = ("hash(554d4d70)/w/p.py:68:_mix:\n  L['x']: tensor size=[?, 8] stride=[S(1), 1]\n"
            "  L['y']: tensor size=[3, 5] stride=[S(1), 1]\n  L['n']: fully dynamic scalar or tensor\n"
            "\n\nPGO detected a recompilation due to dynamic shapes. …")
    (state,) = trace_events(rec("artifact", {"name": "get_local_code_state", "encoding": "string"},
                                text, **CID), strict=True)
    assert isinstance(state, te.CodeState) and (state.action, state.where) == ("get", "local")
    assert [(e.frame, e.source, e.dynamic) for e in state.entries] == [
        ("/w/p.py:68:_mix", "L['x']", True), ("/w/p.py:68:_mix", "L['y']", False),
        ("/w/p.py:68:_mix", "L['n']", True)]


def test_graph_signature_blanks_sizes_and_node_numbers() -> None:
    inputs, ops = te.graph_signature(GRAPH)
    assert inputs == ("L_x_",)
    assert ops == ("y = l_x_ * #", "getitem_# = y[#]", "return (getitem_#,)")
    static = GRAPH.replace('s77: "Sym(s77)", ', "").replace("s77", "2").replace("getitem_19", "getitem_5")
    assert te.graph_signature(static) == (inputs, ops)
    assert te.source_of_input("L_x_") == "L['x']"


def test_compiled_autograd_compile_id() -> None:
    lines = rec("dynamo_start", {"stack": [{"line": 1, "name": "bw", "filename": "/t/b.py"}]},
                compiled_autograd_id=2, frame_id=5, frame_compile_id=0, attempt=1)
    (start,) = trace_events(lines, strict=True)
    assert start.compile_id == ev.CompileId(5, 0, 1, 2)
    assert str(start.compile_id) == "!2/5/0_1" and start.compile_id.key == "!2/5/0"


def test_recompile_reasons_of_a_compile_that_never_started_are_the_limits_refusal() -> None:
    """torch 2.5-2.8 write nothing else of a compile the recompile limit refused: its reasons,
    and no dynamo_start (tests/data/2.5.1/compat/backend/ is a real one)."""
    start = {"stack": [{"line": 2, "name": "f", "filename": 0}]}
    reason = "0/1: ___check_type_id(L['m'], 94)"
    lines = [*intern("/tmp/prog.py", 0),
             *rec("dynamo_start", start, frame_id=0, frame_compile_id=0, attempt=0),
             *rec("dynamo_start", start, **CID),
             *rec("artifact", {"name": "recompile_reasons", "encoding": "json"},
                  "0/0: ___check_type_id(L['m'], 93)", **CID),
             *rec("artifact", {"name": "recompile_reasons", "encoding": "json"}, reason,
                  frame_id=0, frame_compile_id=2, attempt=0)]
    events = list(trace_events(lines, strict=True))
    (limit,) = [e for e in events if isinstance(e, ev.RecompileLimit)]
    assert limit.compile_id == ev.CompileId(0, 2)
    assert (limit.function, limit.last_reason, limit.limit_name) == ("f", reason, "")
    # without 0/0's start (a piece of a trace), nothing proves the refusal
    cut = [*lines[:len(intern("/tmp/prog.py", 0))],
           *lines[len(intern("/tmp/prog.py", 0)) + len(rec("dynamo_start", start, **CID)):]]
    assert not [e for e in trace_events(cut, strict=True) if isinstance(e, ev.RecompileLimit)]

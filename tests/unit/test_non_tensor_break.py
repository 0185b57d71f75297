"""GB0208 "torch.* op returned non-Tensor" (round 25): a torch function dynamo keeps in the graph
returned an int or a str. torch gives the break no hint in any release and names the function
only in its Developer debug context (2.7 on; 2.1-2.6 after the words of the reason); diagnose
names it in the fix: call it once outside the compiled function and pass the value in
(tests/integration/test_non_tensor_fix.py applies it on real torch.compile). A target that is
no Python function (a builtin, a class) names no call to move: the general fix stays."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

PASTED = Path(__file__).parent.parent / "data" / "pasted"
GENERAL = "move the untraceable call out of the compiled function"
# torch 2.15's record, TORCH_LOGS=graph_breaks, of tests/integration/test_non_tensor_fix.py's
# program (torch.cuda.device_count() in f, on a machine without CUDA)
_PRE = b"V1130 23:06:25.566000 18514 torch/_dynamo/symbolic_convert.py:5577] [0/0] [__graph_breaks] "
_RECORD = [
    b"Graph break in user code at /tmp/nt.py:4",
    b"Graph Break Reason: Encountered graph break when attempting to trace CALL: a function "
    b"call, e.g. f(x, y):",
    b"",
    b"torch.* op returned non-Tensor",
    b"  Explanation: torch.* ops that return a non-Tensor cannot be traced into the Dynamo FX "
    b"graph output",
    b"",
    b"",
    b"  Developer debug context: example_value type: int; op: call_function; target: "
    b"<function device_count at 0x7fb21e1f4c20>",
    b"",
    b" For more details about this graph break, please visit: "
    b"https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0208.html",
    b"",
    b"User code traceback:",
    b'  File "/tmp/nt.py", line 7, in <module>',
    b"    print(c(torch.randn(4)))",
    b'  File "/tmp/nt.py", line 4, in f',
    b"    n = torch.cuda.device_count()",
    b"",
]


def _fix(log: Path) -> str:
    diag = diagnose_logs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    (c,) = [c for c in diag.causes if c.graph_breaks]
    assert c.fix == a.fix
    return a.fix


def test_a_recorded_break_names_the_function_from_torchs_debug_context(tmp_path: Path) -> None:
    log = tmp_path / "nt.log"
    log.write_bytes(b"".join(_PRE + t + b"\n" for t in _RECORD))
    fix = _fix(log)
    # (round 26: the call as the break's line writes it, its module with it; torch's target
    # is the function's repr, device_count alone, which no program can call as printed)
    assert fix.startswith("call torch.cuda.device_count() once outside the compiled function "
                          "and pass its value in"), fix
    assert "cannot hold the int it returns" in fix and "torch gives no hint" in fix


def test_the_pasted_breaks_name_their_function() -> None:
    # sageattention-92 and comfyui-10114: device_count (an int), raised (fullgraph) and in
    # ComfyUI's error report; sglang-10062: get_device_name (a str), raised, its place cut
    for name, fn, typ in (("sageattention-92", "device_count", "int"),
                          ("comfyui-10114", "device_count", "int"),
                          ("sglang-10062", "get_device_name", "str")):
        fix = _fix(PASTED / f"{name}.log")
        # (none shows the line that calls it: the module is said to be unknown, no call printed)
        assert fix.startswith(f"call torch's {fn} once outside the compiled function, as your "
                              "code calls it"), (name, fix)
        assert f"the {typ} it returns" in fix, (name, fix)
        assert f"{fn}()" not in fix and "not the module your code reaches it through" in fix


def test_the_words_of_2_1_to_2_6_name_it_too_and_a_builtin_or_class_names_none(
        tmp_path: Path) -> None:
    # 2.1-2.6 put type, op and target after the words (builder.py's f-string "torch.* op
    # returned non-Tensor {typestr(example_value)} {proxy.node.op} {proxy.node.target}"). A
    # function's target in that form (the format, its address made up); then two real pastes:
    # transformers#34604's builtin getitem (a device) and transformer_nuggets#5's class
    # (_SDPAParams), neither a call that moving out would name
    cases = {
        "function": (b"torch.* op returned non-Tensor int call_function "
                     b"<function device_count at 0x7f0000000000>", "call torch's device_count once"),
        "builtin": (b"torch.* op returned non-Tensor device call_function "
                    b"<built-in function getitem>", GENERAL),
        "class": (b"torch.* op returned non-Tensor _SDPAParams call_function "
                  b"<class 'torch._C._SDPAParams'>", GENERAL),
    }
    for name, (words, said) in cases.items():
        log = tmp_path / f"{name}.log"
        log.write_bytes(b"torch._dynamo.exc.Unsupported: " + words + b"\n\nfrom user code:\n"
                        b'   File "/tmp/m.py", line 9, in forward\n    x = g(x)\n')
        fix = _fix(log)
        assert fix.startswith(said), (name, fix)


def test_the_call_is_taken_from_the_breaks_line_as_written(tmp_path: Path) -> None:
    """Round 26: the line that calls the function gives the call to print, with its module and
    its arguments (a paste of torch 2.1-2.6's words, whose stack is dynamo's "from user code:");
    a line that calls something else, or whose call runs on past it, gives none."""
    cases = {
        "qualified": ("    name = torch.cuda.get_device_name(0)", "get_device_name",
                      "call torch.cuda.get_device_name(0) once"),
        "imported": ("    if is_fx_tracing():", "is_fx_tracing", "call is_fx_tracing() once"),
        "nested": ("    n = max(1, torch.cuda.device_count()) * 2", "device_count",
                   "call torch.cuda.device_count() once"),
        "other call": ("    x = g(x)", "device_count", "call torch's device_count once"),
        "longer name": ("    n = torch.cuda.device_count_all()", "device_count",
                        "call torch's device_count once"),
        "cut": ("    name = torch.cuda.get_device_name(", "get_device_name",
                "call torch's get_device_name once"),
    }
    for name, (line, fn, said) in cases.items():
        log = tmp_path / f"{name.replace(' ', '_')}.log"
        log.write_text("torch._dynamo.exc.Unsupported: torch.* op returned non-Tensor int "
                       f"call_function <function {fn} at 0x7f0000000000>\n\nfrom user code:\n"
                       f'   File "/tmp/m.py", line 9, in forward\n{line}\n')
        fix = _fix(log)
        assert fix.startswith(said), (name, fix)

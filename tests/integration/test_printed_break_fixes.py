"""Graph breaks as a user pastes them after ``print(e)`` of fullgraph=True's Unsupported, and the
fixes diagnose prints for them, applied on real torch.compile (paste hunt 19).

torch's message printed by ``print("Compile error:\\n", e)`` begins with its graph-break type
alone on a line (pytorch#167266, #180845): it was refused as "not a torch log". Three fixes
are new: "Observed exception" (pytorch#173231: an exception the traced code raises; 2.15 places
it in torch's polyfill of the class call, which had made it "torch's own code, not a line of
yours"), "Failed to trace builtin operator" whose hints the paste cut (its operator and types
named), and a call of torch._dynamo.graph_break() in 2.3-2.6's words (pytorch#124900).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import COUNTING_BACKEND, Script, run_variants

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

_PRINTED = """
import sys
import torch
{setup}
def f(x):
{body}
try:
    print(torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2)).tolist())
except Exception as e:
    print("Compile error:\\n", e, file=sys.stderr)
    print(type(e).__name__)
"""
_BAD_CLASS = """
class BadClass:
    def __init__(self, cls):
        self.cls = cls
"""
_EAGER = """
import torch
{setup}
def f(x):
{body}
with torch.compiler.set_stance("force_eager"):
    try:
        torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2))
    except TypeError as e:
        print("eager raised TypeError")
"""


def _program(template: str, setup: str, body: str) -> str:
    return template.format(setup=setup, body=body)


def _break_fix(log: Path) -> str:
    diag = diagnose_inputs([log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    return a.fix


def test_an_observed_exception_is_the_codes_error_shown_uncompiled(tmp_path: Path) -> None:
    raising = "    obj = BadClass()\n    return x + 1\n"
    fixed = "    obj = BadClass(cls=1)\n    return x + obj.cls\n"
    runs = run_variants({
        "raised": _program(_PRINTED, _BAD_CLASS, raising),
        "eager": _program(_EAGER, _BAD_CLASS, raising),
        "fixed": _program(_PRINTED, _BAD_CLASS, fixed),
    }, tmp_path)
    assert runs["raised"].stdout.strip() == "Unsupported"
    fix = _break_fix(runs["raised"].log)  # (the printed message, read whole)
    assert 'set_stance("force_eager")' in fix and "not a line of yours" not in fix, fix
    assert "raised by the call at" in fix and "in f" in fix, fix
    # the step the fix names shows the code's own error; fixed, it compiles in one graph
    assert runs["eager"].stdout.strip() == "eager raised TypeError"
    assert runs["fixed"].stdout.strip() == "[2.0, 2.0]", runs["fixed"].log.read_text()[-2000:]


def test_a_builtin_operator_cut_before_its_hints_is_named(tmp_path: Path) -> None:
    runs = run_variants({
        "raised": _program(_PRINTED, "", '    return x + len(memoryview(b"ab"))\n'),
        "fixed": _program(_PRINTED, "", '    return x + len(b"ab")\n'),
    }, tmp_path)
    assert runs["raised"].stdout.strip() == "Unsupported"
    text = runs["raised"].log.read_text().splitlines()
    head = next(i for i, t in enumerate(text) if t.strip() == "Failed to trace builtin operator")
    cut = tmp_path / "cut.log"  # the paste of pytorch#167266: the type and its Explanation
    cut.write_text("\n".join(text[head - 1:head + 2]) + "\n")
    fix = _break_fix(cut)
    assert "`memoryview` with argument types ['bytes']" in fix, fix
    assert runs["fixed"].stdout.strip() == "[3.0, 3.0]", runs["fixed"].log.read_text()[-2000:]


_COUNTED = """
import torch
""" + COUNTING_BACKEND + """def f(x):
    x = x + 1
{call}    return x * 2
print(torch.compile(f, backend=backend)(torch.ones(2)).tolist(), len(graphs))
"""


def test_a_called_graph_break_goes_with_the_call(tmp_path: Path) -> None:
    paste = Path(__file__).parents[1] / "data" / "pasted" / "pytorch-124900.log"
    fix = _break_fix(paste)  # 2.4's words: "skip function graph_break in file …decorators.py"
    assert "torch._dynamo.graph_break()" in fix and "remove the call" in fix, fix
    runs = run_variants({
        "called": _COUNTED.format(call="    torch._dynamo.graph_break()\n"),
        "removed": _COUNTED.format(call=""),
    }, tmp_path)
    assert runs["called"].stdout.strip() == "[4.0, 4.0] 2"
    assert runs["removed"].stdout.strip() == "[4.0, 4.0] 1"


# a class whose construction dynamo cannot trace: a ctypes class (2.15 runs the construction
# through its polyfill, polyfills/__init__.py's instantiate_user_defined_class_object, and it
# breaks there, on the user's call) or a class pybind11 binds, subclassed in Python as a C++
# extension's classes are (2.15: "method `__new__` of class `pybind11_type`" in its polyfill;
# 2.4-2.7: "unsupported builtin None.pybind11_object.__new__", cosmos-rl#16)
_CONSTRUCTING = """
import ctypes
import torch
""" + COUNTING_BACKEND + """class Made({base}):
    pass
{{setup}}def f(x):
    x = x + 1
{{body}}    return x * 2
print(torch.compile(f, backend=backend)(torch.ones(2)).tolist(), len(graphs))
"""
_POLYFILLED = _CONSTRUCTING.format(base="ctypes.c_int")
_PYBOUND = _CONSTRUCTING.format(base="torch._C.BenchmarkConfig")
# name -> (program, the broken body, the fix's setup and body, the result printed)
_CONSTRUCTED = {
    "ctypes": (_POLYFILLED, "    flag = Made(3)\n    x = x + flag.value\n",
               "FLAG = Made(3).value\n", "    x = x + FLAG\n", "[10.0, 10.0]"),
    "pybind11": (_PYBOUND, "    config = Made()\n", "CONFIG = Made()\n",
                 "    config = CONFIG\n", "[4.0, 4.0]"),
}


@pytest.mark.parametrize("made", sorted(_CONSTRUCTED))
def test_a_break_at_an_objects_construction_is_fixed_by_making_it_outside(
        tmp_path: Path, made: str) -> None:
    program, body, setup, moved_body, printed = _CONSTRUCTED[made]
    broke = tmp_path / "broke.py"
    broke.write_text(program.format(setup="", body=body))
    runs = run_variants({
        "broke": Script(broke),
        "moved": program.format(setup=setup, body=moved_body),
    }, tmp_path, logs="graph_breaks")
    diag = diagnose_inputs([runs["broke"].log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    if "/_dynamo/polyfills/" not in a.message:
        pytest.skip(f"this torch breaks elsewhere: {a.message}")
    assert f"change your call at {broke}:" in a.fix and "not a line of yours" not in a.fix, a.fix
    assert runs["broke"].stdout.strip() == f"{printed} 2"
    # the object made outside the compiled function, as the fix says: one graph, same result
    assert runs["moved"].stdout.strip() == f"{printed} 1"


_BROKEN = """
import torch
def g(x):
    torch._dynamo.graph_break()
    return x + 1
def f(x):
    x = x * 2
    x = g(x)
    return x - 1
print(torch.compile(f, backend="eager")(torch.ones(2)).tolist())
"""


def test_a_break_whose_reason_was_cut_is_named_by_the_rerun_it_asks_for(tmp_path: Path) -> None:
    # round 24 (pytorch#126722's paste ends before the reason): the fix printed for a record
    # cut before its reason is TORCH_LOGS="graph_breaks"; that rerun names the break and place
    program = tmp_path / "broken.py"
    program.write_text(_BROKEN)
    runs = run_variants({"rerun": Script(program)}, tmp_path, logs="graph_breaks")
    assert runs["rerun"].stdout.strip() == "[2.0, 2.0]"
    lines = runs["rerun"].text.splitlines()
    start = next(i for i, t in enumerate(lines) if t.endswith("User code traceback:"))
    end = next(i for i in range(start, len(lines)) if "] [1/0] " in lines[i])
    cut = tmp_path / "cut.log"  # a paste begun inside the first record, after its reason
    cut.write_text("\n".join(lines[start:end]) + "\n")
    fix = _break_fix(cut)
    assert 'TORCH_LOGS="graph_breaks"' in fix and "untraceable call" not in fix, fix
    diag = diagnose_inputs([runs["rerun"].log])
    (b,) = diag.graph_breaks
    assert (Path(b.file).name, b.user_line) == ("broken.py", 4)  # (the program begins with a blank line)
    assert "graph_break()" in b.reason + b.explanation + " ".join(b.hints), b
    assert "Remove the `torch._dynamo.graph_break()` call" in _break_fix(runs["rerun"].log)


_COUNTED_ARRAYS = """
import array
import operator
import torch
{setup}A = [array.array("i", [1]), array.array("i", [2])]
AB = array.array("i", [1])
""" + COUNTING_BACKEND + """def f(x):
    x = x + 1
    return x * operator.countOf(A, AB)
print(torch.compile(f, backend=backend)(torch.ones(2)).tolist(), len(graphs))
"""


def test_a_break_in_a_polyfill_another_polyfill_called_is_fixed_at_the_users_call(
        tmp_path: Path) -> None:
    # round 24: countOf's polyfill calls sum()'s, which runs countOf's generator, where the
    # array's C == breaks (2.15); the fix names f's call and torch's hint, allow_c_slot
    if not hasattr(torch._dynamo, "allow_c_slot"):
        pytest.skip("this torch has no torch._dynamo.allow_c_slot")
    broke = tmp_path / "arrays.py"
    broke.write_text(_COUNTED_ARRAYS.format(setup=""))
    runs = run_variants({
        "broke": Script(broke),
        "allowed": _COUNTED_ARRAYS.format(setup="torch._dynamo.allow_c_slot(array.array)\n"),
    }, tmp_path, logs="graph_breaks")
    diag = diagnose_inputs([runs["broke"].log])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    if "/_dynamo/polyfills/" not in a.message:
        pytest.skip(f"this torch breaks elsewhere: {a.message}")
    assert f"change your call at {broke}:13 in f" in a.fix, a.fix
    assert "allow_c_slot(array)" in a.fix and "not a line of yours" not in a.fix, a.fix
    # (round 25) torch's hint names the class by its __name__; the fix says to pass the class
    # itself, module.array, as applied here (allow_c_slot(array) would pass the module)
    assert "pass the class object" in a.fix and "module.array" in a.fix, a.fix
    assert runs["broke"].stdout.strip() == "[2.0, 2.0] 2"
    assert runs["allowed"].stdout.strip() == "[2.0, 2.0] 1"  # torch's hint applied: one graph


_EQUAL = """
import torch
""" + COUNTING_BACKEND + """def f(a, b):
{body}
print(torch.compile(f, backend=backend)(torch.ones(2), torch.ones(2)).tolist(), len(graphs))
"""


def test_a_data_dependent_operators_fix_compiles_in_one_graph(tmp_path: Path) -> None:
    # (round 24) torch 2.1-2.6's "data dependent operator: aten.equal.default" break is told
    # the op's own fix: torch.equal(a, b) -> (a == b).all(); applied here on this torch, where
    # it compiles in one graph to torch.equal's answer (2.15 traces torch.equal itself, so
    # the break is not shown here: only that the rewrite holds)
    log = tmp_path / "dd.log"
    log.write_text("Break Reasons:\n  Break Reason 1:\n    Reason: data dependent operator: "
                   "aten.equal.default; to enable, set torch._dynamo.config.capture_scalar_outputs"
                   " = True\n    User Stack:\n      <FrameSummary file /home/u/prog.py, line 12 "
                   "in f>\n")
    fix = _break_fix(log)
    assert "torch.equal(a, b) -> (a == b).all()" in fix, fix
    runs = run_variants({
        "equal": _EQUAL.format(body="    return a + 1 if torch.equal(a, b) else a - 1"),
        "fixed": _EQUAL.format(body="    return torch.where((a == b).all(), a + 1, a - 1)"),
    }, tmp_path)
    assert runs["equal"].stdout.split("]")[0] == "[2.0, 2.0", runs["equal"].log.read_text()[-2000:]
    assert runs["fixed"].stdout.strip() == "[2.0, 2.0] 1", runs["fixed"].log.read_text()[-2000:]

"""A break torch places in one of its polyfills that another polyfill called (round 24): the
fix names the code's call under both, not "torch's own code, not a line of yours". The record
is torch 2.15's (TORCH_LOGS=graph_breaks, a real run): ``operator.countOf(arrays, a)`` runs
polyfills/operator.py's countOf, which calls sum() (polyfills/builtins.py), which runs
countOf's generator, where an array's C ``==`` breaks."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

_PRE = b"V1130 20:13:05.321000 13113 torch/_dynamo/symbolic_convert.py:5577] [0/0] [__graph_breaks] "
_POLY = b"/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/polyfills/"
_RECORD = [
    b"Graph break in user code at " + _POLY + b"operator.py:120",
    b"Graph Break Reason: Encountered graph break when attempting to trace CALL: a function "
    b"call, e.g. f(x, y):",
    b"",
    b"Untraceable C tp_richcompare",
    b"  Explanation: array defines a C comparison method that Dynamo cannot trace into.",
    b"  Hint: Use torch._dynamo.allow_c_slot(array) to register it as safe if its comparison "
    b"methods are pure and deterministic.",
    b"",
    b"User code traceback:",
    b'  File "/tmp/h50/nest4.py", line 12, in <module>',
    b'    print(name, torch.compile(globals()[name], backend="eager")(torch.ones(2)).tolist())',
    b'  File "/tmp/h50/nest4.py", line 10, in counta',
    b"    return x * operator.countOf(A, AB)",
    b'  File "' + _POLY + b'operator.py", line 120, in countOf',
    b"    return sum(it is b or it == b for it in a)",
    b'  File "' + _POLY + b'builtins.py", line 64, in sum',
    b"    return functools.reduce(operator.add, iterable, start)",
    b'  File "' + _POLY + b'operator.py", line 120, in countOf',
    b"    return sum(it is b or it == b for it in a)",
    b"",
]


def _fix(tmp_path: Path, lines: list[bytes]) -> str:
    log = tmp_path / "nested.log"
    log.write_bytes(b"".join(_PRE + t + b"\n" for t in lines))
    (a,) = [s for s in diagnose_logs([log]).suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    return a.fix + "\n" + a.evidence[0]


def test_a_break_in_a_polyfill_another_polyfill_called_names_the_codes_call(tmp_path: Path) -> None:
    said = _fix(tmp_path, _RECORD)
    assert "change your call at /tmp/h50/nest4.py:10 in counta" in said, said
    assert "allow_c_slot(array)" in said and "not a line of yours" not in said, said
    assert said.endswith("reached from /tmp/h50/nest4.py:10 in counta"), said


def test_a_stack_cut_to_torchs_polyfills_is_still_torchs_own_code(tmp_path: Path) -> None:
    # the code's frame not in the paste: no call of the user's to name
    cut = _RECORD[:8] + _RECORD[12:]
    said = _fix(tmp_path, cut)
    assert "not a line of yours" in said and "polyfills/builtins.py:64 in sum" in said, said


def test_allow_c_slots_argument_is_said_to_be_the_class_not_its_name(tmp_path: Path) -> None:
    # (round 25) torch's hint writes the class's __name__ ("allow_c_slot(array)"); the program
    # reaches that class as array.array, and allow_c_slot(array) with `import array` raises
    # TypeError("allow_c_slot expects a type, got module") (2.15's decorators.py): the fix
    # says to pass the class itself, as the test that applies it does
    said = _fix(tmp_path, _RECORD)
    assert "pass the class object" in said and "module.array" in said, said

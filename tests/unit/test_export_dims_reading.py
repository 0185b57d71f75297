"""Paste hunt 13's problems 3, 4 and 7 and its note (round 20): export's forced specializations
and Dim.DYNAMIC conflicts read as the Dims' findings, never as a compiler crash to report;
"Data dependent variable 'i1' allocated at:" read as a data-dependent error; "Cannot call
numel() on tensor with symbolic sizes/strides" read as an op without symbolic-shape support;
torch._check(n >= 0), not torch._check_is_size. No torch."""

from __future__ import annotations

from pathlib import Path

import pytest
from linear_time import assert_linear

from dyncli.diagnose.analyzer import analyze
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import events as ev
from dyncli.logparse.textlog import parse_lines
from dyncli.logparse.textviolations import export_specialized

PASTED = Path(__file__).parent.parent / "data" / "pasted"
REPORT = "report it to PyTorch"


def _read(text: str) -> Diagnosis:
    stats = ev.ParseStats()
    return analyze(parse_lines(text.encode().splitlines(keepends=True), stats), stats)


def _said(diag: Diagnosis) -> str:
    return " ".join(f"{s.message} {s.fix}" for s in diag.suggestions)


@pytest.mark.parametrize(("line", "want"), [
    # 2.3/2.4 (symbolic_shapes.py:1691), pytorch#126127
    ("  - batch = L['args'][0][0].size()[0] must be specialized to 4 because the guards "
     "generated for it are too complex.", ("batch = L['args'][0][0].size()[0]", "4")),
    # 2.15 (:3840)
    ("  - solving the guards generated for b = L['x'].size()[0] resulted in a specialized value "
     "of 6.", ("b = L['x'].size()[0]", "6")),
    # 2.15 non_strict_utils.py:868 and :873
    ("- Received user-specified dim hint Dim.DYNAMIC(min=None, max=None), but export 0/1 "
     "specialized due to hint of 1 for dimension inputs['x'].shape[0].",
     ("inputs['x'].shape[0]", "1")),
    ("- Received user-specified dim hint Dim.DYNAMIC(min=2, max=None), but tracing inferred a "
     "static shape of 8 for dimension inputs['y'].shape[1].", ("inputs['y'].shape[1]", "8")),
    # not export's items: prose, a cut value
    ("the guards generated for it are too complex, says the doc", None),
    ("  - batch = L['x'].size()[0] must be specialized to because the guards generated for it "
     "are too complex.", None),
])
def test_export_item_forms(line: str, want: tuple[str, str] | None) -> None:
    assert export_specialized(line) == want


def test_forced_specializations_are_one_finding_per_dim() -> None:
    for name in ("pytorch-126127.log",):
        diag = diagnose_logs([PASTED / name])
        found = [s for s in diag.suggestions if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
        assert len(found) == 2
        assert "export needs batch = 4" in found[0].message
        assert "export needs audio_signal__2 = 256" in found[1].message
        assert all("Dim.STATIC" in s.fix and "suppress_errors" not in s.fix for s in found)


def test_forced_specialization_under_user_error_and_2_15_words() -> None:
    text = ("torch._dynamo.exc.UserError: Specializations unexpectedly required (b)! For more "
            'information, run with TORCH_LOGS="+dynamic".\n'
            "  - solving the guards generated for b = L['x'].size()[0] resulted in a specialized "
            "value of 6.\n")
    diag = _read(text)
    assert not diag.compile_crashes
    assert diag.stats.unrecognized == 0
    (found,) = diag.suggestions
    assert "export needs b = 6" in found.message and "Dim.STATIC for b" in found.fix


_ZERO_ONE = """Traceback (most recent call last):
  File "/work/repro/export_forms.py", line 17, in <module>
    export(One(), (torch.randn(1, 3),), dynamic_shapes={"x": {0: Dim.DYNAMIC}})
  File "/venv/lib/python3.11/site-packages/torch/export/_trace.py", line 1723, in _get_range_constraints
    range_constraints = make_constraints(
                        ^^^^^^^^^^^^^^^^^
  File "/venv/lib/python3.11/site-packages/torch/_export/non_strict_utils.py", line 1017, in make_constraints
    raise ValueError(prefix + "\\n".join(range_violations))
ValueError: Found the following conflicts between user-specified ranges and inferred ranges from model tracing:
- Received user-specified dim hint Dim.DYNAMIC(min=None, max=None), but export 0/1 specialized due to hint of 1 for dimension inputs['x'].shape[0].
"""


def test_dim_dynamic_zero_one_is_the_specification_not_a_crash() -> None:
    diag = _read(_ZERO_ONE)
    assert not diag.compile_crashes
    (found,) = diag.suggestions
    assert found.kind is AdviceKind.CONSTRAINT_VIOLATION
    assert "inputs['x'].shape[0]" in found.message and "size 1" in found.message
    assert "size 2 or more" in found.fix and "Dim.AUTO" in found.fix
    assert "suppress_errors" not in _said(diag) and REPORT not in _said(diag)


def test_other_export_user_errors_are_never_report_it() -> None:
    # an export error whose message dyncli does not read: still the specification's
    text = _ZERO_ONE.replace(
        "ValueError: Found the following conflicts between user-specified ranges and inferred "
        "ranges from model tracing:", "ValueError: Expected dynamic_shapes of a tuple").replace(
        "- Received user-specified dim hint", "  and not a dim hint")
    diag = _read(text)
    assert len(diag.compile_crashes) == 1
    (found,) = diag.suggestions
    assert "torch.export rejected what it was asked" in found.fix
    assert "does nothing for export" in found.fix and REPORT not in found.fix


def test_data_dependent_variable_is_a_data_dependent_error() -> None:
    diag = diagnose_logs([PASTED / "pytorch-116703.log"])
    (dde,) = diag.data_dependent_errors
    assert (dde.expr, dde.what) == ("i1", "symbol")
    assert dde.made is not None and dde.made.line == 45
    (found,) = diag.suggestions
    assert "expression over `i1`" in found.message and "torch._check(n >= 0)" in found.fix
    assert "_check_is_size" not in found.fix


def test_the_expression_replaces_the_symbol_it_names() -> None:
    p = "V0103 11:21:04.838000 1 torch/fx/experimental/symbolic_shapes.py:7970] [0/0] "
    text = (f"{p}Data dependent variable 'u0' allocated at:\n"
            f'{p}  File "/home/u/model.py", line 9, in <module>\n'
            f"{p}    out = f(x)\n"
            "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard "
            "on data-dependent expression Eq(u0, 1) (unhinted: Eq(u0, 1)).  (Size-like symbols: "
            "u0)\n")
    (dde,) = _read(text).data_dependent_errors
    assert (dde.expr, dde.what) == ("Eq(u0, 1)", "guard")
    assert dde.made is not None and dde.made.file == "/home/u/model.py"


@pytest.mark.parametrize("name", ["pytorch-122171.log", "pytorch-115307.log"])
def test_symbolic_sizes_call_is_an_op_without_symbolic_support(name: str) -> None:
    diag = diagnose_logs([PASTED / name])
    (found,) = diag.suggestions
    assert "without symbolic-shape support" in found.fix
    assert "torch._dynamo.mark_static" in found.fix and "dynamic=False" in found.fix
    assert "suppress_errors" not in found.fix
    assert "if it raises the same error, fix it in your code" not in found.fix


def test_hostile_export_items_stay_linear() -> None:
    def item(n: int) -> str:
        return "- " + "Received user-specified dim hint , but export 0/1 specialized due to hint of " * n

    def items(n: int) -> str:
        return item(n) + "\n" + "  - x = " + "solving the guards generated for " * n + "\n"

    assert export_specialized(item(4000)) is None
    assert not _read(items(4000)).suggestions
    assert_linear(export_specialized, item, 4000)
    assert_linear(_read, items, 4000)

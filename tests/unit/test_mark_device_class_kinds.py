"""Three guards that are not what their words suggest (paste hunt 15, problems 3-5): a guard on
self's class (a class per module), the dimension-marking guard (a mark the compile did not
see, not a size change) and the default-device / TorchFunctionMode guard (not a value of the
code). Each text as the torch releases that write it (their guards.py and libtorch_python.so).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.guardtext import GuardKind, checked, classify


@pytest.mark.parametrize(("guard", "kind"), [
    # torch 2.1-2.12 (guards.py: 2.6 :2045, 2.12 :3502)
    ("hasattr(L['x'], '_dynamo_dynamic_indices') == False", "dim_marking"),
    ("hasattr(x, '_dynamo_unbacked_indices') == False", "dim_marking"),
    # torch 2.13-2.15's C++ dimension-marking guard
    ("_has_dynamo_dim_marking is present on runtime tensor but was absent at compile time",
     "dim_marking"),
    ("_dynamo_dynamic_indices should be absent but is present on runtime tensor", "dim_marking"),
    # mark_dynamic of other dims than the compile's: a size matter, read by size_changes
    ("_dynamo_dynamic_indices not a subset: runtime {0, 1} is not a subset of compiled {0}",
     "size"),
    ("utils_device.CURRENT_DEVICE == device(type='cuda', index=0)", "default_device"),
    ("utils_device.CURRENT_DEVICE == None", "default_device"),
    ("___check_torch_function_mode_stack()", "default_device"),
    ("___check_type_id(L['self'], 206876688)", "instance_type"),
    ("___check_type_id(self, 94312177015056), type=<class '__main__.FSDPBlock'>",
     "instance_type"),
    # guards on an input's or a member's class keep the input's fix
    ("___check_type_id(L['x'], 94)", "type"),
    ("___check_type_id(L['self']._modules['mixer'], 157671424)", "type"),
])
def test_each_text_is_its_kind(guard: str, kind: str) -> None:
    assert checked(guard) == kind


def test_a_mark_is_not_a_size_recompile() -> None:
    assert classify("hasattr(L['x'], '_dynamo_dynamic_indices') == False") is GuardKind.OTHER


_HEAD = "V0101 00:00:00.000000 1 torch/_dynamo/guards.py:{n}] [0/{c}] [__recompiles] "


def _log(tmp_path: Path, *records: tuple[int, str]) -> Path:
    lines = []
    for c, reason in records:
        p = _HEAD.format(n=3000, c=c)
        lines += [p + "Recompiling function forward in /app/model.py:10",
                  p + "    triggered by the following guard failure(s):",
                  p + f"    - 0/{c - 1}: {reason}"]
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def test_a_late_mark_names_the_tensor_and_marks_it_from_the_first_call(tmp_path: Path) -> None:
    diag = diagnose_logs([_log(tmp_path, (1, "hasattr(L['x'], '_dynamo_dynamic_indices') == False"))])
    (r,) = diag.recompiles
    assert r.cause == "other" and r.kind == "dim_marking"
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert a.message.startswith("1 recompile(s) of forward: x was marked dynamic")
    assert "will not fix" not in a.message
    assert a.fix.startswith("mark it before the first compiled call, and on every call")
    assert "mark_dynamic(x, dim)" in a.fix
    assert not [s for s in diag.suggestions if s.kind is AdviceKind.MARK_DYNAMIC]


def test_one_class_name_for_several_class_ids_is_a_class_made_per_instance(tmp_path: Path) -> None:
    t = "___check_type_id(self, {}), type=<class '__main__.FSDPBlock'>  # return x  # m.py:3 in forward"
    diag = diagnose_logs([_log(tmp_path, (1, t.format(11)), (2, t.format(12)))])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert "the same class name, a new class object each time" in a.message
    assert "FSDPBlock" in a.message and "pass objects of one class" not in a.fix
    assert "raise torch._dynamo.config.recompile_limit to the number of modules" in a.fix

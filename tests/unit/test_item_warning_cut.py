"""torch's Tensor.item() warning (variables/tensor.py, 2.4-2.15: "Graph break from
`Tensor.item()`, consider setting:", the capture_scalar_outputs setting, its env form, then
"Graph break: from user code at:" and the stack) pasted without its first line (specforge-222:
the store's excerpt begins at the setting): its body's capture_scalar_outputs lines say it is
a Tensor.item(), so it is read as that warning, and both forms get the one `.item()` fix
(dyncli.diagnose.unbacked.item_fix), not "its reason is not in the log" (round 24)."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose import unbacked
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

PASTED = Path(__file__).parent.parent / "data" / "pasted"
ITEM_FIX = unbacked.item_fix("")


def _break(diag):  # type: ignore[no-untyped-def]
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    return a


def test_a_cut_item_warning_is_read_by_its_body_and_gets_the_item_fix() -> None:
    diag = diagnose_logs([PASTED / "specforge-222.log"])
    (b,) = diag.graph_breaks
    assert b.reason.startswith("Tensor.item()"), b.reason
    assert b.file.endswith("specforge/core/eagle3.py") and b.user_line == 789
    a = _break(diag)
    assert a.fix == ITEM_FIX and "capture_scalar_outputs = True" in a.fix, a.fix
    assert diag.stats.unrecognized == 0, diag.stats


def test_the_whole_warning_gets_the_same_fix() -> None:
    for name in ("distrifuser-26.log", "pytorch_scatter-457.log"):
        assert _break(diagnose_logs([PASTED / name])).fix == ITEM_FIX, name


def test_a_body_line_of_another_logger_is_not_the_item_warning(tmp_path: Path) -> None:
    # (the setting line under another file's prefix: not torch's warning, not a break)
    log = tmp_path / "other.log"
    log.write_text("W0906 20:38:55.305000 5696 mylib/setup.py:10] [7/0]     "
                   "torch._dynamo.config.capture_scalar_outputs = True\n")
    assert not diagnose_logs([log]).graph_breaks

"""What the paste-hunt tests share: where the corpus of real pastes is, and diagnose on a text
a test writes itself (a variant of a paste: wrapped, cut, another release's wording)."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"


def diagnose_text(tmp_path: Path, text: str | bytes) -> Diagnosis:
    """diagnose on ``text`` written to a file of its own (bytes as they are)."""
    log = tmp_path / "p.log"
    if isinstance(text, str):
        log.write_text(text)
    else:
        log.write_bytes(text)
    return diagnose_logs([log])

"""What to type to install an extra: from a source checkout, the checkout; else from PyPI."""

from __future__ import annotations

import os
from pathlib import Path


def _checkout() -> Path | None:
    """The source checkout this dyncli runs from (an editable install), or None."""
    root = Path(__file__).resolve().parents[1]
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "dyncli"' in text else None


def pip_extra(extra: str) -> str:
    """``pip install 'dyncli[bench]'``, or from a checkout ``pip install -e '.[bench]'`` (the
    checkout's path when the working directory is elsewhere): the published name only works
    once dyncli is on the index, the checkout always does."""
    root = _checkout()
    if root is None:
        return f"pip install 'dyncli[{extra}]'"
    try:
        here = Path.cwd().resolve() == root
    except OSError:
        here = False
    where = "." if here else os.fspath(root)
    return f"pip install -e '{where}[{extra}]'"

"""Where each torch version's recordings live (shared by the make_*.py scripts).

Recordings are made under the torch that runs the script and land in a folder of that
version: ``tests/data/<version>/{logs,traces,pgo,golden}/``. torch 2.14.1, recorded before
there were per-version folders, keeps the original places (``tests/data/logs``, ``traces``,
``pgo``, ``golden``), which other tests and docs name.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEGACY = "2.14.1"


def torch_version() -> str:
    """The torch this interpreter has, without its local tag (``2.15.0+cu130`` → ``2.15.0``)."""
    return metadata.version("torch").split("+")[0]


def data_dir(version: str | None = None) -> Path:
    """The recordings folder for ``version`` (default: this interpreter's torch)."""
    version = version or torch_version()
    return HERE if version == LEGACY else HERE / version

"""Where torch keeps its PGO state, computed as torch does, without importing torch.

torch 2.15 (``torch/_inductor/runtime/cache_dir_utils.py``): the inductor cache dir is
``TORCHINDUCTOR_CACHE_DIR`` made absolute, or, unset, ``tempfile.gettempdir()`` joined with
``torchinductor_<user>``: ``<user>`` is ``getpass.getuser()`` (``LOGNAME``, ``USER``, ``LNAME``,
``USERNAME``, then the password database: ``root`` in a container where ``$USER`` is unset),
with ``\\ / : * ? " < > |`` made ``_``, or ``uid_<uid>`` when the user has no name.
(``/var/tmp`` replaces the temp dir only in Meta's internal build.) ``torch/_dynamo/pgo.py``
writes PGO state as ``<cache dir>/dynamo/code_state_<job>:<rank>:<tag>.pkl``, ``<job>`` being
``torch.compiler.config.job_id``: ``TORCH_COMPILE_JOB_ID``, else
``TORCH_COMPILE_STICKY_PGO_KEY`` (``torch/compiler/config.py``); without one, torch keeps none.
"""

from __future__ import annotations

import getpass
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

JOB_ENV = ("TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_STICKY_PGO_KEY")


def _user() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        getuid = getattr(os, "getuid", None)
        name = f"uid_{getuid()}" if callable(getuid) else "unknown_user"
    return re.sub(r'[\\/:*?"<>|]', "_", name)


@dataclass(frozen=True)
class TorchDirs:
    """torch's cache dir and job id for this environment, and how each was found."""

    cache_dir: Path
    from_env: bool  # TORCHINDUCTOR_CACHE_DIR (else the user's dir in the temp dir)
    job_id: str | None
    job_env: str | None  # the variable the job id came from

    def describe(self) -> str:
        """``torch's cache dir /tmp/torchinductor_root (user root; TORCHINDUCTOR_CACHE_DIR
        unset)``, and the job when one is set."""
        where = ("TORCHINDUCTOR_CACHE_DIR" if self.from_env
                 else f"user {_user()}; TORCHINDUCTOR_CACHE_DIR unset")
        job = f", job {self.job_id!r} ({self.job_env})" if self.job_id is not None else ""
        return f"torch's cache dir {self.cache_dir} ({where}){job}"


def torch_dirs(environ: Mapping[str, str] | None = None) -> TorchDirs:
    """Where torch, run in ``environ`` (default: this process's), reads and writes PGO state."""
    env = os.environ if environ is None else environ
    given = env.get("TORCHINDUCTOR_CACHE_DIR")
    cache = Path(os.path.abspath(given)) if given is not None else \
        Path(tempfile.gettempdir()) / f"torchinductor_{_user()}"
    source = next((name for name in JOB_ENV if env.get(name)), None)
    return TorchDirs(cache, given is not None, env[source] if source else None, source)

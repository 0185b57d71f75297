"""Installing dyncli's bench extra onto the torch a machine already has never replaces it.

pip's own resolver, for real (``pip install --dry-run --report``: it resolves against the
installed packages and PyPI and reports what it would install, installing nothing), on this
venv's torch — in CI the newest release, and the previous one (the first test). For 2.11 and
the oldest supported torch ``.ci/run`` does it for real: it installs torch and torchvision
first, then dyncli[dev] without a torch pin, and stops unless torch is still the pinned one.

Each torchvision requires the torch it was built for (``torch==X.Y.Z`` up to 0.29.0, then
``torch>=2.14.0``), and timm needs torchvision: with the matching torchvision installed, pip
keeps the torch; without one it may pick a newer torchvision and the torch that goes with it
(seen: torch 2.11.0 replaced by 2.12.1), unless torch is pinned on the command line, as the
README says (the second test).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = ("NewConnectionError", "Temporary failure in name resolution",
           "Could not resolve host", "Network is unreachable")


def _would_install(python: str, *extra: str) -> dict[str, dict[str, object]]:
    """What ``pip install -e ROOT[bench] EXTRA…`` would install with ``python``: name → its
    metadata (``version``, ``requires_dist``, …) from pip's report."""
    report = Path(os.environ.get("TMPDIR", "/tmp")) / f"dyncli-pip-report-{os.getpid()}.json"
    proc = subprocess.run(
        [python, "-m", "pip", "install", "--dry-run", "--quiet", "--report", str(report),
         "-e", f"{ROOT}[bench]", *extra],
        capture_output=True, text=True, timeout=900, cwd=ROOT)
    try:
        if proc.returncode != 0:
            if any(m in proc.stderr for m in OFFLINE):
                pytest.skip("pip cannot reach its index here")
            raise AssertionError(proc.stderr[-3000:])
        doc = json.loads(report.read_text())
    finally:
        report.unlink(missing_ok=True)
    return {i["metadata"]["name"].lower(): i["metadata"] for i in doc["install"]}


def _site_packages() -> Path:
    return Path(next(p for p in sys.path if p.endswith("site-packages") and "torch" in
                     {c.name for c in Path(p).iterdir()}))


def test_the_bench_extra_keeps_this_torch() -> None:
    """This venv (torch and its torchvision installed): pip installs dyncli, not a torch."""
    torch_now = version("torch")
    planned = _would_install(sys.executable)
    assert "torch" not in planned, f"pip would replace torch {torch_now}: {planned['torch']}"
    assert "torchvision" not in planned, planned["torchvision"]["version"]


@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_without_torchvision_the_readme_pin_keeps_torch(tmp_path: Path) -> None:
    """A machine with torch but no torchvision: the README's install line pins torch to the
    installed release, and pip then picks the torchvision made for it."""
    # a venv that sees this one's packages but torchvision (and timm, which needs it)
    view = tmp_path / "site"
    view.mkdir()
    hidden = ("torchvision", "timm", "dyncli", "__editable__", "_distutils_hack", "pip",
              "setuptools", "pkg_resources", "distutils-precedence")
    for entry in _site_packages().iterdir():
        if not entry.name.lower().startswith(hidden) and entry.suffix != ".pth":
            (view / entry.name).symlink_to(entry)
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = str(env_dir / "bin" / "python")
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    (site / "machine-torch.pth").write_text(f"{view}\n")
    torch_now = version("torch")
    release = torch_now.split("+")[0]  # a local build (+cu130, +cpu) is that release to pip
    planned = _would_install(python, f"torch=={release}")
    assert "torch" not in planned, f"pip would replace torch {torch_now}: {planned['torch']}"
    # the torchvision made for this release: its torch requirement admits it
    # (torch==X.Y.Z up to torchvision 0.29.0; torch>=2.14.0 from 0.29.1 on)
    requires = [Requirement(str(r)) for r in planned["torchvision"].get("requires_dist") or []]
    wants = [r for r in requires if r.name == "torch"]
    assert wants and all(r.specifier.contains(release) for r in wants), wants

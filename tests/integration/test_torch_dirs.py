"""``dyncli suggest``'s default PGO directory is the one torch computes (issue #34), under the
environments that matter: $USER unset (containers, CI), a TMPDIR and a user name torch
sanitizes, a relative TORCHINDUCTOR_CACHE_DIR, and each job-id variable. One torch process per
job-id case (torch reads those at import); the directory cases run in one of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# each side: for every case, set the environment, ask, print [dir, job id] per case
ASK = """
import json, os, sys, tempfile
cases = json.loads(sys.argv[1])
{setup}
out = []
for env in cases:
    for k in ("LOGNAME", "USER", "LNAME", "USERNAME", "TMPDIR", "TORCHINDUCTOR_CACHE_DIR"):
        os.environ.pop(k, None)
    os.environ.update(env)
    tempfile.tempdir = None  # gettempdir() caches its first answer
    out.append({ask})
print(json.dumps(out))
"""
TORCH = ASK.format(
    setup="import torch\nfrom torch._inductor.runtime.cache_dir_utils import cache_dir",
    ask="[cache_dir(), torch.compiler.config.job_id]")
DYNCLI = ASK.format(setup="from dyncli.suggest.torch_dirs import torch_dirs",
                    ask="[str(torch_dirs().cache_dir), torch_dirs().job_id]")


@pytest.mark.parametrize("job_env", [{}, {"TORCH_COMPILE_JOB_ID": "train",
                                          "TORCH_COMPILE_STICKY_PGO_KEY": "other"},
                                     {"TORCH_COMPILE_STICKY_PGO_KEY": "sticky"}])
def test_the_same_directory_and_job_as_torch(job_env: dict[str, str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_STICKY_PGO_KEY")}
    env.update(PYTHONPATH=str(ROOT), **job_env)
    cases = [{}, {"TMPDIR": str(tmp_path), "USER": "some:one"},
             {"TORCHINDUCTOR_CACHE_DIR": "cache/here"}] if not job_env else [{}]

    def ask(code: str) -> list[list[str | None]]:
        out = subprocess.run([sys.executable, "-c", code, json.dumps(cases)], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300, check=True)
        return json.loads(out.stdout.splitlines()[-1])

    mine, torchs = ask(DYNCLI), ask(TORCH)
    assert mine == torchs
    assert (tmp_path / "cache" / "here") in [Path(d) for d, _ in mine] or job_env

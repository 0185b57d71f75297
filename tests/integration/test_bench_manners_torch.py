"""bench's torch manners on a real run: torch's warnings become one dyncli line (issue #32)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODEL = f"{ROOT / 'tests' / 'integration' / 'conftest_bench.py'}:torch_warns"


@pytest.mark.slow
@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_torch_warnings_are_dyncli_lines_and_precision_is_recorded(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "dyncli", "bench", MODEL, "--device", "cpu", "--strategy",
         "dynamic", "--variations", "2", "--repeat", "2", "--warmup", "0",
         "--matmul-precision", "high", "--json", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout + proc.stderr
    assert "UserWarning" not in text and "warnings.warn" not in text
    assert text.count("To copy construct from a tensor") == 1  # dyncli's own line, once
    doc = json.loads(out.read_text())
    assert any("warned: To copy construct" in w for w in doc["warnings"])
    assert doc["environment"]["matmul_precision"] == "high"
    assert doc["device_warmup"]["rounds"] >= 1
    # the first call of a new shape, measured for eager before any timed window
    firsts = [v.get("eager_first_call_s") for v in doc["runs"][0]["variations"]]
    assert firsts[0] is None and isinstance(firsts[1], float) and firsts[1] > 0


def test_an_unset_matmul_precision_is_left_unset() -> None:
    """Without --matmul-precision bench leaves torch's precision as it found it. It set back
    what it had read: torch reads an unset precision ("none", 2.9 on) as "highest", and
    setting that sets "ieee", which no longer follows torch.backends.fp32_precision and keys
    inductor's FX graph cache apart (a second bench in a process missed the cache the first
    had filled)."""
    import torch

    from dyncli.bench.manners import manners

    matmul = torch.backends.cuda.matmul
    if not hasattr(matmul, "fp32_precision"):
        pytest.skip(f"torch {torch.__version__} has no fp32_precision (2.9 on)")
    before = matmul.fp32_precision
    try:
        matmul.fp32_precision = "none"
        with manners(None, print) as used:
            assert used == "highest"
        assert matmul.fp32_precision == "none"
        with manners("high", print) as used:  # asked for: set, then torch's API sets it back
            assert used == "high"
        assert torch.get_float32_matmul_precision() == "highest"
    finally:
        matmul.fp32_precision = before


def test_a_warning_torch_logs_is_a_dyncli_line_on_every_torch(
        capfd: pytest.CaptureFixture[str]) -> None:
    """torch 2.15's stderr handler is a ``logging.Handler`` that follows ``sys.stderr``
    (``torch._logging._internal._StderrHandler``), no ``StreamHandler``: the filter was put on
    none of torch's handlers, and a model's graph-break warning (``Tensor.item()``) was printed
    as torch's 13 ``W1201 … tensor.py:2043]`` lines in the middle of bench's output."""
    import logging

    from dyncli.bench.manners import manners

    said: list[str] = []
    with manners(None, said.append):
        logging.getLogger("torch._dynamo.variables.tensor").warning(
            "Graph break from `Tensor.item()`, consider setting:\n    capture_scalar_outputs")
    assert said == ["torch warned: Graph break from `Tensor.item()`, consider setting:"]
    assert "Graph break" not in capfd.readouterr().err

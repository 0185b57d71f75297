"""Errors that come as a compiled graph runs under CUDA graphs, not while it compiles (paste
hunt 16): suppress_errors wraps frame conversion only (torch 2.15 _dynamo/convert_frame.py), so
it is never their fix; compiling without CUDA graphs is. The pastes are in tests/data/pasted
(read only: CUDA graphs need CUDA)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.cudagraph_advice import MODES
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.cudagraphs import error_start

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"
_ALLOCATOR = ("cudaMallocAsync does not yet support checkPoolLiveAllocations. If you need it, "
              "please file an issue describing your use case.")


@pytest.mark.parametrize("line", [
    f"RuntimeError: {_ALLOCATOR}",
    f"!!! Exception during processing !!! {_ALLOCATOR}",  # ComfyUI's console
    f"- **Exception Message:** {_ALLOCATOR}",  # ComfyUI's error report
    f"> {_ALLOCATOR}",  # a quote (ComfyUI-WanVideoWrapper#1584)
    _ALLOCATOR,
])
def test_the_allocators_message_is_read_behind_the_heads_that_print_it(line: str) -> None:
    assert error_start(line.encode()) == _ALLOCATOR


def test_prose_about_the_allocators_message_is_not_the_error() -> None:
    assert error_start(f"I also get {_ALLOCATOR}".encode()) is None


@pytest.mark.parametrize("name,backend", [
    ("comfyui_yue-11", "cudaMallocAsync"), ("comfyui-6831", "cudaMallocAsync"),
    ("pytorch-163257", "pluggable")])
def test_an_allocator_without_the_pool_check_is_a_cudagraph_error_of_its_own(
        name: str, backend: str) -> None:
    """ComfyUI's message alone (refused as "not a torch log" before round 21) and the
    traceback that ends in it (a crash of the compile, "suppress_errors", before): the
    CUDA-graph trees under an allocator backend other than the native caching allocator."""
    diag = diagnose_logs([PASTED / f"{name}.log"])
    assert not diag.compile_crashes
    assert diag.cudagraphs is not None
    (x,) = diag.cudagraphs.errors
    assert x.kind == "allocator-no-pool-check" and x.user is None
    assert x.message.startswith(f"{backend} does not yet support checkPoolLiveAllocations")
    (a,) = diag.suggestions
    assert a.kind is AdviceKind.CUDAGRAPH_ERROR
    assert "not while compiling" in a.message and "native caching allocator" in a.message
    assert a.fix.startswith("use the native caching allocator in that process: take "
                            "backend:cudaMallocAsync out of PYTORCH_CUDA_ALLOC_CONF (ComfyUI "
                            "sets it unless started with --disable-cuda-malloc")
    assert a.fix.endswith(f"or compile without CUDA graphs ({MODES})")
    assert "suppress_errors" not in a.fix
    assert diag.causes[0].line().startswith("[CUDA-graph error]")
    (row,) = diag.to_json()["cudagraphs"]["errors"]
    assert row["kind"] == "allocator-no-pool-check"

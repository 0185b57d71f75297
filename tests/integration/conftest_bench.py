"""Tiny model files for the bench integration tests (given to bench as FILE.py:FUNCTION)."""

from __future__ import annotations

import torch
from torch import nn


class FailsAtTen(nn.Module):
    """Raises in eager (and compiled) for a batch of 10: an eager_fail_to_run variation."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] == 10:
            raise RuntimeError("this model refuses a batch of 10")
        return self.fc(x)


def failing_at_ten() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Batch 8, 16 features."""
    return FailsAtTen(), (torch.randn(8, 16),)


def broken() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """A build function that fails: model_fail_to_load."""
    raise RuntimeError("weights file missing")


class TwoInputs(nn.Module):
    """Keyword inputs: features (B, 12) and a bool mask (B, 12); the batch is dim 0 of both."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(12, 3)

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.fc(features * mask)


def keyword_inputs() -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """A dict of keyword inputs, batch 6."""
    return TwoInputs(), {"features": torch.randn(6, 12), "mask": torch.ones(6, 12, dtype=torch.bool)}


class OomAboveEight(nn.Module):
    """Raises torch's OutOfMemoryError for batches above 8, as a GPU that ran out would."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] > 8:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        return self.fc(x)


def oom_above_eight() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Batch 8, 16 features; every larger batch is an OOM."""
    return OomAboveEight(), (torch.randn(8, 16),)


class WideMLP(nn.Module):
    """512 -> 2048 -> 512: a few ms per call on a CPU, so a stream's steady state is measurable."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 512)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(nn.functional.gelu(self.fc1(x)))


def wide_mlp() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Batch 32, 512 features."""
    torch.manual_seed(0)
    return WideMLP(), (torch.randn(32, 512),)


def rank_one_dies() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """A model whose rank-1 process dies while building it (``bench --nproc`` failure path)."""
    import os
    import sys

    if os.environ.get("RANK") == "1":
        print("rank 1: simulated crash while loading the model", file=sys.stderr, flush=True)
        os._exit(7)  # no exception, no cleanup: what a killed or crashed process looks like
    torch.manual_seed(0)
    return nn.Linear(4, 2), (torch.randn(4, 4),)


def hangs() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """A build that never returns: a suite with a timeout records it as timeout."""
    import time

    time.sleep(600)
    raise AssertionError("unreachable")


def killed() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """A process killed by SIGKILL, as the kernel's out-of-memory killer does."""
    import os
    import signal

    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")


class HfStyle(nn.Module):
    """An HF-style forward: ``input_ids`` and ``attention_mask`` by keyword, an embedding, one
    masked self-attention, a pooled projection (the shape of item 1 of issue #32, tiny)."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.proj = nn.Linear(16, 16)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        h = self.embed(input_ids)
        scores = (h @ h.transpose(1, 2)) / 4.0
        scores = scores.masked_fill(attention_mask[:, None, :] == 0, -1e4)
        return self.proj(torch.softmax(scores, dim=-1) @ h).mean(dim=1)


def hf_style() -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """Batch 4, sequence 12, by keyword."""
    torch.manual_seed(0)
    return HfStyle(), {"input_ids": torch.randint(0, 50, (4, 12)),
                       "attention_mask": torch.ones(4, 12, dtype=torch.long)}


def torch_warns() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """A tiny MLP whose build makes torch warn (a UserWarning from torch's C++ TORCH_WARN)."""
    torch.manual_seed(0)
    torch.tensor(torch.ones(2))  # "To copy construct from a tensor, it is recommended ..."
    return nn.Sequential(nn.Linear(8, 8)), (torch.randn(4, 8),)


class ExtraWhenCompiled(nn.Module):
    """A 512 -> 2048 -> 16 MLP whose first matmul dominates a call (a few ms on one CPU core
    at batch 128), so a call's time is its work, not its overhead, and a call is long enough
    that the scheduler's slices of a busy machine average out within it.

    With ``DYNCLI_TEST_COMPILED_EXTRA=1`` in the environment, the compiled path (what dynamo
    traces) computes the first layer twice, with a second copy of its weights, and averages the
    two: the same values bit for bit, about 1.5x the work of a compiled call; eager is
    unchanged. A real slowdown of the compiled model for ``dyncli compare`` to find
    (tests/integration/test_compare_busy_machine.py)."""

    def __init__(self, extra: bool) -> None:
        super().__init__()
        self.fc1 = nn.Linear(512, 2048)
        self.fc2 = nn.Linear(2048, 16)
        self.extra = extra
        self.fc1_copy = nn.Linear(512, 2048)
        self.fc1_copy.load_state_dict(self.fc1.state_dict())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        if self.extra and torch.compiler.is_compiling():
            h = (h + self.fc1_copy(x)) / 2  # (a + a) / 2 == a exactly: values unchanged
        return self.fc2(torch.relu(h))


def extra_when_compiled() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Batch 128 of 512 features; the compiled path's extra work from the environment. One
    intra-op thread: with two on a busy 2-core machine every call waits for the slower
    thread's time slice, and the samples split into a fast and a descheduled mode."""
    import os

    torch.set_num_threads(1)
    torch.manual_seed(0)
    extra = os.environ.get("DYNCLI_TEST_COMPILED_EXTRA") == "1"
    return ExtraWhenCompiled(extra).eval(), (torch.randn(128, 512),)


class ImageHead(nn.Module):
    """A pooled 3-channel image to 4 classes: image-shaped inputs (8x3x224x224, as the README's
    ResNet-50 quickstart prints them) on a model that compiles in seconds."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.mean(dim=(2, 3)))


def image_head() -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Batch 8 of 3x224x224 images."""
    torch.manual_seed(0)
    return ImageHead(), (torch.randn(8, 3, 224, 224),)

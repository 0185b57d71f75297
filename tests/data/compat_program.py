"""The tiny programs of the compatibility corpus (tests/data/<torch version>/compat/).

Run by ``tests/data/make_compat.py`` under each torch release; written for the oldest one
(2.3: no ``torch.compiler.reset`` alias assumptions, no PGO), so every release runs the same code.

``single``: one process, backend ``eager`` (no AOT/Inductor: seconds even on 2 cores):

- ``scale(x)`` with batch 2, 4, 6: a recompile for size, then automatic dynamic;
- ``bump(n, k)``: a frame whose inputs are only an int and a float (no tensor at all);
- ``split(x)``: a graph break (``print``), so two frames;
- ``fixed(x)`` with ``mark_dynamic(x, 0)`` and code that needs ``x.size(0) == 4``: a compile
  that fails with ConstraintViolationError (caught here);
- then ``torch._dynamo.reset()`` and ``scale`` again with batch 3, 5: compile ids 0/0, 0/1
  start over (the second reset generation).

``ranks``: two ranks on gloo through torch's own launcher (``torch.distributed.run``); rank 0
sees batch 2, 4, rank 1 batch 3, 3: the ranks compile different counts.

``pgo``: PGO (torch >= 2.6): run with TORCH_COMPILE_JOB_ID twice; the second loads the state.
"""

from __future__ import annotations

import sys

import torch


def single() -> None:
    def scale(x):
        return (x * 2).sum(0)

    def bump(n, k):
        return n * k + 1

    def split(x):
        y = x.relu()
        print("break", file=sys.stderr)
        return y + 1

    def fixed(x):
        if x.size(0) == 4:
            return x + 1
        return x - 1

    f = torch.compile(scale, backend="eager")
    for b in (2, 4, 6):
        f(torch.randn(b, 3))
    g = torch.compile(bump, backend="eager")
    g(3, 0.5)
    g(4, 0.5)
    torch.compile(split, backend="eager")(torch.randn(2))
    x = torch.randn(4, 2)
    torch._dynamo.mark_dynamic(x, 0)
    try:
        torch.compile(fixed, backend="eager")(x)
    except Exception as exc:  # ConstraintViolationError (its module moved between releases)
        print("failed as expected:", type(exc).__name__, file=sys.stderr)
    torch._dynamo.reset()
    f = torch.compile(scale, backend="eager")
    for b in (3, 5):
        f(torch.randn(b, 3))


def ranks() -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo")
    rank = dist.get_rank()

    def local(x):
        return torch.tanh(x).sum(0)

    f = torch.compile(local, backend="eager")
    for b in ((2, 4) if rank == 0 else (3, 3)):
        out = f(torch.randn(b, 4))
        dist.all_reduce(out)
    dist.destroy_process_group()


def pgo() -> None:
    def mix(x):
        return x.cos() + 1

    f = torch.compile(mix, backend="eager")
    for b in (2, 3, 4):
        f(torch.randn(b, 2))


if __name__ == "__main__":
    {"single": single, "ranks": ranks, "pgo": pgo}[sys.argv[1]]()

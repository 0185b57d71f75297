"""The advice corpus: small programs with known recompile behaviour (issue 26).

Each program is a function ``(ctx) -> None`` that builds tiny inputs, compiles through
``ctx.compile`` (the ``eager`` backend behind a counter: dynamo makes the same compile
decisions as with inductor) and calls through ``ctx.call``, which runs the python form of a fix
("before calling it, on the tensors passed in") on the arguments of each call and keeps the
outputs. ``ctx.restart()`` is a new process (PGO state written, dynamo reset, state read back).

``PROGRAMS`` maps a name to (function, what the program shows). Tensors are tiny, so the
whole corpus runs in seconds per log level; the runner (runner.py) runs it in one process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

PROGRAMS: dict[str, tuple[Callable[[Any], None], str]] = {}


def program(about: str) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    def add(fn: Callable[[Any], None]) -> Callable[[Any], None]:
        PROGRAMS[fn.__name__] = (fn, about)
        return fn
    return add


def _r(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


# ----------------------------------------------------------------- tensor dims

@program("batch size changes (2, 3, 4, 5)")
def batch(ctx: Any) -> None:
    def f(x):
        return x.sin() + 1
    cf = ctx.compile(f)
    for b in (2, 3, 4, 5):
        ctx.call(cf, _r(b, 4))


@program("sequence length changes, batch fixed")
def seq(ctx: Any) -> None:
    def f(x):
        return x.cos() * 2
    cf = ctx.compile(f)
    for s in (3, 5, 7, 9):
        ctx.call(cf, _r(2, s, 4))


@program("batch, then sequence length change: two dims made dynamic one after another")
def batch_then_seq(ctx: Any) -> None:
    def f(x):
        return x.relu().sum(-1)
    cf = ctx.compile(f)
    for b, s in ((2, 3), (3, 3), (4, 3), (4, 5), (5, 6)):
        ctx.call(cf, _r(b, s))


@program("two inputs whose batch changes together")
def two_inputs(ctx: Any) -> None:
    def f(x, y):
        return x * y
    cf = ctx.compile(f)
    for b in (2, 3, 4, 6):
        ctx.call(cf, _r(b, 4), _r(b, 4))


@program("a batch of 1 after dynamic batches: sizes 0/1 are specialized")
def zero_one(ctx: Any) -> None:
    def f(x):
        return x * 3
    cf = ctx.compile(f)
    for b in (4, 5, 6, 1, 7):
        ctx.call(cf, _r(b, 4))


@program("a first call with a batch of 1 (a warm-up), then larger batches: the first compile "
         "specialized the size to 1 (sglang#23428)")
def one_first(ctx: Any) -> None:
    def f(x):
        return x * 3
    cf = ctx.compile(f)
    for b in (1, 3, 5):
        ctx.call(cf, _r(b, 4))


@program("user code branches on a size (== 3): a specialization, not an allow-list fix")
def size_branch(ctx: Any) -> None:
    def f(x):
        if x.shape[0] == 3:
            return x + 1
        return x - 1
    cf = ctx.compile(f)
    for b in (2, 4, 5, 3, 6):
        ctx.call(cf, _r(b, 2))


@program("torch.compile(dynamic=False): every batch compiles")
def dynamic_false(ctx: Any) -> None:
    def f(x):
        return x.exp()
    cf = ctx.compile(f, dynamic=False)
    for b in (2, 3, 4, 5):
        ctx.call(cf, _r(b, 3))


@program("recompile limit 2 hit on batch sizes (torch's default warning names the last reason)")
def recompile_limit(ctx: Any) -> None:
    def f(x):
        return x.tanh()
    ctx.config("torch._dynamo.config", "recompile_limit", 2)
    cf = ctx.compile(f, dynamic=False)
    for b in (2, 3, 4, 5, 6):
        ctx.call(cf, _r(b, 3))


@program("a compiled nn.Module whose batch changes")
def module_batch(ctx: Any) -> None:
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    cm = ctx.compile(m)
    for b in (2, 3, 4, 5):
        ctx.call(cm, _r(b, 4))


@program("nn.Linear pins x's last dim; batch and last dim both vary, a branch picks the layer")
def linear_pins_last(ctx: Any) -> None:
    torch.manual_seed(0)

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Linear(8, 2)
            self.b = nn.Linear(6, 2)

        def forward(self, x):
            if x.shape[1] == 8:
                return self.a(x)
            return self.b(x)

    m = M()
    cm = ctx.compile(m)
    for b, d in ((2, 8), (3, 8), (4, 6), (5, 8), (6, 6)):
        ctx.call(cm, _r(b, d))


@program("the function compiled in two frames (graph break), batch changes")
def graph_break(ctx: Any) -> None:
    def f(x):
        y = x * 2
        torch._dynamo.graph_break()
        return y + x
    cf = ctx.compile(f)
    for b in (2, 3, 4, 5):
        ctx.call(cf, _r(b, 3))


@program("two compiled functions (several frames), each sees new batch sizes")
def several_frames(ctx: Any) -> None:
    def f(x):
        return x + 1

    def g(y):
        return y.mean(0)
    cf, cg = ctx.compile(f), ctx.compile(g)
    for b in (2, 3, 4):
        ctx.call(cf, _r(b, 2))
        ctx.call(cg, _r(3, b))


@program("a list of tensors as input, batch changes")
def list_input(ctx: Any) -> None:
    def f(xs):
        return xs[0] + xs[1]
    cf = ctx.compile(f)
    for b in (2, 3, 4):
        ctx.call(cf, [_r(b, 2), _r(b, 2)])


@program("keyword arguments, batch changes")
def kwargs_input(ctx: Any) -> None:
    def f(x, *, mask):
        return x * mask
    cf = ctx.compile(f)
    for b in (2, 3, 4):
        ctx.call(cf, _r(b, 2), mask=_r(b, 2))


@program("a global tensor read by the function changes size")
def global_tensor(ctx: Any) -> None:
    cf = ctx.compile(_use_table)
    for b in (2, 3, 4, 5):
        TABLE["t"] = _r(b, 2)
        ctx.call(cf, _r(1, 2))


TABLE: dict[str, torch.Tensor] = {}


def _use_table(x):
    return TABLE["t"] + x


# ----------------------------------------------------------------- marking

@program("the program marks dim 0 dynamic; the sequence dim also changes")
def mark_dynamic_seq(ctx: Any) -> None:
    def f(x):
        return x * x
    cf = ctx.compile(f)
    for s in (3, 4, 5):
        x = _r(2 + s, s)
        torch._dynamo.mark_dynamic(x, 0)
        ctx.call(cf, x)


@program("the program marks dim 0, later dims 0 and 1 (_dynamo_dynamic_indices not a subset)")
def mark_dynamic_indices(ctx: Any) -> None:
    def f(x):
        return x + 2
    cf = ctx.compile(f)
    for i, (b, s) in enumerate(((2, 3), (3, 3), (4, 3), (5, 6))):
        x = _r(b, s)
        torch._dynamo.mark_dynamic(x, 0 if i < 2 else [0, 1])
        ctx.call(cf, x)


@program("the program marks dim 0 static; batch and sequence both change")
def mark_static(ctx: Any) -> None:
    def f(x):
        return x - 2
    cf = ctx.compile(f)
    for b, s in ((2, 3), (2, 4), (3, 5), (3, 6)):
        x = _r(b, s)
        torch._dynamo.mark_static(x, 0)
        ctx.call(cf, x)


@program("the program marks dim 0 static, and only the batch changes (mark_static respected)")
def mark_static_batch(ctx: Any) -> None:
    def f(x):
        return x * 3 + 1
    cf = ctx.compile(f)
    for b in (2, 3, 4):
        x = _r(b, 3)
        torch._dynamo.mark_static(x, 0)
        ctx.call(cf, x)


@program("the program calls maybe_mark_dynamic on dim 0; the sequence dim changes")
def maybe_mark_dynamic(ctx: Any) -> None:
    def f(x):
        return x.abs()
    cf = ctx.compile(f)
    for b, s in ((2, 3), (3, 4), (4, 5)):
        x = _r(b, s)
        torch._dynamo.maybe_mark_dynamic(x, 0)
        ctx.call(cf, x)


# ----------------------------------------------------------------- numbers

@program("an int argument changes value")
def int_input(ctx: Any) -> None:
    def f(x, n):
        return x * n
    cf = ctx.compile(f)
    for n in (2, 3, 4, 5):
        ctx.call(cf, _r(2, 2), n)


@program("an int changes value beside a branch on one value (if n == 33): torch's hint lists it")
def int_branch(ctx: Any) -> None:
    def f(x, n):
        if n == 33:
            return x + n * 2
        return x + n
    cf = ctx.compile(f)
    for b, n in ((4, 31), (5, 33), (6, 35)):
        ctx.call(cf, _r(b, 2), n)


@program("a float argument changes value (floats are specialized unless specialize_float=False)")
def float_input(ctx: Any) -> None:
    def f(x, scale):
        return x * scale
    cf = ctx.compile(f)
    for s in (0.5, 1.5, 2.5, 3.5):
        ctx.call(cf, _r(2, 2), s)


@program("an int that a Python loop unrolls over: each value specializes in user code")
def int_loop(ctx: Any) -> None:
    def f(x, n):
        for _ in range(n):
            x = x + 1
        return x
    cf = ctx.compile(f)
    for n in (2, 3, 4):
        ctx.call(cf, _r(2, 2), n)


@program("a closure's int changes: the source is L['g'].__closure__[0].cell_contents")
def closure_int(ctx: Any) -> None:
    def make(k):
        def g(x):
            return x * k
        return g

    def f(x, g):
        return g(x)
    cf = ctx.compile(f)
    for k in (2, 3, 4, 5):
        ctx.call(cf, _r(2, 2), make(k))


@program("a module's int attribute changes (module ints are static by default)")
def module_int_attr(ctx: Any) -> None:
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.k = 2

        def forward(self, x):
            return x * self.k
    m = M()
    cm = ctx.compile(m)
    for k in (2, 3, 4, 5):
        m.k = k
        ctx.call(cm, _r(2, 2))


@program("a bool argument flips")
def bool_flip(ctx: Any) -> None:
    def f(x, flag):
        return x + 1 if flag else x - 1
    cf = ctx.compile(f)
    for flag in (True, False, True, False):
        ctx.call(cf, _r(2, 2), flag)


# ----------------------------------------------------------------- parameters

@program("a parameter whose shape changes (force_parameter_static_shapes)")
def param_shape(ctx: Any) -> None:
    torch.manual_seed(0)

    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.randn(2, 2))

        def forward(self, x):
            return x @ self.w
    m = M()
    cm = ctx.compile(m)
    for n in (2, 3, 4, 5):
        m.w = nn.Parameter(torch.randn(2, n))
        ctx.call(cm, _r(2, 2))


@program("a module's plain tensor attribute changes size (a cache of growing length)")
def module_tensor_attr(ctx: Any) -> None:
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.cache = torch.zeros(2, 2)

        def forward(self, x):
            return self.cache.sum(0) + x
    m = M()
    cm = ctx.compile(m)
    for n in (2, 3, 4, 5):
        m.cache = torch.ones(n, 2)
        ctx.call(cm, _r(1, 2))


@program("dynamic=True, two inputs of equal size at the first call: duck sizing gives them one "
         "symbol, and the next call, where they differ, compiles again")
def duck_sizes(ctx: Any) -> None:
    def f(x, y):
        return x.sum() + y.sum()
    cf = ctx.compile(f, dynamic=True)
    for a, b in ((4, 4), (6, 7), (8, 9)):
        ctx.call(cf, _r(a), _r(b))


@program("a Tensor.item() in the function: torch warns, breaks the graph and names its setting")
def item_break(ctx: Any) -> None:
    def f(x):
        s = x.sum().item()
        return x * s
    cf = ctx.compile(f)
    for _ in range(2):
        ctx.call(cf, _r(4))


# ----------------------------------------------------------------- not shapes

@program("dtype changes: no shape fix applies")
def dtype_change(ctx: Any) -> None:
    def f(x):
        return x + 1
    cf = ctx.compile(f)
    for dt in (torch.float32, torch.float64, torch.float32):
        ctx.call(cf, torch.ones(2, 2, dtype=dt))


@program("grad mode flips: no shape fix applies")
def grad_mode(ctx: Any) -> None:
    def f(x):
        return x * 2
    cf = ctx.compile(f)
    for grad in (True, False):
        with torch.set_grad_enabled(grad):
            ctx.call(cf, _r(2, 2))


# ----------------------------------------------------------------- process state

@program("dynamo reset between calls: every generation compiles from scratch")
def reset_loop(ctx: Any) -> None:
    def f(x):
        return x.sigmoid()
    cf = ctx.compile(f)
    for b in (2, 3, 4):
        torch._dynamo.reset()
        ctx.call(cf, _r(b, 2))
        ctx.call(cf, _r(b + 4, 2))


@program("PGO across two processes: the second loads the first's state")
def pgo_two_processes(ctx: Any) -> None:
    def f(x):
        return x.square()
    cf = ctx.compile(f)
    for b in (2, 3):
        ctx.call(cf, _r(b, 3))
    ctx.restart()
    for b in (4, 5):
        ctx.call(cf, _r(b, 3))


@program("symbol_guard_limit_before_specialize=2: a size with many guards is specialized")
def guard_limit(ctx: Any) -> None:
    def f(x):
        y = x
        if x.shape[0] > 2:
            y = y + 1
        if x.shape[0] > 3:
            y = y + 1
        if x.shape[0] > 4:
            y = y + 1
        return y
    ctx.config("torch.fx.experimental._config", "symbol_guard_limit_before_specialize", 2)
    cf = ctx.compile(f)
    for b in (5, 6, 7, 8):
        ctx.call(cf, _r(b, 2))

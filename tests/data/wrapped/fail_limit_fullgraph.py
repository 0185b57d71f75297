# torch 2.15, CPU: a fullgraph=True function recompiled past the recompile limit
# (an int argument that changes on every call) -> FailOnRecompileLimitHit, default logging.
import torch
torch._dynamo.config.recompile_limit = 4

@torch.compile(fullgraph=True, backend="eager", dynamic=False)
def f(x, n):
    return x * n

x = torch.ones(3)
for n in range(10):
    f(x, n)

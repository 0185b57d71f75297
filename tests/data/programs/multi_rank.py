"""Two ranks on gloo (run under torchrun): torch prefixes every log line with [rankN]:.

Rank 1 sees a different sequence of batch sizes than rank 0, so the ranks recompile differently.
"""

import torch
import torch.distributed as dist
from _common import compile_fn

dist.init_process_group("gloo")
rank = dist.get_rank()


def local(x):
    return torch.tanh(x).sum(dim=0)


f = compile_fn(local)
sizes = (2, 4, 6) if rank == 0 else (3, 3, 5)
for batch in sizes:
    out = f(torch.randn(batch, 4))
    dist.all_reduce(out)
dist.destroy_process_group()

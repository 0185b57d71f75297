"""mark_dynamic on a dim that user code then specializes: ConstraintViolationError."""

import torch
import torch._dynamo
from _common import compile_fn


def branchy(x):
    if x.shape[0] == 8:
        return x * 2
    return x - 1


f = compile_fn(branchy)
x = torch.randn(8, 2)
torch._dynamo.mark_dynamic(x, 0)
try:
    f(x)
except Exception as e:  # the program carries on so the log has what follows the error
    print(f"caught {type(e).__name__}", flush=True)

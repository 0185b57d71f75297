"""A compiled function first called under FlopCounterMode (tests/data/make_mode_skip.py records
its +dynamo log; tests/integration/test_diagnose_capture.py runs it and the printed fix)."""
import torch
from torch._dynamo.testing import CompileCounter
from torch.utils.flop_counter import FlopCounterMode

counter = CompileCounter()


def mm(a, b):
    return a @ b


f = torch.compile(mm, backend=counter)
a, b = torch.randn(8, 8), torch.randn(8, 8)
# FIX
with FlopCounterMode(display=False):
    f(a, b)
for _ in range(3):
    f(a, b)
print("frames", counter.frame_count)

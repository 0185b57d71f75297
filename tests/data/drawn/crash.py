import torch


def my_backend(gm, example_inputs):
    raise RuntimeError("my backend cannot compile this graph")


@torch.compile(backend=my_backend)
def f(x):
    return x.sin() + 1


f(torch.ones(3))

import torch


def f(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2


g = torch.compile(f, backend="eager", fullgraph=True)
g(torch.ones(3))

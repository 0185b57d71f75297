import torch

class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        print("in forward")  # a graph break inside the inlined Function
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

def fn(x):
    return Doubled.apply(x + 1) - 1

x = torch.ones(4, requires_grad=True)
out = torch.compile(fn, backend="eager")(x)
out.sum().backward()
print(out.tolist(), x.grad.tolist())

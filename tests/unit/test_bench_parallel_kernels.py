"""Inductor's C++ kernels made OpenMP-parallel over an unbacked size (dyncli.bench.core.parallel).

The module text is inductor's own output (torch 2.15, CPU, ``automatic_dynamic_shapes_mark_as =
"unbacked"``, linear -> relu -> graph break; ``call`` trimmed to the lines read): the relu kernel
got ``#pragma omp parallel`` because inductor took the unbacked ``u0`` as 8192, and cost 10-24 ms
a call on a busy 2-core machine against 0.5-0.9 ms under ``dynamic=True`` (round 27).
"""

from __future__ import annotations

from dyncli.bench.core.parallel import note, unbacked_parallel

KERNEL = """
cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*', 'const int64_t'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0,
                       const int64_t ks0)
{
    %s
    {
        for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(64L*ks0); x0+=16L)
        {
        }
    }
}
''')


async_compile.wait(globals())

class Runner:
    def call(self, args):
        arg0_1, arg1_1, arg2_1, arg3_1 = args
        %s = arg2_1
        buf1 = empty_strided_cpu((%s, 64), (64, 1), torch.float32)
        buf2 = buf1; del buf1  # reuse
        cpp_fused_relu_0(buf2, %s)
        return (buf2, )
"""


def module(pragma: str, size: str) -> str:
    return KERNEL % (pragma, size, size, size)


def test_a_parallel_kernel_over_an_unbacked_size_is_found_and_said() -> None:
    src = module("#pragma omp parallel", "u0")
    assert unbacked_parallel(src) == ["cpp_fused_relu_0"]
    text = note("unbacked", [src, module("", "s77")], 2)
    assert text is not None and text.startswith(
        "unbacked: inductor made 1 CPU kernel(s) OpenMP-parallel over an unbacked size")
    assert "starts 2 threads" in text and "torch.set_num_threads(1)" in text


def test_serial_kernels_backed_sizes_and_one_thread_say_nothing() -> None:
    assert unbacked_parallel(module("", "u0")) == []  # serial: what dynamic=True generated
    assert unbacked_parallel(module("#pragma omp parallel", "s77")) == []  # a backed size
    assert note("unbacked", [module("#pragma omp parallel", "u0")], 1) is None
    assert note("unbacked", [], 4) is None and unbacked_parallel("") == []

"""Whether a file a log names is torch's own: one answer for every reader of text logs. Pure.

torch prints its own files relative to its package (``utils/_traceback.shorten_filename``:
``_dynamo/variables/builder.py``, ``nn/modules/linear.py``), a user's file as given (a relative
main script: ``train.py``), or absolute (``/home/u/proj/model.py``), and sometimes cut by that
same function's off-by-one (``mp/x.py`` for ``/tmp/x.py``). A path is torch's when it runs
through a ``torch/`` directory, or when its first part is a name of torch's own top level.

The names are those of torch's Python modules and packages, 2.1 to 2.15 (``_``-prefixed ones
are all torch's: private modules a user's relative path does not start with); directories
without Python code (``bin``, ``include``, ``lib``, ``share``, ``csrc``) are left out, so a
user's ``lib/model.py`` stays the user's. A user's own ``utils/`` or ``testing/`` read as
torch's is the price of reading torch's shortened paths at all; where a log shows the compiled
frames, the diagnosis asks them first (``dyncli.diagnose.specializations``).
"""

from __future__ import annotations

import re

# torch's top level (``ls site-packages/torch``, 2.1 to 2.15), the Python parts only
TOP = frozenset({
    "accelerator", "amp", "ao", "autograd", "backends", "compiler", "contrib", "cpu", "cuda",
    "distributed", "distributions", "export", "fft", "func", "futures", "fx", "jit", "linalg",
    "masked", "monitor", "mps", "mtia", "multiprocessing", "nativert", "nested", "nn", "numa",
    "onnx", "optim", "package", "profiler", "quantization", "signal", "sparse", "special",
    "testing", "utils", "xpu", "foreach",
    "functional.py", "hub.py", "library.py", "overrides.py", "quasirandom.py", "random.py",
    "return_types.py", "serialization.py", "storage.py", "torch_version.py", "types.py",
    "version.py",
})

_THROUGH_TORCH_RE = re.compile(r"(?:^|/)torch/")
_DRIVE_RE = re.compile(r"^[A-Za-z]:/")


def is_torch_file(path: str) -> bool:
    """Whether ``path`` (a file as a log prints it, ``\\`` or ``/`` separators) is torch's."""
    norm = path.replace("\\", "/")
    if _THROUGH_TORCH_RE.search(norm):
        return True
    if norm.startswith("/") or _DRIVE_RE.match(norm):
        return False  # absolute and not under a torch/ directory
    top = norm.split("/", 1)[0]
    if top.startswith("_"):
        return True
    # a bare module name is torch's only where it is one of torch's files (functional.py);
    # a directory name only with something under it (``nn/modules/linear.py``, not ``nn``)
    return top in TOP and (top.endswith(".py") or "/" in norm)


_POLYFILLS = "/_dynamo/polyfills/"


def is_polyfill_file(path: str) -> bool:
    """Whether ``path`` is one of torch's polyfills (``torch/_dynamo/polyfills/``: the Python
    stand-ins dynamo traces for builtins the code calls, ``sum()``, ``operator.countOf``,
    ``itertools``, a class's construction; 2.4 on)."""
    return _POLYFILLS in path.replace("\\", "/") and is_torch_file(path)


# torch's compiler, 2.0 to 2.15: dynamo, AOTAutograd and inductor at work, and what they trace
# with (fake tensors, FX, export, the higher-order ops, the decompositions, the symbolic shapes'
# sympy), under torch/; and the modules inductor writes (is_generated_file). AT_WORK's are
# torch's packages too (torch._dynamo.exc: textcrash reads an exception's module by them)
AT_WORK = ("_dynamo", "_functorch", "_inductor")
_TRACED_WITH = ("_subclasses", "fx", "_export", "export", "_higher_order_ops", "_prims", "_refs",
                "_decomp", r"_guards\.py", "utils/_sympy")


def _under_torch(parts: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?:^|/)torch/(?:" + "|".join(parts) + r")(?:/|$)")


_AT_WORK_RE = _under_torch(AT_WORK)
_COMPILER_RE = _under_torch(AT_WORK + _TRACED_WITH)
# torch.func's transforms, which live beside AOTAutograd in torch/_functorch/ (2.0-2.15) and run
# eagerly without any compile: vmap, grad, jacrev, functional_call, an autograd.Function's
# vmap rule (apis.py, vmap.py, eager_transforms.py, pyfunctorch.py …). A traceback through them
# alone is a torch.func error, not the compiler's (pytorch#186301: data-dependent control flow
# under vmap; pytorch#157543: FlexAttention's create_block_mask vmaps the mask_mod eagerly)
_FUNC_TRANSFORMS_RE = re.compile(
    r"(?:^|/)torch/_functorch/(?:apis|vmap|eager_transforms|pyfunctorch|functional_call"
    r"|autograd_function|make_functional|deprecated|batch_norm_replacement)\.py$")


# a module inductor wrote, wherever its cache is (TORCHINDUCTOR_CACHE_DIR moves it out of
# torchinductor_<user>/: ultralytics#21998's …/temp/inductor/gg/cggv7….py): named
# by its code's hash, "c" and 51 base32 letters, in the directory of the hash's first two
# (_inductor/codecache.py get_path and cache_key.py's CODE_CACHE_KEY_STRATEGY, 2.0-2.15)
_GENERATED_RE = re.compile(r"(?:^|/)(?P<sub>[a-z2-7]{2})/c(?P=sub)[a-z2-7]{49}\.py$")


def is_compiler_file(path: str, at_work: bool = False) -> bool:
    """Whether ``path`` is a file of torch's compiler or code it generated (a traceback's
    frame: ``/…/torch/_dynamo/bytecode_transformation.py``, ``/tmp/torchinductor_u/xy/cxy….py``).
    Generated code is never the user's line; torch.func's transforms in ``torch/_functorch/``
    (vmap, grad) are not the compiler. ``at_work``: dynamo, AOTAutograd and inductor
    only (and what inductor wrote), not what they trace with: torch code a program also runs
    outside a compile (torch.cond's ``_higher_order_ops/cond.py``, FX, fake tensors, export)."""
    pattern = _AT_WORK_RE if at_work else _COMPILER_RE
    if is_func_transform_file(path):
        return False  # torch.func's eager transforms (vmap, grad): not a compile
    return pattern.search(path.replace("\\", "/")) is not None or is_generated_file(path)


def is_func_transform_file(path: str) -> bool:
    """Whether ``path`` is one of torch.func's transforms in ``torch/_functorch/`` (vmap, grad,
    jacrev, functional_call), which run eagerly, outside any compile."""
    return _FUNC_TRANSFORMS_RE.search(path.replace("\\", "/")) is not None


def is_generated_file(path: str) -> bool:
    """Whether ``path`` is a module inductor wrote (in torchinductor_<user>/ or named by its
    hash wherever the cache is)."""
    norm = path.replace("\\", "/")
    return "torchinductor_" in norm or _GENERATED_RE.search(norm) is not None


def is_torch_location(where: str) -> bool:
    """:func:`is_torch_file` of a location ``FILE:LINE`` or ``FILE:LINE in FN``."""
    head = where.split(" in ", 1)[0]
    file, sep, line = head.rpartition(":")
    return is_torch_file(file if sep and line.strip().isdigit() else head)


# AOTAutograd's run-time wrapper: every call of a compiled graph enters it once the compile is
# done (aot_autograd.py's forward -> runtime_wrapper, 2.0-2.1 in aot_autograd.py, 2.2-2.15 in
# _aot_autograd/runtime_wrappers.py: 2.15.0 :1193). Below it, what runs the graph: its wrappers
# (runtime_wrappers.py's inner_fn, wrapper, run, __call__; utils.py's
# call_func_at_runtime_with_args, make_boxed_func's g; 2.15's generated
# "codegen.py:codegen(runtime_wrapper_orchestration)"), inductor's CompiledFxGraph.__call__
# (output_code.py), the module inductor wrote, its runtime (Triton's launch and run-time
# autotuning, _inductor/runtime/), and the CUDA-graph trees (cudagraph_trees.py, and
# compile_fx.py's cudagraphify run, which builds them at the first calls); and dynamo's
# eval_frame.py and external_utils.py, which every call of code it compiled or disabled passes
# (a custom op's kernel under torch.compiler.disable: 2.15's _library/custom_ops.py)
_RUNTIME_ENTRY = "runtime_wrapper"
_RUNTIME_ENTRY_RE = re.compile(r"(?:^|/)torch/_functorch/(?:_aot_autograd/runtime_wrappers|"
                               r"aot_autograd)\.py$")
_RUNS_GRAPH_RE = re.compile(
    r"(?:^|/)torch/(?:_functorch/_aot_autograd/(?:runtime_wrappers\.py$|utils\.py$|codegen\.py)"
    r"|_inductor/(?:output_code\.py$|cudagraph_trees\.py$|runtime/)"
    r"|_dynamo/(?:eval_frame|external_utils)\.py$)")


def graph_ran(frames: list[tuple[str, str]]) -> bool:
    """Whether a traceback's frames (file, function), outermost first, went into a compiled
    graph that was running: they pass AOTAutograd's run-time wrapper, and no frame below it is
    torch's compiler compiling (dynamo tracing a nested compile, AOTAutograd or inductor
    compiling, a backward compiled at its first call goes through ``backward``, not this
    wrapper). What raised below it raised at run time: the graph's own code, the program's code
    it called (a custom op's kernel, a hook), or the CUDA-graph trees (pytorch#160281, #152887:
    tracebacks the paste cut inside the wrapper)."""
    entry = next((i for i in range(len(frames) - 1, -1, -1)
                  if frames[i][1] == _RUNTIME_ENTRY
                  and _RUNTIME_ENTRY_RE.search(frames[i][0].replace("\\", "/"))), None)
    if entry is None:
        return False
    for file, function in frames[entry + 1:]:
        path = file.replace("\\", "/")
        if (_RUNS_GRAPH_RE.search(path) is None and not is_generated_file(path)
                and not (path.endswith("_inductor/compile_fx.py") and function == "run")
                and is_compiler_file(path, at_work=True)):
            return False
    return True

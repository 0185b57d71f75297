"""A program's traceback that ends in torch's compiler: the compile raised and the program
stopped (``ev.CompileCrash``). Pure; fed by ``textforeign.ForeignLines`` every line without a
torch prefix, after the readers had their turn.

A Python traceback (``Traceback (most recent call last):``, ``  File "F", line N, in fn``, the
exception's line at the left margin) or IPython's (``AssertionError    Traceback (most recent
call last)``; ``File F:N, in fn(…)``, Colab's ``[F](url) in fn(…)`` with ``--> N`` under it,
older IPython's ``F in fn(…)``), chained (``The above exception was the direct cause …``) or
cut by the paste. It is a crash of the compile when its exception is one of torch's compiler
(``BackendCompilerFailed``, ``InductorError``, ``InternalTorchDynamoError`` …) or when its
deepest frame is torch's compiler or code inductor wrote (keras#22282: an ``AssertionError`` in
``torch/_dynamo/bytecode_transformation.py``). An exception another reader understood (a
graph break's ``Unsupported``, a data-dependent error, the recompile limit's) is that reader's:
the observer is told whether the line was read (``unread``) and ends the traceback there. So is
a traceback chained to what a reader read ("During handling of the above exception …" after a
``ConstraintViolationError``'s items): export re-raising the error it caught (pytorch#134137's
``aot_compile``, #121038's ``UserError``), not a second failure, unless its own exception is
one of the compiler's or the compiler at work raised it (an ``AssertionError`` in dynamo's
``convert_frame`` while it handled the first).
"""

from __future__ import annotations

import itertools
import re
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.textbreaks import LOGGED_CUT, MESSAGE_ABOVE, UNIMPLEMENTED_CUT
from dyncli.logparse.textpaste import COMFYUI_HEADS
from dyncli.logparse.textstack import FILE_RE, break_site
from dyncli.logparse.torchtree import (
    AT_WORK,
    graph_ran,
    is_compiler_file,
    is_func_transform_file,
    is_torch_file,
)

# Python's head (after a wrapper's words: sglang's "[…] Scheduler hit an exception: Traceback
# …"), or IPython's, which names the exception before it
_HEAD_RE = re.compile(r"^(?: {0,4}(?P<ipy>[A-Za-z_][\w.]{0,200})\s{2,}Traceback \(most recent call last\)"
                      r"|.{0,400}Traceback \(most recent call last\):)\s*$")
# IPython 8: "File /usr/…/eval_frame.py:489, in _TorchDynamoContext.__call__.<locals>._fn(*args)"
_TRACEBACK_WORDS = "Traceback (most recent call last)"  # (in each of _HEAD_RE's forms)
_IPY_FILE_RE = re.compile(r"^File (?P<file>\S.{0,4096}?):(?P<line>\d{1,9}), in (?P<fn>[^\s(]{1,400})")
# IPython 8 in Jupyter, copied with its links: "File [/…/torch/_dynamo/utils.py:2150](http://
# localhost:8888/…#line=2149), in run_node(tracer, …)" (pytorch#145970)
_IPY_FILE_LINK_RE = re.compile(r"^File \[(?P<file>[^\]]{1,4096}?):(?P<line>\d{1,9})\]\([^)]{0,2000}\), "
                               r"in (?P<fn><[^<>]{1,200}>|[^\s(]{1,400})")
# IPython 8's frame of a notebook cell: "Cell In[1], line 48" (the cell's top level), "Cell In[3],
# line 5, in f(x)" (a function the cell defined; pytorch#121038)
_IPY_CELL_RE = re.compile(r"^(?P<file>Cell In ?\[\d{1,9}\]), line (?P<line>\d{1,9})"
                          r"(?:, in (?P<fn>[^\s(]{1,400}))?")
# Colab: "[/usr/…/bytecode_transformation.py](https://localhost:8080/#) in compute_exception_table(…)"
_IPY_LINK_RE = re.compile(r"^\[(?P<file>[^\]]{1,4096})\]\([^)]{0,2000}\) in "
                          r"(?P<fn><[^<>]{1,200}>|[^\s(]{1,400})")
# older IPython: "/usr/…/convert_frame.py in _compile(code, globals, …)"
# (behind a paste's own indent of up to 8 blanks: pytorch#90540 re-indented its frames)
_IPY_OLD_RE = re.compile(r"^ {0,8}(?P<file>(?:/|~/|[A-Za-z]:\\)\S{1,4096}\.py) in "
                         r"(?P<fn><[^<>]{1,200}>|[^\s(]{1,400})\(")
# (VS Code's notebook output links the number: "-> [1798](https://file+.vscode-resource…)",
# pytorch#169488)
_ARROW_RE = re.compile(r"^ {0,8}-{1,4}> ?\[?(?P<line>\d{1,9})\b")
# a Python frame's line at the left margin: a paste that lost the traceback's indent
_MARGIN_FRAME = 'File "'
_CONNECTORS = ("The above exception was the direct cause of the following exception:",
               "During handling of the above exception, another exception occurred:")
# the exception's line: "AssertionError", "torch._dynamo.exc.BackendCompilerFailed: backend=…"
_EXC_RE = re.compile(r"^(?P<type>(?:[A-Za-z_]\w{0,100}\.){0,8}(?P<name>[A-Za-z_]\w{0,100}))"
                     r"(?::(?: .{0,4000})?)?$")
_EXC_ENDS = ("Error", "Exception", "Failed", "Exceeded", "Interrupt", "Exit")
# torch's exceptions for a compile that failed, wherever the traceback's last frame is
COMPILER_ERRORS = frozenset({
    "BackendCompilerFailed", "InductorError", "InternalTorchDynamoError", "LoweringException",
    "CppCompileError", "TorchRuntimeError", "MissingOperatorWithoutDecomp",
    "MissingOperatorWithDecomp", "CompilationError", "CUDACompileError", "TritonMissing",
    "GPUTooOldForTriton",
})
_COMPILER_ERROR_NAMES = tuple(sorted(COMPILER_ERRORS))
# eval_frame.py: the wrapper every call of a compiled function runs through (pytorch#124006's
# paste ends there, on a compiled call that had just recompiled)
_WRAPPER_RE = re.compile(r"(?:^|[/\\])_dynamo[/\\]eval_frame\.py$")
_EXPORT_RERAISE = "raise constraint_violation_error"
# the CUDA-graph trees: built at the compiled graph's first calls, not at its compile
# (compile_fx.cudagraphify's run calls cudagraph_trees' deferred_cudagraphify lazily, 2.1-2.15),
# and run on every call (run, _run, run_eager, check_memory_pool, add_function): a traceback
# through them raised as the graph ran (pytorch#163257, ComfyUI#6831, ultralytics#21998)
_CUDAGRAPH_TREES_RE = re.compile(r"(?:^|[/\\])_inductor[/\\]cudagraph_trees\.py$")
# dynamo's files that every compiled call, and the program's code inside it, runs through:
# eval_frame.py (the wrapper) and external_utils.py (hooks and inlined calls at run time)
_RUNS_UNDER_RE = re.compile(r"(?:^|[/\\])_dynamo[/\\](?:eval_frame|external_utils)\.py$")
# an exception of torch's compiler by its module (torch._inductor.exc.InvalidCxxCompiler)
_COMPILER_MODULE_RE = re.compile(r"^torch\.(?:" + "|".join(AT_WORK) + r")(?:\.\w{1,100}){0,3}\.exc"
                                 r"\.\w{1,100}$")
# errors about the machine, not the code: (words, the machine's lack they name, whether they
# alone prove a compile crash). inductor's own (_inductor/exc.py 2.15: TritonMissing,
# GPUTooOldForTriton; a RuntimeError with the same words before) are a crash wherever they
# stand; the others are Triton's or torch's runtime's words, a crash where the traceback is
# one (Triton's own kernels, a .cuda() call on a Mac raise them outside any compile)
MACHINE_ERRORS: tuple[tuple[str, str, bool], ...] = (
    ("Cannot find a working triton installation", "triton-missing", True),
    ("which is too old to be supported by the triton GPU compiler", "gpu-too-old", True),
    # Triton's fp8e4nv (torch.float8_e4m3fn) needs CUDA arch 8.9: its ValueError (3.x's
    # semantic checks) and its AssertionError (semantic.py's allow_fp8e4nv, triton-windows#3)
    ("fp8e4nv not supported in this architecture", "fp8e4nv", False),
    ("fp8e4nv data type is not supported on CUDA arch < 89", "fp8e4nv", False),
    # Triton's AMD backend (backends/amd/compiler.py path_to_rocm_lld)
    ("Set 'TRITON_HIP_LLD_PATH'", "rocm-lld", False),
    # a Triton that is not the one the torch release pins: inductor's codecache and
    # utils/_triton.py import triton_key from triton.compiler.compiler (2.4-2.8, read in the
    # wheels), which Triton 2.3.x lacks and Triton from mid-2025 moved to triton.runtime.cache
    # (pytorch#127271, triton#7835); only inductor imports it, so the words alone are its
    # compile's crash (ComfyUI#10485 pasted them so)
    ("cannot import name 'triton_key' from 'triton.compiler.compiler'", "triton-version", True),
    # Triton's table of the PTX version each CUDA release supports (backends/nvidia/compiler.py
    # ptx_get_version) asked for the CUDA of the ptxas it found: a CUDA newer than that Triton
    # knows (3.2 stops at 12.6, triton-lang/triton#5737; 13.x before triton#8925) raises
    # "Triton only support CUDA 10.0 or higher, but got CUDA version: 12.8" (triton-windows#47,
    # #48, #49). Triton's own kernels raise it too: a crash where the traceback is the compiler's
    ("Triton only support CUDA 10.0 or higher", "triton-cuda-version", False),
    # torch 2.3's utils/_triton.py (triton_backend_hash) imports triton.common.backend, which
    # Triton 3.0 removed (triton#4250, fish-speech#541): the same mismatch. Other packages
    # import triton.common too, so a crash only where the traceback is the compiler's (or
    # torch's "backend='inductor' raised:" stands above it, ComfyUI-MochiWrapper#94)
    ("No module named 'triton.common'", "triton-version", False),
    # inductor before MPSInductor (2.8): no wrapper codegen for mps (2.3 graph.py:1135), and
    # torch 2.0's CUDA assert on a Mac (pytorch#96976)
    ("Device mps not supported", "no-mps", False),
    ("Torch not compiled with CUDA enabled", "no-cuda", False),
    # torch.compile refusing the platform before compiling anything (eval_frame.py's
    # check_if_dynamo_supported: Windows in 2.0-2.1, "Python 3.N+" in 2.0-2.15; the inductor
    # backend's own Windows check in 2.2-2.4): torch's words, wherever they stand
    ("Windows not yet supported for torch.compile", "windows", True),
    ("Windows not yet supported for inductor", "windows", True),
    ("+ not yet supported for torch.compile", "python-version", True),
    # (torch/__init__.py's compile() in 2.0-2.5: "Dynamo is not supported on Python 3.12+",
    # diffusers#7441 on torch 2.2.1; "… 3.13+", sbi#1532)
    ("Dynamo is not supported on Python 3.", "python-version", True),
    # (2.11 and 2.15: a free-threaded build before 3.13.3, "… built with GIL disabled. Please
    # use Python 3.13.3+."; 2.7: every free-threaded build)
    ("is not supported on Python < 3.13.3 built with GIL disabled", "free-threaded", True),
    ("torch.compile is not supported on Python built with GIL disabled", "free-threaded-any",
     True),
    # a torch older than 2.7, where the setting still has its old name (cache_size_limit,
    # accumulated_cache_size_limit): torch's config module raises AttributeError("….X does
    # not exist") as the program sets it, before anything compiles (ComfyUI-WanVideoWrapper#366
    # and triton-windows#105 on torch 2.5.1; AdversariaLLM#36 on 2.6.0)
    ("torch._dynamo.config.recompile_limit does not exist", "config-renamed", True),
    ("torch._dynamo.config.accumulated_recompile_limit does not exist", "config-renamed", True),
)
# eval_frame.py's checks that raise only those refusals: a traceback cut below one of them is
# the platform refused (kohya_ss#1141's rich box ends in check_if_dynamo_supported)
PLATFORM_CHECKS = ("check_if_dynamo_supported", "check_if_inductor_supported")
ENVIRONMENT = tuple(words for words, _, alone in MACHINE_ERRORS if alone)
# the machine errors that are torch.compile refusing the platform before compiling anything
REFUSALS = ("windows", "python-version", "free-threaded", "free-threaded-any")
_REFUSAL_WORDS = tuple(words for words, kind, _ in MACHINE_ERRORS if kind in REFUSALS)
# a program's own log line at warning level (SD.Next's "22:25:45-339909 WARNING  Model compile
# not supported: …", logging's "WARNING:sd:…", "[…,512] sd: [WARNING]", loguru's "| WARNING |"):
# the level's word, standing alone, before the message, after a stamp and at most a logger's
# name; not inside prose or a code span (a sentence, a bullet quoting the line: tests/unit/
# test_markdown_prose.py)
_WARNING_RE = re.compile(r"(?:^|[^\w])(?:WARNING|WARN|Warning)(?:[^\w]|$)")
_STAMP_WORD_RE = re.compile(r"[A-Za-z]{2,}")
# how far after the level's word torch's words may start: the program's words before them
# (SD.Next's "Model compile not supported: ", loguru's "sd_models:compile:12 - ") run to a few
# dozen characters; further on, the level is another message's (a paste that joined lines, a
# long message of the program's own that torch's words end)
_LEVEL_REACH = 160
# torch's BackendCompilerFailed message without its class (output_graph.py 2.0-2.15:
# "backend='{name}' raised:" then the backend's exception on the next line), as a tool shows
# it (ComfyUI#10485, ComfyUI-MochiWrapper#94)
_BACKEND_RAISED_RE = re.compile(r"^backend='[^'\s]{1,200}' raised:$")
_BACKEND_FAILED = "torch._dynamo.exc.BackendCompilerFailed"


# Triton building its GPU driver's launcher module with the machine's C compiler (gcc, cl,
# triton-windows' tcc): runtime/build.py's check_call raises CalledProcessError naming the
# command, whose files are cuda_utils (3.2 on: cuda_utils.c; 3.0-3.1: main.c built into
# cuda_utils.cpython-*.so) or hip_utils on ROCm. Its cause is the machine's toolchain (Python.h
# of python3.X-dev, the embedded Python's include and libs on Windows, libcuda for -lcuda):
# vllm#17018, triton-windows#156, SeedVR2#134, ComfyUI#9418, sglang#18644's fix. Triton builds
# it for any kernel, a program's own too: a crash only where the traceback is the compiler's
_LAUNCHER_BUILT = "returned non-zero exit status"
_LAUNCHER_FILES = ("cuda_utils", "hip_utils")
# every kind machine_error names: MACHINE_ERRORS' and the launcher's
MACHINE_KINDS = frozenset({kind for _, kind, _ in MACHINE_ERRORS} | {"triton-launcher"})


def machine_error(text: str) -> str:
    """The machine's lack an error's text names (``MACHINE_ERRORS``, and Triton's launcher the
    C compiler could not build), or ""."""
    kind = next((kind for words, kind, _ in MACHINE_ERRORS if words in text), "")
    if not kind and _LAUNCHER_BUILT in text and any(f in text for f in _LAUNCHER_FILES):
        return "triton-launcher"
    return kind


def refusal_warned(text: str) -> str:
    """The message of a program's warning that quotes torch.compile's refusal of the platform
    (the program caught it and went on uncompiled: SD.Next's "WARNING  Model compile not
    supported: Windows not yet supported for torch.compile", sdnext#2699), or "". The level's
    word stands before torch's words, at most ``_LEVEL_REACH`` (160) characters before them,
    behind a stamp of at most one word. An exception's line is not one (the traceback's reader
    has it)."""
    if not any(words in text for words in _REFUSAL_WORDS):
        return ""
    at = min(text.find(words) for words in _REFUSAL_WORDS if words in text)
    level = _WARNING_RE.search(text, 0, at)
    if level is None or at - level.end() > _LEVEL_REACH or exception_name(text.strip()):
        return ""
    stamp = text[:level.start() + 1]
    if any(c in stamp for c in "`'\"()") or \
            sum(1 for _ in itertools.islice(_STAMP_WORD_RE.finditer(stamp), 2)) > 1:
        return ""  # (words about the line, not its stamp: a second word is enough to tell)
    return text[level.end():].lstrip(" \t:|]-").rstrip()


# torch's exceptions as a tool prints them without their class (ComfyUI's "!!! Exception during
# processing !!! " + str(e), WanVideoWrapper#287, #1666): the message's start -> the class
# (and torch's config module's AttributeError for a setting this torch lacks: WanVideoWrapper#366)
_CLASSLESS = {"Dynamo failed to run FX node with fake tensors:": "TorchRuntimeError",
              **{words: "AttributeError" for words, kind, _ in MACHINE_ERRORS
                 if kind == "config-renamed"}}
_CLASSLESS_RE = re.compile(r"^`?(?:" + re.escape(COMFYUI_HEADS[0]) + r")?(?P<msg>(?:"
                           + "|".join(map(re.escape, _CLASSLESS)) + r").{0,4000})$")
# torch's exception text that a wrapper quotes in its own exception's line, without its class:
# vLLM's "RuntimeError: Worker failed with error '<str(e)>', please check the stack trace above
# for the root cause" (vllm#19332's TorchRuntimeError; vllm-ascend#2226's Unsupported, 2.1-2.6's
# words for an op with no meta kernel). The message's start -> the class as torch prints it;
# a message whose start is not torch's own is left as the wrapper's
_QUOTED = {
    **{head.encode(): f"torch._dynamo.exc.{cls}".encode() for head, cls in _CLASSLESS.items()},
    b"dynamic shape operator: ": b"torch._dynamo.exc.Unsupported",
}
# the wrapper's line up to the quoted message's start (its end is cut by quoted_exception: a
# lazy message before optional tails and "\s*$" retried the blanks at each of its 4000 lengths,
# 31 s on a line of 1 MB of blanks)
_QUOTED_RE = re.compile(rb"^(?:> ?){0,4}`?(?:[A-Za-z_][\w.]{0,100}: )?[\w ]{0,80} error '(?P<head>"
                        + b"|".join(map(re.escape, _QUOTED)) + rb")")
_QUOTED_MAX = 4000  # the message's length after its head, at most
_WRAPPER_TAIL = b", please check the stack trace above for the root cause"


def quoted_exception(raw: bytes) -> bytes | None:
    """torch's exception line that a wrapper's exception line quotes (``_QUOTED``), or None.
    The message ends before the wrapper's tail: the closing quote, vLLM's "please check …"
    (with its full stop or without), a backtick closing a code span, trailing blanks."""
    m = _QUOTED_RE.match(raw)
    if m is None:
        return None
    rest = raw[m.end():].rstrip()  # (after the head, which may end in a blank of its own)
    rest = rest[:-1] if rest.endswith(b"`") else rest
    for tail in (_WRAPPER_TAIL + b".", _WRAPPER_TAIL):
        if rest.endswith(tail):
            rest = rest[:-len(tail)]
            break
    rest = rest[:-1] if rest.endswith(b"'") else rest
    if len(rest) > _QUOTED_MAX or b"\n" in rest:
        return None
    return _QUOTED[m["head"]] + b": " + m["head"] + rest


# a kernel inductor generated, as Triton's CompilationError quotes it ("def triton_poi_…(");
# "def triton_(" where inductor compiled it under its placeholder name (unique_kernel_names
# off, the default outside fbcode before 2.6; simd.py and triton.py still write it so)
_KERNEL_RE = re.compile(r"(?:^|\s)def (?P<name>triton_\w{0,200})\(")


def kernel_of(text: str) -> str:
    """The name of the Triton kernel inductor wrote that ``text`` quotes, or ""."""
    m = _KERNEL_RE.search(text)
    return m["name"] if m is not None else ""
_MAX_FRAMES = 256
# dynamo's function that raises a graph break's Unsupported (exc.py), every release's name
_UNIMPLEMENTED = ("unimplemented", "unimplemented_v2", "unimplemented_with_warning")
_EXC_FILE_RE = re.compile(r"(?:^|[/\\])_dynamo[/\\]exc\.py$")
# break_graph_if_unsupported's wrapper, where dynamo catches a graph break (2.0-2.15; IPython
# names it "break_graph_if_unsupported.<locals>.decorator.<locals>.wrapper")
_TRACER_FILE_RE = re.compile(r"(?:^|[/\\])_dynamo[/\\]symbolic_convert\.py$")
# dynamo's tracer: the instruction translator and the variable trackers it calls
_TRACING_RE = re.compile(r"(?:^|[/\\])_dynamo[/\\](?:symbolic_convert\.py$|variables[/\\])")
# the start of Python's frame line ("  File \"F\", line N, in fn") cut short by a wrap: the
# file's quote opened, then at most what follows the file ("\", line 95,"); _MAX_WRAP: the
# characters of the line that may finish it
_WRAP_START_RE = re.compile(r'^\s{0,16}File "[^"]{1,4096}(?:"(?:, ?(?:l(?:i(?:n(?:e(?: \d{0,9},?)?)?)?)?)?)?)?$')
_MAX_WRAP = 400
_MAX_ERROR = 600  # characters of the exception's text kept
_MAX_ERROR_LINES = 4
_STDLIB_RE = re.compile(r"[/\\][Ll]ib[/\\](?P<mod>[A-Za-z_]\w{0,100})(?:\.py$|[/\\])")
# Python's own library where its directory says the version ("/usr/lib/python3.12/subprocess.py"),
# not the packages installed under it
_PY_LIB_RE = re.compile(r"(?:^|[/\\])lib[/\\]python\d[\d.]{0,6}[/\\](?!(?:site|dist)-packages[/\\])")
_LIBRARY_RE = re.compile(r"(?:^|[/\\])(?:site-packages|dist-packages|lib[/\\]python\d[\d.]{0,6})[/\\]"
                         r"|^<frozen ")


def _frame(text: str) -> ev.UserLoc | None:
    """The frame a traceback's line names (its line number 0 where the line comes after it)."""
    if " in " not in text and "Cell In" not in text:
        return None  # (what each form below holds: ", in ", ") in ", ".py in ", "Cell In")
    m = FILE_RE.match(text) or _IPY_FILE_RE.match(text) or _IPY_FILE_LINK_RE.match(text)
    if m is not None:
        return ev.UserLoc(m["file"], int(m["line"]), m["fn"].strip())
    m = _IPY_LINK_RE.match(text) or _IPY_OLD_RE.match(text)
    if m is not None:
        return ev.UserLoc(m["file"], 0, m["fn"].strip())
    m = _IPY_CELL_RE.match(text)
    if m is not None:
        return ev.UserLoc(m["file"], int(m["line"]), (m["fn"] or "<module>").strip())
    return None


def _stdlib(path: str) -> bool:
    """Whether a file is Python's own library where its directory does not say the version
    (Windows and conda: ``…\\anaconda3\\lib\\contextlib.py``, ``…\\Lib\\asyncio\\events.py``)."""
    m = _STDLIB_RE.search(path)
    return m is not None and m["mod"] in sys.stdlib_module_names


def _python_own(path: str) -> bool:
    """Whether a file is Python's own library (by its directory's version, or ``_stdlib``)."""
    return _PY_LIB_RE.search(path) is not None or _stdlib(path)


def _user(loc: ev.UserLoc) -> bool:
    """Whether a frame is the program's own (not torch's, not an installed package's, not
    Python's)."""
    return not is_torch_file(loc.file) and not is_compiler_file(loc.file) \
        and _LIBRARY_RE.search(loc.file) is None and not _stdlib(loc.file)


def exception_text(text: str) -> str:
    """An exception's line as its text is kept: a message a tool printed without its class
    loses the tool's words in front (ComfyUI's "!!! Exception during processing !!! ")."""
    classless = _CLASSLESS_RE.match(text)
    return classless["msg"] if classless is not None else text


def exception_name(text: str) -> str:
    """The exception's class name of an exception's line ("" for a line that is none)."""
    m = _EXC_RE.match(text)
    if m is None:
        classless = _CLASSLESS_RE.match(text)
        return _CLASSLESS[next(k for k in _CLASSLESS if classless["msg"].startswith(k))] \
            if classless is not None else ""
    name = m["name"]
    if name.endswith(_EXC_ENDS) or name in COMPILER_ERRORS or name == "Unsupported":
        return name
    return ""


@dataclass
class _Traceback:
    line: int
    head: str = ""  # IPython's head names the exception before the frames
    frames: list[ev.UserLoc] = field(default_factory=list)
    error: list[str] | None = None  # the exception's lines, once its line came
    cause: _Traceback | None = None  # the traceback this one was raised from (a chain)
    chained: bool = False  # a connector line came after its exception
    after_read: bool = False  # chained to an exception a reader read (its re-raise)
    from_user: bool = False  # dynamo's "from user code:" came after its exception
    # where the paste begins after the exception's line ("from user code:": sam2#603)
    begun: str = ""
    user_frames: list[ev.UserLoc] = field(default_factory=list)  # the frames under it
    code_next: bool = False  # a frame of it at the margin came: its code line is next
    rank: int | None = None
    last_code: str = ""  # the code line under the deepest frame, where the paste has it
    # torch._dynamo.export's `raise constraint_violation_error` (eval_frame.py, 2.1-2.15): it
    # re-raises the ConstraintViolationError its tracing (`opt_f(...)`) raised, so the
    # traceback is export's constraint violation whatever the paste cut below it
    export_violation: bool = False
    headless: bool = False  # begun inside, at a frame: its head is above the paste
    closed: bool = False  # dynamo's closing line came after its user stack (no exception read)


# an AOT-compiled function's guard check (torch._dynamo.aot_compile's __call__, 2.10-2.15):
# "RuntimeError: GuardManager check failed, reason: GuardDebugInfo(" then check_verbose's fields
# one a line ("result=0,", "verbose_code_parts=[…],", "num_guards_executed=5,",
# "user_stack=None)"): the exception's text runs to the closing parenthesis
AOT_GUARDS_FAILED = "GuardManager check failed"
_DEBUG_INFO_LINES = 8


def _in_debug_info(error: list[str]) -> bool:
    """Whether an exception's text is GuardDebugInfo's, its fields not all read yet."""
    return error[0].endswith("GuardDebugInfo(") and not error[-1].endswith(")") \
        and len(error) < _DEBUG_INFO_LINES


def compiler_exception(text: str) -> bool:
    """Whether an exception's line is one of torch's compiler: by its class (``COMPILER_ERRORS``)
    or its module (``torch._inductor.exc.…``), or a wrapper's failed re-raise of
    BackendCompilerFailed (``REWRAPPED``)."""
    m = _EXC_RE.match(text)
    return exception_name(text) in COMPILER_ERRORS or (
        m is not None and _COMPILER_MODULE_RE.match(m["type"]) is not None) or rewrapped(text)


# a wrapper re-raising torch's exception as ``type(err)(message)`` (vLLM's V0 model runner,
# worker/model_runner_base.py's _wrapper: vllm#16009, #17018, rocm_sdk_builder#248), which
# BackendCompilerFailed's constructor (backend_fn, inner_exception; 2.0-2.15) refuses with
# this TypeError: the compile failed in the backend, and the wrapper lost its error
REWRAPPED = "missing 1 required positional argument: 'inner_exception'"


def rewrapped(text: str) -> bool:
    """Whether an exception's line is a wrapper's failed re-raise of BackendCompilerFailed."""
    return text.startswith("TypeError: ") and REWRAPPED in text and "__init__()" in text


def _unshown_stop(tb: _Traceback) -> bool:
    """Whether a traceback the paste cut before its exception was begun below its head at a
    frame that is not the program's outermost (its ``<module>``), and ends in dynamo's tracer
    (``_TRACING_RE``), where dynamo raises a graph break's Unsupported and catches it: whether
    the program stopped on it is not in the paste (torch 2.0-2.5 log a caught break's
    traceback, pytorch#94795). A traceback cut elsewhere in the compiler (inductor, a backend,
    the CUDA-graph trees, torch.compile's refusal of the platform) is read as the program's."""
    return tb.headless and bool(tb.frames) and tb.frames[0].function != "<module>" \
        and _TRACING_RE.search(tb.frames[-1].file) is not None


def _catches_breaks(loc: ev.UserLoc) -> bool:
    """Whether a frame is dynamo's break_graph_if_unsupported wrapper (``_TRACER_FILE_RE``)."""
    return (loc.function == "wrapper" or loc.function.endswith(".<locals>.wrapper")) \
        and _TRACER_FILE_RE.search(loc.file) is not None


def _compiler_frame(loc: ev.UserLoc) -> bool:
    """A frame of torch's compiler at work (torchtree's ``at_work``: dynamo, AOTAutograd,
    inductor with its CUDA-graph trees, and the code inductor wrote), not one the program's code
    runs under (``_RUNS_UNDER_RE``). Not the torch code that only calls torch.compile or runs
    under it (torch.cond's _higher_order_ops/cond.py: pytorch#111329), and not Triton's own
    frames, which a program's own kernel has too (test_machine_errors: inductor's frames above
    them make the crash)."""
    return _RUNS_UNDER_RE.search(loc.file) is None and is_compiler_file(loc.file, at_work=True)


# a tool's line that names torch's compiler exception by its class alone, then prints the
# traceback without the exception's line (SD.Next's "13:49:33-187606 ERROR    Processing:
# BackendCompilerFailed" before its rich box, sdnext#4085): the class of the traceback below
_NAMED_RE = re.compile(r"(?:^|: )(?P<cls>[A-Z]\w{1,60})$")


def named_class(text: str) -> str:
    """torch's compiler exception a line names alone at its end ("" for any other line)."""
    if not text.endswith(_COMPILER_ERROR_NAMES) and not text.endswith("\n"):
        return ""  # (a line that ends with none of them: no search of its tail)
    m = _NAMED_RE.search(text[-64:])
    return m["cls"] if m is not None and m["cls"] in COMPILER_ERRORS else ""


# dynamo's "from user code:" stack glued to the exception's line with its frames, as a paste
# that lost its line breaks has it (WanVideoWrapper#1415: "…') from user code: File "…model.py",
# line 1053, in torch_dynamo_resume_in_forward_at_1051 q, k = … Set TORCHDYNAMO_VERBOSE=1 …")
_FROM_USER = "from user code:"
# pytest's line under an exception's report: where it was raised and its class alone
# ("/usr/…/torch/_dynamo/eval_frame.py:1034: Unsupported")
_PYTEST_WHERE_RE = re.compile(r"^(?P<file>\S.{0,1000}?\.py):\d{1,9}: (?P<cls>[A-Z]\w{0,100})$")
# the line dynamo prints under that stack: 2.5 on, then 2.0-2.4's
_DYNAMO_CLOSINGS = ("Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace",
                    'Set TORCH_LOGS="+dynamo" and TORCHDYNAMO_VERBOSE=1 for more information')
_GLUED_USER = f" {_FROM_USER} "
_GLUED_MAX = 8000  # characters of the line searched
_GLUED_FRAME_RE = re.compile(r'File "(?P<file>[^"]{1,1000})", line (?P<line>\d{1,9}), '
                             r"in (?P<fn>[\w<>.]{1,200})")


class CrashReader:
    """Tracebacks of the lines it is shown; ``observe`` returns the crashes that ended.

    A traceback, or a piece of one, is a crash of torch's compiler when its exception is the
    compiler's (``compiler_exception``) or names the machine's lack (``ENVIRONMENT``), or when
    any of its frames is the compiler at work (``_compiler_frame``); one that is not is
    counted in ``refused`` by what it has: ``traceback-export-violation`` where export's
    re-raise of a constraint violation is among its frames (its exception cut),
    ``traceback-wrapper`` where torch.compile's wrapper (eval_frame.py) is its only frame of
    torch's compiler, ``traceback-func`` where torch.func's transforms (vmap, grad) are among
    its frames and the compiler is not, ``traceback`` where it has none.
    """

    def __init__(self) -> None:
        self._tb: _Traceback | None = None  # the traceback being read
        self._done: _Traceback | None = None  # ended with its exception: a chain may follow
        self.refused: dict[str, int] = {}  # tracebacks that are no crash, by kind (above)
        self._read = False  # a reader's line came since the last traceback (its exception?)
        self._chain_read = False  # … and then a connector: the next traceback re-raises it
        self._named: tuple[int, str] = (0, "")  # (line, class) of a tool's ``named_class`` line
        self._wrapped: tuple[int, str] | None = None  # (line, text) of a frame's line cut short

    @property
    def awaiting(self) -> bool:
        """Whether a traceback is being read and its exception's line has not come."""
        return self._tb is not None and self._tb.error is None

    def observe(self, raw: bytes, lineno: int, unread: bool,
                rank: int | None = None) -> list[ev.Event]:
        """Read one line; ``unread``: no reader understood it (it may be the exception's);
        ``rank``: the rank torchrun's tag gave it."""
        text = raw.decode("utf-8", "replace").rstrip()
        text = self._unwrapped(text, lineno)
        if self._wrapped is not None and self._wrapped[0] == lineno:
            return []  # (the first part of a frame's line that the paste wrapped)
        tb = self._tb
        if tb is not None and tb.error is not None:  # the exception's text, continued
            if text and text[0] not in " \t" and (
                    (tb.error[-1].endswith(":") and len(tb.error) < _MAX_ERROR_LINES)
                    or _in_debug_info(tb.error)):
                tb.error.append(text.strip())  # "backend='inductor' raised:" then the error
                return []
            self._tb, self._done = None, tb
            tb = None
        head = _HEAD_RE.match(text) if _TRACEBACK_WORDS in text else None
        if head is not None:
            out: list[ev.Event] = []
            cause = None
            if self._done is not None and self._done.chained:
                cause, self._done = self._done, None
            else:
                out += self._finish_done()
            if tb is not None:  # a traceback cut before its exception, then another one
                out += self._crash(tb)
            named = self._named[1] if self._named[0] == lineno - 1 else ""
            self._tb = _Traceback(lineno, head=head["ipy"] or named, cause=cause, rank=rank,
                                  after_read=self._chain_read and cause is None)
            self._read = self._chain_read = False
            return out
        if not unread and text.strip():
            # a reader's line: a traceback it is in is that reader's (the recompile limit's
            # "raise FailOnRecompileLimitHit(", a CUDA-graph skip's stack)
            self._tb = None
            self._read, self._chain_read = True, False
            return self._finish_done() if tb is None else []
        loc = _frame(text)
        if tb is None:
            done = self._done
            if done is not None and done.from_user and text[:1] in (" ", "\t"):
                if loc is not None and len(done.user_frames) < _MAX_FRAMES:
                    done.user_frames.append(loc)  # (its code lines are skipped)
                return []
            if done is not None and done.from_user and text.strip():
                if not done.error and not done.closed and text.startswith(_DYNAMO_CLOSINGS):
                    done.closed = True  # (what follows may name the exception: pytest's line)
                    return []
                if done.closed and (where := _PYTEST_WHERE_RE.match(text)) is not None \
                        and is_torch_file(where["file"]):
                    done.error = [where["cls"]]  # pytest's "…/eval_frame.py:1034: Unsupported"
                    return self._finish_done()
                # the stack with its indent lost (WanVideoWrapper#1419): each frame at the
                # margin, then its code line at the margin too
                if loc is not None:
                    if len(done.user_frames) < _MAX_FRAMES:
                        done.user_frames.append(loc)
                    done.code_next = True
                    return []
                if done.code_next:
                    done.code_next = False
                    return []
            if loc is not None:  # a paste that begins inside a traceback (depyf#9)
                out = self._finish_done()
                self._tb = _Traceback(lineno, frames=[loc], rank=rank, headless=True,
                                      code_next=text.startswith(_MARGIN_FRAME))
                return out
            if done is None and text.strip() in _CONNECTORS:
                self._chain_read = self._read  # (what a reader read, or before the paste)
                return []
            if done is None and unread and not self._read and text.strip() == _FROM_USER:
                # a paste that begins at dynamo's user stack (exc.py's format_error_msg,
                # 2.0-2.15, under the exception it raised; sam2#603): that compile raised,
                # its exception above the paste (not a reader's record's: torchdynamo#1010)
                self._done = _Traceback(lineno, from_user=True, begun=_FROM_USER, rank=rank)
                return []
            if text[:1] not in (" ", "\t", ""):
                self._read = False  # the program's own output: not a reader's exception
            if done is not None and text.strip():
                if text.strip() in _CONNECTORS:
                    done.chained = True
                    return []
                if text.strip() == _FROM_USER:  # dynamo's user stack after the error
                    done.from_user = True
                    return []
                return self._finish_done()
            margin = unread and text[:1] not in (" ", "\t")
            if margin and (named := named_class(text)):
                self._named = (lineno, named)
            if margin and _BACKEND_RAISED_RE.match(text) is not None:
                # torch's words for the backend's exception that follows (its class not shown)
                self._tb = _Traceback(lineno, error=[f"{_BACKEND_FAILED}: {text}"], rank=rank)
                return []
            if unread and (went_on := refusal_warned(text)):
                # the program caught torch.compile's refusal, warned and went on uncompiled
                return [ev.CompileCrash(error=went_on[:_MAX_ERROR], went_on=True, line=lineno,
                                        rank=rank)]
            # (the machine's words, torch's own, also on a line a paste indents as it indents
            # the traceback: no line of code is an exception's class then its message;
            # openvino_notebooks' SD thread quotes the refusal so, its frame inside prose)
            indented = unread and not margin and len(text) - len(text.lstrip()) <= 8
            name = exception_name(text.strip()) if margin or indented else ""
            if (margin and compiler_exception(text.strip())) or (
                    name and any(m in text for m in ENVIRONMENT)):
                # one of torch's compiler exceptions without its traceback (sglang#6342: the
                # exception first, then the program's own traceback "during handling" of it)
                self._tb = _Traceback(lineno, error=[exception_text(text.strip())], rank=rank)
            return []
        code_next, tb.code_next = tb.code_next, False
        if loc is not None:
            if len(tb.frames) >= _MAX_FRAMES:
                del tb.frames[0]  # the deepest frames are the ones that matter
            tb.frames.append(loc)
            tb.last_code = ""
            tb.code_next = text.startswith(_MARGIN_FRAME)
            return []
        arrow = _ARROW_RE.match(text)
        if arrow is not None:  # IPython's line of the frame above
            if tb.frames and not tb.frames[-1].line:
                last = tb.frames[-1]
                tb.frames[-1] = ev.UserLoc(last.file, int(arrow["line"]), last.function)
            return []
        if text[:1] in (" ", "\t") and tb.frames and not tb.last_code:
            # the first code line under the deepest frame so far (a cut traceback's last line
            # may say what it raises: `raise DynamicOutputShapeException(func)`, pytorch#106130)
            tb.last_code = text.strip()[:200]
            if tb.last_code == _EXPORT_RERAISE and _WRAPPER_RE.search(tb.frames[-1].file):
                tb.export_violation = True
        if not text or text[0] in " \t" or text.endswith(" frames") or text.startswith("[... "):
            return []  # a frame's code, a blank, Colab's "25 frames", IPython's hidden frames
        if tb.frames and not text.strip("^~"):
            return []  # Python 3.11's marks under a frame's code, their indent lost with it
        if exception_name(text.strip()) or compiler_exception(text.strip()):
            tb.error = [exception_text(text.strip())]
            return []
        if tb.headless and tb.frames and text.startswith(_DYNAMO_CLOSINGS):
            # dynamo's closing words after its user stack (exc.py's format_error_msg): a paste
            # begun inside the stack under "from user code:", that line and the exception above
            # it cut (vllm#23714); the frames read are the user stack, the exception above
            self._tb = None
            return self._crash(replace(tb, frames=[], user_frames=tb.frames, begun=_FROM_USER))
        if code_next and unread:
            # the code line of a frame whose indent the paste lost with it (onediff#941: a
            # traceback pasted outside a code block, each line at the margin)
            tb.last_code = text.strip()[:200]
            return []
        # a line at the margin that no traceback has: a reader took the exception (a graph
        # break's Unsupported, a data-dependent error: not a crash), or the output went on
        self._tb = None
        return []

    def _unwrapped(self, text: str, lineno: int) -> str:
        """A frame's line that a terminal or the issue's width wrapped onto the next line
        (vllm#16818: ``File ".../convert_frame.py", li`` then ``ne 715, in compile_inner``),
        joined: its first part is held (``_wrapped``) and given back joined with the next line
        where the two make a frame; a line that does not go on so is read as it was."""
        held, self._wrapped = self._wrapped, None
        if held is not None and held[0] == lineno - 1 and len(text) <= _MAX_WRAP:
            for joined in (held[1] + text, f"{held[1]} {text.lstrip()}"):
                if FILE_RE.match(joined) is not None:
                    return joined
        if _WRAP_START_RE.match(text) is not None and FILE_RE.match(text) is None:
            self._wrapped = (lineno, text)
            return ""
        return text

    def done(self) -> list[ev.Event]:
        """The crash of the input's last traceback (the paste may end inside it)."""
        tb, self._tb = self._tb, None
        out = self._finish_done()
        if tb is not None:
            out += self._crash(tb)
        return out

    def _finish_done(self) -> list[ev.Event]:
        tb, self._done = self._done, None
        return self._crash(tb) if tb is not None else []

    def _refuse(self, frames: list[ev.UserLoc], export_violation: bool = False) -> None:
        kind = "traceback-export-violation" if export_violation else "traceback-wrapper" \
            if any(_WRAPPER_RE.search(f.file) for f in frames) else "traceback-func" \
            if any(is_func_transform_file(f.file) for f in frames) else "traceback"
        self.refused[kind] = self.refused.get(kind, 0) + 1

    def _crash(self, tb: _Traceback) -> list[ev.Event]:
        """The crash a traceback (and the chain it ends) shows, if torch's compiler raised it."""
        chain = [tb]
        while chain[-1].cause is not None and len(chain) < 8:
            chain.append(chain[-1].cause)
        frames = [f for t in reversed(chain) for f in t.frames]  # the innermost's first
        error = " ".join(tb.error) if tb.error else ""
        glued = error.find(_GLUED_USER, 0, _GLUED_MAX)
        if glued > 0:  # dynamo's user stack on the exception's line (``_GLUED_USER``)
            stack, error = error[glued + len(_GLUED_USER):], error[:glued]
            tb.user_frames += [ev.UserLoc(m["file"], int(m["line"]), m["fn"])
                               for m in _GLUED_FRAME_RE.finditer(stack, 0, _GLUED_MAX)][:16]
        cut = tb.error is None and not tb.begun
        name = exception_name(tb.error[0]) if tb.error else tb.head.rsplit(".", 1)[-1]
        if cut and tb.head:
            error = tb.head  # IPython's head: the exception's type, its message cut
        causes = [" ".join(t.error) for t in chain[1:] if t.error]
        # the first traceback's exception is the cause (triton-windows#3: Triton's
        # AssertionError, then the traceback through dynamo that the paste cut)
        cause = next((c for c in reversed(causes) if c not in error), "")
        names = {name, *(exception_name(c) for c in causes)}
        raised = any(compiler_exception(e) for e in (tb.error[0] if tb.error else "", *causes))
        # where it raised: the deepest frame of the innermost traceback of the chain (the
        # cause, printed first), and the deepest of torch's compiler there
        deepest = next((t.frames[-1] for t in reversed(chain) if t.frames), None)
        if cut and deepest is not None and tb.frames and deepest is tb.frames[-1] \
                and tb.last_code:
            deepest = replace(deepest, code=tb.last_code)
        at = next((f for t in reversed(chain) for f in reversed(t.frames)
                   if is_compiler_file(f.file)), None)
        # a chain is a crash of the compile where any of its tracebacks ends in torch's
        # compiler, whatever the others end in
        reaches = any(t.frames and is_compiler_file(t.frames[-1].file) for t in chain)
        # (or the compiler at work anywhere in it: a piece cut above where it raised, a user's
        # function dynamo or AOTAutograd called)
        works = any(_compiler_frame(f) for f in frames)
        if not (names & COMPILER_ERRORS) and not raised and not reaches and not works \
                and not tb.begun and not any(m in f"{error} {' '.join(causes)}" for m in ENVIRONMENT):
            self._refuse(frames, any(t.export_violation for t in chain))
            return []
        if chain[-1].after_read and not raised and not (names & COMPILER_ERRORS) and not works:
            # the re-raise of what a reader read (export's UserError, raised in torch/_export),
            # not a failure of its own; one raised by the compiler at work while it handled
            # that exception (an AssertionError in convert_frame) is its own crash
            self.refused["traceback-chained"] = self.refused.get("traceback-chained", 0) + 1
            return []
        if tb.from_user and tb.error == ["Unsupported"] and not tb.frames and tb.user_frames:
            # pytest named the class of the exception dynamo's user stack was under: a graph
            # break raised to the program, its message above the paste (pytorch#175875)
            site = break_site(tuple(tb.user_frames))
            return [ev.GraphBreak(file=site.file, user_line=site.line, reason=MESSAGE_ABOVE,
                                  raised=True, partial=True, user_stack=tuple(tb.user_frames),
                                  line=tb.line, rank=tb.rank)]
        if cut and not causes and deepest is not None and deepest.function in _UNIMPLEMENTED \
                and _EXC_FILE_RE.search(deepest.file) is not None:
            # cut in dynamo's unimplemented, which raises Unsupported: a graph break raised to
            # the program (speech-to-speech#27), not a crash of the compiler; its place and its
            # reason are in the message past the paste's end
            return [ev.GraphBreak(file="", user_line=0, reason=UNIMPLEMENTED_CUT, raised=True,
                                  partial=True, line=chain[-1].line, rank=chain[-1].rank)]
        if cut and not causes and not tb.headless and tb.frames \
                and len(tb.frames) < _MAX_FRAMES and _catches_breaks(tb.frames[0]):
            # begun (after its head) in the frame where dynamo catches a graph break: torch's
            # log of a break it caught and went on from (textbreaks.LOGGED_CUT, pytorch#94795)
            return [ev.GraphBreak(file="", user_line=0, reason=LOGGED_CUT, partial=True,
                                  line=tb.line, rank=tb.rank)]
        if not error and not works and deepest is not None and _WRAPPER_RE.search(deepest.file) \
                and not deepest.function.endswith(PLATFORM_CHECKS):
            # cut where every compiled call passes: nothing says the compile raised, unless
            # export's re-raise of its tracing's constraint violation is among the frames
            self._refuse(frames, any(t.export_violation for t in chain))
            return []
        # the user's line: dynamo's "from user code:" stack names it where the paste has it,
        # else the program's deepest own frame in the traceback it stopped with
        users = [f for t in reversed(chain) for f in t.user_frames]
        # (its innermost frame that is not torch's: a stack that ends in nn.Module's _call_impl
        # ends where the call went into torch's module code, sam2#603)
        # (and not Python's own: a stack that ends in subprocess.py ends where a package's call
        # went into the standard library, sglang#23386's flashinfer cpp_ext.py:73)
        user = next((f for f in reversed(users) if not is_torch_file(f.file)
                     and not _python_own(f.file)), None) or next(
            (f for f in reversed(users) if not is_torch_file(f.file)), users[-1]) \
            if users else next(
            (f for f in reversed(tb.frames) if _user(f)), None) or next(
            (f for f in reversed(frames) if _user(f)), None)
        frames += users
        # frames of the code torch resumed after a graph break (torch_dynamo_resume_in_f_at_N):
        # each proves a break (sglang#1923's "… in torch_dynamo_resume_in_forward_at_57")
        resumes = tuple(dict.fromkeys(f for f in frames if "resume_in" in f.function))[:16]
        cudagraph_run = any(_CUDAGRAPH_TREES_RE.search(f.file) for f in frames)
        # through AOTAutograd's run-time wrapper and nothing below it compiling, in the
        # traceback the program stopped with and in those it was raised from (pytorch#160281)
        ran = not cudagraph_run and not raised and not (names & COMPILER_ERRORS) \
            and graph_ran([(f.file, f.function) for f in tb.frames]) \
            and all(graph_ran(pairs) or not any(_compiler_frame(f) for f in t.frames)
                    for t in chain[1:] if (pairs := [(f.file, f.function) for f in t.frames]))
        return [ev.CompileCrash(
            error=error[:_MAX_ERROR], cause=cause[:_MAX_ERROR], cut=cut, at=at,
            kernel=kernel_of(f"{error} {' '.join(causes)}"),
            deepest=deepest, user=user, resumes=resumes, line=chain[-1].line,
            cudagraph_run=cudagraph_run, graph_run=ran,
            begun=chain[-1].begun, headless=cut and not causes and _unshown_stop(chain[-1]),
            rank=chain[-1].rank)]


# inductor's record of a kernel Triton could not compile: log.exception("Triton compilation
# failed: %s\n%s\nmetadata: %s", kernel, its source, …) and then raise (_inductor/runtime/
# triton_heuristics.py 2.3 :365, 2.7 :539, 2.15 :1442): the compile failed. The module's other
# E-level records are a launch's ("Failed during launch …") and a hook's ("jit_post_compile_hook
# failed"), and neither quotes a kernel's source
TRITON_LOGGER = b"triton_heuristics.py:"
TRITON_FAILED = b"Triton compilation failed: "
_TRITON_FAILED = TRITON_FAILED.decode()
_KERNEL_NAME_RE = re.compile(r"^(?P<name>triton_\w{1,200})$")
# a line of a Triton kernel's body as inductor writes it ("    xmask = tl.full([XBLOCK], …")
_TRITON_SOURCE_RE = re.compile(r"^\s{1,16}\w{1,100} = .{0,400}\btl\.\w{1,100}\(")


def triton_failed(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """An E-level record of ``triton_heuristics``, whole or begun before the paste: a crash of
    the compile where it is inductor's "Triton compilation failed" (its head, or the kernel's
    source and Triton's ``CompilationError`` below it)."""
    head = lines[0].strip() if lines else ""
    named = _KERNEL_NAME_RE.match(head[len(_TRITON_FAILED):].strip()) \
        if head.startswith(_TRITON_FAILED) else None
    kernel = named["name"] if named is not None else next(
        (k for t in lines if (k := kernel_of(t))), "")
    if not kernel and any(_TRITON_SOURCE_RE.match(t) for t in lines):
        kernel = "?"  # the kernel's source, its name before the paste (triton-windows#28)
    if not kernel:
        return []
    # the exception the record ends in: Triton's CompilationError ("at 1:0:", the kernel's
    # line, "^", then the reason: ValueError("type fp8e4nv not supported …"))
    at = next((i for i in range(len(lines) - 1, -1, -1)
               if lines[i][:1] not in (" ", "\t") and exception_name(lines[i].strip())), None)
    error = lines[at].strip() if at is not None else ""
    tail = lines[at + 1:] if at is not None else []
    caret = next((i for i, t in enumerate(tail) if t.strip() == "^"), None)
    reason = next((t.strip() for t in tail[caret + 1:] if t.strip()), "") \
        if caret is not None else ""
    return [ev.CompileCrash(error=error[:_MAX_ERROR], cause=reason[:_MAX_ERROR],
                            cut=not reason, kernel=kernel, **common)]

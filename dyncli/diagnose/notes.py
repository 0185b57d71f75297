"""Notes on torch's own output that needs no fix: what it means, and how to quiet it.

Some of what torch prints under ``torch.compile`` looks like trouble and is not: max-autotune's
tuning tables and the candidates that failed while tuning (inductor's select_algorithm.py),
inductor's "Not enough SMs to use max_autotune_gemm mode" (utils.is_big_gpu), the warning
that a CUDA graph captured empty (CUDAGraph.cpp). Threads about them ask what they mean
(openpi#654: "Triton out of resources"; Zonos#168 took the SM warning for an install error) or
how to turn them off (HeavyBall#30). The readers (``dyncli.logparse.textautotune``,
``textnotes``) make ``TorchNote`` events; ``NoteAccumulator`` keeps one row per kind, bounded;
``torch_note_findings`` says each as a note (``Advice.note``: under Notes, never a cause).
"""

from __future__ import annotations

import re

from dyncli.diagnose.advice import CHECK_VALUE
from dyncli.diagnose.dde_facts import OVER_DATA
from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.model import Diagnosis, RecompileLimitReport, TorchNoteReport, rank_key
from dyncli.diagnose.reasons import cite
from dyncli.logparse import events as ev
from dyncli.logparse import textnotes

_KEPT_LINES = 3  # first lines kept per kind (one per part): the note's evidence
_KEPT_RANKS = 64


SHAPE_ENV = "shape-env-failed"
_HELD = 256  # processes whose last ShapeEnv failure waits for the note after it


class NoteAccumulator:
    """Collects ``TorchNote`` events; ``finish`` gives one row per kind, in the order met.

    recording.py logs a ShapeEnv call that raised, then re-raises the error: where the next
    note of that process and compile is AOTAutograd's suppressed backward compile, that compile
    is what raised it (pytorch#133965), and the call is said there (``after``), not twice."""

    def __init__(self) -> None:
        self._counts: dict[str, dict[str, int]] = {}
        self._lines: dict[str, dict[str, tuple[int, str]]] = {}
        self._ranks: dict[str, dict[int | None, None]] = {}
        self._after: dict[str, dict[str, None]] = {}
        self._held: dict[tuple[int | None, int], ev.TorchNote] = {}

    def feed(self, e: ev.TorchNote) -> None:
        """Take one note event."""
        key = (e.rank, e.pid)
        held = self._held.pop(key, None)
        if held is not None and e.kind == "backward-deferred" \
                and held.compile_id == e.compile_id:
            after = self._after.setdefault(e.kind, {})
            if len(after) < _KEPT_LINES:
                after[held.text] = None
        elif held is not None:
            self._count(held)
        if e.kind == SHAPE_ENV and len(self._held) < _HELD:
            self._held[key] = e
        else:
            self._count(e)

    def _count(self, e: ev.TorchNote) -> None:
        counts = self._counts.setdefault(e.kind, {})
        counts[e.what] = counts.get(e.what, 0) + 1
        lines = self._lines.setdefault(e.kind, {})
        if e.what not in lines and len(lines) < _KEPT_LINES:
            lines[e.what] = (e.line, e.text)
        ranks = self._ranks.setdefault(e.kind, {})
        if len(ranks) < _KEPT_RANKS:
            ranks[e.rank] = None

    def finish(self) -> tuple[TorchNoteReport, ...]:
        """The rows, one per kind."""
        for held in self._held.values():  # (followed by no note: said on their own)
            self._count(held)
        self._held.clear()
        return tuple(TorchNoteReport(
            kind=kind, counts=tuple(counts.items()),
            lines=tuple(sorted(self._lines[kind].values())),
            ranks=tuple(sorted(self._ranks[kind], key=rank_key)),
            after=tuple(self._after.get(kind, ())))
            for kind, counts in self._counts.items())


def _rank(x: TorchNoteReport) -> int | None:
    """The rank a note is about: the one rank that wrote it (None: none, or several)."""
    return x.ranks[0] if len(x.ranks) == 1 else None


def _evidence(x: TorchNoteReport) -> tuple[str, ...]:
    return tuple(cite(line, "", text) for line, text in x.lines)


# silencing the tables, by release (select_algorithm returns before any write when it is 0:
# 2.6 :1755, 2.11 :4300, 2.15 :6120; the environment variable is read by config.py from 2.11;
# config overrides are per thread from 2.12, utils/_config_module.py's ContextVar)
SILENCE = ("TORCHINDUCTOR_AUTOTUNE_NUM_CHOICES_DISPLAYED=0 in the environment (torch 2.11 on), "
           "or torch._inductor.config.autotune_num_choices_displayed = 0 (torch 2.6 on; from "
           "2.12 a config override holds only in the thread that sets it, so a compile on "
           "another thread still prints)")


def _autotune(x: TorchNoteReport) -> Advice:
    tables, summaries = x.count("table"), x.count("summary")
    failed, fallback = x.count("failed"), x.count("fallback")
    said = []
    if tables or summaries or x.count("stats") or x.count("other"):
        parts = ", ".join(p for p in (
            f"{tables} table(s) of the fastest candidates" if tables else "",
            f"{summaries} line(s) of how long tuning took" if summaries else "") if p)
        said.append("max-autotune's tuning report, which inductor writes itself: it timed "
                    "each candidate kernel of a matmul or convolution and kept the fastest"
                    + (f" ({parts})" if parts else ""))
    if failed:
        said.append(f"{failed} candidate(s) failed while being tuned (Triton's out of "
                    "resource: a config needing more shared memory than this GPU has; no valid "
                    "Triton config; a runtime error): inductor gives a failed candidate an "
                    "infinite time and tunes on with the others, so the compile went on")
    if fallback:
        said.append("where every Triton candidate of an operation failed, inductor used "
                    "ATen's kernel, as without max-autotune")
    fix = "nothing to fix. To silence the tables: " + SILENCE
    if x.count("stats"):
        fix += "; its 'Autotune Choices Stats' lines: TORCHINDUCTOR_MAX_AUTOTUNE_REPORT_CHOICES_STATS=0"
    if failed or fallback:
        fix += ('; the failed candidates\' lines are inductor\'s logger\'s: TORCH_LOGS="-inductor" '
                "keeps only its errors")
    return Advice(kind=AdviceKind.AUTOTUNE_OUTPUT, note=True, rank=_rank(x), key=x.kind,
                  message="torch's own output, not a problem: " + "; ".join(said) + ".",
                  fix=fix, evidence=_evidence(x))


def _empty_cudagraph(x: TorchNoteReport) -> Advice:
    return Advice(
        kind=AdviceKind.EMPTY_CUDAGRAPH, note=True, rank=_rank(x), key=x.kind,
        message=(f"torch warned {x.total} time(s) that a CUDA graph it captured is empty: the "
                 "graph holds no kernel. Under mode=\"reduce-overhead\" or \"max-autotune\" "
                 "inductor captures every compiled graph, and one that launches no kernel "
                 "(views only, such as the reshape left between two graph breaks, "
                 "pytorch#149653) captures empty; replaying it does nothing, so it is "
                 "harmless. torch's words (a wrong device or stream) fit a program's own "
                 "torch.cuda.graph capture, whose work must run on the capture's stream."),
        fix=("nothing to fix under torch.compile; it warns once per such graph (one per layer "
             "in a model of many). To be rid of it, remove the graph break that leaves a "
             "graph of views only, or filter it: warnings.filterwarnings(\"ignore\", "
             "message=\"The CUDA Graph is empty\"). pytorch#185760 tried to skip capturing "
             "graphs without kernels (merged, then reverted)."),
        evidence=_evidence(x))


def _gemm_templates_off(x: TorchNoteReport) -> Advice:
    arch = any("GPU arch" in text for _, text in x.lines)
    why = ("this GPU's architecture is not one inductor's GEMM templates support (on ROCm: "
           "before gfx9, and gfx10)" if arch else
           "this GPU has fewer streaming multiprocessors than inductor's threshold for its "
           "GEMM templates (68 from torch 2.6, 80 in 2.3; 16 on an XPU)")
    return Advice(
        kind=AdviceKind.GEMM_TEMPLATES_OFF, note=True, rank=_rank(x), key=x.kind,
        message=(f"inductor's warning (not an error) that max-autotune will not tune matmuls "
                 f"here: {why}, so it tunes no Triton template for matmuls and convolutions, "
                 "which run ATen's kernels (cuBLAS) as in the default mode; everything else "
                 "compiles and runs as asked, CUDA graphs included."),
        fix=("nothing to fix: the compile goes on. If the program failed, its error is "
             "elsewhere in the log."),
        evidence=_evidence(x))


def _sympy_recursion(x: TorchNoteReport) -> Advice:
    # symbolic_shapes catches the RecursionError and logs it (2.15: _maybe_evaluate_static_
    # worker returns None, "could not decide statically"): the compile goes on without it
    return Advice(
        kind=AdviceKind.SYMPY_RECURSION, note=True, rank=_rank(x), key=x.kind,
        message=(f"torch warned {x.total} time(s) that sympy, which its symbolic shapes use "
                 "to reason about sizes, hit Python's recursion limit on an expression "
                 "(the warning names it): torch caught it, went without that simplification, "
                 "and the compile went on. A warning, not an error; it is torch's (and "
                 "sympy's), not your code's."),
        fix=("nothing to fix in your code. torch's maintainers take it as worth fixing "
             "(pytorch#127817): where it repeats, a report with the TORCH_LOGS=\"dynamic\" "
             "output up to the warning helps them. If the program failed, its error is "
             "elsewhere in the log."),
        evidence=_evidence(x))


def _backward_deferred(x: TorchNoteReport) -> Advice:
    # graph_compile.py (2.15 :2459): only where the forward saves sizes for backward; the
    # lazy backward compiles the same graph again when backward() first runs
    # a part's line is the exception ("raised") or, cut before it, the record's head ("cut"):
    # the head holds torch's words, an exception does not
    # ``after``: the ShapeEnv call recording.py logged as raising just before the warning, in
    # the same compile (NoteAccumulator): the compile of the backward graph is what made it
    head = textnotes.DEFERRED_BACKWARD.decode()
    errors = [text for _, text in x.lines if head not in text]
    record = "recording.py's error record just before the warning"
    where = f" in torch's ShapeEnv, running {x.after[0]}" if x.after else ""
    if where:
        raised = f"{where} ({record}): {errors[0]}" if errors else \
            f"{where} ({record}; the exception is past the paste)"
    else:
        raised = f": {errors[0]}" if errors else " (its error is past the paste)"
    frozen = (" That error is torch's, not your code's: the backward graph added a runtime "
              "assert after the forward's guards had frozen them (torch 2.3-2.6 assert "
              "`not self.runtime_asserts_frozen`, pytorch#130432); later releases log "
              "\"runtime_asserts_frozen but then got …\" instead and go on."
              ) if x.count("frozen") else ""
    return Advice(
        kind=AdviceKind.BACKWARD_DEFERRED, note=True, rank=_rank(x), key=x.kind,
        message=(f"torch compiled a forward graph, then compiled its backward graph ahead of "
                 f"time (AOTAutograd does so under dynamic shapes) and that raised{raised}. "
                 f"torch suppressed the error ({x.total} time(s)) and went on: the forward runs "
                 "compiled. The backward is compiled again when backward() first runs, where "
                 "the same error would stop the program; a run that never calls backward "
                 "(inference, torch.no_grad) is not affected." + frozen),
        fix=(("nothing, for a run without backward. For one that trains: a torch release of "
              "2.7 or later, which does not raise there; nothing in the code to change."
              ) if frozen else (
             "nothing, for a run without backward. For one that trains, this is the error to "
             "fix, as a failed compile of the backward graph: the traceback under the warning "
             + ("says where it was raised" if errors else "(cut in this paste) ends in it")
             + "; a TORCH_TRACE (tlparse) or TORCH_LOGS=\"aot_graphs\" shows that graph.")),
        evidence=_evidence(x))


def _shape_env_failed(x: TorchNoteReport) -> Advice:
    # recording.py (record_shapeenv_event): the call is logged, its error re-raised; 2.1-2.7
    # any failure of a recorded call, also where the caller catches it (pytorch#134421), 2.8
    # on only under translation validation (2.8.0 recording.py:312, 2.15.0 :349), so the
    # record alone proves no failed compile. symbolic_shapes' evaluate_expr warning likewise
    # logs and re-raises (dyncli.diagnose.dde_facts: when it is a data-dependent error's)
    calls = "; ".join(text for _, text in x.lines)
    return Advice(
        kind=AdviceKind.SHAPE_ENV_FAILED, note=True, rank=_rank(x), key=x.kind,
        message=(f"torch's ShapeEnv (its bookkeeping of symbolic sizes) raised {x.total} "
                 f"time(s), running {calls}. torch logs such a call (recording.py's record; "
                 "evaluate_expr's own warning) and re-raises its error to the step of the "
                 "compile that made it, which may "
                 "catch it and go on: up to torch 2.7 every such failure is logged, also "
                 "those torch then handles (pytorch#134421: export trying an operator's "
                 "overloads), and from 2.8 only under translation validation. The record "
                 "alone does not say that a compile failed, nor which error it was; where a "
                 "compile failed, its error follows in the log."),
        fix=("nothing, where the run went on. Where it stopped, the error after this record "
             "is the one to read; TORCH_LOGS=\"dynamic\" puts the call's traceback under the "
             "record." + (
                 " Where that error is GuardOnDataDependentSymNode (\"Could not guard on "
                 "data-dependent expression …\"), tell torch what the value allows where your "
                 f"code reads it: {CHECK_VALUE}, or keep the computation on tensors"
                 if any(OVER_DATA in text for _, text in x.lines) else "")),
        evidence=_evidence(x))


def _auto_dim_specialized(x: TorchNoteReport) -> Advice:
    # non_strict_utils.py's warning: "dimension {path} 0/1 specialized; Dim.AUTO was specified
    # along with a sample input with hint = {hint}." (one per size, its path and hint in it)
    said = []
    for _, text in x.lines:
        path, _, rest = text.removeprefix("dimension ").partition(" 0/1 specialized")
        hint = rest.rpartition("hint = ")[2].rstrip(".")
        said.append(f"{path} (example size {hint})")
    return Advice(
        kind=AdviceKind.AUTO_DIM_SPECIALIZED, note=True, rank=_rank(x), key=x.kind,
        message=(f"export's warning ({x.total} time(s)) that a size given as Dim.AUTO in "
                 f"dynamic_shapes had an example input of size 0 or 1 ({', '.join(said)}): "
                 "export specializes sizes 0 and 1, and Dim.AUTO keeps such a size static "
                 "instead of raising, so the exported program takes only that size along it. "
                 "The export went on."),
        fix=("nothing, where that size is meant to be fixed. Where it should vary in the "
             "exported program, pass an example input of size 2 or more along it (export "
             "generalizes from the example; a size of 1 still runs the exported program); "
             "Dim.DYNAMIC raises where a size is pinned so, instead of warning."),
        evidence=_evidence(x))


# the dict torch's warning prints: "cudagraphs backend ignoring extra kwargs {'mode':
# 'reduce-overhead'}" (a repr: keys and a string value quoted; options' dict nested)
_KWARG_RE = re.compile(r"'(?P<key>mode|options)': (?P<value>'[^']{0,80}'|\{)")


def _backend_kwargs_ignored(x: TorchNoteReport) -> Advice:
    # 2.14.1 and 2.15's CudagraphsBackend.__call__ logs the kwargs and runs cudagraphs(model,
    # inputs) without them: the mode changed nothing (its inductor settings never apply)
    found = [m for _, text in x.lines for m in _KWARG_RE.finditer(text[:textnotes.TEXT_CHARS])]
    asked = ", ".join(dict.fromkeys(
        f"{m['key']}={m['value']}" if m["value"] != "{" else f"{m['key']}={{…}}"
        for m in found)) or "mode= or options="
    return Advice(
        kind=AdviceKind.BACKEND_KWARGS_IGNORED, note=True, rank=_rank(x), key=x.kind,
        message=(f"torch warned {x.total} time(s) that the cudagraphs backend ignored {asked}, "
                 "which torch.compile passed it: the backend records CUDA graphs itself, "
                 "without inductor, and takes no mode or options, so that setting did nothing "
                 "(torch before pytorch#182989 raised TypeError here instead); the compile went "
                 "on under backend=\"cudagraphs\"."),
        fix=("nothing, where CUDA graphs without inductor are what you want: drop mode= and "
             "options= with backend=\"cudagraphs\" to quiet it. For inductor's kernels as "
             "well (what mode=\"reduce-overhead\" or \"max-autotune\" asks for), compile "
             "with the default backend and the mode: torch.compile(model, mode=\"reduce-overhead\")."),
        evidence=_evidence(x))


FLEX_EAGER = "flex-attention-eager"


def _flex_attention_eager(x: TorchNoteReport, limits: tuple[RecompileLimitReport, ...]) -> Advice:
    # flex_attention's _warn_once (2.15 nn/attention/flex_attention.py:2624): called where
    # dynamo is not compiling, it runs the unfused implementation; once a process, so the
    # calls that ran so are not counted. A frame past the recompile limit runs uncompiled from
    # then on, its flex_attention calls too (vllm#27178's comment, its limit 8)
    first = x.lines[0][0] if x.lines else 0
    hit = [m for m in limits if m.line and m.line < first]
    before = (" This log's recompile limit hit for "
              + ", ".join(dict.fromkeys(f"{m.function or 'frame ' + m.compile_id} (line {m.line})"
                                        for m in hit[:3]))
              + " comes before the warning: that frame's later calls ran uncompiled, its "
              "flex_attention calls with them." if hit else "")
    return Advice(
        kind=AdviceKind.FLEX_ATTENTION_EAGER, note=True, rank=_rank(x), key=x.kind,
        message=("torch warned that flex_attention was called without torch.compile(): "
                 "outside a compiled region it runs its unfused implementation, which "
                 "materializes the whole scores matrix (batch x heads x query length x key "
                 "length) instead of generating a fused kernel: slower, and memory that grows "
                 "with both lengths. torch warns once a process, so how many calls ran so the "
                 "log does not say. A call runs so where nothing compiles it, or where the "
                 "frame that calls it runs uncompiled: after a frame hits the recompile limit, "
                 "torch runs its later calls eagerly (vllm#27178)." + before),
        fix=("compile the call: torch.compile(flex_attention), or the function that calls "
             "it. Where it is compiled already, find why that frame ran eagerly: a "
             "recompile-limit warning for it (then stop its recompiles, TORCH_LOGS=\"recompiles\" "
             "names the guard that failed each time; a mask_mod or score_mod made anew each "
             "call is a new function to torch), a graph break or torch.compiler.disable around "
             "the call (TORCH_LOGS=\"graph_breaks\")"),
        evidence=_evidence(x))


_NOTES = {"autotune": _autotune, "backend-kwargs-ignored": _backend_kwargs_ignored,
          "backward-deferred": _backward_deferred, "auto-dim-specialized": _auto_dim_specialized,
          "empty-cudagraph": _empty_cudagraph, "gemm-templates-off": _gemm_templates_off,
          "sympy-recursion": _sympy_recursion, SHAPE_ENV: _shape_env_failed}


def torch_note_findings(diag: Diagnosis) -> list[Advice]:
    """One note per kind of torch's output the log holds (``Diagnosis.torch_notes``); the
    flex_attention note reads the log's recompile-limit hits too."""
    out: list[Advice] = []
    for x in diag.torch_notes:
        if x.kind == FLEX_EAGER:
            out.append(_flex_attention_eager(x, diag.recompile_limits))
        elif (note := _NOTES.get(x.kind)) is not None:
            out.append(note(x))
    return out

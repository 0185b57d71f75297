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

from dyncli.diagnose.findings import Advice, AdviceKind
from dyncli.diagnose.model import Diagnosis, TorchNoteReport, rank_key
from dyncli.diagnose.reasons import cite
from dyncli.logparse import events as ev
from dyncli.logparse import textnotes

_KEPT_LINES = 3  # first lines kept per kind (one per part): the note's evidence
_KEPT_RANKS = 64


class NoteAccumulator:
    """Collects ``TorchNote`` events; ``finish`` gives one row per kind, in the order met."""

    def __init__(self) -> None:
        self._counts: dict[str, dict[str, int]] = {}
        self._lines: dict[str, dict[str, tuple[int, str]]] = {}
        self._ranks: dict[str, dict[int | None, None]] = {}

    def feed(self, e: ev.TorchNote) -> None:
        """Take one note event."""
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
        return tuple(TorchNoteReport(
            kind=kind, counts=tuple(counts.items()),
            lines=tuple(sorted(self._lines[kind].values())),
            ranks=tuple(sorted(self._ranks[kind], key=rank_key)))
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
    head = textnotes.DEFERRED_BACKWARD.decode()
    errors = [text for _, text in x.lines if head not in text]
    raised = f": {errors[0]}" if errors else " (its error is past the paste)"
    return Advice(
        kind=AdviceKind.BACKWARD_DEFERRED, note=True, rank=_rank(x), key=x.kind,
        message=(f"torch compiled a forward graph, then compiled its backward graph ahead of "
                 f"time (AOTAutograd does so under dynamic shapes) and that raised{raised}. "
                 f"torch suppressed the error ({x.total} time(s)) and went on: the forward runs "
                 "compiled. The backward is compiled again when backward() first runs, where "
                 "the same error would stop the program; a run that never calls backward "
                 "(inference, torch.no_grad) is not affected."),
        fix=("nothing, for a run without backward. For one that trains, this is the error to "
             "fix, as a failed compile of the backward graph: the traceback under the warning "
             + ("says where it was raised" if errors else "(cut in this paste) ends in it")
             + "; a TORCH_TRACE (tlparse) or TORCH_LOGS=\"aot_graphs\" shows that graph."),
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


_NOTES = {"autotune": _autotune, "backward-deferred": _backward_deferred,
          "auto-dim-specialized": _auto_dim_specialized, "empty-cudagraph": _empty_cudagraph,
          "gemm-templates-off": _gemm_templates_off, "sympy-recursion": _sympy_recursion}


def torch_note_findings(diag: Diagnosis) -> list[Advice]:
    """One note per kind of torch's output the log holds (``Diagnosis.torch_notes``)."""
    return [_NOTES[x.kind](x) for x in diag.torch_notes if x.kind in _NOTES]

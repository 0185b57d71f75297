"""Advice about specializations: a size or int that code pinned to one value.

By user code (``user-specialization``: the line that compares it), inside torch
(``framework-specialization``), against a ``mark_dynamic`` (``constraint-violation``), or by
torch's guard limit (``guard-limit-specialization``). ``dyncli.diagnose.advice.advise`` calls
:func:`specializations` in its order of suggestions.
"""

from __future__ import annotations

from dyncli.diagnose.findings import Advice, AdviceKind, Site, sites_of
from dyncli.diagnose.model import Diagnosis, FrameReport, SpecializationReport
from dyncli.diagnose.reasons import cite, location
from dyncli.diagnose.releases import Releases, named
from dyncli.logparse.textviolations import FORCED, HINT_01, HINT_STATIC, export_dim, export_form
from dyncli.logparse.torchtree import is_torch_file
from dyncli.quoting import shell_quote


def _framework_site(framework: str) -> tuple[Site, ...]:
    """``file.py:12 in fn`` (torch's framework location of a guard) as ``sites``."""
    file, _, line = framework.split(" in ", 1)[0].rpartition(":")
    return (Site(file, int(line)),) if file and line.isdigit() and len(line) <= 9 else ()


def _user_file(file: str, frame_files: set[tuple[str, str]]) -> bool:
    """Whether a location is the user's: the file of a compiled frame, or not inside torch.
    ``frame_files``: ``_frame_files`` of the frames (a few files, for thousands of frames)."""
    norm = file.replace("\\", "/")
    if any(full.endswith(norm) or norm.endswith(raw) for full, raw in frame_files):
        return True
    return not is_torch_file(norm)


def _frame_files(frames: tuple[FrameReport, ...]) -> set[tuple[str, str]]:
    """The frames' files, each as (with / separators, as given), once each."""
    return {(f.file.replace("\\", "/"), f.file) for f in frames if f.file}


def _spec_cite(s: SpecializationReport, name: str) -> str:
    """The evidence line of one specialization: ``name = value (reason) from guard G``."""
    return cite(s.line, s.compile_id, f"{name} = {s.value} ({s.reason})"
                + (f" from guard {s.guard}" if s.guard else ""))


# torch pinned the value while running an operator on it (dynamo's run_node: the op's fake
# kernel needed it, e.g. select_scatter's dim, pytorch#141934), not in a comparison of the code
_OP_FIX = ("no branch to rewrite: the operation on this line needs the value itself (torch "
           "pinned it while running the op, e.g. a dimension index), so each new value compiles "
           "once whatever is marked dynamic: keep the values it takes few")


# A backed size is a symbol only from 2 up (its hint), so a violation's constant 0 or 1 is
# always the example's size (produce_guards.track_symint: a range is violated by a constant,
# a plain mark_dynamic is not by 0 or 1). backed_size_oblivious: tests/integration/
# test_diagnose_capture.py runs the program with it (one graph for sizes 1, 5, 1, 9).
_ZERO_ONE_FIX = ("let one graph serve sizes 0 and 1 too: torch.fx.experimental._config."
                 "backed_size_oblivious = True before compiling (torch 2.11 and 2.15 have it); "
                 "or do not mark inputs of size 0 or 1 (torch._dynamo.maybe_mark_dynamic: "
                 "they compile a graph of their own)")


# torch equated two sizes while broadcasting an elementwise op (fake_impls.py's infer_size,
# the refs' _broadcast_shapes): this input's size against another operand's fixed one, which it
# must equal for the op to run at all (pytorch#107200: BERT's token_type_ids buffer expanded
# to the benchmark's batch of 16, under dynamic=True; ezyang: "a problem with the benchmarking
# setup"). Seen on 2.11 and 2.15: `x + self.tt`, a buffer of 16 rows, `Eq(s77, 16)` "in
# infer_size" (tests/integration/test_broadcast_fix.py applies the fix: one graph for 3 batches)
_BROADCAST_FIX = ("no branch to rewrite: make the other operand follow this input's size (a "
                  "buffer or tensor made for one size: slice or expand it to the input's size, "
                  "or build it from the input), or keep this dim static; as it is, another "
                  "size of it cannot broadcast at all")
_BROADCASTS = (" in infer_size", " in _broadcast_shapes", " in broadcast_shapes")


def _in_broadcast(s: SpecializationReport) -> bool:
    """Whether torch pinned ``s`` making two operands' sizes equal to broadcast them."""
    return s.framework.endswith(_BROADCASTS)


def _in_op(s: SpecializationReport) -> bool:
    """Whether torch specialized ``s`` while running an operator (``… in run_node``)."""
    return s.framework.endswith(" in run_node")


# a replacement (torch's set_replacement, range_refined_to_singleton) without the guard that made
# it: torch logs the `eval … [guard added]` line, which names the code, next to the replacement
# (2.15: before it; a 2.5-era executorch log, pytorch#135429: just after it; 2.2 logged
# replacements later, in a batch); a paste without it
# does not show where (pytorch#121080: its s9 = 15085 came from dgl's expand_indptr, the user's
# call, in the thread's next excerpt). Applied in tests/integration/test_replacement_unseen.py.
# TORCHDYNAMO_EXTENDED_DEBUG_CREATE_SYMBOL shows where a symbol was made, not where it was pinned
_UNSEEN = "by code the paste does not show (the guard that pinned it is not in it)"
_UNSEEN_FIX = ('the guard that pinned it is the `eval … [guard added]` line on {sym} that '
               'TORCH_LOGS="+dynamic" prints near its set_replacement line: it names the code'
               '{stack}; paste it')
# (TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED is 2.3's: releases.FIRST; before it the line is all)
_EXTENDED = "TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED"


def _guard_fix(guard: str, known: Releases | None) -> str:
    """Where to look for what added ``guard``, in what the log's releases ``known`` read."""
    stack = f" and {_EXTENDED}={shell_quote(guard)}" if named(_EXTENDED, known) else ""
    return f"look at the guard that caused it (run with TORCH_LOGS=+dynamic{stack})"


def _unseen_stack(known: Releases | None) -> str:
    return (f' ({_EXTENDED}="<that guard>" prints its whole stack)' if named(_EXTENDED, known)
            else "")


# compiled autograd's backward graph names its tensors `inputs` (the tensors autograd saved and
# the gradients; its ints `sizes`): torch compiles GraphModule.forward(self, inputs, sizes, …)
# (_dynamo/compiled_autograd.py begin_capture), so they are L['inputs'][N]. A mark_dynamic on a
# forward input that autograd saved travels with the tensor into that graph; torch 2.4-2.5's
# compiled autograd traced the backward with the gradient's sizes fixed and pinned it there,
# raising the violation at the first backward (pytorch#133575, bdhirsh: "a FakeTensor tangent
# … that has only static shapes"). Run here: 2.4.1 raises on the thread's repro, with
# maybe_mark_dynamic it runs; 2.11 and 2.15 run it marked. The name alone does not prove it
# (a user's function may take `inputs`), so the reading says "where".
_CA_INPUT = "L['inputs']["
_CA_READING = (" Where this is compiled autograd's backward graph (it names its tensors "
               "L['inputs'][N]: what autograd saved and the gradients), the mark is your "
               "mark_dynamic on a forward input that autograd saved: torch 2.4-2.5's compiled "
               "autograd traced the backward with the gradient's sizes fixed, which pinned it "
               "(pytorch#133575); the log does not say compiled autograd ran.")
_CA_FIX = ("; under compiled autograd, torch._dynamo.maybe_mark_dynamic on that forward input "
           "(2.4's backward then compiles), or a newer torch (2.11 and 2.15 keep it dynamic)")


def specializations(diag: Diagnosis) -> list[Advice]:
    """A size or int pinned to one value: by user code (its line), inside torch (that line,
    or how to find it), against a mark_dynamic (the line), or by the guard limit."""
    out = []
    limit: dict[tuple[int | None, str], list[SpecializationReport]] = {}
    users: dict[tuple[int | None, str, str, int], list[SpecializationReport]] = {}
    exports: dict[tuple[int | None, str, str, str, bool], list[SpecializationReport]] = {}
    frame_files = _frame_files(diag.frames)
    for s in diag.specializations:
        src = ", ".join(s.sources) or s.symbol
        evidence = (_spec_cite(s, s.symbol or src),)
        form = export_form(s.message) if s.reason == "constraint_violation" else ""
        dim = export_dim(s.message) if s.reason == "constraint_violation" else None
        if s.reason == "forcing_spec":
            limit.setdefault((s.rank, src), []).append(s)
        elif form in (HINT_01, HINT_STATIC):  # export's Dim.DYNAMIC hint it could not keep
            out.append(_export_hint(s, src, form, evidence))
        elif dim is not None or form == FORCED:
            # torch.export's named Dim: one error, every input that shares it
            exports.setdefault((s.rank, s.compile_id, dim or src, s.value, form == FORCED),
                               []).append(s)
        elif s.reason == "constraint_violation":
            demand = ("use torch._dynamo.maybe_mark_dynamic instead of mark_dynamic (a hint, "
                      "not a demand), or rewrite the comparison so it does not depend on the size")
            if s.value in ("0", "1"):  # no line of code: the input's size (pytorch#135005)
                message = (f"{src} was marked dynamic with a range (mark_dynamic's min=/max=) "
                           f"but the input torch compiled had size {s.value}: torch compiles "
                           "sizes 0 and 1 as constants (its 0/1 specialization), so the "
                           "compile failed; no line of code specialized it.")
                fix = _ZERO_ONE_FIX
            elif s.user is not None:
                code = f": `{s.user.code}`" if s.user.code else ""
                message = (f"{src} was marked dynamic but the code at {location(s.user)} "
                           f"specialized it to {s.value}{code}.")
                fix = demand
            else:  # torch's error alone (vllm-ascend#1324: vLLM marked it, not the user)
                message = (f"{src} was marked dynamic (by mark_dynamic, or by the framework that "
                           f"compiles the model) but code specialized it to {s.value}; the log "
                           "does not show which line.")
                fix = ('TORCH_LOGS="+dynamic" prints the line (its `eval Eq(…, '
                       f'{s.value}) [guard added]` record names the code); then, where your code '
                       f"calls mark_dynamic, {demand}; where a framework marks it (vLLM marks "
                       "the number of tokens), the model code it compiles is what to change")
                if any(x.startswith(_CA_INPUT) for x in s.sources):
                    message += _CA_READING
                    fix += _CA_FIX
            out.append(Advice(
                kind=AdviceKind.CONSTRAINT_VIOLATION, message=message, fix=fix,
                evidence=evidence, rank=s.rank, sites=sites_of(s.user)))
        elif s.user is not None and _user_file(s.user.file, frame_files):
            users.setdefault((s.rank, src, s.user.file, s.user.line), []).append(s)
        else:
            inside = (f"inside torch code at {location(s.user)} (`{s.user.code}`)" if s.user
                      else f"inside {s.framework or 'framework code'}" if s.guard
                      else _UNSEEN)
            out.append(Advice(
                kind=AdviceKind.FRAMEWORK_SPECIALIZATION,
                message=f"{src} was specialized to {s.value} {inside}.",
                fix=("keep that dim static (a layer's weight fixes it); if you mark the tensor, "
                     "use torch._dynamo.maybe_mark_dynamic for it" if s.user else
                     _guard_fix(s.guard, diag.releases) if s.guard else
                     _UNSEEN_FIX.format(sym=s.symbol or src, stack=_unseen_stack(diag.releases))),
                evidence=evidence, rank=s.rank, key="" if s.user else s.guard,
                sites=sites_of(s.user) if s.user else _framework_site(s.framework)))
    for (rank, src, _, _), specs in users.items():
        s = specs[0]
        values = ", ".join(dict.fromkeys(x.value for x in specs if x.value)) or s.value
        broadcast = all(_in_broadcast(x) for x in specs)
        out.append(Advice(
            kind=AdviceKind.USER_SPECIALIZATION, sites=sites_of(s.user), inputs=s.sources,
            message=(f"{src} was specialized to {values} by user code at {location(s.user)}"
                     + (f": `{s.user.code}`; " if s.user and s.user.code else "; ")
                     + (f"an elementwise op there broadcasts it against a tensor whose size is "
                        f"fixed at {values} (torch's infer_size), so the two must be equal."
                        if broadcast else "each new value of it compiles again.")),
            fix=_BROADCAST_FIX if broadcast else _OP_FIX if all(_in_op(x) for x in specs) else
            ("rewrite the branch so it does not compare the size/int to a constant "
             "(e.g. torch.where, torch.cond), or keep it static if only a few values occur"),
            evidence=tuple(_spec_cite(x, x.symbol) for x in specs[:3]), rank=rank))
    for (rank, _, dim, value, forced), specs in exports.items():
        srcs = ", ".join(dict.fromkeys(x for sp in specs for x in sp.sources if x != dim))
        at = next((sp.user for sp in specs if sp.user is not None), None)
        if forced:
            out.append(_export_forced(rank, dim, srcs, value, specs, at))
            continue
        if value in ("0", "1") and at is None:  # the example's size, no line of the model
            out.append(_export_zero_one(rank, dim, srcs, value, specs))
            continue
        out.append(Advice(
            kind=AdviceKind.CONSTRAINT_VIOLATION, rank=rank, sites=sites_of(at),
            message=(f"torch.export's Dim {dim}{f' ({srcs})' if srcs else ''} is dynamic in "
                     "dynamic_shapes, but "
                     + (f"the code at {location(at)} specialized it" if at is not None
                        else "the model specialized it") + f" to {value}, so the export failed."),
            fix=(f"declare {dim} Dim.AUTO (torch keeps it static where the model needs it), or "
                 f"Dim.STATIC / {dim} = {value}"
                 + (" (torch's suggested fix)" if (dim, value) in diag.suggested_fixes else "")
                 + " if the model only "
                 "takes that size; to make it dynamic, change the line that pins it: "
                 f'TORCH_LOGS="+dynamic" prints it (`eval Eq(…, {value}) [guard added]`)'),
            evidence=tuple(_spec_cite(x, x.symbol or ", ".join(x.sources)) for x in specs[:3])))
    for (rank, src), specs in limit.items():
        out.append(Advice(
            kind=AdviceKind.GUARD_LIMIT_SPECIALIZATION, key=src,
            inputs=tuple(dict.fromkeys(x for sp in specs for x in sp.sources)),
            message=(f"{src} was specialized in {len(specs)} compile(s) because it had more "
                     "guards than torch.fx.experimental._config.symbol_guard_limit_before_specialize "
                     "allows; each new value compiles again, and no allow-list entry changes that."),
            fix=("raise symbol_guard_limit_before_specialize (or leave it unset), or reduce the "
                 "comparisons on this size"),
            evidence=tuple(cite(x.line, x.compile_id, f"{x.symbol} forced ({x.guard})")
                           for x in specs[:3]), rank=rank))
    return out


def _export_forced(rank: int | None, dim: str, srcs: str, value: str,
                   specs: list[SpecializationReport], at: object) -> Advice:
    """export's "Specializations unexpectedly required": solving the guards the model made
    on a Dim left one value (pytorch#126127: batch = 4 and audio_signal__2 = 256, "too
    complex"), so export needs that Dim to be that constant."""
    return Advice(
        kind=AdviceKind.CONSTRAINT_VIOLATION, rank=rank, key=f"forced:{dim}:{value}",
        sites=(),
        message=(f"torch.export's Dim {dim}{f' ({srcs})' if srcs else ''} is dynamic in "
                 f"dynamic_shapes, but solving the guards the model generated for it left one "
                 f"value, so export needs {dim} = {value} (\"Specializations unexpectedly "
                 "required\"), and the export failed."),
        fix=(f"Dim.STATIC for {dim} (or its example's size, {value}) if the model only takes "
             f"that size; to keep it dynamic, change the code that relates {dim} to other "
             'sizes (TORCH_LOGS="+dynamic" prints the guards on it): where two dims must be '
             "equal, one Dim for both or a derived Dim (b1 = b3, x = 2*_x)"),
        evidence=tuple(_spec_cite(x, x.symbol or dim) for x in specs[:3]))


# the fix for an export whose example input has size 0 or 1 along a dynamic dim (export's 0/1
# specialization): applied in tests/integration/test_export_hint_fixes.py
_EXAMPLE_FIX = ("pass an example input of size 2 or more along {src} (export generalizes from "
                "the example; a size of 1 still runs the exported program), or declare it "
                "Dim.AUTO, which keeps it static where the example pins it instead of raising")


def _export_zero_one(rank: int | None, dim: str, srcs: str, value: str,
                     specs: list[SpecializationReport]) -> Advice:
    """A named Dim export found constant at 0 or 1 with no line of the model blamed: a backed
    size is a symbol from 2 up, so the example input's own size along it pinned it (2.15:
    "You marked batch as dynamic but your code specialized it to be a constant (1)" for
    Dim("batch", min=1) and an example of 1; pytorch#121038 (2.3), #176349 (2026))."""
    return Advice(
        kind=AdviceKind.CONSTRAINT_VIOLATION, rank=rank, key=f"example:{dim}:{value}", sites=(),
        message=(f"torch.export's Dim {dim}{f' ({srcs})' if srcs else ''} is dynamic in "
                 f"dynamic_shapes, but the example input has size {value} along it and export "
                 f"specializes sizes 0 and 1, so it found {dim} = {value} and the export failed "
                 "(the example's size, not a line of the model)."),
        fix=_EXAMPLE_FIX.format(src=dim),
        evidence=tuple(_spec_cite(x, x.symbol or ", ".join(x.sources)) for x in specs[:3]))


def _export_hint(s: SpecializationReport, src: str, form: str,
                 evidence: tuple[str, ...]) -> Advice:
    """export's conflict of a Dim.DYNAMIC hint (2.15 non_strict_utils.py:868, a ValueError):
    the example's size along it was 0 or 1, which export specializes, or tracing made it
    static. The user's specification, not torch's bug: suppress_errors does nothing for
    export. Applied in tests/integration/test_export_hint_fixes.py."""
    if form == HINT_01:
        message = (f"{src} is Dim.DYNAMIC in dynamic_shapes, but the example input has size "
                   f"{s.value} along it and export specializes sizes 0 and 1, so export needs "
                   f"{src} = {s.value} and the export failed (the specification's conflict, "
                   "not a bug in torch).")
        fix = _EXAMPLE_FIX.format(src=src)
    else:
        message = (f"{src} is Dim.DYNAMIC in dynamic_shapes, but tracing made it static at "
                   f"{s.value}, so export needs {src} = {s.value} and the export failed.")
        fix = (f"Dim.STATIC (or Dim.AUTO, which accepts it) for {src} if the model only takes "
               f"{s.value}; to keep it dynamic, change the line that pins it: "
               f'TORCH_LOGS="+dynamic" prints it (`eval Eq(…, {s.value}) [guard added]`)')
    return Advice(kind=AdviceKind.CONSTRAINT_VIOLATION, rank=s.rank, key=f"hint:{src}",
                  message=message, fix=fix, evidence=evidence, sites=sites_of(s.user))

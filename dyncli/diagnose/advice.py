"""Rules of dyncli diagnose: dynamic sources, and suggestions with evidence.

Pure functions over the ``Diagnosis`` rows; the workflow they automate is the reference
guide's "Reducing Compilations: Step by Step" (docs/diagnose.md lists each rule). This module
owns the order of the suggestions (``advise``), the rules about values, parameters,
non-shape guards, limits and graph breaks, and what no allow-list entry helps
(``no_list_helps``, for suggest). The rules about tensor dims that changed size are in
``size_changes``, about specializations in ``specializations``, about size branches in
``branches``; guard text is read by ``dyncli.logparse.guardtext``, and what the rules share is
in ``reasons``.

Each rule returns ``Advice`` with its structure set as fields (the entries, flag, user lines,
function and key it knows; ``dyncli.diagnose.findings``): ``causes`` groups by those, never
by the sentences.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from dyncli.diagnose import compile_metrics, guard_kinds, size_changes, unbacked
from dyncli.diagnose.cudagraph_advice import WITHOUT_CUDAGRAPHS
from dyncli.diagnose.findings import Advice, AdviceKind, ConfigFlag, Site, place, sites_of
from dyncli.diagnose.limits import limit_findings
from dyncli.diagnose.model import (
    CompileCrashReport,
    Diagnosis,
    FrameReport,
    GraphBreakReport,
    RecompileReport,
    call_site,
    raised_break,
)
from dyncli.diagnose.ranges import range_findings
from dyncli.diagnose.reasons import (
    cite,
    location,
    mismatch,
    pinned_always,
    size_pins,
)
from dyncli.diagnose.releases import (
    EVERY_SIZE,
    FIRST,
    IN_CODE,
    PER_DIM_ENTRIES,
    Releases,
    listed_fix,
    named,
    of_break,
    pins_text,
    span,
)
from dyncli.diagnose.specializations import specializations
from dyncli.logparse import guardtext as gt
from dyncli.logparse.events import CompileId
from dyncli.logparse.textbreaks import (
    CONTROL_FLOW,
    FAKE_BACKEND,
    LOGGED_CUT,
    LOOP_GB,
    MESSAGE_ABOVE,
    SPECULATED,
    UNIMPLEMENTED_CUT,
)
from dyncli.logparse.textbuiltins import (
    ON_CALLING_THREAD,
    PER_THREAD,
    WARN_FIX,
    builtin_hint,
    builtin_name,
)
from dyncli.logparse.textcrash import (
    AOT_GUARDS_FAILED,
    PLATFORM_CHECKS,
    REFUSALS,
    exception_name,
    machine_error,
    rewrapped,
)
from dyncli.logparse.textframes import LOOP_SKIP
from dyncli.logparse.textmsg import unbacked_in
from dyncli.logparse.textnotes import HEAP_CONCRETE, SYMBOLIC_SIZES_RE
from dyncli.logparse.textold import ITEM_WARNED
from dyncli.logparse.textrecompiles import ERROR_ON_RECOMPILE
from dyncli.logparse.torchtree import (
    is_compiler_file,
    is_polyfill_file,
    is_torch_file,
    is_torch_location,
)
from dyncli.quoting import shell_quote
from dyncli.sources import (
    PER_DIM_SINCE,
    from_reason,
    has_dim,
    is_attribute,
    is_param,
    size_source,
    without_dim,
)

PER_DIM = ".".join(map(str, PER_DIM_SINCE))


def dynamic_sources(frames: tuple[FrameReport, ...],
                    recompiles: tuple[RecompileReport, ...]) -> tuple[str, ...]:
    """TORCH_COMPILE_DYNAMIC_SOURCES entries for inputs that automatic dynamic made dynamic.

    Tensors become ``SOURCE:DIM`` (per-dim form, torch >= 2.13) from the dims the guards show
    as dynamic; a tensor with no TENSOR_MATCH evidence stays a whole-source entry; ints are
    whole sources. Parameters and module attributes are left out (they are forced static on
    purpose; see the static-parameters suggestion).
    """
    out: dict[str, None] = {}
    for f in frames:
        dims = dict(f.dynamic_dims)
        for d in f.dynamic_inputs:
            if not d.origin.startswith("automatic") or gt.about_param(d.source):
                continue
            if ":" in d.source.rsplit("]", 1)[-1]:
                out[d.source] = None
            elif dims.get(d.source):
                for dim in dims[d.source]:
                    out[f"{d.source}:{dim}"] = None
            else:
                out[d.source] = None
    return tuple(out)


def advise(diag: Diagnosis, frames: Mapping[tuple[int | None, str], FrameReport]) -> tuple[Advice, ...]:
    """Every suggestion the evidence supports, most useful first.

    Each fix names sources as torch matches them and is tied to what can change that kind of
    input (tensor dims: the allow-list or mark_dynamic; ints: the allow-list; sizes 0/1: the
    unbacked list; floats and code that specializes a value: no list helps). A fix that
    cannot lower the compiles is not printed (tests/integration/test_advice.py applies each).
    """
    pins = size_pins(diag)
    out: list[Advice] = []
    out += _compile_crashes(diag)  # the program stopped there: before what it would cost
    out += size_changes.mark_dynamic_up_front(diag, pins)
    out += size_changes.marking_changes(diag)
    out += size_changes.marked_static(diag)
    out += specializations(diag)
    out += _scalars(diag)
    out += _static_module_state(diag)
    out += size_changes.zero_one(diag)
    out += _duck_sizing(diag)
    out += _others(diag)
    out += limit_findings(diag, {a.rank for a in out if a.kind == "size-pinned"})
    out += _unexplained(diag)
    out += _graph_breaks(diag)
    out += _data_dependent(diag)
    out += range_findings(diag)
    out += _guard_errors(diag)
    out += _guard_self_checks(diag)
    out += _mode_skips(diag)
    out += _not_converted(diag)
    out += _loop_skips(diag)
    out += _no_compiled_frames(diag)
    out += compile_metrics.long_compiles(diag)
    return tuple(_absent_apis(_for_release(a, diag.releases), diag.releases)
                 for a in _listed_together(out, diag.releases))


# APIs a fix may name in its text that torch 2.0 lacks (releases.FIRST, each read in the 2.1.0
# and 2.0.1 wheels), by how the text names them; and what 2.0 has instead, where it has one:
# its graph breaks are printed by torch._dynamo.config.print_graph_breaks (2.0.1 config.py:98),
# its recompiles by no switch (its limit warning names the last reason only)
_NAMED_IN_FIX = (("TORCH_LOGS=", "TORCH_LOGS", "torch._dynamo.config.print_graph_breaks = True "
                  "prints its graph breaks; what else it names needs a later torch"),
                 ("torch._check(", "torch._check", ""), ("torch._check ", "torch._check", ""),
                 ("mark_static(", "mark_static", ""))


def _absent_apis(a: Advice, known: Releases | None) -> Advice:
    """A fix that names an API none of the log's releases ``known`` has (``releases.named``
    None: torch 2.0's log told TORCH_LOGS, torch._check, mark_static), with that said after
    it, once per API, and what the release has instead where it has something."""
    if known is None or not a.fix:
        return a
    said: list[str] = []
    for text, api, instead in _NAMED_IN_FIX:
        if text in a.fix and named(api, known) is None and api not in said:
            said.append(api)
            a = dataclasses.replace(a, fix=(
                f"{a.fix}  [the log's {known.text} has no {api} (torch 2.{FIRST[api]}'s)"
                + (f"; there {instead}]" if instead else "]")))
    return a


def _for_release(a: Advice, known: Releases | None) -> Advice:
    """A fix that names TORCH_COMPILE_DYNAMIC_SOURCES, for the releases the log is known to
    come from (``known``; releases.FIRST): where none of them has the setting (before 2.7),
    the call the fix names in code first (2.1 on; torch 2.0 has no mark either: dynamic=True)
    and the list after it, for a later torch, or the list said so; where all read ``:N``, as
    it is; else with the form torch before 2.13 reads (``_before_per_dim``)."""
    if not a.fix or f"{_LISTS}=" not in a.fix:
        return a
    if known is not None and known.has(_LISTS) is False:
        listed, cut, rest = a.fix.partition(IN_CODE)
        code = rest[:-1] if cut and rest.endswith(")") and a.fix.startswith(f"{_LISTS}=") else ""
        if not code:
            listed = a.fix
        mark = next((m for m in _MARKS if f"{m}(" in code), "")
        return dataclasses.replace(a, fix=listed_fix(_LISTS, listed, code, (), known, mark,
                                                     EVERY_SIZE))
    per_dim = known.has(PER_DIM_ENTRIES) if known is not None else None
    return a if per_dim else _before_per_dim(a, known if per_dim is False else None)


_LISTS = "TORCH_COMPILE_DYNAMIC_SOURCES"
_MARKS = ("maybe_mark_dynamic", "mark_dynamic")  # the calls a listed fix names in code (2.1's)


def _before_per_dim(a: Advice, known: Releases | None = None) -> Advice:
    """A listed fix whose entries name a dim (``L['x']:1``, ``.*:1``), with the form torch
    before 2.13 reads: 2.11's and 2.12's ``is_dynamic_source`` match an entry against the whole
    input's name, so ``:1`` matches nothing and the list does nothing (read in their
    variables/builder.py; 2.13 added the dim); an entry without it makes every dim of the
    input dynamic there. Applied on 2.11 and 2.15 (tests/integration/test_per_dim_sources.py).
    ``known``: the log's releases, none of which reads ``:N``."""
    if not a.listed or not any(has_dim(e) for e in a.entries) or not a.fix:
        return a
    whole = list(dict.fromkeys(without_dim(e) for e in a.entries))
    every = " (every dim of every input, as dynamic=True)" if ".*" in whole else \
        " (every dim of those inputs)"
    said = (f"the log's {known.text} reads no list entry's ':N' (torch {PER_DIM} does); there"
            if known is not None else
            f"a list entry's ':N' needs torch {PER_DIM}; before it, ':N' matches nothing")
    return dataclasses.replace(a, fix=(
        f"{a.fix}  [{said}: TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(','.join(whole))}{every}]"))


def _listed_together(found: list[Advice], known: Releases | None = None) -> list[Advice]:
    """Every listed entry of a rank in each listed fix: TORCH_COMPILE_DYNAMIC_SOURCES is one
    list, and inputs that change in the same calls must be dynamic together. A batch that
    grows beside an int that changes (``if n == 33``) recompiles for the int with ``L['x']:0``
    alone and for the batch with ``L['n']`` alone (3 compiles either way); torch's own hint
    lists both and takes it to 2 (issue 33, pattern 9). The mark_dynamic form is dropped where
    the list holds more than the tensor dims it marks. ``known``: the log's releases."""
    union: dict[int | None, dict[str, None]] = {}
    for a in found:
        if a.listed:
            union.setdefault(a.rank, {}).update(dict.fromkeys(a.entries))
    out = []
    for a in found:
        every = tuple(union.get(a.rank, ()))
        if a.listed and len(every) > len(a.entries):
            others = ", ".join(e for e in every if e not in a.entries)
            attrs = [e for e in every if is_attribute(e)]
            a = dataclasses.replace(
                a, entries=every,
                fix=f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(','.join(every))}" + (
                    f"; {', '.join(attrs)}: {_module_int(known)}" if attrs else ""),
                message=a.message + f" Listed with {others}: they change in the same run, and "
                        "one list makes them dynamic together (either alone leaves the other's "
                        "recompiles; torch's own hint, where it prints one, lists them "
                        "together too).")
        out.append(a)
    return out


def _num(compile_id: str) -> int:
    """The compile number of a compile id's text (0 when it is not one)."""
    cid = CompileId.parse(compile_id)
    return cid.compile or 0 if cid else 0


# What a dynamic-sources entry does for an int attribute of a module, said once.
# (allow_unspec_int_on_nn_module = True, the hint torch 2.15 attaches to such a guard, makes
# it dynamic too, but only after one more recompile: run on module_int_attr, 2 compiles
# against the entry's 1; so it is named in the message, not offered as the fix)
def _module_int(known: Releases | None) -> str:
    """``known``: the log's releases (how the limit is raised on every thread in them)."""
    return ("the entry makes it a symbol from the first compile, but code that branches on "
            "it or indexes with it (a layer's index into a cache) specializes it again, one "
            "compile per value as now: then compile the model once rather than each module, "
            "or raise the recompile limit to the number of values"
            + guard_kinds.on_every_thread("recompile_limit", known))


def _scalars(diag: Diagnosis) -> list[Advice]:
    groups: dict[tuple[int | None, str, str], list[tuple[RecompileReport, str, str]]] = {}
    for r in diag.recompiles:
        if r.cause != "scalar":
            continue
        for x in r.reasons:
            failed, rest = gt.split_failed(x)
            text = gt.guard_text(rest)
            name = gt.compared(text)[0]
            if gt.classify(text) == "scalar" and name:
                groups.setdefault((r.rank, r.function, name), []).append((r, failed, text))
    specialized: dict[str, set[str]] = {}
    for sp in diag.specializations:
        for src in sp.sources:
            specialized.setdefault(src, set()).add(sp.compile_id)
    out = []
    for (rank, function, name), items in groups.items():
        recs = list({id(r): r for r, _, _ in items}.values())
        first = items[0][2]
        source = from_reason(name)
        value = gt.compared(first)[-1]
        # Specialized at two values or more after automatic dynamic had its chance: the code
        # pins every value (``range(n)``), and no list helps. At one value (``if n == 33``)
        # the list still saves the first recompile. (Module ints are static by default: a
        # repeated guard on them says nothing.)
        later = {t for _, failed, t in items if _num(failed) >= 1}
        # A ``recompiles`` log shows no specializations: a guard on the value failing in a
        # compile after the first (made once torch had seen it change, so with the int dynamic)
        # means the code specialized it there, at one value (``if n == 33``: the list saves a
        # compile) or at every value (``range(n)``: it saves none). The log cannot tell which.
        coarse = diag.log_level in ("recompiles", "warnings") and bool(later)
        again = len(specialized.get(source, ())) >= 2 or (
            not is_attribute(source) and (len(later) >= 2 or coarse))
        listed = richer = False
        if gt.is_float(value) and (optim := guard_kinds.optimizer_fix(source)) is not None:
            fix = optim
            what = "an optimizer's float hyperparameter"
        elif gt.is_float(value):
            fix = (f"pass it as a 0-d tensor to compile once (every torch release; no "
                   f"allow-list entry changes a float); {guard_kinds.FLOAT_RELEASES}")
            what = "a Python float"
        elif again and coarse and len(specialized.get(source, ())) < 2:
            user = next((r.user for r, _, _ in items if r.user is not None), None)
            at = (f" by `{user.code}` at {location(user)}" if user is not None and user.code
                  else "")
            fix = ("none from this log: its guard failed again in a compile made after it "
                   f"changed, so code specializes it{at} (or dynamic=False keeps it static); at "
                   "every value (a loop over it) no allow-list entry saves a compile, at one "
                   "value (`if n == 33`) it saves one: "
                   'TORCH_LOGS="+dynamic,recompiles,guards" (or TORCH_TRACE) tells which')
            what = "a Python int that the code specializes"
            richer = True
        elif again:
            fix = ("the code specializes it (see the user-specialization suggestion): each value "
                   "compiles again whatever the allow-list says; pass it as a 0-d tensor or "
                   "keep it constant")
            what = "a Python int that the code specializes"
        elif is_attribute(source):  # (transformers#36484, pytorch#127483)
            fix = f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(source)}; {_module_int(diag.releases)}"
            what = ("an int attribute of a module (torch keeps those static by design: it never "
                    "became dynamic by itself; allow_unspec_int_on_nn_module = True would make it "
                    "dynamic after one more recompile)")
            listed = True
        else:
            fix = (f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(source)} to make the int dynamic "
                   "from the first compile")
            what = "a Python int"
            listed = True
        # the input it is about: the name the guard compares (none for ``2 <= n``)
        named = gt.compared_name(first)
        out.append(Advice(
            kind=AdviceKind.SCALAR_RECOMPILE,
            message=f"{function} recompiled {len(recs)}x because {what} changed value ({first}).",
            fix=fix, rank=rank, function=function, key=first,
            entries=(source,) if listed else (from_reason(named),) if named else (),
            listed=listed, needs_richer_log=richer, inputs=(source,),
            evidence=tuple(cite(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3])))
    return out


def _static_module_state(diag: Diagnosis) -> list[Advice]:
    """Parameters whose shape changes: torch keeps them static (force_parameter_static_shapes)."""
    # (a parameter's size only: torch's hint to set the flag follows every failure of a
    # parameter, its dtype, device or requires_grad too, which the flag does not change)
    params = [r for r in diag.recompiles
              if any(gt.about_param(x) and k == gt.Checked.SIZE
                     for x, k in zip(r.reasons, r.kinds, strict=False))]
    if not params:
        return []
    entries: dict[str, None] = {}
    for r in params:
        for x in r.reasons:
            mm = mismatch(x)
            if mm is not None and is_param(mm[0]):
                entries[f"{mm[0]}:{mm[1]}"] = None
    flag = ConfigFlag("force_parameter_static_shapes", "False")
    config = f"{flag} (every parameter may then become dynamic, after one more recompile)"
    return [Advice(
        kind=AdviceKind.STATIC_PARAMETERS, entries=tuple(entries), listed=bool(entries),
        inputs=tuple(entries),
        flag=None if entries else flag,
        message=(f"{len(params)} recompile(s) were caused by parameter/buffer shapes, which torch "
                 "keeps static (force_parameter_static_shapes)."),
        fix=(f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(','.join(entries))}  (or {config})"
             if entries else config),
        evidence=tuple(cite(r.line, r.compile_id, "; ".join(r.reasons)) for r in params[:3]))]


def _duck_sizing(diag: Diagnosis) -> list[Advice]:
    """Recompiles whose failed guard is an equality duck sizing made: two sizes were equal when
    torch compiled, so they got one symbol, and a call where they differ compiles again
    (torch's comment on the guard says so and names the flag; measured on 2.11 and 2.15 with
    dynamic=True, sizes (4, 4), (6, 7), (8, 9): 2 compiles, 1 with the flag off)."""
    by_function: dict[tuple[int | None, str], list[RecompileReport]] = {}
    for r in diag.recompiles:
        if gt.Checked.DUCK in r.kinds:
            by_function.setdefault((r.rank, r.function or "?"), []).append(r)
    out = []
    for (rank, function), recs in by_function.items():
        guards = dict.fromkeys(gt.guard_of(x) for r in recs for x, k in zip(r.reasons, r.kinds, strict=True)
                               if k == gt.Checked.DUCK)
        shown = ", ".join(f"`{g}`" for g in list(guards)[:3])
        out.append(Advice(
            kind=AdviceKind.DUCK_SIZING, rank=rank, function=function, key=function,
            flag=guard_kinds.DUCK_FLAG,
            message=(f"{len(recs)} recompile(s) of {function}: torch assumed {shown} because "
                     "those sizes were equal when it compiled (duck sizing gives equal sizes "
                     "one symbol), and a later call had them differ."),
            fix=(f"{guard_kinds.DUCK_FLAG} before the first compiled call (torch's own hint on this guard): "
                 "equal sizes then get symbols of their own, and calls where they differ run "
                 "the same graph"),
            evidence=tuple(cite(r.line, r.compile_id, "; ".join(r.reasons)) for r in recs[:3])))
    return out


# a parameter's dtype, device, dispatch keys or requires_grad: the module's weights changed
# between calls. torch's hint after it (force_parameter_static_shapes = False) does not apply:
# measured on 2.15 (paste hunt 13's param_hint.py: requires_grad, then dtype), the flag set,
# the same 3 graphs
_PARAM_CHANGED = (", on a parameter: the module's weights changed between calls (moved by "
                  "offloading or a partial load, cast, frozen or unfrozen)")
_PARAM_FIX = ("; keep the module's weights as they are across calls (load it whole rather than "
              "offloading; cast or freeze before compiling). torch's hint to set "
              "force_parameter_static_shapes = False does not apply: that flag makes parameter "
              "sizes dynamic, nothing else")


def _others(diag: Diagnosis) -> list[Advice]:
    """One finding per kind of guard that no dynamic-shape setting covers (issue 33: a stride,
    an object's identity, a type, global state, a Python value, …), each with its fix."""
    by_kind: dict[str, list[RecompileReport]] = {}
    for r in diag.recompiles:
        if r.kind not in guard_kinds.OWN_RULES:
            by_kind.setdefault(r.kind, []).append(r)
    out = []
    for kind, recs in by_kind.items():
        row = guard_kinds.text(kind, (t for r in recs for t in r.reasons), known=diag.releases)
        if kind == gt.Checked.UNKNOWN and all(r.stance for r in recs):
            row = guard_kinds.STANCE_UNKNOWN  # (not a recompile the limit refused)
        elif kind == gt.Checked.UNKNOWN and all(r.refused_by == ERROR_ON_RECOMPILE for r in recs):
            row = guard_kinds.ERROR_ON_RECOMPILE_UNKNOWN
        functions = sorted({r.function or "?" for r in recs})
        weights = all(r.reasons and all(gt.PARAM_HINT in t for t in r.reasons[:1]) for r in recs)
        out.append(Advice(
            kind=AdviceKind.NON_SHAPE, key=kind,
            message=(f"{len(recs)} recompile(s) of {', '.join(functions)}: {row.what}"
                     + (_PARAM_CHANGED if weights else "")
                     + (f"; {row.dynamic}." if row.dynamic else ".")),
            fix=row.fix + (_PARAM_FIX if weights else ""),
            evidence=tuple(cite(r.line, r.compile_id, "; ".join(r.reasons) or (
                "(torch's reason is empty)" if kind == gt.Checked.NO_GUARD else "(no reason)"))
                for r in recs[:3])))
    return out


def _unexplained(diag: Diagnosis) -> list[Advice]:
    """Recompiles the compile ids prove (``[0/1]`` … ``[0/9]``) in an input with no recompile
    record and no limit warning (a +dynamic or guards log, a paste from the middle of a run:
    pytorch#111329): said as recompiles whose reason the log lacks, with the log that prints
    it, never "nothing to fix". Where dynamo's records prove none of them, only the compile ids
    of the backend's (inductor's autotuning at ``[15/4]``, pytorch#150980; its "Not enough SMs"
    at ``[18/4]``), it is a note: such a log is not a recompile log, and the count does not say
    whether the compiles are the program's design (a graph per batch size) or a cost."""
    # a log with any recompile record or limit warning is a recompiles log whose paste cut
    # some records off, whose records name no compile id, or whose other ranks' reasons are
    # this rank's too (pytorch-138813): not said there
    if diag.recompiles or diag.recompile_limits:
        return []
    out = []
    for f in diag.frames:
        # automatic dynamic's "[0/1] marking L['x'] as dynamic (from automatic dynamic/PGO)":
        # torch logs it (pgo.py's update_automatic_dynamic) where the input's size, stride or
        # value differs from what an earlier compile of the frame recorded, so it is that
        # compile's reason (the mark-dynamic finding says it), not an unexplained one
        explained = sum(1 for c in f.marking_compiles if c in f.compile_ids[1:])
        if f.compiles - explained < 2:
            continue
        n = f.compiles - 1 - explained
        # (what the dynamo records alone prove: no recompile of their own, a note)
        note = f.compiles - f.backend_proven - explained < 2
        who = (f"{f.function} (frame {f.frame_id})" if f.function and f.function != "?"
               else f"frame {f.frame_id}")
        ids = [c for c in f.compile_ids if "/" in c]
        shown = (", ".join(f"[{c}]" for c in ids) if len(ids) <= 2 else f"[{ids[0]}] … [{ids[-1]}]")
        least = "at least " if f.at_least or diag.partial else ""
        out.append(Advice(
            kind=AdviceKind.UNEXPLAINED, function=f.function, frame=f.frame_id, rank=f.rank,
            key=f"{f.rank}:{f.frame_id}", note=note,
            message=(f"{who} compiled {least}{f.compiles} times: its compile ids prove {least}"
                     f"{n} recompile(s)" + (f" besides the {explained} automatic dynamic's "
                                            "markings explain" if explained else "")
                     + ", but the input holds no reason for any of them (no "
                     "recompile record, no recompile-limit warning)."
                     + (" Only inductor's records carry those ids (its autotuning, a kernel's "
                        "compile, its graph partitions), none of dynamo's: they prove the "
                        "compiles, not whether they are the program's design (one graph per "
                        "size) or a cost to fix."
                        if note else "")),
            fix=('rerun with TORCH_LOGS="recompiles" (torch prints the guard that failed at '
                 'every recompile; "recompiles_verbose" prints every failed guard), then fix '
                 "what it names"),
            evidence=(f"compile ids {shown}: {f.compiles} compile(s) of frame {f.frame_id}",)))
    return out


_DDE_WHAT = {"guard": "could not decide", "int": "needed a concrete integer for",
             "evaluate": "failed evaluating", "symbol": "could not decide an expression over"}
# what tells torch a value's range: torch._check (2.1-2.15); torch stopped suggesting
# torch._check_is_size (pytorch#164664), so a size is torch._check(n >= 0) too
CHECK_VALUE = ("torch._check(...) what you know of it (an index: torch._check(i >= 0), "
          "torch._check(i < x.size(0)); a size: torch._check(n >= 0))")


_GENERATED = ("<eval_with_key>", "<string>")  # file names of code nobody can edit
_HOOK_RE = re.compile(r"(?:^|/)_export/non_strict_utils\.py:\d{1,9} in __torch_function__$")


def _data_dependent(diag: Diagnosis) -> list[Advice]:
    """A data-dependent error (textdde): the expression torch could not decide, where it
    asked, and what tells torch the value's range (torch._check) or avoids needing it."""
    out = []
    for x in diag.data_dependent_errors:
        symbols = sorted(unbacked_in(x.expr),
                         key=lambda u: (u.rstrip("0123456789"), int(u.lstrip("fiuz"))))
        values = (f"{', '.join(symbols)} {'is a value' if len(symbols) == 1 else 'are values'}"
                  if symbols else "its symbols are values")
        # non-strict export's __torch_function__ hook sees every torch call the traced code
        # makes, and torch names it where the call came from that code (pytorch#153955): the
        # question is the caller's, one frame above it, not torch's own
        hooked = bool(_HOOK_RE.search(x.culprit.replace("\\", "/")))
        own = bool(x.culprit) and is_torch_location(x.culprit) and not hooked
        # FX's generated code (`# <eval_with_key>.1057:23 in forward`: a graph module torch
        # traced and runs, pytorch#157355) is nobody's line to edit: the frame that asked is
        # either, nor `File "<string>", line 1, in <lambda>` (code exec'd from a string: the
        # non-strict export call pytorch#167063's torch.onnx.export names as the user's)
        user = x.user if x.user is not None and not x.user.file.startswith(_GENERATED) \
            else None
        where = (f" in {x.op}'s meta" if x.op else "") + (
            f"; it asked at {x.culprit}" + (" (torch's own code)" if own else "")
            + (" (non-strict export's hook around a torch call of the traced code: the call "
               "is in the frame above it, your code's or a library's)" if hooked else "")
            if x.culprit else "")
        during = f" while compiling [{x.compile_id}]" if x.compile_id else ""
        check = CHECK_VALUE
        # the line that needs the value: the user's, where torch's message names one, else
        # the frame that asked where it is not torch's own (non-strict export runs user code)
        at = (f"your code at {user.file}:{user.line}"
              + (f" (`{user.code}`)" if user.code else "") if user is not None
              else f"the code at {x.culprit.split(' in ')[0]}"
              if x.culprit and not own and not hooked else "")
        # torch's allocation stack is Python's: under dynamo its last frame outside torch is
        # the call into the compiled code (the traced lines are not Python frames there);
        # under non-strict export, the line itself
        made = (f"; the value was made under the call at {x.made.file}:{x.made.line}"
                + (f" (`{x.made.code}`)" if x.made.code else "")
                + ", the last frame outside torch in torch's allocation stack"
                if x.made is not None else "")
        if x.checks:
            # torch.export's own answer: its checks, the condition and its negation, with the
            # user's names for the symbols (symbolic_shapes._suggest_torch_checks)
            fix = (f"insert before {at or 'the call torch names'} the one of torch's own "
                   f"suggested checks that holds for your data: {' or '.join(x.checks)} "
                   "(export's answer: it then traces the branch that check decides)")
        elif at:
            fix = (f"{at} needs the value itself: {check} before that line, torch.cond for a "
                   "branch on it, or keep the computation on tensors")
        elif x.made is not None:
            fix = (f"tell torch what the value allows right after the .item()/.tolist()/"
                   f"nonzero() that makes it (in the code that {x.made.file}:{x.made.line} "
                   f"runs): {check}; or keep the computation on tensors "
                   '(TORCH_LOGS="+dynamic" prints the expression and the line that needs it)')
        else:
            fix = (f"tell torch what the value allows where your code reads it: {check} right "
                   "after the .item()/.tolist(), or keep the computation on tensors (index with "
                   "the tensor, not its .item())"
                   + (f"; the question was torch's own ({x.culprit}): where a torch._check does "
                      "not reach it, report it to torch with this error" if own else ""))
        if x.hint:
            fix += (f"; torch's own message names {x.hint} for the code that asked"
                    + (f" ({x.culprit})" if x.culprit else "") + ": that is framework code (a "
                    "custom op's fake or meta kernel, or torch's own), where it fits only if "
                    "that code is yours to change")
        said = (f"torch {_DDE_WHAT.get(x.what, 'could not decide')} `{x.expr}`{during}: a "
                f"data-dependent expression ({values} read from a tensor's data: .item(), "
                f".tolist(), nonzero(), a boolean mask){where}{made}." if x.expr else
                f"torch raised a data-dependent error{during} (its exportdb link, "
                "#constrain-as-size-example, is the one torch gives a "
                "GuardOnDataDependentSymNode); the paste cut its message, and with it the "
                + (f"expression; {at}, where dynamo's `from user code:` stack under it ends, is "
                   "the line that needs the value" if user is not None and not x.culprit else
                   "expression (dynamo's `from user code:` stack under it, where the paste has "
                   "it, ends at the line that needs the value)") + f"{where}{made}.")
        if not x.expr and not x.checks:
            # (where the user's line is known, the message is wanted for its expression only)
            names = ("names the expression" if user is not None else
                     "and 'Caused by' name the expression and the line")
            fix = ("paste the error's message whole (its 'Could not guard on data-dependent "
                   f"expression …' {names}), or rerun with TORCH_LOGS=\"+dynamic\"; "
                   + ("" if user is not None else "the fix is at that line: ") + fix)
        if not x.raised:
            # torch's log of the failed call alone (recording.py's record, symbolic_shapes'
            # warning): logged, then re-raised to the code that asked, which may catch it
            said = said.replace("torch failed evaluating", "torch logged that it failed "
                                "evaluating", 1) + (
                " Nothing after it in the log shows that error leave torch (no traceback, no "
                "error message of its own): torch logs such a failure and re-raises it to the "
                "code that asked, which may catch it and go on; up to torch 2.7 or so it logs "
                "failures it handles too (pytorch#134421: export trying an operator's "
                "overloads). Not a cause unless the run stopped on it.")
            fix = ("nothing, where the run went on. Where it stopped on this error "
                   "(GuardOnDataDependentSymNode, its message after this record): " + fix)
        out.append(Advice(
            kind=AdviceKind.DATA_DEPENDENT, rank=x.rank, key=f"{x.compile_id}:{x.expr}",
            note=not x.raised, message=said,
            fix=fix,
            sites=sites_of(user or x.made),
            evidence=(cite(x.line, x.compile_id, f"Data dependent variable '{x.expr}' allocated "
                           "at" if x.what == "symbol" else x.expr or
                           "exportdb#constrain-as-size-example"),)))
    return out


def _mode_skips(diag: Diagnosis) -> list[Advice]:
    """A function torch.compile never compiled in the log because its first calls came under a
    TorchDispatchMode (FlopCounterMode, a debugging or profiling mode): dynamo skips such a
    frame, and torch 2.11 keeps the skip on the code object, so the calls after the mode ran
    eagerly too (pytorch#186085; 2.14.1 and 2.15 compile them). Run here (tests/integration/
    test_diagnose_capture.py): 2.11 compiled 0 frames, 1 with a call outside the mode first."""
    out = []
    for rank, fn, file, n, line in diag.mode_skips:
        if any(f.rank == rank and f.function == fn and f.compiles
               and (not f.file or not file or f.file == file) for f in diag.frames):
            continue  # compiled in this log after all: the skipped calls cost nothing lasting
        out.append(Advice(
            kind=AdviceKind.MODE_SKIP, rank=rank, function=fn, key=f"{fn}:{file}",
            message=(f"{fn} ({file}) was never compiled in this log: torch.compile skipped it "
                     f"{n} time(s) because a TorchDispatchMode was active (FlopCounterMode, a "
                     "debugging or profiling mode), and torch 2.11 keeps that skip for every "
                     "later call, outside the mode too (pytorch#186085; 2.14 and 2.15 do not)."),
            fix=(f"call the compiled {fn} once outside the mode before the calls under it "
                 "(torch then compiles it, and the calls outside the mode use that), or use "
                 "torch 2.14 or later"),
            evidence=(cite(line, "", f"skipping: {fn} (non-infra torch dispatch mode)"),)))
    return out


def _not_converted(diag: Diagnosis) -> list[Advice]:
    """A frame torch gave up compiling (``WON'T CONVERT``): its compile raised and torch
    suppressed the error, so the frame runs eagerly; run here (tests/integration/
    test_diagnose_capture.py): a backend that fails on the graph after a break."""
    out = []
    for x in diag.not_converted:
        # (a record whose head the paste cut names the frame by its user stack: no first line)
        where = (f"{x.file}:{x.first_line}" if x.file and x.first_line is not None
                 else x.file or "its file is not in the log")
        name = x.function if x.function != "?" else "a frame whose name the paste cut"
        why = (f"its compile raised {x.error}" if x.error else
               f"its compile raised{' in ' + x.raised_in if x.raised_in else ''} (the error is "
               "past the end of the paste)")
        out.append(Advice(
            kind=AdviceKind.NOT_CONVERTED, rank=x.rank, function=x.function,
            key=f"{x.function}:{x.file}:{x.first_line}",
            message=(f"{name} ({where}) is not compiled: {why}, and torch ran it eagerly "
                     "instead of failing (torch._dynamo.config.suppress_errors, or an "
                     f"unsupported construct torch treats as a soft failure)"
                     + (f"; {x.count} times" if x.count > 1 else "") + "."),
            fix=("fix what the error names (a failing backend, an unsupported construct), then "
                 "check that the frame compiles with torch._dynamo.config.suppress_errors = "
                 "False, which raises the error where it happens"
                 if x.error else
                 "paste the record past 'due to:' (the traceback ends in the error), or run with "
                 "torch._dynamo.config.suppress_errors = False to raise it"),
            evidence=(cite(x.line, x.compile_id, f"WON'T CONVERT {x.function} {x.file} line "
                                                 f"{x.first_line}") if x.first_line is not None
                      else cite(x.line, x.compile_id, f"{x.error[:160]} (a WON'T CONVERT "
                                                      "record whose head the paste cut)"),)))
    return out


def _loop_skips(diag: Diagnosis) -> list[Advice]:
    """A frame dynamo skipped because a graph break happened inside one of its loops (torch
    2.0-2.10's INFO record; pytorch#88857 made a break in a loop skip the frame, so that a loop
    of N breaks is not N compiles): the whole frame runs eagerly. The break is the cause: its
    record (graph_breaks) names why; a loop body in a function of its own is compiled on each
    call while the loop around it runs eagerly (pytorch#88857's own reasoning). Applied in
    tests/integration/test_loop_skip_fix.py."""
    out = []
    for x in diag.loop_skips:
        name = x.function or "a frame the record does not name"
        where = f" ({x.file})" if x.file else ""
        at = (f" at {x.file}:{x.user_line}" if x.file and x.user_line is not None
              else " (the record names neither the frame nor the line: its frame summary came "
              "with pytorch#100045, in 2.1)" if not x.file else "")
        out.append(Advice(
            kind=AdviceKind.LOOP_SKIP, rank=x.rank, function=x.function,
            key=f"{x.function}:{x.file}:{x.user_line}",
            sites=(Site(x.file, x.user_line),) if x.file and x.user_line else (),
            message=(f"{name}{where} runs eagerly: torch found a graph break inside one of its "
                     f"for/while loops{at} and skipped the whole frame, since it cannot resume a "
                     "frame in the middle of a loop; nothing of that frame is compiled"
                     + (f" ({x.count} times)" if x.count > 1 else "") + "."),
            fix=(("remove the graph break the same record names first (its own finding has its "
                  "fix)" if x.chained else
                  'remove that graph break: TORCH_LOGS="graph_breaks" prints its reason and the '
                  "user code that reached it (this record names only the frame), and its own fix "
                  "applies")
                 + "; where the break must stay, move the loop's body into a function of its "
                 "own: torch then compiles that function on each call and breaks there, while "
                 "only the loop around it runs eagerly"),
            evidence=(cite(x.line, x.compile_id, (
                f"{LOOP_GB}: frame skipped: {x.function} ({x.file} line {x.first_line})"
                if x.chained else LOOP_SKIP + (f" ({x.file}:{x.user_line} in {x.function})"
                                               if x.file and x.user_line is not None else ""))),)))
    return out


# torch's reasons for skipping a frame (convert_frame.py, 2.15) -> what to do about it
_SKIP_FIXES = {
    # config.disable: TORCH_COMPILE_DISABLE=1. TORCHDYNAMO_DISABLE=1 makes torch.compile return
    # the function itself (eval_frame.optimize's _NullDecorator): run here, 2.14.1 and 2.15
    # raise for the first and not the second (tests/integration/test_diagnose_capture.py)
    "Dynamo tracing is disabled": (
        "TORCH_COMPILE_DISABLE=1 (torch._dynamo.config.disable) is set, and under "
        "fullgraph=True torch raises for the frames it then skips (pytorch#181247; 2.12.0 "
        "warned): turn compiling off with TORCHDYNAMO_DISABLE=1 instead (torch.compile then "
        "returns the function unchanged), or unset it"),
    "non-infra torch dispatch mode present": (
        "call the compiled function outside the TorchDispatchMode (FlopCounterMode, a "
        "debugging or profiling mode), or compile it without fullgraph=True"),
    "frame is in the Dynamo skipfiles list": (
        "torch skips that file (its own code, or a library on its skip list): compile a "
        "function of yours that calls it"),
    "no tensor-related objects found in frame": (
        "the function has no tensor for torch to compile: pass its tensors as arguments, or "
        "do not compile it"),
    "an error was suppressed during compilation": (
        "the WON'T CONVERT warning before it names the error "
        "(torch._dynamo.config.suppress_errors = False raises it)"),
}


def _no_compiled_frames(diag: Diagnosis) -> list[Advice]:
    """A fullgraph call that compiled no frame: torch (2.12 on) raises, naming the frames it
    skipped and why; the fix is the skip's."""
    out = []
    for x in diag.no_compiled_frames:
        skipped = "; ".join(f"{fn} ({file}:{first}) was skipped: {why}"
                            for fn, file, first, why in x.skipped)
        fixes = list(dict.fromkeys(
            next((fix for head, fix in _SKIP_FIXES.items() if why.startswith(head)),
                 f"torch's reason is {why!r}; without fullgraph=True the call runs eagerly")
            for _, _, _, why in x.skipped))
        out.append(Advice(
            kind=AdviceKind.NO_COMPILED_FRAMES, rank=x.rank,
            key=";".join(f"{fn}:{file}:{first}" for fn, file, first, _ in x.skipped),
            sites=tuple(Site(file, first) for _, file, first, _ in x.skipped if file),
            message=("torch.compile(fullgraph=True) compiled no frame of the call and raised: "
                     + (skipped or "the message names no skipped frame") + "."),
            fix="; ".join(fixes) if fixes else (
                'TORCH_LOGS="+dynamo" prints why each frame was skipped ("skipping: f (reason: '
                '…)"); where TORCH_COMPILE_DISABLE=1 is set, TORCHDYNAMO_DISABLE=1 turns '
                "compiling off without this error (pytorch#181247)"),
            evidence=(cite(x.line, "", "torch.compile with fullgraph=True found no compiled "
                                       "frames"),)))
    return out


# torch 2.2-2.6's NN_MODULE guard (guards.py): a module without ``.training`` (one whose
# __init__ had not run when torch traced it: Lightning's _ResultMetric, pytorch#120932) is
# exc.unimplemented("Guard setup for uninitialized class …"), a soft failure torch logs at
# ERROR and then gives up on the frame quietly (the reason at INFO only); gone in 2.11
_NN_MODULE_GUARD = (" For a module's guard (NN_MODULE) that is torch 2.2-2.6's 'Guard setup for "
                    "uninitialized class': the module had no .training (built, or its __init__ "
                    "not run, while torch traced; the Object Weakref line names its class), and "
                    "torch then runs the frame eagerly without raising: nothing further is in "
                    "the log (torch's maintainers call it benign).")
_NN_MODULE_FIX = ("nothing to do unless that frame should be compiled: then create the module "
                  "before the compiled call (not inside it), or use torch 2.11 or later, which "
                  "no longer guards a module this way; TORCH_LOGS=\"+dynamo\" prints the frame "
                  "torch gave up on")


# what failing to make the shape guards (SHAPE_ENV, produce_guards) almost always is: its
# ConstraintViolationError (2.15 symbolic_shapes.py produce_guards_verbose raises it at its end
# for every violated constraint; export's non_strict_utils re-raises it)
_SHAPE_GUARDS_CAUSE = (
    "usually 'Constraints violated': a size marked dynamic (mark_dynamic, export's "
    "dynamic_shapes, or the framework that compiles the model) that code specialized, or "
    "whose example input had size 0 or 1; TORCH_LOGS=\"+dynamic\" prints the line that "
    "specialized it")
# the functions a traceback cut there was making shape guards in: ShapeEnv.produce_guards
# (and 2.6 on produce_guards_verbose), dynamo's SHAPE_ENV guard (guards.py) that calls it
_SHAPE_GUARD_FNS = frozenset({"produce_guards", "produce_guards_verbose", "SHAPE_ENV"})


def _guard_errors(diag: Diagnosis) -> list[Advice]:
    """A compile that failed making its guards (``Error while creating guard``): for the shape
    guards (SHAPE_ENV) almost always a ConstraintViolationError, read as such where the log
    has it (its constraint-violation finding); here the paste stopped before it."""
    out = []
    for rank, cid, made, line in diag.guard_errors:
        shapes = made == "SHAPE_ENV"
        what = "its shape guards (SHAPE_ENV)" if shapes else f"a guard ({made or 'unnamed'})"
        pinned = next((x for x in diag.specializations if x.rank == rank and x.user is not None
                       and x.compile_id.split("_")[0] == cid.split("_")[0]), None)
        seen = (f"; in this compile {', '.join(pinned.sources) or pinned.symbol} was specialized "
                f"to {pinned.value} at {location(pinned.user)}, the likely size"
                if shapes and pinned is not None else "")
        module = made == "NN_MODULE"
        out.append(Advice(
            kind=AdviceKind.GUARD_ERROR, rank=rank, key=f"{cid}:{made}",
            message=(f"compile [{cid or '?'}] failed making {what}: torch logged 'Error while "
                     "creating guard', and the error it raised is not in the log."
                     + (_NN_MODULE_GUARD if module else "")),
            fix=((f"torch's error after it names the cause, {_SHAPE_GUARDS_CAUSE}" + seen)
                 if shapes else _NN_MODULE_FIX if module else
                 "torch's error after it names the cause: paste the log past it"),
            evidence=(cite(line, cid, f"Error while creating guard: Create Function: {made}"),)))
    return out


# a guard on the state of a TorchFunctionMode active around the compiled call: the mode's own
# __torch_function__, which torch ran while it compiled and built guards, changed it
# (pytorch#172088: a counter on the mode, a Jan 2026 nightly; pytorch#165012: DebugMode's
# operators list, 2.10 dev). torch's bug: pytorch#177095 (March 2026) keeps modes from
# dispatching during the compile; 2.15 compiles pytorch#172088's program
# (tests/integration/test_mode_self_check_fix.py)
_MODE_GUARD = "___get_torch_function_mode_stack_at("
_MODE_SELF_CHECK_FIX = (
    "the guard is on the state of a TorchFunctionMode active around the compiled call, which "
    "its own __torch_function__ changed as torch ran it while compiling (torch's bug, "
    "pytorch#172088, fixed by pytorch#177095 of March 2026: torch 2.15 compiles such a mode's "
    "program): a newer torch; on the torch that raised, run that call uncompiled under the "
    "mode (torch.compiler.disable), or report it to torch with the log")


def _guard_self_checks(diag: Diagnosis) -> list[Advice]:
    """A compile whose guards failed on the frame they were made from (torch's AssertionError,
    "This is a bug"): what a guard checks changed between the moment torch read it while
    tracing and the end of the compile, so the compile raised (ComfyUI-SeedVR2#427: a
    quantized weight of 2560, then 2720, under a block swap). Not a recompile: torch's
    parameter hint, which it appends to any parameter's size guard, is not the fix. A guard
    on a TorchFunctionMode's state: torch ran the mode while compiling (_MODE_SELF_CHECK_FIX)."""
    return [Advice(
        kind=AdviceKind.GUARD_SELF_CHECK, rank=x.rank, key=f"self-check:{x.entry}:{x.reason}",
        message=(f"compile [{x.entry or '?'}] raised: its guards failed on the very frame they "
                 "were made from, which torch calls a bug. The guard: "
                 f"{x.reason.rstrip('.') or 'not in the log'}. What it checks changed while "
                 "torch compiled the frame (a tensor replaced or resized by code that ran during "
                 "the compile), or torch made a guard that cannot hold."),
        fix=(_MODE_SELF_CHECK_FIX if _MODE_GUARD in x.reason else
             "change what the guard names (swap, load, resize the tensor) before the compiled "
             "call, not in code torch runs while it compiles (an assume_constant_result "
             "function, a tensor subclass's or a loader's hook); if nothing changes it, report "
             "it to torch with the log, as its message asks. torch's parameter hint in the "
             "message is its text for recompiles and does not address this"),
        evidence=(cite(x.line, "", f"Guard failed on the same frame it was created: "
                                   f"{x.entry + ': ' if x.entry else ''}{x.reason}"),))
        for x in diag.guard_self_checks]


# the backends torch ships (torch._dynamo.list_backends(exclude_tags=()), 2.0 to 2.15): a
# BackendCompilerFailed of another is that backend's failure, not torch's
_TORCH_BACKENDS = frozenset({"inductor", "aot_eager", "eager", "aot_eager_decomp_partition",
                             "aot_eager_default_partitioner", "cudagraphs", "aot_ts_nvfuser",
                             "nvprims_nvfuser", "aot_ts", "aot_cudagraphs", "ts",
                             "aot_inductor_debug",
                             "compile_fn"})  # (DDPOptimizer's wrapper of the backend under DDP)
_BACKEND_RE = re.compile(r"backend='(?P<name>[^']{1,200})' raised")
# torch.compile hands a backend other than inductor its mode= and options= as keyword arguments
# (torch/__init__.py's _TorchCompileWrapper: self.kwargs["mode"] unless "default"), and a
# backend that takes none raises TypeError: "CudagraphsBackend.__call__() got an unexpected
# keyword argument 'mode'" (the cudagraphs backend until pytorch#182989, May 2026; 2.14.1's and
# 2.15's warn "cudagraphs backend ignoring extra kwargs" instead: textnotes), or a custom
# backend function's "my_backend() got …" (WanVideoWrapper#1041, pytorch#169939)
_BACKEND_KWARG_RE = re.compile(r"(?P<fn>[\w.<>]{1,200})\(\) got an unexpected keyword argument "
                               r"'(?P<kw>mode|options)'")


def _backend_kwarg_fix(kw: str, backend: str) -> str:
    """The fix of a backend that raised TypeError on the ``mode``/``options`` torch.compile
    passed it (``backend``: its name in torch's message, "" where the paste lacks it)."""
    named = f"the backend {backend!r}" if backend else "this backend"
    if backend == "cudagraphs":
        return (f"torch.compile passed its {kw}= to the cudagraphs backend, which takes none: "
                "mode=\"reduce-overhead\" (and \"max-autotune\") is inductor's way to CUDA "
                "graphs, and backend=\"cudagraphs\" records CUDA graphs itself, without "
                f"inductor. Drop {kw}= with backend=\"cudagraphs\", or compile with the "
                "default backend and the mode: torch.compile(model, mode=\"reduce-overhead\"). "
                "torch 2.14.1 and 2.15 ignore it with a warning instead (pytorch#182989): there "
                "the mode does nothing either; not a bug of your model")
    return (f"torch.compile passes its {kw}= to a backend other than inductor as a keyword "
            f"argument, and {named} takes none: drop {kw}= with that backend (mode and options "
            "are inductor's), or let the backend take it (a backend function with **kwargs); "
            "not a bug of your model")


# what to do about an error of the machine (textcrash.MACHINE_ERRORS: the kind its words name):
# never torch's bug to report, never fixed by a newer torch alone
_MACHINE_FIX = {
    # (triton-windows#105: the node's author made it fall back; oumi#2549 set cache_size_limit
    # and guarded recompile_limit with hasattr; 2.15's config keeps cache_size_limit as an alias)
    "config-renamed": (
        "this torch is older than 2.7, where recompile_limit was still named cache_size_limit "
        "(and accumulated_recompile_limit accumulated_cache_size_limit): set "
        "torch._dynamo.config.cache_size_limit instead, which every release reads (2.7 on as "
        "an alias), or update torch; where a package sets it (a ComfyUI node), update the "
        "package; nothing was compiled; not a bug to report"),
    # (nnU-Net#2349, TeaCache#40)
    "triton-missing": (
        "inductor needs Triton to compile for the GPU and this Python has none that works: "
        "install the Triton your torch release pins (pip install triton; triton-windows on "
        "Windows), or run without inductor (torch.compile(..., backend=\"aot_eager\"), or "
        "without torch.compile); not a bug to report"),
    "gpu-too-old": (
        "this GPU's CUDA capability is below what Triton supports (7.0), so inductor cannot "
        "compile for it: run without inductor on this machine (torch.compile(..., "
        "backend=\"aot_eager\"), or without torch.compile); not a bug to report"),
    # (WanVideoWrapper#252, #1007, #724; triton-windows#3, #25, #28: the threads' fix)
    "fp8e4nv": (
        "Triton compiles fp8_e4m3fn (its fp8e4nv) only on CUDA arch 8.9 and up (Ada, Hopper), "
        "and this GPU is older (Ampere sm_80/86 or before): on it use fp8_e5m2 or fp16/bf16 "
        "weights, or do not compile the layers that use them; fp8 brings no speed there; "
        "not a bug to report"),
    # (vllm#17018: gcc on Triton's main.c for cuda_utils; triton-windows#156 and #77:
    # "Python.h not found" under an embedded Python; sglang#18644 installs python3-dev)
    "triton-launcher": (
        "Triton could not build its GPU launcher (cuda_utils) with this machine's C compiler: "
        "the compiler's own error, printed above the traceback, names what is missing; "
        "commonly Python's headers (Python.h: install python3.X-dev for this Python, or on "
        "Windows an embedded Python's include and libs folders, as triton-windows' "
        "instructions say), a C compiler (CC names it), or the driver's libcuda.so where the "
        "linker looks (-lcuda); then rerun; or run without inductor meanwhile "
        "(torch.compile(..., backend=\"aot_eager\")); not a bug to report"),
    # (legacy-rocm-build#4499; ROCm/TheRock#2006's fix)
    "rocm-lld": (
        "Triton's AMD backend cannot find ROCm's linker: set TRITON_HIP_LLD_PATH to ROCm's "
        "llvm/bin/ld.lld (export TRITON_HIP_LLD_PATH=\"$(rocm-sdk path --root)/llvm/bin/ld.lld\" "
        "with ROCm's Python packages), or install the pytorch-triton-rocm your torch pins, "
        "which finds it; not a bug to report"),
    # (coreweave/ml-containers#64: pip's triton 2.3.0 under a torch nightly, the thread's fix
    # pinning the one it pinned; Infinity#31, ComfyUI#10485, triton-ascend#2104: a Triton
    # newer than the torch; pytorch#157242 taught 2.9 Triton's new place; fish-speech#541,
    # triton-windows#89: torch 2.3 under Triton 3, the threads' fix a newer torch)
    "triton-version": (
        "the Triton installed is not the one this torch release was built with: torch 2.4-2.8 "
        "import triton_key from triton.compiler.compiler, which Triton 2.3 does not have and "
        "Triton releases from mid-2025 moved (torch 2.9 reads both places), and torch 2.3 "
        "imports triton.common, which Triton 3.0 removed. Install the Triton version your torch "
        "pins "
        "(each torch wheel requires one: " + pins_text() + "; nightlies: pytorch-triton; "
        "pip check names the mismatch where pip installed torch; on Windows, the "
        "triton-windows release made for your torch), or a torch release made for this "
        "Triton; not a bug to report"),
    # (triton-windows#48, #47, #49 on CUDA 12.8: the maintainer's fix, a triton-windows release
    # that knows it; triton-lang/triton#5765 and 3.3 for 12.7-12.8, #8925 for 13.x)
    "triton-cuda-version": (
        "the Triton installed does not know the CUDA version of the ptxas it compiles with "
        "(its message names that version; Triton 3.2 stops at CUDA 12.6, releases before "
        "CUDA 13 at 12.x): Triton takes ptxas from TRITON_PTXAS_PATH where it is set, else the "
        "one its package provides (a build that bundles none, conda-forge's among them, uses "
        "the machine's CUDA toolkit, triton-lang/triton#5737). Install a Triton release that knows this "
        "CUDA (3.3 or newer for 12.7-12.8; on Windows, a newer triton-windows release), or set "
        "TRITON_PTXAS_PATH to the ptxas of a CUDA version this Triton knows; not a bug to "
        "report"),
    # (pytorch#125254: inductor's "Device mps not supported"; 2.7's codegen/mps.py is the
    # first MPS backend, 2.8 the release that announces it)
    "no-mps": (
        "inductor cannot compile for MPS in this torch (it has no MPS backend before 2.7; "
        "2.8 is the release that supports it): use torch.compile(..., backend=\"aot_eager\") "
        "on the Mac, or torch >= 2.8, or no torch.compile there; not a bug to report"),
    # (pytorch#96976: torch 2.0 on a Mac, inductor compiling for a device this torch lacks)
    "no-cuda": (
        "this torch has no CUDA, and inductor compiled for a device it cannot (on a Mac: "
        "inductor has no MPS backend before torch 2.7/2.8): use torch.compile(..., "
        "backend=\"aot_eager\") there, or torch >= 2.8 on MPS, or no torch.compile; "
        "not a bug to report"),
    # (AMD-SHARK-Studio#1315, kohya_ss#1141, StableCascade#33: torch 2.0/2.1 on Windows; the
    # thread's fixes: accelerate's dynamo_backend "no", or no torch.compile there; pytorch#111313
    # moved the check to inductor in 2.2, pytorch#131289 brought inductor to Windows in 2.5)
    "windows": (
        "this torch does not compile on Windows: torch.compile refuses it before compiling "
        "anything in torch 2.0 and 2.1, and the inductor backend in 2.2 to 2.4. Use torch >= 2.5 "
        "(inductor's GPU kernels there need the triton-windows package), or on 2.2-2.4 "
        "torch.compile(..., backend=\"aot_eager\"), or run without torch.compile on Windows "
        "(accelerate: dynamo_backend \"no\" in its config); not a bug to report"),
    "python-version": (
        "this torch's torch.compile does not run on this Python (its message names the first "
        "version it refuses): use a torch release that supports this Python, or an older "
        "Python, or run without torch.compile; not a bug to report"),
    # (eval_frame.py's check_if_dynamo_supported, 2.11 and 2.15: sysconfig's Py_GIL_DISABLED
    # and a version before 3.13.3)
    "free-threaded": (
        "torch.compile does not run on a free-threaded Python (built with the GIL disabled) "
        "older than 3.13.3, and refuses it before compiling anything: use a free-threaded "
        "Python 3.13.3 or newer (torch's own advice), or a regular build of Python, or run "
        "without torch.compile; not a bug to report"),
    # (2.7.0's check, eval_frame.py:899: any build with the GIL disabled; 2.11's allows 3.13.3+)
    "free-threaded-any": (
        "this torch's torch.compile refuses every free-threaded Python (built with the GIL "
        "disabled), before compiling anything, whatever its version: use torch 2.11 or newer "
        "with a free-threaded Python 3.13.3 or newer, or a regular build of Python, or run "
        "without torch.compile; not a bug to report"),
}

# a traceback cut inside eval_frame.py's check (textcrash.PLATFORM_CHECKS), its message past
# the paste
_PLATFORM_FIX = (
    "torch.compile refused this machine before compiling anything (eval_frame.py's "
    "check_if_dynamo_supported raises only for Windows, in torch 2.0 and 2.1, for a "
    "Python newer than the release supports, and for a free-threaded Python (in 2.7 any, in "
    "2.11 and 2.15 one before 3.13.3); its message, past the end of the paste, says which): a "
    "torch release that supports this platform (torch >= 2.5 compiles on Windows), or run "
    "without torch.compile there; not a bug to report")


# c10's errors where code that takes sizes as plain integers met a symbolic one
# (textnotes.SYMBOLIC_SIZES_RE: "Cannot call sizes() on tensor with symbolic sizes/strides", and
# "SymIntArrayRef expected to contain only concrete integers" from a kernel's registration): an
# op, a kernel or a backend without symbolic-shape support asked a dynamic tensor for its
# concrete sizes (pytorch#122171: one_hot's meta; #115307: inductor's save_args pickling the
# inputs), or ran the graph's ops on real tensors with the sizes it was traced with
# (deepspeed#7229, #7311: DeepCompile's profiler). Running the call without compile proves
# nothing (eager sizes are concrete): keep that input static or drop the call. (Not reproduced
# on 2.15 CPU: inductor and fake tensors there no longer ask; read from the pastes only.)
_SYMBOLIC_SIZES_FIX = (
    "an op, kernel or backend without symbolic-shape support asked a dynamic tensor for its "
    "concrete sizes, or ran the graph's ops on real tensors with the symbolic sizes it was "
    "traced with: keep that input static (torch.compile(..., dynamic=False), or "
    "torch._dynamo.mark_static(x) on it before the call), or remove the call that needs "
    "concrete sizes (a debug option that saves the inputs: torch._inductor.config.save_args = "
    "False); report it to the op's or backend's owner (torch, for torch's own ops). Running "
    "it without torch.compile proves nothing here: eager sizes are always concrete")
# 2.15's wording of the second where the value is a number too large to store inline, no
# symbol: a kernel's conversion that cannot hold it (the message names the owning one)
_HEAP_CONCRETE_FIX = (
    "a size was an integer too large to store inline (no symbol: torch 2.15's message says "
    "'heap-allocated concrete SymInt'), and the kernel's conversion of sizes cannot hold it: "
    "check that size (a huge or negative value is a bug upstream of the call); where it is "
    "right, it is the op's or extension's bug (its message names the owning conversion, "
    "asIntArrayRefSlowAlloc): a report to its owner")
# torch.export's own checks of what the user asked (dynamic_shapes, the inputs): a UserError or
# ValueError raised in torch/export/ or torch/_export/ is the specification's, not the
# compiler's, and suppress_errors does nothing for export (paste hunt 13)
_EXPORT_FILE_RE = re.compile(r"(?:^|/)torch/_?export/")
_EXPORT_USER_FIX = (
    "torch.export rejected what it was asked (its message says which input or Dim): an error "
    "of the dynamic_shapes specification or the example inputs, not a bug in torch's compiler: "
    "change the specification as the message says (Dim.AUTO lets export choose where a Dim "
    "cannot stay dynamic); torch._dynamo.config.suppress_errors does nothing for export")


# An error raised as the compiled graph ran under CUDA graphs (a traceback through the
# CUDA-graph trees): suppress_errors wraps frame conversion only (2.15 _dynamo/convert_frame.py,
# the `except` around _inner_convert), so it does nothing for it (paste hunt 16: pytorch#163257,
# ComfyUI#6831, ultralytics#21998 were all told to set it)
_RAN = ("the error came as the compiled graph ran under CUDA graphs, not while compiling, so "
        "torch._dynamo.config.suppress_errors (which covers compiling only) does not apply")
# inductor's runtime: a kernel it generated, launched (triton_heuristics.py's run)
_RUNTIME_FILE_RE = re.compile(r"(?:^|/)torch/_inductor/runtime/")


def _ran_fix(x: CompileCrashReport) -> str:
    """What to do about an error raised as the compiled graph ran under CUDA graphs."""
    cut = x.cut and not x.error
    if x.at is not None and _RUNTIME_FILE_RE.search(x.at.file.replace("\\", "/")):
        # (ultralytics#21998: Triton's launch on Windows, OverflowError, fixed in triton-windows)
        return (f"{_RAN}: a kernel inductor generated raised as it launched, and its "
                f"exception{', past the end of the paste,' if cut else ''} says why (paste it); "
                "where it is Triton's, a newer Triton (triton-windows on Windows) and torch; to "
                f"tell whether CUDA graphs play a part, {WITHOUT_CUDAGRAPHS}")
    paste = ("; its exception is past the end of the paste: paste it (an allocator other than "
             "the native one, as cudaMallocAsync, raises \"does not yet support "
             "checkPoolLiveAllocations\" here, which has a fix of its own)" if cut else "")
    return (f"{_RAN}: {WITHOUT_CUDAGRAPHS}{paste}; and try a newer torch, or report it to "
            "PyTorch with the whole traceback")


def _graph_ran_fix(x: CompileCrashReport) -> str:
    """What to do about an error raised as the compiled graph ran (AOTAutograd's run-time
    wrapper called it; the traceback shows no CUDA-graph trees): whose code raised decides."""
    said = ("the error came as the compiled graph ran, not while compiling (the traceback "
            "passes AOTAutograd's run-time wrapper), so torch._dynamo.config.suppress_errors "
            "(which covers compiling only) does not apply")
    if x.cut:
        return (f"{said}: its exception (or its message) is past the end of the paste, and it "
                "says whose error it is (paste it): the program's code that the graph called (a custom op's "
                "kernel, a hook), the CUDA-graph trees under mode=\"reduce-overhead\" or "
                f"\"max-autotune\" (to tell, {WITHOUT_CUDAGRAPHS}), or torch's own (a newer "
                "torch, or a report to PyTorch with the whole traceback)")
    if x.deepest is not None and not is_torch_file(x.deepest.file):
        return (f"{said}: it was raised in {place(x.deepest)} in {x.deepest.function}, code "
                "the graph called (a custom op's kernel, a hook): fix it there, as for a run "
                "without torch.compile")
    return (f"{said}: the exception says whose error it is; under mode=\"reduce-overhead\" or "
            f"\"max-autotune\", {WITHOUT_CUDAGRAPHS} tells whether CUDA graphs play a part; "
            "else try a newer torch, or report it to PyTorch with the whole traceback")


# A kernel whose ops convert a dtype: aten's _to_copy (or prims' convert_element_type) in the
# name inductor gives it. A dtype the GPU lacks fails there: fp8_e4m3fn weights converted on an
# older GPU (WanVideoWrapper#252, #1007, Stand-In_Preprocessor#10: triton_poi_fused__to_copy_*;
# triton-windows#28's, its name cut, "?", converts too)
_CASTS = ("_to_copy", "convert_element_type")
# names that say nothing of what the kernel does: "?" (its name before the paste) and
# inductor's placeholder "triton_" (unique_kernel_names off: ComfyUI-HunyuanVideoWrapper#263,
# torch 2.5.1 on Windows, a CompilationError cut above its reason; the thread's answer: fp8
# weights on a GPU older than the 40xx)
_NAMELESS = ("?", "triton_")


def _kernel_fix(x: CompileCrashReport) -> str:
    """A kernel Triton could not compile, the reason cut from the paste: the dtype guess only
    where the kernel converts one (or its name is cut); a kernel whose name shows no
    conversion asks for the exception and names Triton's own failures (ultralytics#21998: a
    batch norm's backward on Windows, triton-windows' OverflowError past the excerpt); a
    kernel whose name says nothing (``_NAMELESS``) gets the dtype guess too."""
    if x.kernel not in _NAMELESS and not any(cast in x.kernel for cast in _CASTS):
        return ("Triton could not compile a kernel inductor generated, and why is past the end "
                "of the paste: the exception after inductor's record (or the line after the "
                "'^' under Triton's CompilationError) says it, paste it. The kernel's name shows "
                "no dtype conversion (_to_copy, where a dtype the GPU lacks fails); where the "
                "exception is Triton's own, a newer Triton and torch (on Windows the "
                "triton-windows package: ultralytics#21998's OverflowError \"Python int too "
                "large to convert to C long\" is fixed there, triton-lang/triton#5454); else a "
                "report to PyTorch with the kernel")
    return ("Triton could not compile a kernel inductor generated: its reason is the line "
            "after the '^' under Triton's CompilationError (paste it), commonly a dtype "
            "this GPU lacks (fp8_e4m3fn below CUDA arch 8.9, bf16 below 8.0): use a dtype "
            "the GPU has, or do not compile that part; where the reason is none of these, "
            "a newer torch and Triton, and a report with the kernel")


# torch's exceptions whose message is another's: the backend's error (BackendCompilerFailed,
# "backend='inductor' raised:" then it), inductor's (InductorError, 2.7 on)
_WRAPPING_ERRORS = ("BackendCompilerFailed", "InductorError")


# the machine errors that are torch.compile refusing the platform before compiling anything
# (textcrash.REFUSALS), and a setting this torch does not have yet, raised as the program set
# it: nothing compiled
_REFUSALS = (*REFUSALS, "config-renamed")


# eval_frame.py's entry that torch.compile calls as it wraps the model (2.0-2.15), before
# anything compiles: the RuntimeError it raises itself is its platform check's
# (check_if_dynamo_supported; a backend it cannot find is InvalidBackend)
_EVAL_FRAME_RE = re.compile(r"(?:^|[/\\])torch[/\\]_dynamo[/\\]eval_frame\.py$")
_WRAP_ENTRIES = ("optimize", "_optimize")


def _refused(x: CompileCrashReport) -> str:
    """The fix of torch.compile's refusal of the platform where ``x`` is one (its words, or a
    traceback cut inside eval_frame.py's check, or, with IPython's head naming the class alone,
    a RuntimeError cut in the entry that calls the check: stablecascade-33), else ""."""
    machine = machine_error(f"{x.error} {x.cause}")
    if machine in _REFUSALS:
        return _MACHINE_FIX[machine]
    deepest = x.deepest
    if not x.cut or deepest is None or x.error not in ("", "RuntimeError"):
        return ""
    if deepest.function.endswith(PLATFORM_CHECKS):
        return _PLATFORM_FIX
    if x.error and deepest.function in _WRAP_ENTRIES \
            and _EVAL_FRAME_RE.search(deepest.file) is not None:
        return _PLATFORM_FIX
    return ""


# inductor's C++ for the CPU that the machine's compiler did not build (CppCompileError: the
# command, then the compiler's own "Output:"; 2.0-2.15) or no compiler found (InvalidCxxCompiler,
# 2.2-2.15): most often the machine's toolchain (OpenMP on macOS, where torch's own message
# names the fix; MSVC's cl outside a Developer prompt on Windows; a missing header), sometimes
# inductor's code (pytorch#152172, a 2.7 regression), and then suppress_errors as for any of
# torch's errors. Applied in tests/integration/test_cpp_compile_fix.py (a CXX that fails,
# then a working one) and test_compile_crash.py (inductor's own injected C++ error)
_CXX_ERRORS = ("CppCompileError", "InvalidCxxCompiler")
_CXX_FIX = (
    "inductor's C++ code for the CPU did not build with this machine's C++ compiler (the "
    "Command in the message): the compiler's own lines under its Output: say why. A header or "
    "library the machine lacks (omp.h: OpenMP, which on macOS torch's message says how to get; "
    "Python.h: python3.X-dev), or a compiler not set up (on Windows, MSVC's cl from a Visual "
    "Studio Developer prompt): set CXX to a working C++ compiler, or fix its setup, and rerun; "
    "meanwhile torch.compile(..., backend=\"aot_eager\") runs without inductor. Only where "
    "the Output shows an error in the generated .cpp itself (an `error:` in inductor's own "
    ".cpp, no header or library missing) is it torch's: a newer torch and a report with the "
    "Output, and meanwhile torch._dynamo.config.suppress_errors = True (the frame runs "
    "eagerly; applied in tests/integration/test_compile_crash.py)")


def _inside_torch(file: str) -> str:
    """What to compile instead where torch's own code at ``file`` broke or raised under
    torch.compile (FSDP1's wrapper: pytorch#152185's break, #161153's crash)."""
    if "/distributed/fsdp/" in file.replace("\\", "/"):
        return ("FSDP1's wrapper: compile the modules it wraps rather than the FSDP module, or "
                "use FSDP2 (fully_shard), made to work with torch.compile")
    return "compile a part of the model that does not go through it, or report it to torch"


def _crash_fix(x: CompileCrashReport, known: Releases | None = None) -> str:
    """What to do about a compile that raised: whose code raised decides it (torch.compile's
    refusal of the platform is ``_refused``'s, asked first); ``known``: the log's releases."""
    text = f"{x.error} {x.cause}"
    machine = machine_error(text)
    if machine:
        return _MACHINE_FIX[machine]
    if x.kernel:  # (WanVideoWrapper#252: Triton's CompilationError, its reason cut)
        return _kernel_fix(x)
    if AOT_GUARDS_FAILED in x.error[:200]:
        return _aot_guards_fix(x.error)
    if x.cudagraph_run:
        return _ran_fix(x)
    if x.graph_run:
        return _graph_ran_fix(x)
    if rewrapped(x.error):  # (vllm#16009, #17018: vLLM's V0 wrapper re-raising it)
        return ("the compile failed in the backend (torch's BackendCompilerFailed), and a "
                "wrapper re-raising it as type(err)(message) failed, since its constructor "
                "takes the backend and the inner exception (vLLM's V0 worker/"
                "model_runner_base.py does so): the backend's own error is in the traceback "
                "before this one (\"During handling of the above exception\"), or printed "
                "above it: paste it; it says whose error it is (the machine's, such as a Triton "
                "launcher the C compiler could not build; the code's; torch's)")
    if any(e in text for e in _CXX_ERRORS):  # (comfyui-sdnq#21, pytorch#179135, #154127)
        return _CXX_FIX
    if x.begun and not x.error:  # (sam2#603: the paste begins at dynamo's user stack)
        return (f"the exception is above where the paste begins ({x.begun!r} follows it): "
                "paste the traceback's last lines, whose exception says whose error it is "
                "(torch._dynamo.exc.Unsupported: a graph break fullgraph=True made an error; a "
                "data-dependent size; torch's own); the stack the paste has says where dynamo "
                "was in your code")
    if SYMBOLIC_SIZES_RE.search(text) is not None:  # (a backend's own too: deepspeed#7311)
        return _HEAP_CONCRETE_FIX if HEAP_CONCRETE in text else _SYMBOLIC_SIZES_FIX
    backend = _BACKEND_RE.search(text)
    kwarg = _BACKEND_KWARG_RE.search(text)
    if kwarg is not None and (backend is not None or kwarg["fn"].endswith("Backend.__call__")):
        # (WanVideoWrapper#1041: a TypeError of a backend's own call, torch's words above it)
        return _backend_kwarg_fix(kwarg["kw"], backend["name"] if backend is not None else "")
    if backend is not None and backend["name"] not in _TORCH_BACKENDS:
        return (f"the backend {backend['name']!r} (not one of torch's) raised on the graph torch "
                "gave it: fix it, or report it to its authors with the graph "
                "(TORCH_LOGS=\"graph_code\" prints it)")
    # (a traceback the paste cut: its deepest frame is where the paste ends, not where the
    # exception was raised, so a package's frame there is not blamed: vllm#16818 cut at vLLM's
    # patched_inline_call, vllm-project/recipes#429 at Python's contextlib)
    if x.deepest is not None and x.at is not None and x.deepest != x.at and not x.cut \
            and not is_torch_file(x.deepest.file) and not is_compiler_file(x.deepest.file) \
            and (x.user is None or x.deepest != x.user):
        return (f"the deepest frame, {place(x.deepest)} in {x.deepest.function}, is not torch's: "
                "a package that patches or hooks torch's compiler raised there; update it or "
                "run without it")
    deepest = x.deepest or x.at
    cut = x.cut and not x.error and deepest is not None
    data = unbacked.crash_fix(text, deepest.code if cut and deepest else "",
                              deepest.function if cut and deepest else "")
    if data is not None:  # (pytorch#157355: "an error in torch's compiler" for one)
        return data
    if x.at is not None and _EXPORT_FILE_RE.search(x.at.file.replace("\\", "/")) is not None \
            and exception_name(x.error) in ("UserError", "ValueError"):
        return _EXPORT_USER_FIX
    if ("TorchRuntimeError" in text or exception_name(x.error) == "TorchRuntimeError") \
            and x.user is not None and is_torch_file(x.user.file):
        # the operation is torch's own (pytorch#161153: FSDP1's _root_pre_forward casting a
        # buffer with `.data =` to bfloat16), not a line of the code to fix
        return (f"the operation that raised is in torch's own code ({place(x.user)} in "
                f"{x.user.function}), not a line of yours: {_inside_torch(x.user.file)}; run "
                "the same call without torch.compile to be sure (if it raises there too, the "
                "inputs or settings you give that torch code are at fault); where it runs, a "
                "newer torch release, and a report to PyTorch")
    if "TorchRuntimeError" in text or exception_name(x.error) == "TorchRuntimeError":
        return ("torch ran an operation of the code on fake tensors while tracing it and the "
                "operation raised: run the same call without torch.compile; if it raises the "
                "same error, fix it in your code; if it runs, report it to PyTorch")
    if cut and deepest is not None and deepest.function in _SHAPE_GUARD_FNS:  # (pytorch#176349)
        return (f"the paste ends inside torch's {deepest.function}, making the compile's shape "
                f"guards: the exception past its end is {_SHAPE_GUARDS_CAUSE}; paste the "
                "exception (its items name the size and the value); suppress_errors does not "
                "apply to it")
    if x.cut and exception_name(x.error) == "ConstraintViolationError":
        # the class alone (IPython's head: pytorch#169488, export's dynamic_shapes on a sparse
        # COO input), its items cut: never "torch's compiler, not the shapes of your code"
        return ("a ConstraintViolationError is 'Constraints violated': a size given as dynamic "
                "(export's dynamic_shapes, mark_dynamic) that the traced code specialized to a "
                "constant or narrowed. Its items, past the end of the paste, name the size and "
                "the value: paste them, or rerun with TORCH_LOGS=\"+dynamic\", which logs the "
                "guard and the line that made it; then change that line, or give the size as "
                "static. Where no line of the code made it (an input torch traced with concrete "
                "sizes, such as a sparse COO tensor before pytorch#184993), it is torch's: a "
                "newer torch and a report. suppress_errors does not apply to it")
    if x.cut and x.error.rsplit(".", 1)[-1] in _WRAPPING_ERRORS:
        # the class alone (IPython's head, SD.Next's log line: sdnext#4085), its message cut
        return (f"{x.error.rsplit('.', 1)[-1]} wraps the error the backend raised, which its "
                "message names (\"backend='inductor' raised:\" and the error) and the paste ends "
                "before: paste it, or rerun with TORCHDYNAMO_VERBOSE=1; it says whose error it "
                "is (the machine's, such as a Triton torch does not pin; the code's; torch's), "
                "and only torch's own is for a newer torch and a report")
    if x.cut and not x.error:  # (vllm#38884, pytorch#137087: cut deep in torch's compiler)
        return ("the exception is past the end of the paste, and its last lines say whose error "
                "it is (a data-dependent size, the code's, torch's): paste them, or rerun with "
                "TORCHDYNAMO_VERBOSE=1; where it is torch's own, a newer torch and a report, "
                "and meanwhile torch._dynamo.config.suppress_errors = True runs the frame eagerly")
    return ("an error in torch's compiler, not in the shapes of your code: try a newer torch "
            "release, and report it to PyTorch with the whole traceback "
            "(TORCHDYNAMO_VERBOSE=1 prints dynamo's part); meanwhile "
            "torch._dynamo.config.suppress_errors = True lets the program go on, running the "
            f"frame whose compile fails eagerly (or {named('torch.compiler.disable', known)} on "
            "that function)")


# torch.compile(f).aot_compile(...)'s function checks its guards on each call and, unlike a
# compiled function, cannot recompile: a call they reject raises "GuardManager check failed,
# reason: GuardDebugInfo(… verbose_code_parts=[…])" (aot_compile.py, 2.10-2.15), the parts naming
# the guards (a size, a global state). vLLM's AOT compile hit it on torch's thread count
# (vllm#27286) and turned the check off (vllm#27288). Applied: tests/integration/
# test_aot_guards_fix.py (a size the compile pinned: compiled with it dynamic, the call runs)
_AOT_PARTS_RE = re.compile(r"verbose_code_parts=\[(?P<parts>.{0,2000}?)\](?:,|\s|$)")


def _aot_guards_fix(error: str) -> str:
    """The fix of an AOT-compiled function's call its guards rejected."""
    m = _AOT_PARTS_RE.search(error)
    parts = f" ({m['parts']})" if m is not None and m["parts"].strip() else ""
    return (f"an AOT-compiled function (torch.compile(...).aot_compile) refused this call: its "
            f"guards reject it{parts}, and it cannot recompile. Compile it for the inputs it "
            "will get (a size that varies: torch.compile(..., dynamic=True), or "
            "torch._dynamo.mark_dynamic on the example input, before aot_compile); where the "
            "guard checks something the program does not need (a global state such as torch's "
            "thread count), call disable_guard_check() on the compiled function, as vLLM did "
            "(vllm#27288)")


def _compile_crashes(diag: Diagnosis) -> list[Advice]:
    """The program stopped on an error torch's compiler raised: never "Nothing to fix"
    (keras#22282: an AssertionError in dynamo's bytecode_transformation.py; depyf#9: a package's
    patch raised inside dynamo)."""
    out = []
    # (a custom op without a fake kernel: the crash's own message names it where its line has
    # torch's words, 2.4-2.6's and lightning-thunder#2530's; 2.15's is in its Explanation, read
    # as the break's)
    no_fake = {b.rank: f for b in diag.graph_breaks if (f := _break_no_fake_impl(b))}
    for x in diag.compile_crashes:
        refusal = _refused(x)
        error = x.error or "an exception"
        if x.headless:  # (pytorch#94795: torch 2.0's DEBUG log of a graph break it caught)
            error += (" (the paste begins and ends inside its traceback: whether the program "
                      "stopped on it, or torch logged it and went on as it logs a graph break it "
                      "caught, is not in the paste)")
        elif x.cut:
            error += " (the paste ends before its message)" if x.error else \
                " (the paste ends inside the traceback, before the exception)"
        elif x.begun and not x.error:
            error += f" (the paste begins after it, at dynamo's \"{x.begun}\")"
        if x.cause:
            error += f", raised from {x.cause}"
        # (place() names the function itself where the paste lost the frame's line)
        where = (f" at {place(x.at)}" + (f" in {x.at.function}" if x.at.line else "")
                 if x.at is not None else "")
        user = f", called from {place(x.user)}" if x.user is not None else ""
        after = f" (the last compile the log shows before it: [{x.compile_id}])" \
            if x.compile_id else ""
        raised = f"torch's compiler raised {error}"
        if rewrapped(x.error):  # (the wrapper's TypeError, not the compiler's own)
            raised = (f"a wrapper re-raising torch's BackendCompilerFailed raised {error}, "
                      "hiding the backend's error")
        if AOT_GUARDS_FAILED in x.error[:200]:  # (a call of an AOT-compiled function, not a compile)
            raised = f"an AOT-compiled function's guard check raised {error}"
        if machine_error(f"{x.error} {x.cause}") == "config-renamed":
            raised = f"torch's config module raised {error} as the program set it"
        if x.cudagraph_run:  # (not a compile: the graph ran; its fix is _ran_fix's)
            raised = f"{error} came as the compiled graph ran under CUDA graphs (not while compiling)"
        elif x.graph_run:  # (AOTAutograd's run-time wrapper: _graph_ran_fix's)
            raised = (f"{error} came as the compiled graph ran (through AOTAutograd's run-time "
                      "wrapper, not while compiling)")
            # (the frame that raised, or where the paste ends: the compiler's deepest frame
            # may be a wrapper the program's code runs under, eval_frame.py's _fn)
            where = f" at {place(x.deepest)} in {x.deepest.function}" \
                if x.deepest is not None and x.deepest.line else where
        if x.kernel:  # inductor's record of the kernel, or Triton's error quoting it
            kernel = "a kernel inductor generated (its name is before the paste)" \
                if x.kernel == "?" else "a kernel inductor generated (under its placeholder " \
                "name triton_)" if x.kernel == "triton_" else f"{x.kernel}, a kernel inductor generated"
            raised = f"Triton could not compile {kernel}" + (f": {error}" if x.error or x.cause
                                                           else "")
        # a traceback's exception, or an exception (a record) printed without one
        shown = f"Traceback … {x.error or 'cut'}" if x.deepest is not None else \
            f"{x.begun} … {place(x.user) if x.user else ''}" if x.begun else \
            (x.error or x.cause or (f"Triton compilation failed: {x.kernel}" if x.kernel != "?"
                                    else "inductor's record of a kernel Triton could not compile"))
        said = f"the program stopped: {raised}{where}{user}{after}."
        if x.headless:  # (the paste does not show it stopped: its error says so)
            said = f"{raised}{where}{user}{after}."
        if x.went_on:  # (its own warning quotes torch's words: sdnext#2699)
            said = ("torch.compile refused this machine before compiling anything, and the "
                    "program went on uncompiled: its warning says so "
                    f"(\"{x.error}\").")
        out.append(Advice(
            kind=AdviceKind.COMPILE_CRASH, rank=x.rank, key=f"crash:{x.error}:{x.at}",
            sites=sites_of(x.user), ran=x.cudagraph_run or x.graph_run,
            graph_ran=x.graph_run, refused=bool(refusal),
            message=said,
            fix=(_no_fake_impl_fix(x.error) or (
                no_fake[x.rank] if "TorchRuntimeError" in x.error and x.rank in no_fake
                else refusal or _crash_fix(x, diag.releases))),
            evidence=(cite(x.line, "", shown[:300]),)))
    return out


def _graph_breaks(diag: Diagnosis) -> list[Advice]:
    return [_resumed_break(b) if b.resumed_in else Advice(
        kind=AdviceKind.GRAPH_BREAK, key=b.gb_code or b.reason,
        sites=(Site(b.file, b.user_line),) if b.file else (),
        message=(f"graph break at {b.place}{raised_break(diag.releases)}: {b.said_reason}" if b.raised else
                 f"graph break at {b.place} ({b.count}x): {b.said_reason}") + _SKIPPED_FRAME * b.skipped_frame,
        fix=_break_fix(b, diag.releases), stopped=b.raised,
        # (dyncli's words, not a quote: torch words a break differently in each release)
        evidence=(cite(b.line, b.compile_ids[0] if b.compile_ids else "",
                       f"graph break at {b.place}"
                       + (f", reached from {b.call_sites[0]}" if b.call_sites else "")),),
        rank=b.rank)
        for b in diag.graph_breaks]


# convert_frame's record of a frame it gave up on at a break: 2.4-2.7's "Graph break: skip:"
# ("skip:" is its word for it, not the break's reason: pytorch#140394, #150477), later "Graph
# break: torch.compile cannot properly resume from this graph break, which results in a skip."
_SKIPPED_FRAME = ("; torch gave up on the whole frame at this break and ran it eagerly, so none "
                  "of that frame is compiled")
# what shows a break's reason where the log does not (a resumed break, a record cut): torch
# 2.1-2.15 print it under the graph_breaks artifact, and fullgraph=True raises it
_RERUN_BREAKS = ('rerun with TORCH_LOGS="graph_breaks": torch prints each break with its reason '
                 "and the user code that reached it (fullgraph=True raises at the first)")
# a traceback cut in dynamo's unimplemented (textbreaks.UNIMPLEMENTED_CUT): the Unsupported's
# message, past the paste, names what broke; TORCHDYNAMO_VERBOSE=1 (2.0-2.15) prints it with
# dynamo's user stack; without fullgraph=True torch splits the graph there and goes on
# (applied in tests/integration/test_unsupported_cut_fix.py)
# what to do once the raised break's message is known, and to run meanwhile
_RAISED_BREAK_THEN = ("then move that call out of the compiled function or make it traceable. "
                      "To run meanwhile, compile without fullgraph=True: torch splits the graph "
                      "at the break and the program goes on")
_UNIMPLEMENTED_CUT_FIX = (
    "the exception past the end of the paste (torch._dynamo.exc.Unsupported) names what broke "
    "and \"from user code:\" under it the line: paste them, or rerun with TORCHDYNAMO_VERBOSE=1, "
    f"which prints both; {_RAISED_BREAK_THEN}")
_MESSAGE_ABOVE_FIX = (
    "the exception above the paste (torch._dynamo.exc.Unsupported) names what broke at this "
    f"line: paste it, or rerun with TORCHDYNAMO_VERBOSE=1, which prints it; {_RAISED_BREAK_THEN}")
# a traceback torch logged for a break it caught (textbreaks.LOGGED_CUT, pytorch#94795): the
# program went on, the frame compiled in pieces; what broke is the exception past the paste
_LOGGED_CUT_FIX = (
    "the exception at the end of that traceback (torch._dynamo.exc.Unsupported: …, past the end "
    "of the paste) names what broke: paste it, or rerun with TORCH_LOGS=\"graph_breaks\", which "
    "prints each break with its reason and the user line that reached it; the program went on "
    "(torch compiled the frame in pieces around the break and ran the call between them "
    "eagerly), so move that call out of the compiled function or make it traceable")
# the break torch added where the backend raised a fake tensor exception (textbreaks.
# FAKE_BACKEND, torchrec#1888): the warning names the place, not the operator; torch's
# graph_breaks record has the exception, whose own words are the fix's start
_FAKE_BACKEND_FIX = (
    "torch's backend (AOTAutograd) raised a fake-tensor exception on the graph that ends at this "
    "line (an operator whose output size or value depends on tensor data, or one without a fake "
    "kernel), and torch split the graph here; this warning does not name the operator: rerun "
    "with TORCH_LOGS=\"graph_breaks\", which prints the exception, then fix what it names (an "
    "operator of a data-dependent output size: torch._dynamo.config."
    "capture_dynamic_output_shape_ops = True; a custom operator: a fake kernel, "
    "torch.library.register_fake)")
# dynamo's speculate_subgraph record (textbreaks.SPECULATED, flash-attention#596: flash-attn's
# autograd.Function calling its CUDA extension): the call runs eagerly, split from the graph.
# Applied in tests/integration/test_speculated_fix.py (torch 2.15: an autograd.Function
# calling an extension's builtin, made a custom operator: one graph, no break)
_SPECULATED_FIX = (
    "what dynamo could not trace in it is in torch's next record (higher_order_ops' exception), "
    "and TORCH_LOGS=\"graph_breaks\" prints the call's place; make the call one operator dynamo "
    "keeps whole: an autograd.Function whose forward calls what dynamo cannot trace (an "
    "extension's kernel) as a custom operator, torch.library.custom_op with its register_fake "
    "and register_autograd (the Function's backward); or make that body traceable")
# a "Graph break: skip:" record cut before its traceback's exception: that exception is why
# torch gave the frame up (graph_breaks is on already: the record is that artifact's)
_SKIP_CUT_FIX = ("the exception at the end of this record's traceback (past the end of the paste) "
                 "is why torch gave up on the frame: paste the record to its end; then fix what "
                 "it names")
_REASON_CUT_FIX = ("the whole record names the reason (the input holds part of it: the rest is "
                   f"in the original log), or {_RERUN_BREAKS}; then fix what it names")


def _resumed_break(b: GraphBreakReport) -> Advice:
    """A break the log proves only by the name of the code torch resumed after it
    (dyncli.diagnose.resumed): its place, not its reason."""
    where = f"{b.place} in {b.function}" if b.file else b.place
    return Advice(
        kind=AdviceKind.GRAPH_BREAK, key=b.resumed_in,
        sites=(Site(b.file, b.user_line),) if b.file else (),
        message=(f"graph break at {where}: torch compiled {b.function} in pieces and resumed "
                 f"after line {b.user_line} in a function of its own ({b.resumed_in}); the log "
                 "does not say what broke there"),
        fix=(_break_fix(b) if b.file and is_torch_file(b.file) else
             f"{_RERUN_BREAKS}; then move that call out of the compiled function or make it "
             "traceable"),
        evidence=(cite(b.line, "", f"{b.resumed_in}: {b.function} resumed after a graph break "
                                   f"at line {b.user_line}"),),
        rank=b.rank)


# aten._local_scalar_dense is a tensor's .item() (and each element of .tolist()): the backend
# failing on it (prime-rl#999, torch 2.9's "Backend compiler exception") is a data-dependent
# scalar in the graph
_ITEM = "_local_scalar_dense"
# torch's own setting in that break's reason before 2.7 ("data dependent operator: aten.
# _local_scalar_dense.default; to enable, set torch._dynamo.config.capture_scalar_outputs = True")
_CAPTURE_SCALARS = "to enable, set torch._dynamo.config.capture_scalar_outputs = True"


def _break_fix(b: GraphBreakReport, known: Releases | None = None) -> str:
    """The fix of graph break ``b``; ``known``: the releases the whole input tells, for the
    APIs that differ between them where ``b``'s own record does not tell."""
    if b.reason == FAKE_BACKEND:  # (torchrec#1888: the operator is not in the warning)
        return _FAKE_BACKEND_FIX
    if b.reason.startswith(SPECULATED):  # (flash-attention#596: the place is not in the record)
        return _SPECULATED_FIX
    if _ITEM not in b.reason:
        # an op of a data-dependent output size, every release's words (2.1's "dynamic shape
        # operator: aten.nonzero.default", pytorch#114220; 2.2-2.6's with "; to enable, set
        # torch._dynamo.config.capture_dynamic_output_shape_ops = True", cuEquivariance#77;
        # 2.7 on the type, its Hint the setting, pytorch#165421): torch's own answer, not
        # "move the call out"
        data = unbacked.break_fix(f"{b.reason}\n{b.explanation}")
        if data is not None:
            return data
    logging_fix = _logging_fix(b)
    if logging_fix:
        return logging_fix
    if _WARN_BREAK_RE.search(f"{b.reason} {b.explanation}"):
        return WARN_FIX  # (every release's words for it, 2.4's with no hint: pytorch#135688)
    fake = _fake_kernel_fix(b, known) or _break_no_fake_impl(b)
    if fake:
        return fake
    builtin = builtin_name(b.explanation)
    if builtin is not None:  # (torch's first hint there asks to file an issue)
        return builtin_hint(builtin)
    if b.reason == ITEM_WARNED:
        # torch's Tensor.item() warning (2.4-2.15, whole or its first line cut): its setting is
        # the one .item() fix, said once
        return unbacked.item_fix("")
    if _ITEM in b.reason or _ITEM in b.explanation:
        # torch's own setting where its reason names it ("data dependent operator:
        # aten._local_scalar_dense.default; to enable, set …capture_scalar_outputs = True",
        # explain()'s report, pytensor#1110): the fix of the DataDependentOutputException it
        # came from, torch's answer first as for an op of a data-dependent size
        if _CAPTURE_SCALARS in b.reason:
            return unbacked.item_fix(f"aten.{_ITEM}.default")
        return unbacked.item_fix(f"aten.{_ITEM}", setting=False)
    if _in_ddp_wrapper(b):
        return _DDP_WRAPPER_FIX
    if b.reason_cut and b.skipped_frame:  # (pytorch#140394, #150477: cut before the exception)
        return _SKIP_CUT_FIX
    if b.reason_cut:  # (not "move the call out": what to move is in the part cut, pytorch#126722)
        return _REASON_CUT_FIX
    if b.reason == UNIMPLEMENTED_CUT:  # (speech-to-speech#27: its message past the paste)
        return _UNIMPLEMENTED_CUT_FIX
    if b.reason == LOGGED_CUT:  # (pytorch#94795: torch 2.0's DEBUG log of a break it caught)
        return _LOGGED_CUT_FIX
    if b.reason == MESSAGE_ABOVE:  # (pytorch#175875: pytest's line named it, the message above)
        return _MESSAGE_ABOVE_FIX
    if b.gb_type == _OBSERVED or b.reason == _OBSERVED:
        # the exception is the code's: torch's frame last (2.15: polyfills' class call, for a
        # class called with a missing argument) is where it surfaced, the user's call made it
        reached = (f" (raised by the call at {b.call_sites[0]})"
                   if b.file and is_torch_file(b.file) and b.call_sites else "")
        return _OBSERVED_FIX.format(reached=reached, stance=_STANCE if named(
            "torch.compiler.set_stance", known) else "")
    if (called := _polyfill_caller(b)) is not None:
        # torch's Python stand-in for a builtin (polyfills/: a class's construction, sum(),
        # itertools …) broke on what the user's call gave it: that call is the place to fix
        told = _torch_hint(b.hints[0]) if b.hints else (
            _cut_hint_fix(b) or "move it out of the compiled function")
        return (f"change your call at {called}: dynamo runs it through torch's polyfill "
                f"({b.file}:{b.user_line}), which broke on what the call gives it — {told}")
    if b.file and is_torch_file(b.file):
        # pytorch#152185: FSDP1's _flat_param.py; the line is torch's, not one to move
        reached = f" (reached from {b.call_sites[0]})" if b.call_sites else ""
        return (f"the break is in torch's own code ({b.file}:{b.user_line}){reached}, not a line "
                f"of yours to move: {_inside_torch(b.file)}")
    if b.reason.startswith((_BRANCH, CONTROL_FLOW)) or b.gb_type == "Data-dependent branching":
        return _BRANCH_FIX
    skipped = _torch_skipped_fix(b)
    if skipped:
        return skipped
    if b.hints:
        return _torch_hint(b.hints[0])
    return (_cut_hint_fix(b) or _non_tensor_fix(b)
            or "move the untraceable call out of the compiled function")


# GB0208 "torch.* op returned non-Tensor": dynamo put a call of a torch function it keeps in
# the graph (trace_rules' in-graph list: torch.cuda.device_count, get_device_name …), ran it on
# fake values, and what it returned (an int, a str) is none that wrap_fx_proxy_cls
# (variables/builder.py) can make a graph's value. No release gives it a hint (2.7-2.15:
# hints=[]); the function and the type are only in the Developer debug context ("example_value
# type: int; op: call_function; target: <function device_count at 0x…>"), and 2.1-2.6 wrote
# them after the words ("torch.* op returned non-Tensor int call_function <function …>").
# SageAttention#92's fix kept device_count() out of the compiled attention. A target that is no
# Python function (a builtin such as operator.getitem, transformers#34604) names no call to
# move. The target is the function's repr, which writes its __qualname__ alone, never its module
# (<function device_count …> is torch.cuda's, torch.xpu's, torch.mps' …): the call as the user
# wrote it (torch.cuda.device_count()) is only in the break's user frame, where the log shows
# that line; elsewhere the fix says in words what the log leaves out. Applied:
# tests/integration/test_non_tensor_fix.py (2 graphs -> 1 on 2.15).
_NON_TENSOR = "torch.* op returned non-Tensor"
_NON_TENSOR_RE = re.compile(r"(?:example_value type: (?P<t1>[\w.]{1,100}); op: call_function; "
                            r"target: |returned non-Tensor (?P<t2>[\w.]{1,100}) call_function )"
                            r"<function (?P<fn>[A-Za-z_]\w{0,200}) at 0x")
# the names before a call on the break's line ("torch.cuda." in "n = torch.cuda.device_count()")
_QUALIFIER_RE = re.compile(r"(?<![\w.])(?P<q>(?:[A-Za-z_]\w{0,100}\.){0,8})(?P<fn>[A-Za-z_]\w{0,200})\(")
_CALL_LINE_MAX = 2000  # a source line longer than this is no line of a program's stack


def _call_on_line(code: str, fn: str) -> str:
    """The call of ``fn`` as the break's source line writes it, module and arguments, as
    "torch.cuda.device_count()"; "" where the line (as the log shows it) does not call ``fn`` or
    its arguments run past the line."""
    code = code[:_CALL_LINE_MAX]
    for m in _QUALIFIER_RE.finditer(code):
        if m["fn"] != fn:
            continue
        depth = 0
        for i in range(m.end() - 1, len(code)):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            if depth == 0:
                return code[m.start():i + 1]
        return ""
    return ""


def _non_tensor_fix(b: GraphBreakReport) -> str:
    """The torch function whose non-tensor value broke the graph, named, to be called before
    the compiled function; "" where the break is not that or the log does not name it."""
    if _NON_TENSOR not in b.gb_type and not b.reason.startswith(_NON_TENSOR):
        return ""
    m = next((m for t in (b.debug, b.reason) if (m := _NON_TENSOR_RE.search(t)) is not None),
             None)
    if m is None:
        return ""
    fn, typ = m["fn"], m["t1"] or m["t2"]
    why = (f"dynamo puts torch's {fn} in the graph, which cannot hold the {typ} it returns "
           f"(torch's explanation; torch gives no hint)")
    keep = "pass its value in (or keep it in a variable set before compiling)"
    if call := _call_on_line(b.code, fn):
        return f"call {call} once outside the compiled function and {keep}: {why}"
    return (f"call torch's {fn} once outside the compiled function, as your code calls it, and "
            f"{keep}: {why}. The log names the function alone, not the module your code reaches "
            f"it through nor its arguments: torch's record writes <function {fn} at 0x…>, and "
            f"the log does not show the line that calls it")


# torch's hint for a C type's slot (2.15's variables/user_defined.py: "Use
# torch._dynamo.allow_c_slot({cls.__name__}) to register it as safe …"): the name is the
# class's __name__, which the program may reach otherwise (array.array): allow_c_slot takes
# the class object and raises TypeError on anything else (a module named alike)
_C_SLOT_RE = re.compile(r"allow_c_slot\((?P<name>[A-Za-z_]\w{0,200})\)")


def _torch_hint(hint: str) -> str:
    """torch's hint as the fix, with what it leaves to guess said (allow_c_slot's argument)."""
    m = _C_SLOT_RE.search(hint)
    if m is None:
        return hint
    return (f"{hint} (pass the class object: {m['name']} is its __name__, so where the code "
            f"reaches it through a module, module.{m['name']}, as array.array)")


# An operator with no fake (meta) kernel: dynamo runs each call on fake tensors to learn its
# output, and utils.get_fake_value breaks on UnsupportedOperatorException. torch 2.5-2.6 name the
# op in the reason ("unsupported operator: _C.rotary_embedding.default (see … for how to fix)",
# vllm-ascend#1962); 2.7 on only in the Developer debug context of GB0090 "Operator does not
# support running with fake tensors" (vllm-ascend#2235), whose hint is a doc link, prefixed by
# "…you may need to `import M`(…), otherwise" where a Python stub module names one. The op is
# printed as its OpOverload ("ns.name.overload"); register_fake takes "ns::name". Applied:
# tests/integration/test_fake_kernel_fix.py (a Library op with a CPU kernel only: 3 graphs, f's
# two and the op's Python kernel; 1 with the fake kernel registered). (A torch.library.custom_op without one fails otherwise:
# 2.15's TorchRuntimeError "There was no fake impl registered for <CustomOpDef(…)>".)
_NO_FAKE_RE = re.compile(r"unsupported operator: (?P<op>[A-Za-z_][\w.]{0,300})")
_STUB_RE = re.compile(r"you may need to `import (?P<m>[\w.]{1,200})`")
_TORCH_OPS = ("aten", "prims", "prim")


def _fake_kernel_fix(b: GraphBreakReport, known: Releases | None = None) -> str:
    """Register a fake kernel for the op torch ran without one, named; "" where the break is
    not that or the log does not name the op. The API is the one of the releases the record's
    form tells, else those the whole input tells (``known``: a trace's version, the other
    records' form)."""
    m = next((m for t in (b.debug, b.reason, b.explanation)
              if (m := _NO_FAKE_RE.search(t)) is not None), None)
    if m is None:
        return ""
    op = m["op"].rstrip(".")
    parts = op.split(".")
    if parts[0] in _TORCH_OPS:
        return (f"{op} is torch's own operator and has no fake kernel: report it to PyTorch; "
                "meanwhile keep the call out of the compiled function")
    qual = _qualname(parts)
    stub = next((s for t in (*b.hints, b.reason) if (s := _STUB_RE.search(t)) is not None), None)
    first = (f"import {stub['m']} before compiling (torch's hint: {qual or op}'s fake kernel "
             "may be registered there); otherwise " if stub else "")
    # the releases the break's form tells (the debug context's is 2.7's; the import hint 2.3's),
    # else the input's; the words "unsupported operator" are 2.1's on (2.0.1's get_fake_value,
    # utils.py:1150-1172, has no such break: its fake tensors run an op without a meta kernel
    # on the real kernel, fake_tensor.py:1171)
    told = of_break(b.releases, bool(b.debug))
    low, high = told[:2] if told is not None else (
        (known.low, known.high) if known is not None else (1, None))
    low = max(low, 3 if stub else 1)
    call = _fake_api(qual, op, low, high if high is None or high >= low else None)
    return (f"{first}register a fake kernel for {qual or op}, which dynamo runs on fake tensors "
            f"to trace the call: {call} {_FAKE_BODY}")


# The API that registers a fake kernel, by the first 2.x release it is the one to use (read in
# each wheel's torch/library.py and torch/_custom_ops.py): torch.library.register_fake from 2.4
# (2.4.0 library.py:546; impl_abstract its deprecated alias there), torch.library.impl_abstract
# in 2.2-2.3 (2.2.2:356, 2.3.1:383), torch._custom_ops.impl_abstract in 2.1 (2.1.0
# _custom_ops.py:181, which finds the op's default overload only: _custom_op/impl.py get_op;
# torch 2.1 does not import torch._custom_ops: "module 'torch' has no attribute '_custom_ops'").
# Applied: register_fake in tests/integration/test_fake_kernel_fix.py (CI: 2.4.1 to 2.15);
# torch.library.impl_abstract on torch 2.3.1 and torch._custom_ops.impl_abstract on 2.1.0 by
# hand (docs/torch-versions.md, round 25)
_FAKE_APIS = ((4, None, "torch.library.register_fake"), (2, 3, "torch.library.impl_abstract"),
              (1, 1, "torch._custom_ops.impl_abstract"))


def _fake_api(qual: str, op: str, low: int, high: int | None) -> str:
    """The call that registers ``qual``'s fake kernel in torch 2.``low`` to 2.``high`` (None:
    the newest): the one API those releases have, or each with the releases it is for."""
    fits = [(max(lo, low), hi if high is None else high if hi is None else min(hi, high), api)
            for lo, hi, api in _FAKE_APIS
            if (high is None or lo <= high) and (hi is None or hi >= low)]
    calls: list[tuple[str, str]] = []
    for lo, hi, api in fits:
        call = (f"{api}(\"{qual}\")" if qual else api if calls else
                f"{api} with its \"namespace::name\" (cut to {op} here)")
        if api.startswith("torch._custom_ops"):  # (2.1's torch does not import it)
            call = (f"{api} (which registers default overloads only, not {qual})" if "." in qual
                    else call) + " (import torch._custom_ops first)"
        calls.append((call, span(lo, hi)))
    if len(calls) == 1:
        return calls[0][0]
    (call, on), rest = calls[0], calls[1:]
    return f"{call} ({on}; " + ", ".join(f"{c} on {r}" for c, r in rest) + ")"


def _qualname(parts: list[str]) -> str:
    """The name register_fake takes ("ns::name", "ns::name.overload") for an op torch printed
    as its OpOverload's parts ("ns", "name", "overload"): the overload kept unless it is the
    default (torch finds a fake kernel by ``OpOverload.name()``, "ns::name.out", so
    "ns::name" registers the default overload only); "" for a name cut to one part."""
    if len(parts) < 2 or not all(parts[:2]):
        return ""
    over = parts[2] if len(parts) > 2 and parts[2] != "default" else ""
    return f"{parts[0]}::{parts[1]}" + (f".{over}" if over else "")


# what a fake kernel is, and the other way out (both fixes of an op without one)
_FAKE_BODY = ("on a function of the op's inputs that returns empty tensors of the outputs' "
              "shapes, dtypes and devices (torch.empty_like(x), say); or keep the call out of "
              "the compiled function")
# A torch.library.custom_op with no fake kernel (2.15's words, torch/_library/custom_ops.py):
# dynamo's fake-tensor run of the call raises "There was no fake impl registered for
# <CustomOpDef(ns::op)>. … Please use `op.register_fake` to add an fake impl." inside a
# TorchRuntimeError ("RuntimeError when making fake tensor call", GB4315): the program stops, and
# the break's record quotes it. Applied: tests/integration/test_custom_op_fake_fix.py.
_NO_FAKE_IMPL_RE = re.compile(r"There was no fake impl registered for "
                              r"<CustomOpDef\((?P<op>[\w.]{1,200}::[\w.]{1,200})\)>")
_REGISTER_HINT_RE = re.compile(r"Please use `(?P<py>[A-Za-z_][\w.]{0,200})\.register_fake`")


def _no_fake_impl_fix(text: str) -> str:
    """Register the custom op's fake kernel, as torch's hint says; "" where ``text`` is not
    torch's error for a custom op without one."""
    m = _NO_FAKE_IMPL_RE.search(text)
    if m is None:
        return ""
    hint = _REGISTER_HINT_RE.search(text)
    how = (f"@{hint['py']}.register_fake (torch's hint)" if hint is not None else
           f"torch.library.register_fake(\"{m['op']}\")")
    return (f"register a fake kernel for the custom op {m['op']}, which dynamo runs on fake "
            f"tensors to trace the call: {how} {_FAKE_BODY}")


def _break_no_fake_impl(b: GraphBreakReport) -> str:
    return _no_fake_impl_fix(f"{b.explanation}\n{b.reason}\n{b.debug}")


def _polyfill_caller(b: GraphBreakReport) -> str | None:
    """The user's call (``file:12 in fn``) that reached a break placed in torch's polyfills,
    where the log shows it as the frame that called the polyfill (through the polyfills it
    called: the analyzer skips them); None otherwise."""
    if not b.file or not is_polyfill_file(b.file) or not b.call_sites:
        return None
    at = call_site(b.call_sites[0])
    return b.call_sites[0] if at is not None and not is_torch_file(at[0]) else None


# torch's answer for breaks whose hints the paste cut (or a release that printed none), in
# torch's words where it has them: GB0088 "Observed exception" (2.15's hint: an exception the
# traced code raises, pytorch#173231), GB0059 "Failed to trace builtin operator" (its first hint
# names the builtin and types, pytorch#167266), and torch._dynamo.graph_break() called by the
# code, 2.3-2.6's "skip function graph_break in file …/_dynamo/decorators.py" (pytorch#124900),
# 2.7 on GB0025, whose hint is "Remove the `torch._dynamo.graph_break()` call."
_OBSERVED = "Observed exception"
_OBSERVED_FIX = ("the compiled code raised an exception{reached} that nothing inside the "
                 "compiled function catches (your code may raise it uncompiled too): run it "
                 "uncompiled (remove torch.compile{stance}) to see the error, and fix it in "
                 "your code (torch's hint)")
# (torch.compiler.set_stance is 2.6's: releases.FIRST)
_STANCE = ", or torch.compiler.set_stance(\"force_eager\")"
_OPERATOR_RE = re.compile(r"trace builtin operator `(?P<op>[^`]{1,100})` with argument types "
                          r"(?P<types>\[[^\]]{0,300}\])")
_SKIPPED_BREAK_RE = re.compile(r"(?:skip function|call_function) graph_break in "
                               r"(?:file|skip_files) \S{0,1024}_dynamo[/\\]decorators\.py")
_CALLED_BREAK_FIX = ("the code calls torch._dynamo.graph_break(): a break it asks for; remove "
                     "the call (torch's hint since 2.7) to compile across it")


# GB0007/GB0008 (2.7 on): a call of a function dynamo's trace rules skip, its file in the
# Explanation ("marked that the function `_immutable_list_unflatten` in file `…/torch/fx/
# immutable_collections.py` should not be traced"; the inline form names no file) and its module
# in the Developer debug context. torch's first hint is "Avoid calling the function …"; where the
# function is torch's own private one, the code that called it is more often torch's than the
# user's (pytorch#155426: a nightly's regression reached it from pytree's unflatten, nequip's
# code never names it), and the log without the break's user stack cannot say whose it is
_SKIPPED_TYPES = ("Attempted to call function marked as skipped",
                  "Attempted to inline function marked as skipped")
_SKIPPED_FN_RE = re.compile(r"marked that the function `(?P<fn>[^`]{1,300})` in file "
                            r"`(?P<file>[^`]{1,1000})`")
_SKIPPED_MODULE_RE = re.compile(r"\bmodule: (?P<mod>[\w.]{1,300}), qualname: ")


def _torch_skipped_fix(b: GraphBreakReport) -> str:
    """The fix of a skipped function that is torch's own private one, where the log does not
    place the break (a placed break in torch's file is said as such above); "" otherwise."""
    if b.file or not b.reason.startswith(_SKIPPED_TYPES) \
            or (m := _SKIPPED_FN_RE.search(b.explanation)) is None:
        return ""
    fn = m["fn"].rsplit(".", 1)[-1]
    if not fn.startswith("_") or fn.startswith("__") or not is_torch_file(m["file"]):
        return ""
    mod = _SKIPPED_MODULE_RE.search(b.debug)
    name = f"{mod['mod']}.{m['fn']}" if mod is not None else f"{m['fn']} ({m['file']})"
    return (f"{name} is torch's own private function, which code inside torch calls more often "
            f"than yours: where your code calls it, avoid the call (torch's hint); where it does "
            f"not, torch's own code broke on its trace rules (a torch regression or limit): try "
            f"another torch release and report it to PyTorch. The break's user stack (its message's "
            f"'from user code:', or TORCH_LOGS=\"graph_breaks\") shows the line that reached it")


def _cut_hint_fix(b: GraphBreakReport) -> str:
    """torch's answer for a break whose hints the log lacks, or "" where dyncli knows none."""
    if (m := _OPERATOR_RE.search(b.explanation)) is not None:
        return (f"avoid calling builtin `{m['op']}` with argument types {m['types']} inside the "
                f"compiled function, or use an equivalent function or method (torch's hint)")
    if _SKIPPED_BREAK_RE.search(b.reason) is not None:
        return _CALLED_BREAK_FIX
    return ""


# a logger's method in the compiled code: torch 2.4-2.10 word it "Logger not supported for
# non-export cases. … adding logging methods to config.ignore_logger_methods" (variables/misc.py,
# one line, no hint: trl#3839 read "move the untraceable call out", for transformers' own
# logger.warning_once); 2.11 on, GB0291, whose hints name the class's method and
# ignore_logging_functions (ignore_logger_methods is its alias there). Torch checks the bound
# method and its __func__ against the set, so the class's method covers every logger of the
# class. Applied: tests/integration/test_logger_fix.py (transformers' warning_once), and
# tests/integration/test_logger_thread_fix.py (logging's info, on the thread that calls the
# compiled function; made on the main thread only, it does not reach a worker's compile).
_LOGGER_OLD = "Logger not supported for non-export cases"
_LOGGER_GB = "logging.Logger method not supported for non-export cases"
_CLASS_METHOD_RE = re.compile(r"add the class method `(?P<m>[\w.]{1,200})`")
_CALLED_RE = re.compile(r"^[\w.]{0,200}\.(?P<m>\w{1,80})\s*\(")


# a break at warnings.warn in each release's words: 2.4's "unsupported Python builtin
# _warnings.warn.", 2.5's "unsupported builtin _warnings.warn.", 2.6 on "trace the (Python)
# builtin `_warnings.warn`"
_WARN_BREAK_RE = re.compile(r"(?:unsupported (?:Python )?builtin |trace the (?:Python )?builtin `)"
                            r"_?warnings\.warn(?:[.`]|$)")


def _logging_fix(b: GraphBreakReport) -> str:
    """The setting that skips a logger's method under compile, named for the call that broke
    (``logging.Logger.warning_once``), or "" where the break is not a logger's."""
    old = _LOGGER_OLD in b.reason
    if not old and b.gb_type != _LOGGER_GB:
        return ""
    setting = ("torch._dynamo.config.ignore_logger_methods" if old else
               "torch._dynamo.config.ignore_logging_functions")
    named = next((m["m"] for h in b.hints if (m := _CLASS_METHOD_RE.search(h))), "")
    if not named and (m := _CALLED_RE.search(b.code.strip())):
        named = f"logging.Logger.{m['m']}"
    what = (f"{setting}.add({named}) before compiling" if named else
            f"add the logger method called there to {setting} before compiling")
    # (a set in torch's config: a per-thread copy from 2.12, as warnings.warn's fix says)
    return (f"{what}, {ON_CALLING_THREAD} {PER_THREAD} — torch's own answer: dynamo skips the "
            "call, so that message is not logged while the code runs compiled; a method of the "
            "logger's class covers every logger of that class, a library's too; or call the "
            "logger outside the compiled function")


# compiling the DDP wrapper: distributed.py marks _inside_ddp_forward skipped ("dynamo only kicks
# in for the 'module_to_run' underneath"), so DDP's own forward (its logger, its buffer sync)
# breaks by design; 2 gloo ranks on torch 2.15 (test_ddp_fixes.py) break at that context manager
# and at Logger.set_runtime_stats_and_log, and the module inside compiles as a frame of its own
_DDP_FILE = "nn/parallel/distributed.py"
_DDP_SKIP = "DistributedDataParallel._inside_ddp_forward"
_DDP_WRAPPER_FIX = (
    "the break is in DDP's own forward, which torch leaves uncompiled on purpose when the DDP "
    "wrapper is compiled: the module inside DDP still compiles as a frame of its own "
    "(distributed.py: _inside_ddp_forward is skipped so that \"dynamo only kicks in for the "
    "module_to_run underneath\"); nothing of yours to move. DDP(torch.compile(model)) has no such "
    "break, at the cost of DDP's bucket-by-bucket overlap of the gradient all-reduce")


def _in_ddp_wrapper(b: GraphBreakReport) -> bool:
    """A break in DDP's forward: at distributed.py, at the skipped context manager torch names,
    or (a paste cut before the break's place) reached from DDP's forward."""
    if _DDP_SKIP in b.explanation or _DDP_SKIP in b.reason:
        return True
    if b.file:
        return b.file.replace("\\", "/").endswith(_DDP_FILE)
    return any((at := call_site(s)) is not None and at[0].replace("\\", "/").endswith(_DDP_FILE)
               for s in b.call_sites)


# a Python branch on a tensor's value: "generic_jump TensorVariable()" (torch's reason up to
# 2.6, explain()'s too: torchdynamo#1100, lightning-thunder#1810), GB0170 "Data-dependent
# branching" (2.7 on, whose first hint calls it fundamental); torch's own answer is torch.cond
_BRANCH = "generic_jump"
_BRANCH_FIX = ("a Python `if`/`while` on a tensor's value: compute both outcomes and pick with "
               "torch.where, or express it with torch.cond (torch's hint); or move the check "
               "out of the compiled function")


def no_list_helps(diag: Diagnosis) -> dict[str, str]:
    """Allow-list entries (``L['x']:0``, ``L['n']``) this diagnosis shows no list entry lowers
    the compiles of, and why: what ``dyncli suggest --from-trace`` leaves out (issue 26).

    A size or int specialized at every value (two compiles or more, or by the guard limit), a
    dim the code marks static, a tensor whose mark_dynamic dims change between calls, a float.
    """
    out: dict[str, str] = {}
    for (_, src, dim), specs in size_pins(diag).items():
        if pinned_always(specs):
            why = ("the guard limit (symbol_guard_limit_before_specialize) specializes it"
                   if any(s.reason == "forcing_spec" for s in specs) else
                   "code specializes it at every value")
            out.setdefault(f"{src}:{dim}", f"{why}, so each new size compiles again")
    for s in diag.specializations:
        if s.sources and size_source(s.sources[0]) is None:
            specs = [x for x in diag.specializations if x.sources == s.sources]
            if pinned_always(specs):
                out.setdefault(s.sources[0], "code specializes it at every value, so each "
                                             "new value compiles again")
    for _, src, dims in diag.marked_static:
        for dim in dims:
            out.setdefault(f"{src}:{dim}", "the code marks it static (mark_static), which no "
                                           "list entry overrides")
    for r in diag.recompiles:
        if any(gt.dynamic_indices(x) for x in r.reasons):
            frame = next((f for f in diag.frames if f.rank == r.rank
                          and f.function == r.function), None)
            for src, ds in (frame.dynamic_dims if frame else ()):
                for dim in ds:
                    out.setdefault(f"{src}:{dim}", "the code marks different dims of it "
                                                   "dynamic on different calls (mark_dynamic); "
                                                   "mark the same dims every time")
    for r in diag.recompiles:
        if r.cause != "scalar":
            continue
        for x in r.reasons:
            text = gt.guard_of(x)
            parts = gt.compared(text)
            if gt.classify(text) == "scalar" and len(parts) == 2 and gt.is_float(parts[1]):
                out.setdefault(from_reason(parts[0]),
                               "a float: no list makes it dynamic; pass it as a 0-d tensor "
                               f"({guard_kinds.FLOAT_RELEASES})")
    return out

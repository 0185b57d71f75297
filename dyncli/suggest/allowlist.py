"""PGO state → :class:`~dyncli.suggest.result.AllowList`: which recorded inputs go in which list.

Owns the choice: per frame, each input's status (suggested, static, param, excluded, stale,
no-fix); per source, its dims across frames, split into the dynamic, unbacked and static lists
for the target torch; and the warnings and notes that say what was left out and why. How an
entry's text is written is ``entry_text``'s; the result records are ``result``'s.
"""

from __future__ import annotations

import re

from dyncli.config import SuggestConfig
from dyncli.errors import UsageError
from dyncli.quoting import representable, shell_quote
from dyncli.sources import PER_DIM_SINCE, local_expr, source_regex
from dyncli.sources import left_out as is_left_out
from dyncli.suggest.entry_text import NameIndex, pattern_for
from dyncli.suggest.pgo_state import Entry, PgoState
from dyncli.suggest.result import (
    ENV_VAR,
    AllowList,
    FrameInputs,
    FrameRef,
    InputRow,
    SourceSuggestion,
)
from dyncli.suggest.source_lists import (
    DYNAMIC,
    SPECS,
    STATIC,
    UNBACKED,
    Pattern,
    SourceList,
    Target,
    resolve_target,
    split_dims,
)
from dyncli.suggest.stale import StaleFrame
from dyncli.textsafe import visible

# older targets get whole-source entries (dyncli.sources.PER_DIM_SINCE: the release that reads
# an entry's ``:N``)
DIM_SUFFIX_SINCE = PER_DIM_SINCE

_RESUME_PREFIX = "torch_dynamo_resume_in_"

# Issue 33: an int beside a branch on one value (`if n == 33`) leaves the same state as a float
# or an int specialized at every value, and torch's hint (which lists it) lowers its compiles.
# The state cannot tell them apart, so the list keeps what torch's hint keeps and says why it
# may lower nothing: a harmless extra entry costs less than a missed one.
_NUMBER_MAY = ("may lower no compiles: the PGO state does not show it is an int that stays "
               "dynamic once listed (torch records the int a scalar leaves when it turns "
               "dynamic; a float leaves none, and no list makes a float dynamic; nor does one "
               "help an int the code specializes at every value, whose frame compiles again), "
               "but an int beside a branch on one value leaves the same state and needs it; "
               "listed as torch's own hint lists it. `dyncli suggest --from-trace` or "
               "`dyncli diagnose` on the run's TORCH_LOGS=\"recompiles\" log tells which")


def _compile(pattern: str | None, option: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return source_regex(pattern)
    except (re.error, RecursionError, OverflowError) as e:
        raise UsageError(f"{option}: not a valid regex {pattern[:80]!r}: "
                         f"{e if isinstance(e, re.error) else 'nested too deeply'}") from None


def _kind(entry: Entry) -> str:
    return "tensor" if entry.is_tensor else "scalar"


def _local_expr(source: str, frames: list[FrameRef]) -> str | None:
    """``L['x']`` → ``x``, ``L['kwargs']['ids']`` → ``kwargs['ids']`` (user frames only)."""
    if all(f.function.startswith(_RESUME_PREFIX) for f in frames):
        return None
    return local_expr(source)


def _across_frames(entries: list[Entry]) -> tuple[str, int, tuple[int, ...], set[int]]:
    """(kind, rank, dynamic dims, dims seen with size 0/1) of one source over its frames.

    The allow-list is global, so a dim is listed when it is dynamic in *any* frame; unlike
    torch's own merge, two frames that each keep a dim at a different static size do not make
    it dynamic. A rank that differs between frames, or is unknown, means the whole source.
    """
    ranks = {len(e.size) if isinstance(e.size, tuple) else -1 for e in entries}
    if len(ranks) != 1 or -1 in ranks:
        return ("tensor" if ranks - {-1} else "scalar"), 0, (), set()
    rank = ranks.pop()
    dyn = sorted({d for e in entries for d in e.dynamic_dims()})
    small = {d for e in entries for d in e.small_sizes}
    return "tensor", rank, tuple(dyn), small


def build_allowlist(state: PgoState, cfg: SuggestConfig, *, target: Target | None = None,
                    static: tuple[Pattern, ...] = (), unbacked: bool = True,
                    stale: tuple[StaleFrame, ...] = (), include_stale: bool = False,
                    no_fix: dict[str, str] | None = None) -> AllowList:
    """Turn merged PGO state into the source lists, applying the filters of ``cfg``.

    ``target``: the torch to write for (default: ``cfg.torch_version``, else the installed
    torch, else the newest known). ``static``: entries for TORCH_COMPILE_STATIC_SOURCES, kept
    out of the other lists. ``unbacked``: dims seen with size 0 or 1 go to
    TORCH_COMPILE_UNBACKED_SOURCES (else they stay dynamic, for ``maybe_mark_dynamic``).
    ``stale``: frames whose file changed; their sources are left out unless ``include_stale``.
    ``no_fix``: entries (``L['x']:0``, ``L['n']``) a diagnosis of the same run shows no list
    entry helps, with why (``--from-trace``); they are left out, each with a note.
    """
    no_fix = dict(no_fix or {})
    frame_rx = _compile(cfg.frame, "--frame")
    exclude_rx = _compile(cfg.exclude, "--exclude")
    if target is None:
        target = resolve_target(cfg.torch_version)
    per_dim = target.minor >= DIM_SUFFIX_SINCE
    stale_at = {(s.file, s.line, s.function) for s in stale}
    all_names = NameIndex({src for _, entries in state.frames.values() for src in entries})

    # source -> (its entries in the frames where it is dynamic, those frames)
    chosen: dict[str, tuple[list[Entry], list[FrameRef]]] = {}
    static_in: dict[str, list[FrameRef]] = {}
    reports: list[FrameInputs] = []
    left_out: dict[str, None] = {}
    unfixed: dict[str, str] = {}
    maybe_not: dict[str, str] = {}  # listed, but the state cannot show the entry helps
    torch_hint: dict[str, None] = {}
    unsafe: dict[str, None] = {}
    for key, entries in state.frames.values():
        ref = FrameRef(key.name, key.filename, key.line)
        if frame_rx is not None and not frame_rx.search(ref.label()):
            continue
        frame_stale = (ref.file, ref.line, ref.function) in stale_at and not include_stale
        rows = []
        for source, entry in entries.items():
            if not representable(source):  # a control character: no form could show it safely
                unsafe[source] = None
                continue
            dynamic = entry.is_dynamic
            if dynamic:
                torch_hint[source] = None
            if not dynamic:
                status = "static"
                static_in.setdefault(source, []).append(ref)
            elif exclude_rx is not None and exclude_rx.search(source):
                status = "excluded"
            elif frame_stale:
                status = "stale"
            elif not cfg.include_params and is_left_out(source):
                status = "param"
                left_out[source] = None
            elif source in no_fix:
                status = "no-fix"
                unfixed.setdefault(source, no_fix[source])
            elif not entry.is_tensor and entry.int_seen is False and not is_left_out(source):
                # (a module's int attribute is static by default: its frame compiles at each
                # value whatever automatic dynamic says, so the state shows nothing there)
                # a float (no list makes it dynamic), an int its frame compiled again after it
                # went dynamic (code that specializes it at every value, or only at one value
                # beside a branch), which the state cannot tell apart: listed as torch's hint
                # lists it (issue 33), with why it may lower nothing
                status = "suggested"
                maybe_not.setdefault(source, _NUMBER_MAY)
                seen, refs = chosen.setdefault(source, ([], []))
                seen.append(entry)
                refs.append(ref)
            else:
                status = "suggested"
                seen, refs = chosen.setdefault(source, ([], []))
                seen.append(entry)
                refs.append(ref)
            row_dims = entry.dynamic_dims() if entry.is_tensor else None
            rows.append(InputRow(source, entry, _kind(entry), row_dims, status,
                                 is_left_out(source)))
        if rows:
            reports.append(FrameInputs(ref, tuple(rows)))

    warnings: list[str] = []
    notes: list[str] = []
    if unsafe:
        shown = ", ".join(visible(n)[:80] for n in list(unsafe)[:3]) + (" …" if len(unsafe) > 3 else "")
        warnings.append(f"left out {len(unsafe)} source name(s) holding control characters, which "
                        f"no shell, TOML or Python line could carry safely: {shown}")
    if frame_rx is not None and not reports and state.frames:
        warnings.append(f"--frame {cfg.frame!r} matched none of the {len(state.frames)} frames")
    sources = []
    pinned: list[str] = []
    for source, (seen, refs) in chosen.items():
        pattern, escaped = pattern_for(source, all_names, warnings)
        kind, rank, dyn, small = _across_frames(seen)
        gone = [d for d in dyn if f"{source}:{d}" in no_fix]
        if gone:  # dims the trace shows pinned: the list cannot make them dynamic for good
            for d in gone:
                unfixed.setdefault(f"{source}:{d}", no_fix[f"{source}:{d}"])
            dyn = tuple(d for d in dyn if d not in gone)
            if not dyn:
                continue
        split = split_dims(source, kind, rank, dyn, small, static, unbacked and per_dim)
        if split.all_static:
            pinned.append(source)
            continue
        keep = split.dynamic
        dims: tuple[int, ...] | None = None
        if kind == "tensor" and per_dim and len(keep) < rank:
            dims = keep
        texts = tuple(f"{pattern}:{d}" for d in dims) if dims is not None else (pattern,)
        maybe = tuple(d for d in keep if d in small)
        unb = tuple(f"{pattern}:{d}" for d in split.unbacked)
        if split.static and not per_dim:
            notes.append(f"{source}: --static dims {list(split.static)} stay in the whole-source "
                         f"entry (torch {target.version} has no ':N' suffix)")
        sources.append(SourceSuggestion(source, kind, dims, texts, tuple(refs), maybe, escaped,
                                        _local_expr(source, refs) if keep else None, keep,
                                        split.unbacked, unb, split.static))
        if source in static_in:
            where = ", ".join(f.label() for f in static_in[source])
            notes.append(f"{source} is also an input of {where}, static there; "
                         "the allow-list entry makes it dynamic in every frame")
    unsettled = [src.source for src in sources
                 if src.kind == "tensor" and all(e.settled is False for e in chosen[src.source][0])]
    if unsettled:
        shown = ", ".join(unsettled[:10]) + (" …" if len(unsettled) > 10 else "")
        notes.append(f"{shown}: the state shows their frame compiled again after they turned "
                     "dynamic (torch keeps no sizes they left), which a benign recompile does, and "
                     "so do a mark_static call, code that specializes the size at every value and "
                     "the guard limit, where no list entry lowers the compiles; the state cannot "
                     "tell which: `dyncli suggest --from-trace` (or `dyncli diagnose` on a "
                     "TORCH_LOGS=\"+dynamic,recompiles,guards\" log) leaves those out")
    for source, why in list(maybe_not.items())[:20]:
        notes.append(f"{source} {why}")
    for source, why in list(unfixed.items())[:20]:
        notes.append(f"left out {source}: {why}; torch's own hint lists it, and lowers no "
                     "compiles there")
    if len(unfixed) > 20:
        notes.append(f"… and {len(unfixed) - 20} more left out for the same reasons (--json)")
    if left_out:
        shown = ", ".join(list(left_out)[:10]) + (" …" if len(left_out) > 10 else "")
        notes.append(f"left out {len(left_out)} dynamic parameter/module-attribute/global source(s) "
                     "that torch's own hint includes: each costs at least one more compile per "
                     "run (a static first compile, then a recompile when it changes); "
                     "--include-params keeps them: " + shown)
    if not per_dim:
        notes.append(f"torch {target.version} ({target.origin}): whole-source entries (the ':N' dim "
                     f"suffix is only emitted for torch >= {DIM_SUFFIX_SINCE[0]}.{DIM_SUFFIX_SINCE[1]})")
    lists = _lists(sources, static, target, notes)
    if pinned:
        notes.append(f"kept static by --static, out of every list: {', '.join(pinned[:10])}"
                     + (" …" if len(pinned) > 10 else ""))
    if stale and not include_stale:
        notes.append(f"left out the sources of {len(stale)} stale frame(s) (their file changed since "
                     "torch recorded them); --include-stale keeps them")
    hint = ",".join(torch_hint)
    return AllowList(
        frames=tuple(reports), sources=tuple(sources), inputs=tuple(state.inputs),
        skipped=tuple(state.skipped), jobs=tuple(state.jobs), warnings=tuple(warnings),
        notes=tuple(notes), left_out=tuple(left_out),
        torch_hint=f"{ENV_VAR}={shell_quote(hint)}" if hint else "", per_dim=per_dim,
        lists=lists, target=target, stale=stale,
    )


def _lists(sources: list[SourceSuggestion], static: tuple[Pattern, ...], target: Target,
           notes: list[str]) -> tuple[SourceList, ...]:
    """The three lists for ``target``, with a note for each one it does not read."""
    entries = {
        DYNAMIC: tuple(e for s in sources for e in s.entries),
        UNBACKED: tuple(e for s in sources for e in s.unbacked_entries),
        STATIC: tuple(p.text for p in static),
    }
    out = []
    for name, spec in SPECS.items():
        read = target.reads(spec)
        out.append(SourceList(name, spec.env_var, spec.config, entries[name], read))
        if entries[name] and not read:
            notes.append(f"torch {target.version} ({target.origin}) does not read {spec.env_var} "
                         f"(torch >= {spec.since[0]}.{spec.since[1]} does): left out of the fix"  # type: ignore[index]
                         + ("; the --static entries were kept out of the other lists, but automatic "
                            "dynamic can still make them dynamic" if name == STATIC else ""))
        elif entries[name] and spec.verified_since and target.minor < spec.verified_since:
            v = spec.verified_since
            notes.append(f"{spec.env_var}: checked in torch >= {v[0]}.{v[1]} only; "
                         f"confirm torch {target.version} reads it (torch/compiler/config.py)")
    if entries[UNBACKED] and target.reads(SPECS[UNBACKED]):
        notes.append(f"{SPECS[UNBACKED].env_var}: dims seen with size 0 or 1 are made unbacked, so "
                     "sizes 0/1 share the graph of the others; code that branches on such a size "
                     "then fails with a data-dependent error: --no-unbacked keeps them dynamic")
    return tuple(out)

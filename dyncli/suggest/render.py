"""Render a :class:`~dyncli.suggest.result.AllowList`: the fix on stdout, the report on stderr.

stdout carries only the fix in the chosen form, so ``eval "$(dyncli suggest --format shell …)"``
and redirects work; the per-frame table, notes and warnings go to stderr.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from dyncli.output import cell_text, info, line_text, stderr_console, to_json_text, warn, write_json
from dyncli.quoting import py_comment, py_str, shell_quote, toml_comment, toml_str
from dyncli.suggest.result import ENV_VAR, AllowList
from dyncli.textsafe import visible

if TYPE_CHECKING:  # --list-jobs only
    from dyncli.suggest.joblist import JobListing

FORMATS = ("env", "shell", "toml", "python", "json")


def _toml(s: AllowList) -> str:
    lines = [f"# dyncli suggest: torch.compiler.config.dynamic_sources ({ENV_VAR}), one entry a line.",
             "# Paste into autodyn.toml ([tool.dyncli.bench] in a pyproject.toml) and measure it with",
             "#   dyncli bench MODEL --strategy automatic,sources",
             "# Joined with commas, it is the environment variable:",
             toml_comment(f"{ENV_VAR}={shell_quote(s.value)}"),
             "[bench]",
             "dynamic_sources = ["]
    for src in s.sources:
        where = ", ".join(f"{f.file}:{f.line} {f.function}" for f in src.frames)
        for entry in src.entries:
            lines.append(f"  {toml_str(entry)},  {toml_comment(where)}")
    lines.append("]")
    others = [sl for sl in s.emitted if sl.name != "dynamic" and sl.entries]
    if others:
        # [bench] has a key for the dynamic list only; the others are set in the environment.
        # json.dumps escapes every control character, so an entry cannot end the comment line.
        lines.append("# [bench] reads dynamic_sources only; set these lists in the environment "
                     "(dyncli suggest --format shell):")
        for sl in others:
            lines.append(f"# {sl.env_var} = [{', '.join(json.dumps(e) for e in sl.entries)}]")
    return "\n".join(lines) + "\n"


def _environ_lines(s: AllowList, unreached: list[str]) -> list[str]:
    """``os.environ`` lines for the lists, run before torch is imported.

    torch reads ``TORCH_COMPILE_*`` once, as the default of its config; a default (unlike a
    ``torch.compiler.config.X = …`` override, which is thread-local) holds on every thread.
    The dynamic list holds only ``unreached``: the sources no ``maybe_mark_dynamic`` call
    reaches (ints, attributes, graph-break resume frames); the marks below do the rest.
    """
    lists = [(ENV_VAR, ",".join(unreached))] if unreached else []
    lists += [(sl.env_var, sl.value) for sl in s.emitted if sl.name != "dynamic" and sl.entries]
    if not lists:
        return []
    lines = ["import os", "",
             "# Before torch is imported: torch reads these once, as defaults every thread sees."]
    if unreached:
        lines.append("# (sources mark_dynamic cannot reach: ints, attributes, graph-break resume frames)")
    lines += [f"os.environ[{py_str(var)}] = {py_str(value)}" for var, value in lists]
    return [*lines, ""]


def _python(s: AllowList) -> str:
    # Round 26: the unreached sources were a `torch.compiler.config.dynamic_sources = …` line,
    # a thread-local override: a thread that compiled did not see it.
    rest = [e for src in s.sources if src.local is None for e in src.entries]
    environ = _environ_lines(s, rest)
    lines = [*environ, "import torch", ""]
    seen: dict[tuple[str, int, str], list[str]] = {}
    for src in s.sources:
        if src.local is None:
            continue
        # maybe_mark_dynamic for every dim: PGO state records that a dim changed, not whether
        # code pins it (a branch on the size, a layer's weight); mark_dynamic raises
        # ConstraintViolationError there, maybe_mark_dynamic lets torch specialize that dim.
        ds = list(src.dynamic_dims)
        calls = [f"torch._dynamo.maybe_mark_dynamic({src.local}, {ds[0] if len(ds) == 1 else ds})"]
        # under EVERY frame that has the source (issue 21): a mark under the first one only
        # left the others recompiling
        for frame in src.frames:
            if not frame.function.startswith("torch_dynamo_resume_in_"):
                seen.setdefault((frame.file, frame.line, frame.function), []).extend(calls)
    if not seen and not environ:
        lines.append("# nothing to mark dynamic")
    for (file, line, function), calls in seen.items():
        lines.append(py_comment(f"{file}:{line} {function}: before calling it, on the tensors passed in"))
        lines.append("# (maybe_mark_dynamic: dynamic from the first call, yet torch may still "
                     "specialize a dim the code pins)")
        if file.replace("\\", "/").endswith("torch/_dynamo/external_utils.py"):
            lines.append("# (torch's wrapper of a compiled nn.Module: args/kwargs are the model's inputs)")
        lines += calls
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def render_fix(s: AllowList, fmt: str) -> str:
    """The fix as text in one of :data:`FORMATS`."""
    if fmt == "env":
        return s.env + "\n"
    if fmt == "shell":
        return "".join(f"export {a}\n" for a in s.assignments)
    if fmt == "toml":
        return _toml(s)
    if fmt == "python":
        return _python(s)
    return to_json_text(s.to_dict())


MAX_REPORT_FRAMES = 40
# Rows of one frame's table, and of all of them: a frame of 50,000 sources took 14-23 s and
# 197 MB to lay out on the terminal. The rest is counted in a line; --json has every row.
MAX_REPORT_ROWS = 50
MAX_REPORT_TOTAL_ROWS = 400


def _report(s: AllowList) -> None:
    from dyncli.termfit import FitTable  # only for the human report (not with --quiet)

    err = stderr_console()
    budget = MAX_REPORT_TOTAL_ROWS
    for fr in s.frames[:MAX_REPORT_FRAMES]:
        if budget <= 0:
            info(f"… {len(fr.inputs)} inputs of {visible(fr.frame.function)[:80]} and the frames "
                 "after it not shown (all of them are in --json)")
            break
        table = FitTable(title=cell_text(visible(f"{fr.frame.file}:{fr.frame.line} {fr.frame.function}")), title_justify="left",
                         show_edge=False, pad_edge=False)
        for col in ("source", "recorded by torch", "dynamic", "suggest"):
            table.add_column(col, overflow="fold")
        hidden = shown = cut = 0
        for r in fr.inputs:
            if r.status == "static" and r.param:
                hidden += 1  # static module attributes: noise in the human view
                continue
            if shown >= min(MAX_REPORT_ROWS, budget):
                cut += 1
                continue
            shown += 1
            if r.status == "static":
                dyn = "-"
            elif r.dynamic_dims is None:
                dyn = "value" if r.kind == "scalar" else "all"
            else:
                dyn = ",".join(map(str, r.dynamic_dims)) or "-"
            table.add_row(cell_text(visible(r.source)), cell_text(visible(r.render)), dyn, {"suggested": "yes", "static": "-", "param": "left out",
                                                     "excluded": "excluded", "stale": "stale",
                                                     "no-fix": "no fix (note)"}[r.status])
        err.print(table)
        budget -= shown
        if cut:
            info(f"  … {cut:,} more inputs of this frame (all of them are in --json)")
        if hidden:
            info(f"  + {hidden} static parameter/module-attribute inputs (listed in --json)")
    if len(s.frames) > MAX_REPORT_FRAMES:
        info(f"… and {len(s.frames) - MAX_REPORT_FRAMES} more frames (all of them are in --json)")
    if s.torch_hint:
        hint = s.torch_hint if len(s.torch_hint) <= 400 else s.torch_hint[:400] + "… (full text in --json)"
        info(f"torch's own hint: {hint}")


def print_allowlist(s: AllowList, fmt: str, json_path: str | None, quiet: bool = False) -> None:
    """Warnings and the report to stderr, the fix to stdout, and the ``--json`` file."""
    # warn() and the tables show names as text, control characters escaped (dyncli.textsafe).
    for file, error in s.skipped:
        warn(line_text(f"skipped {file}: {error}", 500))
    if len(s.jobs) > 1:
        shown = ", ".join(s.jobs[:5]) + (f", … {len(s.jobs) - 5:,} more" if len(s.jobs) > 5 else "")
        warn(f"merged {len(s.jobs):,} jobs ({shown}); pick one with --job-id")
    for w in s.warnings:
        warn(line_text(w, 500))
    for st in s.stale[:MAX_REPORT_FRAMES]:
        warn(line_text(f"stale: {st.file}:{st.line} {st.function}: the file changed since torch "
                       f"recorded it (hash {st.recorded_hash}, now {st.current_hash} "
                       f"in {st.checked})", 500))
    if len(s.stale) > MAX_REPORT_FRAMES:
        warn(f"… and {len(s.stale) - MAX_REPORT_FRAMES} more stale frames (all of them are in --json)")
    if not quiet:
        if s.target is not None:
            info(line_text(f"target: torch {s.target.version} ({s.target.origin})", 200))
        _report(s)
        for note in s.notes:
            info(f"Note: {note}")
        if not s.sources:
            info("Nothing to allow-list: no recorded input is dynamic"
                 + (" (once the left-out sources above are set aside)." if s.left_out else "."))
    if json_path == "-":  # stdout holds the JSON document alone
        write_json("-", s.to_dict())
        return
    if json_path is not None:
        write_json(json_path, s.to_dict())
    print(render_fix(s, fmt), end="")


def print_jobs(listing: JobListing, json_path: str | None) -> None:
    """``--list-jobs``: one line per job on stdout (or the JSON document)."""
    if json_path is not None:
        write_json(json_path, listing.to_dict())
        if json_path == "-":
            return
    if not listing.jobs:
        info(f"no PGO state in {listing.where}")
    for line in listing.lines():
        print("\t".join(visible(part) for part in line.split("\t")))  # a job name is data

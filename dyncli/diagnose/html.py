"""``dyncli diagnose --html PATH``: the Diagnosis as ONE self-contained HTML file.

Inline CSS and a few lines of inline JS (click a column header to sort); nothing is fetched,
so the file can be mailed, attached to a bug, or opened from a cluster's scratch disk.
Works for text-log diagnoses too; the trace sections (compile time, failures, similar graphs,
ranks, PGO) appear when the input was a TORCH_TRACE trace.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from dyncli import __version__
from dyncli.diagnose.findings import RAISED_MARK, Advice
from dyncli.diagnose.model import Diagnosis, shown_causes
from dyncli.logparse.events import UserLoc
from dyncli.output import write_text
from dyncli.words import counted

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#b9c0cf;font-size:12px;word-break:break-all}
main{padding:8px 28px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:16px 0;padding:12px 18px}
h2{font-size:16px;margin:4px 0 10px}h2 .n{color:#6b7385;font-weight:normal}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #dde1e8;border-radius:6px;padding:8px 14px;min-width:110px;background:#fbfcfd}
.card b{display:block;font-size:22px}.card span{color:#6b7385;font-size:12px}
.card.warn b{color:#b3541e}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceef2;vertical-align:top}
th{background:#f0f2f5;cursor:pointer;user-select:none;white-space:nowrap}
th.sorted-asc:after{content:" \\25B2"}th.sorted-desc:after{content:" \\25BC"}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td{overflow-wrap:anywhere}.scroll{overflow-x:auto}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
code{background:#f0f2f5;padding:1px 4px;border-radius:3px}
pre{background:#f6f7f9;border:1px solid #eceef2;padding:8px;white-space:pre-wrap;margin:4px 0}
.cause{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;color:#fff}
.cause.size{background:#2f7d4f}.cause.stride{background:#2f6a7d}.cause.scalar{background:#9a6a00}.cause.other{background:#8a3b3b}
.muted{color:#6b7385}.empty{color:#6b7385;font-style:italic}
.sugg{border-left:4px solid #3b6fd8;padding:4px 10px;margin:8px 0;background:#f7f9fe}
.sugg .kind{font-size:11px;text-transform:uppercase;color:#3b6fd8;letter-spacing:.04em}
details summary{cursor:pointer;color:#3b6fd8}
"""

_JS = """
document.querySelectorAll('table.sortable th').forEach(function(th){
  th.addEventListener('click',function(){
    var table=th.closest('table'),body=table.tBodies[0],idx=Array.prototype.indexOf.call(th.parentNode.children,th);
    var asc=!th.classList.contains('sorted-asc');
    table.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});
    th.classList.add(asc?'sorted-asc':'sorted-desc');
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){
      var x=a.cells[idx].getAttribute('data-v')||a.cells[idx].textContent,
          y=b.cells[idx].getAttribute('data-v')||b.cells[idx].textContent,
          nx=parseFloat(x),ny=parseFloat(y);
      var c=(!isNaN(nx)&&!isNaN(ny))?nx-ny:x.localeCompare(y);
      return asc?c:-c;});
    rows.forEach(function(r){body.appendChild(r);});
  });
});
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value))


def _user(user: UserLoc | None) -> str:
    if user is None:
        return '<span class="muted">—</span>'
    where = f"{_e(user.file)}:{user.line}" + (f" in {_e(user.function)}" if user.function else "")
    code = f"<br><code>{_e(user.code)}</code>" if user.code else ""
    return f"<span class=\"muted\">{where}</span>{code}"


def _rank(rank: int | None) -> str:
    return "—" if rank is None else str(rank)


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], numeric: Iterable[int] = ()) -> str:
    nums = set(numeric)
    body = "".join("<tr>" + "".join(f'<td class="num">{c}</td>' if i in nums else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>" for row in rows)
    if not body:
        return '<p class="empty">None found.</p>'
    # a numeric column's header is right-aligned like its numbers; long paths wrap inside
    # their cell (overflow-wrap) and a table still too wide scrolls inside its section
    head = "".join(f'<th class="num">{_e(h)}</th>' if i in nums else f"<th>{_e(h)}</th>"
                   for i, h in enumerate(headers))
    return (f'<div class="scroll"><table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def _section(anchor: str, title: str, count: int | None, inner: str) -> str:
    n = f' <span class="n">({count})</span>' if count is not None else ""
    return f'<section id="{anchor}"><h2>{_e(title)}{n}</h2>{inner}</section>'


def _summary(d: Diagnosis) -> str:
    by = d.recompiles_by_cause()
    cards = [("frames", len(d.frames), False), ("compiles", d.compiles, False),
             ("recompiles", len(d.recompiles), bool(d.recompiles)),
             (" / ".join(shown_causes(by)), " / ".join(str(by[c]) for c in shown_causes(by)),
              False),
             ("specializations", len(d.specializations), bool(d.specializations)),
             ("graph breaks", sum(b.count for b in d.graph_breaks), bool(d.graph_breaks)),
             ("unbacked symbols", len(d.unbacked), False)]
    if d.trace is not None:
        cards += [("compile time", f"{d.trace.total_compile_s:.2f} s", False),
                  ("failed compiles", len(d.trace.failures), bool(d.trace.failures)),
                  ("similar graphs", len(d.trace.similar_graphs), bool(d.trace.similar_graphs))]
    if len(d.ranks) > 1 or (d.ranks and d.ranks[0] is not None):
        cards.append(("ranks", len(d.ranks), False))
    html = "".join(f'<div class="card{" warn" if warn else ""}"><b>{_e(v)}</b><span>{_e(k)}</span></div>'
                   for k, v, warn in cards)
    # (the terminal's one line: which torch releases the input came from, where it tells)
    told = f"<p>{_e(d.releases.line())}</p>" if d.releases is not None else ""
    return _section("summary", "Summary", None, f'<div class="cards">{html}</div>{told}')


def _frames(d: Diagnosis) -> str:
    times = {(f.rank, f.frame_id): f.seconds for f in d.trace.frame_times} if d.trace else {}
    rows = []
    for f in d.frames:
        dyn = ", ".join(f"{x.source} ({x.origin}, {x.compile_id})" for x in f.dynamic_inputs)
        dims = ", ".join(f"{s}: dims {','.join(map(str, ds))}" for s, ds in f.dynamic_dims)
        t = times.get((f.rank, f.frame_id))
        rows.append([_rank(f.rank), _e(f.frame_id), f"<code>{_e(f.function)}</code>",
                     f'<span class="muted">{_e(f.file)}:{_e(f.first_line)}</span>', str(f.compiles),
                     "" if t is None else f"{t:.3f}", _e(dyn) or "—", _e(dims) or "—"])
    return _section("frames", "Frames", len(d.frames), _table(
        ["rank", "frame", "function", "file:line", "compiles", "compile s", "became dynamic",
         "dynamic dims (guards)"], rows, numeric=(4, 5)))


def _recompiles(d: Diagnosis) -> str:
    rows = [[_rank(r.rank), _e(r.compile_id), f"<code>{_e(r.function)}</code>",
             f'<span class="cause {_e(r.cause)}">{_e(r.cause)}</span>',
             "".join(f"<pre>{_e(x)}</pre>" for x in r.reasons), _user(r.user)] for r in d.recompiles]
    return _section("recompiles", "Recompiles and their reasons", len(d.recompiles),
                    _table(["rank", "compile", "function", "cause", "guard failures", "user code"], rows))


def _specializations(d: Diagnosis) -> str:
    rows = [[_rank(s.rank), _e(s.compile_id), _e(s.symbol), _e(", ".join(s.sources)), _e(s.value),
             _e(s.reason), _user(s.user), f'<span class="muted">{_e(s.framework)}</span>']
            for s in d.specializations]
    return _section("specializations", "Specializations", len(d.specializations), _table(
        ["rank", "compile", "symbol", "sources", "value", "reason", "user code", "framework"], rows))


def _graph_breaks(d: Diagnosis) -> str:
    rows = [[_e(b.code) or "—", _e(b.place), f"<code>{_e(b.user_code)}</code>",
             _e(b.gb_type) + (f"<br><span class=\"muted\">{_e(b.explanation)}</span>" if b.explanation else "")
             + (f"<br><span class=\"muted\">torch's debug context: {_e(b.debug)}</span>"
                if b.debug and not b.explanation else "")
             + "".join(f"<br>hint: {_e(h)}" for h in b.hints)
             + (f"<br><strong>{RAISED_MARK}</strong>" if b.raised else ""),
             str(b.count), "<br>".join(_e(s) for s in b.call_sites) or "—",
             _e(", ".join(b.frames)) or "—"] for b in d.distinct_graph_breaks]
    return _section("graph-breaks", "Graph breaks (distinct, by torch's code)",
                    len(d.distinct_graph_breaks),
                    _table(["torch code", "where", "code", "type, explanation, hints", "count",
                            "reached from", "frames split"], rows, numeric=(4,)))


def _causes(d: Diagnosis) -> str:
    """The top of the report: root causes ranked by what their fix removes."""
    if not d.causes:
        return ""
    rows = []
    for i, c in enumerate(d.causes, 1):
        kinds = ", ".join(dict.fromkeys(a.kind for a in c.findings)) or c.kind
        rows.append([str(i), "" if c.compile_s is None else f"{c.compile_s:.3f}",
                     str(c.compiles), str(c.recompiles), str(c.graph_breaks),
                     _e(c.ranks_said(d.ranks) + c.title)
                     + f'<br><span class="muted">{_e(kinds)}</span>',
                     f"<code>{_e(c.fix)}</code>" if c.fix else "—"])
    return _section("causes", "What to fix first (root causes, by what the fix removes)",
                    len(d.causes), _table(["#", "compile s", "compiles", "recompiles",
                                           "graph breaks", "cause", "fix"], rows,
                                          numeric=(0, 1, 2, 3, 4)))


def _dynamic_sources(d: Diagnosis) -> str:
    """The one combined allow-list line the terminal prints too."""
    if not d.dynamic_sources:
        return ""
    return ('<p>Dynamic sources (for <code>TORCH_COMPILE_DYNAMIC_SOURCES</code>):</p>'
            f'<pre class="sources">{_e(",".join(d.dynamic_sources))}</pre>')


def _findings(found: tuple[Advice, ...]) -> list[str]:
    items = []
    for s in found:
        fix = f"<pre>{_e(s.fix)}</pre>" if s.fix else ""
        ev = (f"<details><summary>evidence ({len(s.evidence)})</summary><pre>"
              f"{_e(chr(10).join(s.evidence))}</pre></details>") if s.evidence else ""
        rank = f" · rank {s.rank}" if s.rank is not None else ""
        items.append(f'<div class="sugg"><div class="kind">{_e(s.kind)}{rank}</div>'
                     f"<div>{_e(s.message)}</div>{fix}{ev}</div>")
    return items


def _suggestions(d: Diagnosis) -> str:
    if not d.suggestions:
        return _section("suggestions", "Suggestions", 0,
                        _dynamic_sources(d) + '<p class="empty">Nothing to suggest.</p>')
    items = [_dynamic_sources(d), *_findings(d.suggestions)]
    return _section("suggestions", "Suggestions", len(d.suggestions), "".join(items))


def _notes(d: Diagnosis) -> str:
    """Notes: what the log shows with nothing there to fix (none: no section)."""
    if not d.notes:
        return ""
    return _section("notes", "Notes", len(d.notes), "".join(_findings(d.notes)))


def _trace_sections(d: Diagnosis) -> list[str]:
    t = d.trace
    if t is None:
        return []
    compiles = [[_rank(c.rank), _e(c.compile_id), f"<code>{_e(c.function)}</code>",
                 "unknown" if c.seconds is None else f"{c.seconds:.3f}",
                 _e(", ".join(f"{k} {v:.3f}" for k, v in c.phases)) or "—",
                 "—" if c.guard_count is None else str(c.guard_count),
                 "—" if c.guard_latency_us is None else f"{c.guard_latency_us:g}",
                 str(c.attempts), _e(c.fail_type) or "—",
                 "".join(f"<details><summary>restart</summary><pre>{_e(r)}</pre></details>"
                         for r in c.restart_reasons)
                 + (f"<details><summary>failure</summary><pre>{_e(c.fail_reason)}</pre></details>"
                    if c.fail_reason else "")]
                for c in t.compile_times]
    similar = [[_rank(s.rank), f"<code>{_e(s.function)}</code>", _e(", ".join(s.compile_ids)),
                str(s.ops), "<br>".join(f"<code>{_e(src)}</code>: {_e(' vs '.join(sz))}"
                                        for src, sz in s.inputs)] for s in t.similar_graphs]
    ranks = [[_rank(r.rank) + (f" ({_e(r.process)})" if r.process else ""), str(r.frames), str(r.compiles), str(r.recompiles), str(r.failed),
              f"{r.compile_time_s:.3f}", _e(", ".join(r.dynamic)) or "—"] for r in t.ranks]
    div = "".join(f"<div class=\"sugg\"><div class=\"kind\">{_e(x.kind)} divergence</div>"
                  f"{_e(x.message)}</div>" for x in t.divergences)
    pgo = [[_rank(p.rank), f"<code>{_e(p.function)}</code>", _e(", ".join(p.loaded_dynamic)) or "—",
            _e(", ".join(p.recompiles)),
            f"<code>{_e(','.join(p.allow_list))}</code>" if p.allow_list else
            _e("; ".join(f"none helps: {c} {w} at {at}" for c, w, at in p.explained)) or "—"]
           for p in t.pgo]
    out = [
        _section("compiles", "Per-compile details", len(t.compile_times), _table(
            ["rank", "compile", "function", "seconds", "by phase (s)", "guards", "guard µs",
             "attempts", "failed", "details"], compiles, numeric=(3, 5, 6, 7))),
        _section("similar", "Similar graphs (one dynamic graph would do)", len(t.similar_graphs),
                 _table(["rank", "function", "compiles", "ops", "inputs whose sizes differ"],
                        similar, numeric=(3,))),
        _section("ranks", "Ranks", len(t.ranks), _table(
            ["rank", "frames", "compiles", "recompiles", "failed", "compile s", "dynamic"], ranks,
            numeric=(1, 2, 3, 4, 5)) + (div or '<p class="empty">No divergence between ranks.</p>'
                                        if len(t.ranks) > 1 else "")),
    ]
    if t.pgo_loaded:
        out.append(_section("pgo", "PGO loaded, yet recompiled for size", len(t.pgo), _table(
            ["rank", "function", "dynamic in loaded state", "recompiles", "allow-list instead"], pgo)))
    return out


def _cudagraphs(d: Diagnosis) -> str:
    """Recordings per frame and size, and the skips (when the input has CUDA-graph records)."""
    from dyncli.diagnose.cudagraph_render import ms, size_cells, summary

    c = d.cudagraphs
    if c is None:
        return ""
    rows = [[_rank(f.rank), _e(f.frame_id), f"<code>{_e(f.function)}</code>",
             _e(", ".join(f.compile_ids)), str(f.recordings), str(f.rerecords), ms(f.seconds),
             f"<pre>{_e(size_cells(f))}</pre>"] for f in c.frames]
    skips = [[_rank(x.rank), _e(x.compile_id), _e(x.kind), f"<pre>{_e(x.reason)}</pre>",
              _user(x.user), str(x.count)] for x in c.skips]
    return _section("cudagraphs", "CUDA graphs", len(c.recordings) + c.dropped,
                    f"<p>{_e(summary(c))}</p>" + _table(
                        ["rank", "frame", "function", "compiles", "recordings", "re-records",
                         "ms", "per size"], rows, numeric=(4, 5, 6))
                    + (_table(["rank", "compile", "kind", "reason", "user code", "count"],
                              skips, numeric=(5,)) if skips else ""))


def render_html(d: Diagnosis) -> str:
    """The whole report as one HTML document (no external resources)."""
    nav = " · ".join(f'<a href="#{a}" style="color:#b9c0cf">{t}</a>' for a, t in (
        ("causes", "causes"), ("frames", "frames"), ("recompiles", "recompiles"),
        ("specializations", "specializations"), ("graph-breaks", "graph breaks"),
        ("suggestions", "suggestions"), ("compiles", "compiles"), ("ranks", "ranks"),
        *((("cudagraphs", "CUDA graphs"),) if d.cudagraphs is not None else ())))
    body = [_summary(d), _causes(d), _suggestions(d), _notes(d), _frames(d), _recompiles(d), _specializations(d),
            _graph_breaks(d), *_trace_sections(d), _cudagraphs(d)]
    inputs = ", ".join(d.inputs) or "stdin"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>dyncli diagnose — {_e(inputs)[:120]}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>dyncli diagnose</h1><p>{_e(inputs)}</p><p>dyncli {_e(__version__)} · "
        f"{counted(d.stats.lines, 'line')} read · {nav}</p></header>"
        f"<main>{''.join(body)}</main><script>{_JS}</script></body></html>\n")


def write_html(path: Path | str, d: Diagnosis) -> None:
    """Write the report atomically (temp file + rename); ``-`` is stdout."""
    write_text(path, render_html(d))

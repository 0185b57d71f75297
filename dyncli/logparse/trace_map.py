"""Trace records → events: the SAME event classes as the text parser, plus trace-only ones.

``trace_events(lines)`` is the whole TORCH_TRACE parser as ``dyncli.diagnose.analyzer`` sees it:
lines in, ``dyncli.logparse.events`` objects out (``CompileStart``, ``CreateSymbol``,
``GuardAdded``, ``SetReplacement``, ``MarkedDynamic``, ``Recompile``, ``GraphBreak``,
``TensorMatch``, ``ShapeGuard``, ``ConstraintViolation``…), interleaved with the trace-only
events of ``dyncli.logparse.trace_events`` (compile metrics, output graphs, PGO state).
Which record carries which fact is documented per handler, with the torch source that
emits it (torch 2.14).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dyncli.logparse import cudagraphs as cg
from dyncli.logparse import events as ev
from dyncli.logparse import safe, textautograd
from dyncli.logparse import textdde as dde
from dyncli.logparse import trace_events as te
from dyncli.logparse.guardtext import split_failed
from dyncli.logparse.textbreaks import graph_break_body, loop_skipped
from dyncli.logparse.textguards import _STATIC_INDICES_RE, flat_guard, tensor_check
from dyncli.logparse.textold import OLD_BREAK, RESUME_SKIP, resume_skip
from dyncli.logparse.textrecompiles import guard_failure
from dyncli.logparse.textstack import user_stack
from dyncli.logparse.textviolations import SUGGESTED_FIXES, range_violation, suggested_fix
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_format import TraceRecord
from dyncli.logparse.trace_lines import (
    _TREE_WORDS,
    _comment_loc,
    _dims,
    _limit_exceeded,
    _limit_hit,
    _limit_setting,
    _lines_with,
    _shape_guard,
    install_filters,
)
from dyncli.logparse.trace_payload import decode_recompile_reasons
from dyncli.logparse.trace_phases import metric_numbers

# Frames of the shape machinery itself; the first frame outside them is the "framework
# location" torch's text log prints in parentheses (symbolic_shapes._get_stack_summary).
_INTERNAL = ("/fx/experimental/", "/_logging/", "/utils/_traceback", "/_subclasses/",
             "/utils/_sympy/", "/_dynamo/utils.py", "/__init__.py")
_VR = re.compile(r"^\[(?P<lo>[^,]+),\s*(?P<hi>[^\]]+)\]$")
# a compiled autograd compile reason: its capture's id, then the miss (textautograd)
_CA_REASON = re.compile(r"!(?P<n>\d{1,9}): (?P<text>" + re.escape(textautograd.HEAD) + r"[^\n]{0,20000})")
_GB_HEAD = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d{1,9})$")
_MARKED_CV = re.compile(r"^\s*- You marked (?P<src>.+?) as dynamic but your code specialized it "
                        r"to be a constant \((?P<val>[^)]*)\)")


class TraceEventMapper:
    """Maps the records of ONE trace file (one process) to events. ``rank`` fills in records
    without one (torch writes ``rank`` only once ``torch.distributed`` is initialized);
    ``process`` labels its compile ids when another file claims the same rank.

    Reset generations: torch numbers compiles from ``0/0`` again after
    ``torch._dynamo.reset()``. A ``dynamo_start`` (one per compile, convert_frame.py) whose
    id this file has already started is the first compile after a reset: it and everything
    after it get the next ``generation`` (``CompileId.generation``), so no two compiles of
    one file share an id.
    """

    def __init__(self, parser: TraceParser, rank: int | None = None, process: str = "") -> None:
        self.parser = parser
        self.rank = rank
        self.process = process
        self.generation = 0
        self._started: set[tuple[Any, ...]] = set()
        # compiled autograd: the captures whose misses were said (a capture's reasons repeat
        # earlier ones), and the newest dynamo compile outside a capture (a miss's ``after``)
        self._ca_said: set[tuple[int, int]] = set()
        self._newest: ev.CompileId | None = None
        self.frames: dict[tuple[int | None, str | None], tuple[str, str, int | None]] = {}
        self._handlers: dict[str, Callable[[TraceRecord, dict[str, Any]], Iterator[ev.Event]]] = {
            "dynamo_start": self._dynamo_start, "compilation_metrics": self._metrics,
            "create_symbol": self._create_symbol, "create_unbacked_symbol": self._unbacked,
            "guard_added_fast": self._guard, "guard_added": self._guard,
            "symbolic_shape_specialization": self._specialization, "artifact": self._artifact,
            "dynamo_output_graph": self._output_graph, "dynamo_cpp_guards_str": self._guards_tree,
            "chromium_event": self._chromium, "describe_tensor": self._describe_tensor,
            "describe_source": self._describe_source, "dynamo_guards": self._guards_list,
        }
        # (rank, describer, tensor id) -> dims marked by mark_dynamic, until its source arrives
        self._marked: dict[tuple[int | None, Any, Any], list[int]] = {}
        self._framework_files: dict[str, bool] = {}  # file -> a torch file outside _INTERNAL
        self._cids: dict[tuple[Any, ...], ev.CompileId] = {}
        self._tree_seen = False  # a dynamo_cpp_guards_str went by (see _guards_list)
        self._spans = cg.SpanTimer()  # CUDAGraphNode.record begin/end pairs
        # compiles that logged recompile reasons / a dynamo_start / a refusal (see _refused)
        self._reasoned: dict[ev.CompileId, ev.Recompile] = {}
        self._begun: set[ev.CompileId] = set()
        self._limited: set[ev.CompileId] = set()
        self._limit_config = ("", "")  # the last dynamo_config's recompile limit (name, value)
        install_filters(parser)
        # ... and here, where the records are mapped as they come: a source only while a
        # marked tensor awaits it
        parser.wanted["describe_source"] = lambda line: bool(self._marked)

    def events(self, records: Iterable[TraceRecord]) -> Iterator[ev.Event]:
        """Events of ``records``, in trace order.

        Each record is mapped under one guard: a record whose fields have the wrong types
        (a list where a name should be, a string line number, a 400-digit time) is counted
        as malformed in the parser's stats, by reason, and skipped.
        """
        for rec in records:
            handler = self._handlers.get(rec.kind)
            if handler is None:
                continue
            if rec.kind == "dynamo_start":
                started = (rec.frame_id, rec.frame_compile_id, rec.compiled_autograd_id,
                           rec.attempt)
                if started in self._started:  # torch._dynamo.reset(): ids start over
                    self.generation += 1
                    self._started.clear()
                self._started.add(started)
            cid = self._cid(rec)
            ctx = {"line": rec.line, "rank": rec.rank if rec.rank is not None else self.rank,
                   "compile_id": cid}
            try:
                out = list(handler(rec, ctx))
            except safe.RECORD_ERRORS as exc:
                self.parser.malformed(rec.line, f"bad {rec.kind} record ({safe.reason(exc)})")
                continue
            if rec.kind == "dynamo_start" and cid is not None:
                self._begun.add(cid)
                if cid.autograd is None:
                    self._newest = cid
            yield from out
        yield from self._refused()

    def _refused(self) -> Iterator[ev.Event]:
        """The compiles torch logged recompile reasons for and never started: refused by the
        recompile limit. convert_frame.py logs the reasons, then checks the limit, then
        writes ``dynamo_start``; torch 2.5-2.8 write nothing else of a refused compile (2.9
        on write its compilation_metrics, read in _metrics). Unread, the refused compile had
        counted as one that ran. Only where this file started every compile of the frame
        before it: a piece of a trace (one record, a cut file) proves no refusal."""
        started: dict[tuple[Any, ...], set[int]] = {}  # a frame's compiles that began
        for c in self._begun:
            if c.compile is not None and c.attempt == 0:
                started.setdefault((c.frame, c.autograd, c.generation), set()).add(c.compile)
        # how many of a frame's compiles, from its first, began with none missing (linear)
        unbroken = {frame: next(k for k in itertools.count() if k not in ks)
                    for frame, ks in started.items()}
        for cid, rec in self._reasoned.items():
            if cid in self._begun or cid in self._limited or cid.compile is None:
                continue
            if unbroken.get((cid.frame, cid.autograd, cid.generation), 0) < cid.compile:
                continue
            name, limit = self._limit_config
            yield ev.RecompileLimit(
                limit_name=name, limit=limit, function=rec.function, file=rec.file,
                first_line=rec.first_line,
                last_reason=rec.failures[0].text if rec.failures else "",
                line=rec.line, rank=rec.rank, compile_id=cid)

    # ------------------------------------------------------------ helpers

    def _cid(self, rec: TraceRecord) -> ev.CompileId | None:
        if rec.frame_id is None and rec.compiled_autograd_id is None:
            return None
        # one CompileId per compile (immutable), not one per record: a compile has dozens
        key = (rec.frame_id, rec.frame_compile_id, rec.attempt, rec.compiled_autograd_id,
               self.generation)
        cid = self._cids.get(key)
        if cid is None:
            if len(self._cids) > 4096:  # bounded, whatever the trace
                self._cids.clear()
            cid = self._cids[key] = ev.CompileId(*key, self.process)
        return cid

    @staticmethod
    def _frame(ctx: dict[str, Any]) -> tuple[int | None, str | None]:
        cid = ctx["compile_id"]
        return ctx["rank"], cid.frame_key if cid is not None else None

    def _loc(self, frame: Any) -> ev.UserLoc | None:
        if not isinstance(frame, dict):
            return None
        return ev.UserLoc(file=self.parser.filename(frame.get("filename")) or "",
                          line=safe.json_int(frame.get("line")) or 0,
                          function=safe.json_str(frame.get("name")) or "",
                          code=(safe.json_str(frame.get("loc")) or "").strip())

    def _user(self, meta: dict[str, Any]) -> ev.UserLoc | None:
        stack = meta.get("user_stack")
        return self._loc(stack[-1]) if isinstance(stack, list) and stack else None

    def _framework(self, meta: dict[str, Any]) -> str:
        stack = meta.get("stack")
        if not isinstance(stack, list):
            return ""
        for frame in reversed(stack):
            if not isinstance(frame, dict):
                continue
            file = self.parser.filename(frame.get("filename")) or ""
            framework = self._framework_files.get(file)
            if framework is None:
                framework = self._framework_files[file] = (
                    "/torch/" in file and not any(part in file for part in _INTERNAL))
                if len(self._framework_files) > 4096:  # hostile: a new file per frame
                    self._framework_files.clear()
            if framework:
                loc = self._loc(frame)
                assert loc is not None
                short = loc.file.rsplit("/torch/", 1)[1]
                return f"{short}:{loc.line} in {loc.function}"
        return ""

    @staticmethod
    def _range(meta: dict[str, Any]) -> tuple[str, str]:
        m = _VR.match(str(meta.get("vr", "")))
        return (m["lo"].strip(), m["hi"].strip()) if m else ("", "")

    # ------------------------------------------------------------ handlers

    def _dynamo_start(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """convert_frame.py: ``dynamo_start`` with the stack whose last frame is the frame."""
        stack = rec.meta.get("stack")
        loc = self._loc(stack[-1]) if isinstance(stack, list) and stack else None
        if loc is not None and "/torch/" in loc.file:
            # torch 2.3-2.4: the stack ends in torch's own eval_frame (``_fn``), not the
            # compiled frame; compilation_metrics (co_name) names it, when the release has it.
            # The event still counts the compile.
            yield ev.CompileStart(**ctx)
        elif loc is not None:
            self.frames[self._frame(ctx)] = (loc.function, loc.file, loc.line)
            yield ev.CompileStart(function=loc.function, file=loc.file, first_line=loc.line, **ctx)

    def _metrics(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """utils.py ``CompilationMetrics``: one per compile attempt, also for failed ones."""
        m = rec.meta
        num = lambda k: safe.json_num(m.get(k))  # noqa: E731
        whole = lambda k: safe.json_int(m.get(k))  # noqa: E731
        text = lambda k: safe.json_str(m.get(k))  # noqa: E731
        restarts = m.get("restart_reasons")
        fail_reason = text("fail_reason")
        seconds, field = te.compile_seconds(m)
        yield te.CompileMetrics(
            function=text("co_name"), file=text("co_filename"), first_line=whole("co_firstlineno"),
            cache_size=whole("cache_size"), accumulated_cache_size=whole("accumulated_cache_size"),
            fail_type=text("fail_type"), fail_reason=fail_reason,
            fail_user_file=text("fail_user_frame_filename"),
            fail_user_line=whole("fail_user_frame_lineno"),
            restart_reasons=tuple(r if isinstance(r, str) else safe.short(r) for r in restarts)
            if isinstance(restarts, (list, tuple)) else (),
            compile_time_s=seconds, compile_time_field=field,
            backend_time_s=num("backend_compile_time_s"),
            inductor_time_s=num("inductor_compile_time_s"), graph_op_count=whole("graph_op_count"),
            start_time=num("start_time"),
            has_guarded_code=m.get("has_guarded_code") if isinstance(m.get("has_guarded_code"), bool)
            else None, numbers=metric_numbers(m), torch_version=text("pytorch_version"), **ctx)
        if text("co_name") and ctx["compile_id"] is not None and self._frame(ctx) not in self.frames:
            # names the frame where dynamo_start could not (torch 2.3-2.4); else a no-op
            self.frames[self._frame(ctx)] = (text("co_name") or "", text("co_filename") or "",
                                             whole("co_firstlineno"))
            yield ev.CompileStart(function=text("co_name") or "", file=text("co_filename") or "",
                                  first_line=whole("co_firstlineno"), **ctx)
        if m.get("cudagraph_skip_reason"):  # torch 2.7+
            yield from cg.metrics_skip(m, ctx)
        if text("fail_type") == "ConstraintViolationError" and fail_reason:
            yield from self._constraint_violations(fail_reason, ctx)
        if fail_reason and "data-dependent expression" in fail_reason:
            # the same facts as the text log's (textdde): the expression, torch's Caused by
            for part in fail_reason.splitlines()[:200]:
                yield from dde.events(part.encode("utf-8", "replace"), ctx, ctx["line"])
        config = text("dynamo_config")
        if config:
            self._limit_config = _limit_setting(config) or self._limit_config
        hit = _limit_hit(fail_reason or "") or _limit_exceeded(
            text("fail_type"), fail_reason, config)
        if hit is not None:  # the refused compile; the text log's "hit config.recompile_limit"
            if ctx["compile_id"] is not None:
                self._limited.add(ctx["compile_id"])
            fn, file, line = self.frames.get(self._frame(ctx), ("", "", None))
            yield ev.RecompileLimit(limit_name=hit[0], limit=hit[1], function=fn,
                                    file=file, first_line=line,
                                    last_reason=text("recompile_reason") or "", **ctx)

    @staticmethod
    def _constraint_violations(text: str, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        stack = user_stack(text.splitlines())
        user = stack[-1] if stack else None
        suggesting = False
        for line in text.splitlines():
            if suggesting and (fix := suggested_fix(line)) is not None:
                yield ev.SuggestedFix(name=fix[0], value=fix[1], **ctx)
                continue
            suggesting = line.strip() == SUGGESTED_FIXES
            if m := _MARKED_CV.match(line):
                yield ev.ConstraintViolation(message=line.strip().lstrip("- "), source=m["src"],
                                             value=m["val"], user=user, **ctx)
            elif (ranged := range_violation(line)) is not None:
                yield ev.RangeViolation(message=line.strip().lstrip("- ")[:600], user=user,
                                        **ranged, **ctx)

    def _create_symbol(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """symbolic_shapes.py ``create_symbol``: symbol, hint value, source, range."""
        m = rec.meta
        lo, hi = self._range(m)
        yield ev.CreateSymbol(symbol=str(m.get("symbol", "")), value=str(m.get("val", "")),
                              source=str(m.get("source", "")), lower=lo, upper=hi,
                              user=self._user(m), framework=self._framework(m), **ctx)

    def _unbacked(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """``create_unbacked_symbol``: one kind for symint/symfloat/symbool; the prefix tells."""
        m = rec.meta
        symbol = str(m.get("symbol", ""))
        kind = "symfloat" if symbol.startswith("zuf") else "symint"
        lo, hi = self._range(m)
        yield ev.CreateUnbacked(kind=kind, symbol=symbol, lower=lo, upper=hi, user=self._user(m),
                                framework=self._framework(m), **ctx)

    def _guard(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """``guard_added_fast`` (eval'd shape guards) and ``guard_added`` (the slow path)."""
        m = rec.meta
        yield ev.GuardAdded(expr=str(m.get("expr", "")), prefix=str(m.get("prefix") or "eval"),
                            user=self._user(m), framework=self._framework(m), **ctx)

    def _specialization(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """``symbolic_shape_specialization``: the trace's ``set_replacement s = N``."""
        m = rec.meta
        value = str(m.get("value", ""))
        yield ev.SetReplacement(symbol=str(m.get("symbol", "")), target=value,
                                reason=str(m.get("reason", "")), lower=value, upper=value, **ctx)

    def _artifact(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        name = safe.json_str(rec.meta.get("name")) or ""
        if rec.payload is None:
            return
        if name == "recompile_reasons":
            yield self._recompile(rec, ctx)
        elif name == "dynamo_graph_break_reason":
            yield from self._graph_break(rec.payload, ctx)
        elif name == "compiled_autograd_compile_reasons":
            yield from self._autograd_misses(rec.payload, ctx)
        elif name.endswith("_code_state"):
            action, where = name.split("_", 1)
            yield te.CodeState(action=action, where=where.removesuffix("_code_state"),
                               entries=te.parse_code_state(rec.payload), **ctx)

    def _autograd_misses(self, payload: str, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """compiled_autograd.py ``compiled_autograd_compile_reasons``: the text log's sentences,
        each after its capture's id (``"!2: Cache miss due to …"``); a capture's list repeats
        earlier captures' reasons, each said once: oldest first, its own last (so the last 64
        are the ones kept)."""
        cid = ctx["compile_id"]
        for reason in decode_recompile_reasons(payload)[-64:]:
            m = _CA_REASON.match(reason)
            if m is None or len(self._ca_said) >= 65536:
                continue
            n = int(m["n"])
            if (self.generation, n) in self._ca_said:
                continue
            capture = (cid.capture(n) if cid is not None
                       else ev.CompileId(None, None, 0, n, self.generation, self.process))
            found = textautograd.miss(m["text"], {**ctx, "compile_id": capture})
            if found is not None:
                self._ca_said.add((self.generation, n))
                yield dataclasses.replace(found, after=self._newest)

    def _recompile(self, rec: TraceRecord, ctx: dict[str, Any]) -> ev.Recompile:
        """guards.py ``recompile_reasons``: one reason per cache entry tried, newest first."""
        failures = []
        for reason in decode_recompile_reasons(rec.payload or ""):
            failed, rest = split_failed(reason)  # a trace's reason may go on past a newline
            head, _, tail = rest.partition("\nUser stack trace:")
            failure = guard_failure(failed, head.strip())  # the text log's own split
            stack = user_stack(tail.splitlines())
            if stack:  # torch >= 2.15: the user stack that triggered the recompile
                failure = dataclasses.replace(failure, user=stack[-1])
            failures.append(failure)
        function, file, first = self.frames.get(self._frame(ctx), ("", "", None))
        recompile = ev.Recompile(function=function, file=file, first_line=first,
                                 failures=tuple(failures), **ctx)
        if ctx["compile_id"] is not None and len(self._reasoned) < 65536:  # bounded
            self._reasoned[ctx["compile_id"]] = recompile
        return recompile

    @staticmethod
    def _graph_break(payload: str, ctx: dict[str, Any]) -> list[ev.Event]:
        """``dynamo_graph_break_reason``: the text log's graph-break message, parsed alike (and
        the frame torch skipped for it, where the break is in a loop)."""
        lines = payload.splitlines()
        if lines and lines[0].startswith(OLD_BREAK + RESUME_SKIP):  # convert_frame's skip
            return resume_skip(lines, ctx)
        head = _GB_HEAD.match(lines[0]) if lines else None
        if head is None:
            return []
        b = graph_break_body(lines[1:])
        return [ev.GraphBreak(file=head["file"], user_line=int(head["line"]),
                              reason=b.gb_type or b.reason, explanation=b.explanation,
                              hints=b.hints, user_stack=b.stack, gb_type=b.gb_type,
                              gb_code=b.gb_code, debug=b.debug, **ctx),
                *loop_skipped(b, ctx, head["file"], int(head["line"]))]

    def _output_graph(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """output_graph.py ``dynamo_output_graph``: node sizes, and the readable graph."""
        sizes = rec.meta.get("sizes")
        pairs = tuple((str(k), tuple(str(d) for d in v)) for k, v in sizes.items()
                      if isinstance(v, list)) if isinstance(sizes, dict) else ()
        inputs, ops = (rec.signature if rec.signature is not None
                       else te.graph_signature(rec.payload or ""))
        yield te.OutputGraph(sizes=pairs, inputs=inputs, ops=ops, **ctx)

    def _guards_tree(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """guards.py ``dynamo_cpp_guards_str``: the same tree TORCH_LOGS=guards prints."""
        self._tree_seen = True
        for line in _lines_with(rec.payload or "", _TREE_WORDS):
            if "TENSOR_MATCH" not in line and "LAMBDA_GUARD" not in line:
                sm = (_STATIC_INDICES_RE.search(line)  # mark_static (issue 26)
                      if "DIMENSION_DYNAMIC_MARKING_GUARD:" in line else None)
                dims = tuple(int(d) for d in sm["dims"].split(",") if d.strip()) if sm else ()
                if sm and dims:
                    yield ev.MarkedStatic(source=sm["src"], dims=dims, **ctx)
                continue
            if (tm := tensor_check(line)) is not None:
                yield ev.TensorMatch(source=tm.source, sizes=_dims(tm.size),
                                     strides=_dims(tm.stride), dtype=tm.dtype,
                                     user=_comment_loc(tm.rest), **ctx)
            elif (expr := _shape_guard(line)) is not None:
                yield ev.ShapeGuard(expr=expr.strip(), user=_comment_loc(line),
                                    zero_one="0/1 specialization" in line, **ctx)

    def _guards_list(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """guards.py ``dynamo_guards`` (torch 2.3, before the tree): ``[{"code": …, "stack":
        …}, …]``, one entry per line; the kept lines are read as the text log's flat guards.
        torch 2.4 writes it too, before the tree of the same compile: once a tree went by, the
        trees are read (their lines carry the user's code)."""
        if self._tree_seen:
            return
        for line in (rec.payload or "").splitlines():
            entry = safe.loads(line.strip().rstrip(","))
            code = entry.get("code") if isinstance(entry, dict) else None
            if isinstance(code, str) and (event := flat_guard(code, ctx)) is not None:
                yield event

    def _describe_tensor(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """meta_utils.py ``describe_tensor``: ``dynamo_dynamic_indices`` are mark_dynamic dims."""
        dims = rec.meta.get("dynamo_dynamic_indices")
        if isinstance(dims, list) and dims:
            if len(self._marked) > 1024:  # a describe_source that never came; stay bounded
                self._marked.clear()
            self._marked[self._tensor_key(rec, ctx)] = dims
        return iter(())

    @staticmethod
    def _tensor_key(rec: TraceRecord, ctx: dict[str, Any]) -> tuple[Any, ...]:
        # ids are ints; anything else (a list, a dict) is damage and never matches
        return (ctx["rank"], safe.json_int(rec.meta.get("describer_id")),
                safe.json_int(rec.meta.get("id")))

    def _describe_source(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """``describe_source`` names the tensor; with marked dims it is the text log's
        ``marking L['x'] as dynamic (from mark_dynamic)`` (builder.py, once per dim)."""
        dims = self._marked.pop(self._tensor_key(rec, ctx), None)
        source = rec.meta.get("source")
        if dims and isinstance(source, str):
            for _ in dims:
                yield ev.MarkedDynamic(source=source, origin="mark_dynamic", **ctx)

    def _chromium(self, rec: TraceRecord, ctx: dict[str, Any]) -> Iterator[ev.Event]:
        """Chromium events kept by the parser: PGO's allow-list and automatic-dynamic marks."""
        if rec.payload is None:
            return
        try:
            event = safe.loads(rec.payload)
        except ValueError:
            return
        args = event.get("args") if isinstance(event, dict) else None
        if not isinstance(args, dict):
            return
        name = event.get("name")
        if name == "automatic_dynamic" and isinstance(args.get("name"), str):
            # pgo.py update_automatic_dynamic: the text log's "marking X as dynamic" line.
            yield ev.MarkedDynamic(source=args["name"], origin="automatic dynamic/PGO", **ctx)
        elif name == "pgo.dynamic_whitelist" and "recompile_dynamic_whitelist" in args:
            split = lambda k: tuple(s for s in str(args.get(k) or "").split(",") if s)  # noqa: E731
            yield te.DynamicAllowList(sources=split("recompile_dynamic_whitelist"),
                                      missing=split("missing_dynamic_whitelist"), **ctx)
        elif name == cg.SPAN:  # a CUDA-graph recording (2.7+): its compile id is in its args
            cid = cg.span_compile_id(event, self.generation, self.process)
            yield from self._spans.feed(event, {**ctx, "compile_id": cid or ctx["compile_id"]})


def trace_events(lines: Iterable[bytes | str], source: str = "<trace>", *,
                 rank: int | None = None, strict: bool = False,
                 parser: TraceParser | None = None, process: str = "") -> Iterator[ev.Event]:
    """Parse one trace file's lines into events (streaming). ``parser.stats`` has the counts."""
    parser = parser or TraceParser(source, strict=strict, verify=strict)
    yield from TraceEventMapper(parser, rank, process).events(parser.feed(lines))

"""The recompile-limit finding: what torch's limit warning proves, and no more (issue 33).

torch's warning (``torch._dynamo hit config.recompile_limit (8)``, its ``function:`` and
``last reason:`` lines) is often all a user's log has. It proves the limit was hit; the program
then ran the frame eagerly, unless the log shows the limit raised (``FailOnRecompileLimitHit``
under ``fullgraph=True``: the program stopped); its last reason is of one kind of guard, whose
fix is that kind's (``guard_kinds``). A fix pointing at "the cause above" is only written when
the log has recompile records with causes; a name the paste cut off is said to be missing.
"""

from __future__ import annotations

import dataclasses

from dyncli.diagnose import guard_kinds, proven
from dyncli.diagnose.findings import Advice, AdviceKind, ConfigFlag
from dyncli.diagnose.model import Diagnosis, RecompileLimitReport
from dyncli.diagnose.reasons import cite, mismatch
from dyncli.diagnose.releases import named
from dyncli.diagnose.side_libraries import side_fix, side_library
from dyncli.logparse import guardtext as gt
from dyncli.logparse.events import CompileId
from dyncli.logparse.safe import small_int
from dyncli.quoting import shell_quote
from dyncli.sources import from_reason, is_attribute

_RICHER = 'TORCH_LOGS="recompiles" shows the reason of every recompile'


def limit_findings(diag: Diagnosis, held: set[int | None]) -> list[Advice]:
    """One finding per limit warning. ``held``: ranks where a size-pinned finding stands."""
    return [_finding(diag, _read_from_sibling(x, diag.recompile_limits), held)
            for x in diag.recompile_limits]


def _read_from_sibling(x: RecompileLimitReport,
                       limits: tuple[RecompileLimitReport, ...]) -> RecompileLimitReport:
    """A rank's copy of a limit warning that the paste cut (no function, no reason), read as
    another rank's whole copy at the same compile id: ranks of one SPMD job run the same code
    and hit the limit at the same compile (ParaAttention#22: ranks 0, 2 and 3 at ``[2/8]`` in
    the same millisecond, rank 2's whole; three causes, the cut ones first, before round 20).
    Its own line stays its evidence; the one fix is then one cause across the ranks."""
    if x.rank is None or not x.compile_id or (x.function and x.last_reason):
        return x
    whole = next((y for y in limits if y.rank is not None and y.rank != x.rank
                  and y.compile_id == x.compile_id and y.function and y.last_reason), None)
    if whole is None:
        return x
    return dataclasses.replace(
        x, function=x.function or whole.function, file=x.file or whole.file,
        first_line=x.first_line if x.first_line is not None else whole.first_line,
        last_reason=whole.last_reason, limit_name=x.limit_name or whole.limit_name,
        limit=x.limit or whole.limit)


# torch's default of each limit (torch/_dynamo/config.py, 2.4-2.15): a warning naming another
# value shows a limit the program set itself. cache_size_limit was 64 in torchdynamo, torch 2.0
# and 2.1 (their config.py; 8 from 2.2), whose warnings have a form of their own (before_2_2:
# pytorch#93468's 2.1 warning of 64 was torch's default, not the program's)
_DEFAULTS = {"recompile_limit": 8, "cache_size_limit": 8, "accumulated_recompile_limit": 256,
             "accumulated_cache_size_limit": 256}
_DEFAULT_BEFORE_2_2 = 64


def _default(x: RecompileLimitReport) -> int | None:
    return _DEFAULT_BEFORE_2_2 if x.before_2_2 else _DEFAULTS.get(x.limit_name)


def _set_above_default(x: RecompileLimitReport) -> bool:
    """The warning names a limit above torch's default: the program set it."""
    default, set_to = _default(x), small_int(x.limit)
    return default is not None and set_to is not None and set_to > default


def _raising(flag: str, x: RecompileLimitReport, sweep: bool = True) -> str:
    """What raising the limit does: hides the recompiles; unless the log shows the limit
    already raised (intel-xpu-backend-for-triton#5838: 100, a benchmark that compiles
    flex_attention with dynamic=False for each of its shapes on purpose), where it may be the
    program's own choice."""
    default = _default(x)
    if not _set_above_default(x):
        return f"raising {flag} only hides the recompiles"
    raised = f"the limit here ({x.limit}) is above torch's default ({default}), so the program set it"
    if not sweep:  # (a guard no size sweep explains: more of the limit hides more)
        return f"{raised}; raising {flag} further only hides the recompiles"
    return (f"{raised}: if each size is meant to compile a graph of its own (a sweep under "
            f"dynamic=False), raise it to the number of sizes; otherwise raising {flag} only "
            "hides the recompiles")


def _oldest_named(x: RecompileLimitReport) -> str | None:
    """The entry ``F/0`` where a warning at ``[F/N]`` (N >= 2) names it as its last reason:
    torch 2.5 and 2.6 printed ``recompile_reasons[-1]`` of a walk from the newest cache entry
    to the oldest (convert_frame.py, 2.6.0: 904), so the reason is the first compile's; 2.7 on
    print ``reasons[0]``, the newest entry (``F/N-1``), and never name ``F/0`` there."""
    cid = CompileId.parse(x.compile_id) if x.compile_id else None
    head = x.last_reason.split(":", 1)[0].strip()
    entry = CompileId.parse(head) if "/" in head else None
    if cid is None or entry is None or cid.frame is None or cid.compile is None:
        return None
    if entry.frame == cid.frame and entry.compile == 0 and cid.compile >= 2:
        return head
    return None


def _finding(diag: Diagnosis, x: RecompileLimitReport, held: set[int | None]) -> Advice:
    limit = (f"torch._dynamo.config.{x.limit_name}" + (f" ({x.limit})" if x.limit else "")
             if x.limit_name else "the recompile limit (the log does not name it)")
    flag = f"torch._dynamo.config.{x.limit_name}" if x.limit_name else "the recompile limit"
    # (fail_on_recompile_limit_hit is 2.7's, 2.6's fail_on_cache_limit_hit: releases.NAMES)
    fail = named("fail_on_recompile_limit_hit", diag.releases)
    after = (f"and raised an error (FailOnRecompileLimitHit: fullgraph=True"
             f"{f' or {fail}' if fail else ''}), so the program stopped there" if diag.limit_raised
             else "and then the program raised: the input shows a Python traceback after the "
             f"warning (line {diag.stopped_after_limit}), so it may not have run on eagerly: "
             f"under fullgraph=True{f' (or {fail})' if fail else ''} the limit raises instead"
             if diag.stopped_after_limit is not None
             else "and now runs eagerly (uncompiled) for new inputs")
    who = x.function or "a function (the log does not name it)"
    size = mismatch(x.last_reason) is not None
    oldest = _oldest_named(x)
    pinned = size and x.rank in held
    guard = gt.split_failed(x.last_reason)[1]
    kind = str(gt.checked(guard)) if x.last_reason else "unknown"
    flag_fix = None
    raises = False  # the fix advises raising the limit (then: how, so that every thread sees it)
    # a guard on a Python number: the name it compares, and the value
    text = gt.guard_text(guard)
    operands = gt.compared(text)
    attr, value = from_reason(operands[0] or ""), operands[-1]
    side = side_library(x.file)
    if side is not None:
        # Lightning#17214: matplotlib's draw_text under a compiled validation step that logs an
        # image; the limit's advice was about the number it guards ("a 0-d tensor")
        note = (f" The function is {side[0]}'s ({side[1]}), not the model's: the compiled code "
                "calls into it, and each call's new values compile it again.")
        fix = f"{side_fix(side[1], diag.releases)}; raising {flag} only hides the recompiles"
    elif size and gt.about_param(x.last_reason):  # torch's own hint, in the warning itself
        flag_fix = ConfigFlag("force_parameter_static_shapes", "False")
        note = (" Its last reason is a parameter's size: torch keeps parameters static "
                "(force_parameter_static_shapes), and says so in the warning.")
        fix = (f"{flag_fix} (torch's own hint; every parameter may then become dynamic, after "
               f"one more recompile); raising {flag} only hides the recompiles")
    elif size and oldest is not None:
        raises = True
        # 3DRS#8: "[7/8] … last reason: 7/0: tensor 'L['input_ids']' size mismatch …"
        note = (f" Its last reason names entry {oldest}, the frame's first compile: torch 2.5 "
                "and 2.6 print the oldest cached entry's failure there (2.7 on, the newest's). "
                "A size change against the first, static compile is the one automatic dynamic "
                f"answers with one recompile ({oldest.split('/')[0]}/1), unless the function is "
                "compiled with dynamic=False; what the recompiles after it failed on is not in "
                "this log.")
        fix = (f"{_RICHER}, for the guards the later recompiles failed on: under automatic "
               f"dynamic the mark-dynamic fix removes only the first of them; {_raising(flag, x)} "
               "(but under torch.compile(dynamic=False) each size compiles again and no list "
               f"makes a size dynamic: if that was chosen on purpose, raise {flag} to the number "
               "of sizes expected)")
    elif pinned:
        note = (" Its last reason is a size this log cannot tell the cause of (see the "
                "size-pinned finding).")
        fix = f"find what keeps the size static (size-pinned); {_raising(flag, x)}"
        raises = _set_above_default(x)
    elif size:
        raises = True
        note = " Its last reason is a size change: the mark-dynamic suggestion removes those recompiles."
        fix = (f"apply the mark-dynamic fix; {_raising(flag, x)} (but under "
               f"torch.compile(dynamic=False) no list makes a size dynamic: if that was chosen on "
               f"purpose, raise {flag} to the number of sizes expected)")
    elif kind == gt.Checked.SCALAR and (optim := guard_kinds.optimizer_fix(attr)) is not None:
        # pytorch#107076: AdamW's step, a float lr its scheduler changes (was read as a
        # module's int: ``self`` is the optimizer)
        note = (f" Its last reason is an optimizer's float hyperparameter that changed "
                f"({text}): each value its scheduler writes compiles again.")
        fix = f"{optim}; raising {flag} only hides the recompiles"
    elif kind == gt.Checked.SCALAR and is_attribute(attr) and not gt.is_float(value):
        raises = True
        # transformers#36484: each decoder layer's layer_idx, one forward for every layer
        note = (f" Its last reason is an int attribute of a module that changed "
                f"({text}): torch keeps those static by design "
                "(allow_unspec_int_on_nn_module is off), one compile per value. A method shared "
                "by several modules, each with its own value (a layer's index), compiles once "
                "per module.")
        fix = (f"compile the model that calls them, once, rather than each module; or raise "
               f"{flag} to the number of values if each should keep code of its own; where the "
               f"code neither branches on it nor indexes with it, "
               f"TORCH_COMPILE_DYNAMIC_SOURCES={shell_quote(attr)} makes it dynamic")
    elif kind == gt.Checked.SCALAR and gt.is_float(value):
        raises = True
        # modula#1 (torch 2.3: "dynamic=False, or code that specializes it" was said; torch
        # specialized every float then); pytorch#149406 (2.5.1, under dynamic=True)
        note = (f" Its last reason is a Python float that changed ({guard.split('  #')[0].strip()}),"
                " still static at that compile: torch before 2.6 never makes a float dynamic; "
                "later releases do after one recompile unless dynamic=False or code specializes "
                "it at every value.")
        fix = (f"pass the number as a 0-d tensor to compile once (every torch release), or raise "
               f"{flag} if these values are expected and few; {guard_kinds.FLOAT_RELEASES}")
    elif kind == gt.Checked.SCALAR:
        raises = True
        note = (f" Its last reason is a Python number that changed ({guard.split('  #')[0].strip()}),"
                " still static at that compile: automatic dynamic did not make it dynamic "
                "(dynamic=False, or code that specializes it at every value).")
        fix = (f"raise {flag} if these values are expected, or pass the number as a 0-d tensor; "
               f"a dynamic-sources entry does nothing under dynamic=False; {_RICHER}")
    elif x.reasons_off and not x.last_reason:
        # torch 2.1 prints the reason only under TORCHDYNAMO_REPORT_GUARD_FAILURES=1, and says
        # so where the reason would stand (pytorch#93468): nothing was cut
        # (2.1 and the 2.2 nightlies of 2023: pytorch-geometric#8418's says 8)
        note = (" torch printed no reason for it: its releases of 2023 (2.1, early 2.2 "
                "nightlies) name the guard that failed only under "
                "TORCHDYNAMO_REPORT_GUARD_FAILURES=1, as the warning says; nothing was cut.")
        fix = ("run it again with TORCHDYNAMO_REPORT_GUARD_FAILURES=1 (this release), or "
               'TORCH_LOGS="recompiles" (torch 2.2 and later), for the guard that failed; '
               + _raising(flag, x, sweep=False))
    elif kind in (gt.Checked.GUARD_ERROR, gt.Checked.UNEXPECTED, gt.Checked.INSTANCE,
                  gt.Checked.INSTANCE_TYPE):
        # torch's own failure (nothing of the user's changed), or a limit that is the fix
        # (torchtune#1232: a class per FSDP2 module, one compile per layer)
        # (with the frame's recompile reasons: their class names show a class per instance)
        row = guard_kinds.text(kind, (x.last_reason, *(
            t for r in diag.recompiles if r.kind == kind and r.rank == x.rank
            and r.function == x.function for t in r.reasons)), flag, diag.releases)
        note = f" Its last reason: {row.what}."
        fix = row.fix  # (INSTANCE's and INSTANCE_TYPE's rows raise it, and say how)
    elif (each := guard_kinds.per_instance(kind, (x.last_reason,), flag, diag.releases)) is not None:
        # ComfyUI#14536, ComfyUI-TeaCache#150: one forward for each of Wan's blocks, each
        # with its own LoRA patch and key: one compile per block, on the first pass already
        note, fix = f" Its last reason: {each.what}.", each.fix  # (the row says how to raise)
    elif diag.recompiles and any(r.kind == kind for r in diag.recompiles):
        note = ""
        fix = f"fix the recompile cause above; raising {flag} only hides it"
    else:
        row = guard_kinds.text(kind, (x.last_reason,), known=diag.releases)
        note = f" Its last reason: {row.what}."
        fix = (f"{row.fix}; {_raising(flag, x, sweep=False)}"
               + ("" if diag.recompiles else f" ({_RICHER})"))
    if raises:
        fix += guard_kinds.on_every_thread(flag, diag.releases)
    cid = CompileId.parse(x.compile_id) if x.compile_id else None
    # a warning pasted bare has no compile id: its frame is the one its last reason names
    at = cid or proven.failed_entry(x.last_reason)
    return Advice(
        kind=AdviceKind.RECOMPILE_LIMIT, function=x.function,
        frame=at.frame_key if at is not None else "?",
        frame_line=x.first_line if at is None else None,
        key=f"{x.limit_name}:{'oldest' if size and oldest else 'pinned' if pinned else 'size' if size else kind}",
        message=f"{who} hit {limit} {after}." + note, fix=fix, flag=flag_fix,
        # (the line cited is the warning's first, so its words lead: the last reason is a
        # later line of the same record; kjnodes-292 and comfy-aimdo-13 read as misquotes)
        evidence=(cite(x.line, x.compile_id, f"torch._dynamo hit config.{x.limit_name}"
                       + (f" ({x.limit})" if x.limit else "") + "; last reason: "
                       f"{x.last_reason or '(not in the log)'}")
                  if x.function or x.compile_id or x.last_reason else
                  # torch's exception alone (torchtitan#3898: "Unsupported: Dynamo recompile
                  # limit exceeded"; FailOnRecompileLimitHit's line alone, torchtitan#2958):
                  # no warning to quote, so dyncli's words
                  cite(x.line, "", (f"config.{x.limit_name}" if x.limit_name else
                                    "the recompile limit")
                       + (f" ({x.limit})" if x.limit else "") + " exceeded, as torch's "
                       "exception says; the function and its last reason are not in the log"),),
        rank=x.rank)

"""What the data-dependent facts of one compile prove (``dyncli.logparse.textdde``).

torch logs a failed ``evaluate_expr`` twice before it re-raises the error to the code that
asked, and neither log says which error it was:

- recording.py's record (``failed while running evaluate_expr(*(EXPR, …), **{…})``, E level, its
  traceback under it where TORCH_LOGS="dynamic" is on). Its ``record_shapeenv_event`` wrapper
  logs *any* exception of a recorded ShapeEnv call: 2.1-2.7 every time (2.4.1 and 2.7.1
  recording.py: ``except Exception: log.error(…)``, a nested recorded call's too), 2.8 on only
  while ShapeEnv records its events, under translation validation (2.8.0 recording.py:312,
  2.15.0 :349: ``if not shape_env.should_record_events or shape_env.is_recording: raise``).
- symbolic shapes' warning ``failed during evaluate_expr(EXPR, hint=…``: up to 2.7 for any
  exception (2.7.1 symbolic_shapes.py:6678 ``except Exception:``), from 2.8 for any but a
  ``GuardOnDataDependentSymNode`` (2.8.0 :7354, 2.15.0 :8814).

So either line alone proves that torch failed evaluating EXPR, not that the failure was a
data-dependent error: an ``AssertionError`` of a hint (``3 != 4``), a sympy error or a range
check raise there too. A compile's failed evaluations are its data-dependent errors only where
the log shows the error's own words (its message, torch's hint or ``Caused by`` in it, the
exportdb link, the allocation record torch writes only while raising it, export's
torch._check suggestions) and recording.py's traceback of the call ends in no other error
(``AssertionError: True != False``: 2.4.1's and 2.15.0's records in
tests/data/<torch>/shape_env_failed/). Otherwise each is a ``shape-env-failed`` note that says
what the log shows of it: the exception recording.py's traceback ends in, what the warning's
release rules out, and whether EXPR names values read from a tensor's data (``u0``) or sizes
only. pytorch#130456 is such an error on an expression over data: the hint check's
AssertionError.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dyncli.diagnose import releases as torch_releases
from dyncli.diagnose.model import DataDependentReport
from dyncli.logparse import events as ev
from dyncli.logparse import textdde as dde
from dyncli.logparse.textmsg import symbols_in, unbacked_in

_DDE_EXPRS = 8  # expressions kept per compile
# of two facts of one expression, the more telling is kept: the message's guard or int over
# torch's logs of the failure, symbolic_shapes' warning over recording.py's record
_TELLING = {"recorded": 1, "during": 2}
_LOGGED = ("recorded", "during")  # torch's logs of a failed evaluate_expr, any error's
_DURING_DDE_UNTIL = 7  # 2.x: the last release whose "failed during evaluate_expr" is one's too
# facts in the words of a GuardOnDataDependentSymNode (or of dynamo's and export's reports of
# one), written for no other error, that name no expression: the hint and the "Caused by" (or
# 2.3-2.5's culprit heading) of ShapeEnv._make_data_dependent_error's message, dynamo's
# exportdb link, export's suggested checks. They prove the compile's failure a data-dependent
# one, whichever of its failed evaluations it was. (The message's own guard or int names its
# expression and replaces torch's logs of that one; the allocation record torch writes while
# raising one names its symbol: ``allocated``.)
_UNNAMED_PROOF = frozenset({"hint", "culprit", "linked", "check"})
_OTHER_CHARS = 200  # of the exception a record's traceback ends in, said in the note
# a failure's note on an expression over unbacked symbols says so in these words (the note's
# fix then says what to do where the error was data-dependent: dyncli.diagnose.notes)
OVER_DATA = "an expression over values read from a tensor's data"


@dataclass
class DdeFacts:
    """The data-dependent facts of one compile (``textdde``): its expressions in order (a more
    telling reading of one replaces a vaguer: ``guard`` or ``int`` over ``during`` over
    ``recorded``), the operator whose meta asked, and torch's ``Caused by`` frame."""

    exprs: list[tuple[str, str, int]] = field(default_factory=list)  # (what, expr, line)
    op: str = ""
    culprit: str = ""
    user: ev.UserLoc | None = None
    made: ev.UserLoc | None = None  # where a symbol of it was made (its allocation stack)
    hint: str = ""  # torch's own answer in the message (guard_size_oblivious, guard_or_false…)
    checks: list[str] = field(default_factory=list)  # export's own torch._check suggestions
    linked: int = 0  # the line of the exportdb link that proves one whose expression is cut
    # the innermost user frame of dynamo's ``from user code:`` stack under the error (the
    # line that needed the value), where torch's own Caused by names no user line
    stack: ev.UserLoc | None = None
    # a fact not from torch's log of a failed ShapeEnv call that it re-raises (the error's
    # own message or traceback, dynamo's or export's report): the error left torch's ShapeEnv
    shown: bool = False
    # a fact in the error's own words that names no expression (torch's hint, its Caused by,
    # the exportdb link, export's checks): the compile's logged failures are a
    # data-dependent error's
    proven: bool = False
    allocated: set[str] = field(default_factory=set)  # symbols torch's allocation record names
    # expression -> the exception recording.py's traceback of its failed call ends in (a
    # data-dependent one's would be a guard fact): that call's error was another
    errors: dict[str, str] = field(default_factory=dict)
    _recorded: str = ""  # the expression of the last record whose exception is not yet read
    first: int = 0  # the line of its first fact
    forms: set[str] = field(default_factory=set)  # recording.py's record's (textdde)

    def add(self, e: ev.DataDependentError) -> None:
        self.shown = self.shown or not e.logged
        self.first = self.first or e.line
        what = "recorded" if e.what == "evaluate" and e.form else e.what
        self.proven = self.proven or what in _UNNAMED_PROOF
        if e.form and len(self.forms) < 2:
            self.forms.add(e.form)
        if what == "raised":  # (not a data-dependent one: its message would be a guard fact)
            if self._recorded and len(self.errors) < _DDE_EXPRS:
                self.errors.setdefault(self._recorded, e.value[:_OTHER_CHARS])
            self._recorded = ""
        elif what == "op":
            self.op = self.op or e.value
        elif what == "hint":
            self.hint = self.hint or e.value
        elif what == "linked":
            self.linked = self.linked or e.line
        elif what == "check":
            if e.value not in self.checks and len(self.checks) < 4:
                self.checks.append(e.value)
        elif what == "culprit":
            self.culprit = self.culprit or e.value
            self.user = self.user or e.user
        elif what == "stack":  # (the stack's frames in order: the innermost is the last)
            self.stack = e.user
        elif what == "symbol":  # an expression over it: the expression, where a line names it
            self.made = self.made or e.user
            if len(self.allocated) < _DDE_EXPRS:
                self.allocated.add(e.value)
            if (
                not any(e.value in symbols_in(expr) for _, expr, _ in self.exprs)
                and len(self.exprs) < _DDE_EXPRS
            ):
                self.exprs.append((what, e.value, e.line))
        else:
            self._recorded = _key(e.value) if what == "recorded" else self._recorded
            self._expr(what, e.value, e.line)

    def _expr(self, what: str, value: str, line: int) -> None:
        # a symbol's fact gives way to the expression that names it
        self.exprs = [x for x in self.exprs if x[0] != "symbol" or x[1] not in symbols_in(value)]
        for i, (had, expr, at) in enumerate(self.exprs):
            if dde.same(expr, value):
                # (the message's guard or int over torch's logs of the failure; the
                # warning over recording.py's record, as it tells what the record does not)
                if _TELLING.get(what, 3) > _TELLING.get(had, 3):
                    self.exprs[i] = (what, expr, at)
                return
        if len(self.exprs) < _DDE_EXPRS:
            self.exprs.append((what, value, line))

    def during_is_dde(self, known: torch_releases.Releases | None) -> bool | None:
        """Whether symbolic_shapes' ``failed during evaluate_expr`` warnings of this compile
        may be a data-dependent error's lines: True where the log shows a release up to 2.7
        (that writes it for any error, a data-dependent one too), False from 2.8 (only for
        another error), None where it shows neither. recording.py's record beside it tells
        first (its form: ``textdde.RECORDED_FORMS``), then the releases the whole log tells.
        (True is not proof: ``reports`` wants the error's own words as well.)"""
        if len(self.forms) == 1:
            return "old" in self.forms
        if known is None or known.conflicts:
            return None
        if known.high is not None and known.high <= _DURING_DDE_UNTIL:
            return True
        return False if known.low > _DURING_DDE_UNTIL else None

    def _is_dde(self, what: str, expr: str, during: bool | None) -> bool:
        """Whether a fact of ``what`` on ``expr`` is read as a data-dependent error: the error's
        own facts always; torch's logs of a failed evaluate_expr only where the error's own
        words prove one (an allocation record of a symbol of it, or the compile's hint, Caused
        by, link or checks) and recording.py's traceback of the call ends in no other error,
        and the warning never where its release writes it for no data-dependent one."""
        if what not in _LOGGED:
            return True
        if _key(expr) in self.errors or (what == "during" and during is False):
            return False
        return self.proven or bool(unbacked_in(expr) & self.allocated)

    def reports(
        self, rank: int | None, cid: str, raised: bool, during: bool | None = True
    ) -> list[DataDependentReport]:
        """Its reports; ``raised`` where the log shows the error leave torch (a fact of its
        own, or a Python traceback after it: ``Analyzer._dde_raised``); ``during``: what the
        warnings' release says (``during_is_dde``). torch's logs of a failed evaluate_expr are
        read as ``evaluate`` where the compile proves a data-dependent error, else left out
        (``failures``)."""
        # (an operator or a culprit alone proves no data-dependent error: no report)
        exprs = [
            ("evaluate" if what in _LOGGED else what, expr, line)
            for what, expr, line in self.exprs
            if self._is_dde(what, expr, during)
        ]
        return [
            DataDependentReport(
                rank=rank,
                compile_id=cid,
                expr=expr,
                what=what,
                op=self.op,
                culprit=self.culprit,
                user=self.user or self.stack,
                made=self.made,
                raised=raised,
                line=line,
                hint=self.hint,
                checks=tuple(self.checks),
            )
            for what, expr, line in (
                exprs or ([("unnamed", "", self.linked)] if self.linked else [])
            )
        ]

    def failures(self, during: bool | None) -> list[tuple[str, int, str]]:
        """(expression, line, what the log shows of its error) of each failed evaluate_expr
        that is no data-dependent error's (``reports`` leaves it out): a ``shape-env-failed``
        note's."""
        return [
            (expr, line, self._said(expr, what, during))
            for what, expr, line in self.exprs
            if not self._is_dde(what, expr, during)
        ]

    def _said(self, expr: str, what: str, during: bool | None) -> str:
        # (fake_tensor's record of the meta kernel that raised, where the compile has one: the
        # operator that asked, itself logged for any error)
        asked = f", asked by {self.op}'s meta kernel" if self.op else ""
        error = self.errors.get(_key(expr))
        if error:
            return f"raising {error} (recording.py's traceback of it){asked}"
        if what == "during" and during is False:
            return DURING_OTHER + asked
        data = sorted(unbacked_in(expr))
        over = (
            f"{OVER_DATA} ({', '.join(data[:3])}): "
            "torch raises GuardOnDataDependentSymNode where it cannot decide one, and the "
            "log shows none of that error's own words"
            if data
            else "an expression over sizes only, no value read from a tensor's data"
        )
        who = f"; {_DURING_ANY}" if what == "during" else ""
        return f"an error the log does not name ({over}{who}){asked}"


def _key(expr: str) -> str:
    """An expression as one key (torch prints it with and without spaces: ``textdde.same``)."""
    return expr.replace(" ", "")


# what symbolic_shapes' warning is written for, where the log does not show 2.8 or later
_DURING_ANY = (
    "symbolic_shapes' warning: up to torch 2.7 for any error, from 2.8 only for one "
    "that is not data-dependent"
)
# symbolic_shapes' warning where the log shows 2.8 or later: what it rules out
DURING_OTHER = (
    "an error that is not data-dependent (symbolic_shapes' warning: torch 2.8 on "
    "writes it for no other)"
)

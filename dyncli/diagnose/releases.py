"""Which torch releases wrote an input, as far as the input shows it (``Releases``), and the
facts of each release that a fix's text depends on (``FIRST``, ``has``).

What tells the release, strongest first: a version the input states (a trace's
``compilation_metrics`` carry ``pytorch_version`` from torch 2.10, utils.py ``CompilationMetrics``;
2.9.1's and older traces have none, tests/data/2.9.1 and 2.10.0), then the form of its graph-break
records (``logparse.events.FORM_*``, read in each wheel's symbolic_convert.py). A text log
states no version of its own (torch's records never print it). Several facts narrow the range
together; facts that contradict each other (logs of two installs read together) tell nothing.
A form's range is of releases: a development build between two writes the older one's form
until the change lands (pytorch#121349, a 2.3 nightly, writes 2.1-2.2's), and torchdynamo of
2022 wrote 2.1-2.2's too ("Torchdynamo: [WARNING] Graph break: numpy from user code at:",
torchdynamo#955).
torch-free: read by diagnose's advice and rendered as is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dyncli.logparse.events import (
    FORM_AFTER,
    FORM_FIRST,
    FORM_INLINE,
    FORM_NEW,
    FORM_SKIP,
    TorchVersion,
)
from dyncli.sources import PER_DIM_SINCE, has_dim


def _minors(form: str) -> tuple[int, int | None]:
    """``2.3-2.5`` -> (3, 5); ``2.6-`` -> (6, None); ``2.0`` -> (0, 0)."""
    low, dash, high = form.partition("-")
    first = int(low.split(".")[1])
    return first, (int(high.split(".")[1]) if high else None) if dash else first


# graph-break record forms by the releases (2.x minors; None: the newest) that write them, and
# the form in words. FORM_FIRST: torch 2.0.1's "Graph break: {excp} from user code at {stack}"
# (symbolic_convert.py:365), the first frame on the head's line, as torchdynamo's of 2022 (0
# stands for both: their releases name the same APIs); the ranges are read from
# logparse.events' FORM_* strings
_WORDS = {
    FORM_FIRST: 'the graph-break records\' form ("Graph break: … from user code at File …", '
                "the first frame on its line)",
    FORM_INLINE: 'the graph-break records\' form ("Graph break: REASON from user code at:")',
    FORM_AFTER: 'the graph-break records\' form ("Graph break: from user code at:", the '
                "exception after the stack)",
    FORM_NEW: 'the graph-break records\' form ("Graph break in user code at FILE:LINE")',
    FORM_SKIP: 'convert_frame.py\'s "Graph break: skip: from user code at:"',
}
FORMS: dict[str, tuple[int, int | None, str]] = {
    form: (*_minors(form), words) for form, words in _WORDS.items()}
# torch's "Developer debug context" in a graph-break record: 2.7 on (graph-break registry)
DEBUG_CONTEXT = (7, None, "the graph-break records' Developer debug context")

# The Triton each torch release's Linux x86_64 wheel requires (its METADATA's
# "Requires-Dist: triton==X", read with unzip -p in the wheels of 2.0.1, 2.1.0, 2.2.2, 2.3.1,
# 2.4.0, 2.5.1, 2.6.0, 2.7.0, 2.7.1, 2.8.0, 2.9.0, 2.9.1, 2.10.0, 2.11.0, 2.12.0, 2.14.1 and
# 2.15.0, and in pip's metadata (--dry-run --report) of 2.3.0, 2.13.0 and 2.14.0; 2.14 and
# 2.15 require "triton~=3.8.0" / "~=3.9.0": any patch release of that minor). "x": a patch
# release pins that patch of Triton (2.3.0 → 2.3.0, 2.3.1 → 2.3.1; 2.7.0 → 3.3.0, 2.7.1 →
# 3.3.1; 2.9.0 → 3.5.0, 2.9.1 → 3.5.1). Nightlies require pytorch-triton instead, built for
# that nightly. docs/diagnose.md's table is this one (tests/unit/test_r27_readings.py).
TRITON_PINS: tuple[tuple[str, str], ...] = (
    ("2.0", "2.0.0"), ("2.1", "2.1.0"), ("2.2", "2.2.0"), ("2.3", "2.3.x"), ("2.4", "3.0.0"),
    ("2.5", "3.1.0"), ("2.6", "3.2.0"), ("2.7", "3.3.x"), ("2.8", "3.4.0"), ("2.9", "3.5.x"),
    ("2.10", "3.6.0"), ("2.11", "3.6.0"), ("2.12", "3.7.0"), ("2.13", "3.7.1"),
    ("2.14", "3.8.x"), ("2.15", "3.9.x"),
)

# The first 2.x release that has each API a fix may name (read in each wheel): mark_dynamic and
# maybe_mark_dynamic 2.1 (2.1.0 _dynamo/decorators.py:163, :200; 2.0.1's torch._dynamo has
# neither), mark_unbacked 2.5 (2.5.1 decorators.py:381; 2.4.0 none), torch.compiler.set_stance
# 2.6 (2.6.0 compiler/__init__.py:233; 2.5.1 none), TORCH_COMPILE_DYNAMIC_SOURCES 2.7 (2.7.1
# compiler/config.py:67; 2.6.0's compiler/config.py has job_id and cache_key_tag only: an
# environment variable no release reads is ignored), recompile_limit 2.7 (2.7.1
# _dynamo/config.py:53, cache_size_limit its alias; 2.6.0 config.py:44 cache_size_limit), and
# a dynamic-sources entry's ":N" 2.13 (dyncli.sources.PER_DIM_SINCE)
# (both lists' entries: 2.12.0's builder.py get_unbacked_sources matches the whole name too,
# 2.14.1's parses the dim, _parse_source_entry), TORCH_COMPILE_UNBACKED_SOURCES 2.8 (2.8.0
# compiler/config.py:81; 2.7.1's has TORCH_COMPILE_DYNAMIC_SOURCES only)
# More rows, read the same way (round 26): TORCH_LOGS 2.1 (2.1.0 torch/_logging/; 2.0.1 has no
# torch._logging, its logs come from torch._dynamo.config.log_level), TORCH_TRACE 2.3 (2.3.1
# _logging/_internal.py:34 TRACE_ENV_VAR; 2.2.2's none), torch._dynamo.export 2.0 (2.0.1
# _dynamo/__init__.py:8) and torch.export 2.1 (2.1.0 torch/export/__init__.py; 2.0.1 has no
# torch/export), torch._dynamo.disable 2.0 (2.0.1 eval_frame.py:711) and torch.compiler.disable
# 2.1 (2.1.0 compiler/__init__.py:83), mark_static 2.1 (2.1.0 decorators.py:218),
# automatic_dynamic_shapes and force_parameter_static_shapes 2.1 (2.1.0 _dynamo/config.py:67,
# :73; 2.0.1's has neither), torch._check 2.1 (2.1.0 torch/__init__.py:992; 2.0.1 none),
# torch._check_is_size 2.2 (2.2.2 torch/__init__.py:1089; 2.1.0 none),
# TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED 2.3 (2.3.1 fx/experimental/_config.py:37; 2.2.2's
# _config.py has none: its "[guard added]" line has the user's frame only),
# torch.library.custom_op and register_fake 2.4 (2.4.0 library.py:13, :546),
# fail_on_cache_limit_hit 2.6 (2.6.0 _dynamo/config.py:56) renamed fail_on_recompile_limit_hit
# 2.7 (2.7.1 config.py:66), torch._dynamo.error_on_graph_break 2.9 (2.9.1 decorators.py:941;
# 2.8.0's torch._dynamo has none), torch.compile's recompile_limit= 2.12 (2.12.0
# torch/__init__.py:2610; 2.11.0's compile takes no such argument), and a config assignment
# that holds on one thread only 2.12 (a ContextVar: utils/_config_module.py, guard_kinds)
# (recompile_limit and fail_on_recompile_limit_hit, renamed, are NAMES' rows, not FIRST's)
PER_DIM_ENTRIES = "dynamic and unbacked sources entries' :N"
COMPILE_LIMIT = "torch.compile(..., recompile_limit=N)"
FIRST: dict[str, int] = {
    "mark_dynamic": 1, "maybe_mark_dynamic": 1, "mark_unbacked": 5,
    "torch.compiler.set_stance": 6, "TORCH_COMPILE_DYNAMIC_SOURCES": 7,
    "TORCH_COMPILE_UNBACKED_SOURCES": 8, PER_DIM_ENTRIES: PER_DIM_SINCE[1],
    "TORCH_LOGS": 1, "TORCH_TRACE": 3,
    "mark_static": 1, "automatic_dynamic_shapes": 1, "force_parameter_static_shapes": 1,
    "torch._check": 1, "torch._check_is_size": 2, "TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED": 3,
    "torch.library.custom_op": 4, "torch.library.register_fake": 4,
    "torch._dynamo.error_on_graph_break": 9,
    COMPILE_LIMIT: 12,
}
# What a release calls a thing it has under another name than the newest, oldest first: (the
# first 2.x minor with the name, the name); before the first row, none (a row at 0: every
# release has it). Its first row is its first release: FIRST has no row for it (``first``).
# A fix prints ``named``'s answer for the log's releases
NAMES: dict[str, tuple[tuple[int, str], ...]] = {
    "recompile_limit": ((0, "cache_size_limit"), (7, "recompile_limit")),
    "fail_on_recompile_limit_hit": ((6, "fail_on_cache_limit_hit"),
                                    (7, "fail_on_recompile_limit_hit")),
    "torch.compiler.disable": ((0, "torch._dynamo.disable"), (1, "torch.compiler.disable")),
    "torch.export": ((0, "torch._dynamo.export"), (1, "torch.export")),
}

_VERSION_RE = re.compile(r"^(?P<major>\d{1,3})\.(?P<minor>\d{1,3})(?:\.\d{1,3})?")
# a development build's version: a nightly's ".dev20251021", a source build's "a0+git…", a beta
_DEV_RE = re.compile(r"^\d{1,3}\.\d{1,3}(?:\.\d{1,3})?(?:\.dev|a\d|b\d)")
_MAX_SOURCES = 4
_MAX_TEXT = 80  # of a stated line, quoted as the source
# a TORCH_TRACE trace is torch 2.3's on (FIRST); said where nothing else tells more
TRACE_WORDS = "the input being a TORCH_TRACE trace (torch 2.3 on)"


@dataclass(frozen=True)
class Releases:
    """torch 2.``low`` to 2.``high`` (None: the newest); 0 stands for 2.0 and torchdynamo
    before it. ``version``: the release the input states; ``sources``: what told it;
    ``conflicts``: facts of the input that disagree with the reading (said, not hidden)."""

    low: int
    high: int | None
    version: str = ""
    sources: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """``torch 2.3-2.5``, ``torch 2.12.1+cu130``, ``torch 2.6 and later``."""
        if self.version:
            return f"torch {self.version}"
        return span(self.low, self.high)

    def has(self, api: str) -> bool | None:
        """Whether every release of the range has ``api`` (by any name: ``first``): True,
        False where none has it, None where some have it."""
        first = first_release(api)
        if self.low >= first:
            return True
        return False if self.high is not None and self.high < first else None

    def named(self, api: str) -> str | None:
        """What these releases call ``api`` (``FIRST``, ``NAMES``): its name where every one of
        them names it alike, the newest release's name where the range spans a rename or some
        lack it (the text a user of the newest reads), None where none of them has it."""
        oldest, newest = name_at(api, self.low), name_at(api, 99 if self.high is None else self.high)
        return oldest if oldest == newest else newest

    def line(self) -> str:
        """The terminal's one line: ``torch release: 2.3-2.5 (from the graph-break records' form …)``,
        and what disagrees (``; but …``)."""
        but = f"; but {'; '.join(self.conflicts)}" if self.conflicts else ""
        return (f"torch release: {self.text.removeprefix('torch ')} "
                f"(from {'; '.join(self.sources)}{but})")

    def to_json(self) -> dict[str, Any]:
        return {"range": numbers(self.low, self.high), "low": f"2.{self.low}",
                "high": None if self.high is None else f"2.{self.high}",
                "version": self.version or None, "from": list(self.sources),
                "conflicts": list(self.conflicts)}


def first_release(api: str) -> int:
    """The first 2.x minor that has ``api`` under any name (``NAMES``' first row, else
    ``FIRST``)."""
    rows = NAMES.get(api)
    return rows[0][0] if rows else FIRST[api]


def name_at(api: str, x: int) -> str | None:
    """What torch 2.``x`` calls ``api``; None where it has no such thing."""
    rows = NAMES.get(api) or ((FIRST[api], api),)
    return next((name for first, name in reversed(rows) if first <= x), None)


def named(api: str, known: Releases | None) -> str | None:
    """The name a fix prints for ``api``: the releases ``known``'s (``Releases.named``); the
    newest release's where nothing tells them (today's text)."""
    return known.named(api) if known is not None else name_at(api, 99)


def numbers(low: int, high: int | None) -> str:
    """``2.4-2.5``, ``2.2``, ``2.4 and later``."""
    return (f"2.{low} and later" if high is None else
            f"2.{low}" if high == low else f"2.{low}-2.{high}")


def span(low: int, high: int | None) -> str:
    """``torch 2.4-2.5``, ``torch 2.2``, ``torch 2.4 and later``; 2.0's with torchdynamo."""
    if high == 0:
        return "torch 2.0 (or torchdynamo before it)"
    return f"torch {numbers(low, high)}"


def pins_text() -> str:
    """``TRITON_PINS`` in words: "torch 2.0 → triton 2.0.0, …, 2.10-2.11 → 3.6.0, …"."""
    groups: list[tuple[str, str, str]] = []  # (first torch, last torch, triton)
    for torch, triton in TRITON_PINS:
        if groups and groups[-1][2] == triton:
            groups[-1] = (groups[-1][0], torch, triton)
        else:
            groups.append((torch, torch, triton))
    said = [f"{a}-{b} → {t}" if a != b else f"{a} → {t}" for a, b, t in groups]
    return f"torch {said[0].replace(' → ', ' → triton ', 1)}, " + ", ".join(said[1:])


def of_break(form: str, debug: bool) -> tuple[int, int | None, tuple[str, ...]] | None:
    """The releases a graph-break record's form tells (``FORMS``) and a debug context's (2.7
    on) together, and what told them; None where neither tells, or they contradict."""
    known = FORMS.get(form)
    if not debug:
        return None if known is None else (known[0], known[1], (known[2],))
    low, _, said = DEBUG_CONTEXT
    if known is None:
        return low, None, (said,)
    if known[1] is not None and known[1] < low:
        return None
    # (a form whose range the context's holds, 2.6-, adds nothing to say; 2.4-2.7's end does)
    return (max(low, known[0]), known[1],
            (said,) if known[1] is None else (known[2], said))


def minor(version: str) -> int | None:
    """2.x's x of a version string (``2.12.1+cu130`` -> 12); None for another major."""
    m = _VERSION_RE.match(version.strip())
    return int(m["minor"]) if m is not None and m["major"] == "2" and len(m["minor"]) < 4 else None


def stated_range(version: str) -> tuple[int, int] | None:
    """The releases a stated version is of: its own (``2.5.1``, ``2.5.0rc1``); a development
    build of 2.x (``2.10.0.dev20251021``, a nightly; ``2.3.0a0+git…``, a source build of main)
    is between 2.(x-1) and 2.x, as its graph-break records' form may be the older one's
    (pytorch#121349); None for a version not 2.x's (``1.14.0a0``)."""
    x = minor(version)
    if x is None:
        return None
    return (max(x - 1, 0), x) if _DEV_RE.search(version) else (x, x)


def stated_words(e: TorchVersion) -> str:
    """What a pasted line that states torch's version is called as a source of the release."""
    return f'the input\'s "{e.text[:_MAX_TEXT]}" (line {e.line})'


def judge(forms: Iterable[tuple[str, bool]], stated: Iterable[tuple[str, str]] = (),
          trace: bool = False) -> Releases | None:
    """The releases the input's facts tell: ``forms`` (a graph-break record's form and whether
    it has a debug context), ``stated`` (the versions the input states, each with what states
    it: a trace's metrics, a pasted collect_env), ``trace`` (the input is a TORCH_TRACE trace:
    2.3 on). A stated version beats the forms' range; where they disagree, or two stated
    versions do, the reading says so (``Releases.conflicts``). None where nothing tells, or
    the forms alone contradict each other."""
    low, high, words, told = 0, None, [], False
    if trace:
        low, told = FIRST["TORCH_TRACE"], True
        words.append(TRACE_WORDS)
    for form, debug in forms:
        fact = of_break(form, debug)
        if fact is None:
            continue
        lo, hi, said = fact
        low, told = max(low, lo), True
        high = hi if high is None else high if hi is None else min(high, hi)
        words += [w for w in said if w not in words]
    if trace and len(words) > 1:
        words.remove(TRACE_WORDS)  # (a record's form tells as much or more)
    formed = told and not (high is not None and high < low)
    said_ = [(v, by, r) for v, by in stated if (r := stated_range(v)) is not None]
    if not said_:
        return Releases(low=low, high=high, sources=tuple(words[:_MAX_SOURCES])) if formed else None
    s_low, s_high = max(r[0] for *_, r in said_), min(r[1] for *_, r in said_)
    conflicts = []
    if s_high < s_low:  # two installs' versions (logs read together, an environment's mix)
        s_low, s_high = min(r[0] for *_, r in said_), max(r[1] for *_, r in said_)
        conflicts.append("the input states different versions: "
                         + ", ".join(dict.fromkeys(v for v, *_ in said_)))
    version = next((v for v, _, r in said_ if r == (s_low, s_high)), "")
    sources = list(dict.fromkeys(by for _, by, _ in said_))
    if told and not formed:
        conflicts.append(f"{' and '.join(words)} contradict each other")
    elif told and ((high is not None and high < s_low) or low > s_high):
        conflicts.append(f"{' and '.join(words)} {'tells' if len(words) == 1 else 'tell'} "
                         f"{span(low, high)}")
    elif told and (low > s_low or (high is not None and high < s_high)):
        s_low, s_high = max(s_low, low), min(s_high, high if high is not None else s_high)
        sources += words  # (they narrowed a development build's range)
    return Releases(low=s_low, high=s_high, version=version,
                    sources=tuple(sources[:_MAX_SOURCES]), conflicts=tuple(conflicts))


# how a listed fix writes its call in code after the list (size_changes' fixes: "VAR=…  (or,
# in code, before each call of f: torch._dynamo.maybe_mark_dynamic(x, 0))"), read back where
# the releases need the call first
IN_CODE = "  (or, in code, "
# what makes a size dynamic in a release without the marks: torch 2.0's dynamic=True (2.0.1
# eval_frame.py:124 enable_dynamic, config.dynamic_shapes)
EVERY_SIZE = "torch.compile(…, dynamic=True), which makes every size dynamic"


def listed_fix(var: str, listed: str, code: str, entries: Iterable[str], known: Releases | None,
               mark: str = "", instead: str = "") -> str:
    """A fix that prints the list ``var`` (``listed``: ``VAR="…"`` and what follows it) and,
    where it has one, ``code`` (the ``mark`` call in code for the same dims), in the order the
    releases ``known`` need. Where none of them has the setting, the call that works there
    first: ``code`` where they have ``mark``, else ``instead`` (where given), the list after
    it for a later torch; where none reads an entry's ``:N``, that said after the fix. As
    written (the list, then ``code``) where they read it, or nothing tells."""
    written = listed + (f"{IN_CODE}{code})" if code else "")
    if known is None:
        return written
    first = FIRST[var]
    if known.has(var) is False:
        later = f"from torch 2.{first}: {listed}"
        if code and mark and known.has(mark) is not False:
            return (f"{code}  [the log's {known.text} has no {var} (torch 2.{first}'s) and "
                    f"ignores it; {later}]")
        if code and mark and instead:
            return (f"{instead}  [the log's {known.text} has neither {var} (torch 2.{first}'s) "
                    f"nor {mark} (torch 2.{FIRST[mark]}'s); {later}]")
        lacks = f", nor {mark} (torch 2.{FIRST[mark]}'s)" if code and mark else ""
        return (f"{written}  [{var} is torch 2.{first}'s: the log's {known.text} has no such "
                f"setting{lacks} and ignores it; torch 2.{first} or later reads it]")
    if known.has(PER_DIM_ENTRIES) is False and any(has_dim(e) for e in entries):
        per_dim = FIRST[PER_DIM_ENTRIES]
        there = (f"the {mark} call above does it there" if code and mark and known.has(mark)
                 else f"torch 2.{per_dim} or later reads it")
        return (f"{written}  [the log's {known.text} reads no entry's ':N' in {var} (torch "
                f"2.{per_dim} does); {there}]")
    return written

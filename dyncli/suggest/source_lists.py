"""The source lists torch reads, which torch reads which, and the target torch of a suggestion.

torch's ``torch/compiler/config.py`` declares one string config per list, each with the same
syntax (comma separated; ``pattern`` or ``pattern:N`` for dim ``N``; an entry matches a source
name when ``pattern == name or re.match(pattern, name)``):

=================================== ================== ======================================
environment variable                config             read by (checked in the source)
=================================== ================== ======================================
``TORCH_COMPILE_DYNAMIC_SOURCES``   ``dynamic_sources`` every release dyncli targets
``TORCH_COMPILE_UNBACKED_SOURCES``  ``unbacked_sources`` 2.13.0, 2.14.1, 2.15.0
``TORCH_COMPILE_STATIC_SOURCES``    ``static_sources``  2.15.0 (absent from 2.13.0 and 2.14.1)
=================================== ================== ======================================

Precedence (``torch/_dynamo/variables/builder.py``): 2.15 tries static, then dynamic, then
unbacked, first match wins; 2.14 makes a dim unbacked whenever it is listed unbacked, even if it
is listed dynamic too. So dyncli never lists one dim in two lists. No torch import here: the
installed version is read from the name of its ``.dist-info`` folder.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from dyncli.errors import UsageError
from dyncli.sources import source_regex

DYNAMIC = "dynamic"
UNBACKED = "unbacked"
STATIC = "static"


@dataclass(frozen=True)
class ListSpec:
    """One list torch reads: its name, environment variable, config attribute, first release."""

    name: str
    env_var: str
    config: str
    since: tuple[int, int] | None  # None: every release dyncli targets
    verified_since: tuple[int, int] | None = None  # older targets: emitted, with a note


SPECS: dict[str, ListSpec] = {
    DYNAMIC: ListSpec(DYNAMIC, "TORCH_COMPILE_DYNAMIC_SOURCES", "dynamic_sources", None),
    UNBACKED: ListSpec(UNBACKED, "TORCH_COMPILE_UNBACKED_SOURCES", "unbacked_sources", None, (2, 13)),
    STATIC: ListSpec(STATIC, "TORCH_COMPILE_STATIC_SOURCES", "static_sources", (2, 15)),
}
# The newest torch whose config.py was read for the table above: the default target when no
# torch is installed (suggest runs on laptops without it).
NEWEST_KNOWN = "2.15"


def parse_torch_version(text: str) -> tuple[int, int]:
    """``2.5.1+cu124`` → ``(2, 5)``; a ``UsageError`` for anything else."""
    m = re.match(r"^\s*v?(\d{1,4})\.(\d{1,4})", text)
    if not m:
        raise UsageError(f"--torch-version: expected a version such as 2.5 or 2.14.1, got {text!r}")
    return int(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class Target:
    """The torch the suggestion is for, and where that came from."""

    version: str
    origin: str  # "--torch-version", "installed torch" or "newest known"

    @property
    def minor(self) -> tuple[int, int]:
        """``(major, minor)``."""
        return parse_torch_version(self.version)

    def reads(self, spec: ListSpec) -> bool:
        """Whether this torch reads ``spec``'s list."""
        return spec.since is None or self.minor >= spec.since


def installed_torch_version() -> str | None:
    """The version of the torch this interpreter would import, from its ``.dist-info`` name.

    Neither torch nor ``importlib.metadata`` is imported: the latter costs ~100 ms to import
    (measured at load 12) on suggest's start-up path; this costs under 1 ms. The first
    ``sys.path`` entry holding a ``torch`` package wins, as for ``import torch``.
    """
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip, a missing dir
            continue
        if "torch" not in names:
            continue
        for name in names:
            if name.startswith("torch-") and name.endswith(".dist-info"):
                return name[len("torch-"):-len(".dist-info")]
        return None  # a torch without wheel metadata (a source build): unknown
    return None


def resolve_target(given: str | None) -> Target:
    """``--torch-version`` if given, else the installed torch, else :data:`NEWEST_KNOWN`."""
    if given is not None:
        parse_torch_version(given)
        return Target(given, "--torch-version")
    installed = installed_torch_version()
    if installed is not None:
        try:
            parse_torch_version(installed)
        except UsageError:
            pass
        else:
            return Target(installed, "installed torch")
    return Target(NEWEST_KNOWN, "newest known")


@dataclass(frozen=True)
class Pattern:
    """One user-given list entry: a name or regex, and the dim it is for (None: all dims)."""

    text: str
    pattern: str
    dim: int | None
    rx: re.Pattern[str]

    def matches(self, name: str, dim: int | None) -> bool:
        """torch's rule: ``pattern == name or re.match(pattern, name)``, then the dim."""
        if not (self.pattern == name or self.rx.match(name)):
            return False
        return self.dim is None or dim is None or self.dim == dim


_DIM_RE = re.compile(r"^(?P<pattern>.+):(?P<dim>\d{1,6})$")


def parse_entries(value: str | Sequence[str] | None, option: str) -> tuple[Pattern, ...]:
    """``"L['x']:1,L['y']"`` (or a list of such strings) → patterns, as torch splits them.

    torch removes every space and splits on commas, so neither can be part of an entry; each
    pattern must compile as a regex, or torch raises while compiling.
    """
    if value is None:
        return ()
    texts = [value] if isinstance(value, str) else list(value)
    out: list[Pattern] = []
    for text in texts:
        if not isinstance(text, str):
            raise UsageError(f"{option}: expected source names, got {type(text).__name__}")
        for raw in text.replace(" ", "").split(","):
            if not raw:
                continue
            if len(raw) > 1000:
                raise UsageError(f"{option}: entry longer than 1000 characters: {raw[:80]!r}…")
            m = _DIM_RE.match(raw)
            pattern, dim = (m.group("pattern"), int(m.group("dim"))) if m else (raw, None)
            try:
                rx = source_regex(pattern)
            except (re.error, RecursionError, OverflowError) as e:
                raise UsageError(f"{option}: {raw!r} is not a valid regex "
                                 f"({e if isinstance(e, re.error) else 'nested too deeply'}); "
                                 "torch would raise on it while compiling") from None
            out.append(Pattern(raw, pattern, dim, rx))
    return tuple(out)


def matching(patterns: tuple[Pattern, ...], name: str, dim: int | None) -> Pattern | None:
    """The first pattern that selects ``name`` (dim ``dim``), or None."""
    return next((p for p in patterns if p.matches(name, dim)), None)


@dataclass(frozen=True)
class SourceList:
    """One of the lists torch reads (``TORCH_COMPILE_*_SOURCES``) as suggested for a target."""

    name: str
    env_var: str
    config: str
    entries: tuple[str, ...]
    read: bool  # whether the target torch reads this list

    @property
    def value(self) -> str:
        """The variable's value: the entries joined with commas."""
        return ",".join(self.entries)


@dataclass(frozen=True)
class Split:
    """Where the dynamic dims of one source go: which list each dim lands in."""

    dynamic: tuple[int, ...]
    unbacked: tuple[int, ...]
    static: tuple[int, ...]
    all_static: bool


def split_dims(source: str, kind: str, rank: int, dyn: tuple[int, ...], small: set[int],
               static: tuple[Pattern, ...], unbacked: bool) -> Split:
    """Split ``source``'s dynamic dims ``dyn`` between the lists.

    A dim a ``static`` pattern selects stays out of the others (on 2.15 static would win anyway;
    on 2.14 leaving it out is the only way to honour it). With ``unbacked``, a dim once seen with
    size 0 or 1 (``small``) goes to the unbacked list: torch specializes 0/1 sizes of a backed
    dynamic dim, so a batch of 1 compiles a graph of its own unless the dim is unbacked.
    Scalars and tensors of unknown rank are whole sources: pinned or not (torch ignores the
    ``:N`` of an entry that names a scalar, so any matching entry pins it).
    """
    if kind != "tensor" or not dyn or rank == 0:
        hit = matching(static, source, None)
        return Split(dyn, (), (), hit is not None and (kind != "tensor" or hit.dim is None))
    stat = tuple(d for d in dyn if matching(static, source, d) is not None)
    rest = [d for d in dyn if d not in stat]
    unb = tuple(d for d in rest if unbacked and d in small)
    keep = tuple(d for d in rest if d not in unb)
    return Split(keep, unb, stat, not keep and not unb)

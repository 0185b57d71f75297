"""Dynamo source names (``L['x']``, ``L['kwargs']['ids']``) and the user's names for them.

Shared by ``diagnose`` (its mark_dynamic fix lines) and ``suggest`` (its ``--format python``):
both turn a source of a frame's own inputs into the expression a user would write.
"""

from __future__ import annotations

import importlib
import keyword
import re
import sys
import warnings

# Inputs of the frame itself: a local, optionally indexed (args tuples, kwargs dicts).
INPUT_RE = re.compile(r"^L\['[^']*'\](?:\[(?:\d+|'[^']*')\])*$")
_LOCAL_RE = re.compile(r"^L\['([A-Za-z_][A-Za-z0-9_]*)'\](.*)\Z")
# Index keys that are written into generated code as they are: digits, or a quoted key of
# plain characters. A key with a backslash or a control character could end the literal and
# make the rest of the name a statement (``L['x']['\']['+os.system(…)+']``): no expression.
_PLAIN_INDEX_RE = re.compile(r"(?:\[(?:\d+|'[A-Za-z0-9_ .:/-]*')\])*\Z")


# A dynamic-sources entry's ``:N`` names one dim of the input (``L['x']:0``, ``.*:1``).
# pytorch/pytorch#184120 (merged 2026-05-18): 2.13.0's variables/builder.py parses it
# (``_parse_source_entry``, ``is_dynamic_source(name, dim)``); 2.12.0's and 2.11.0's match an
# entry against the whole name, so there ``:N`` matches nothing and the entry does nothing
# (read round 19; tests/integration/test_per_dim_sources.py runs it on 2.11).
PER_DIM_SINCE = (2, 13)
_DIM_SUFFIX_RE = re.compile(r":\d{1,9}\Z")


def has_dim(entry: str) -> bool:
    """Whether a dynamic-sources entry names a dim (``L['x']:0``)."""
    return _DIM_SUFFIX_RE.search(entry) is not None


def without_dim(entry: str) -> str:
    """The entry for the whole input (``L['x']:0`` → ``L['x']``): what a torch before
    :data:`PER_DIM_SINCE` can read."""
    return _DIM_SUFFIX_RE.sub("", entry)


def source_regex(pattern: str) -> re.Pattern[str]:
    """A source pattern as torch reads it (``re.match`` in torch's process, this Python): what
    it means today. Python's FutureWarning about "[[", "--", "&&", "~~" or "||" in a class is
    kept quiet: it would print Python's own line about text from a log or an option. Raises
    what ``re.compile`` raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern)


# re's parser: what re.compile runs on a pattern it has not compiled before (``re._parser``
# from Python 3.11, ``sre_parse`` before).
_RE_PARSER = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")


def python_warns_about(pattern: str) -> bool:
    """Whether this Python's re warns (FutureWarning) that a later Python may read ``pattern``
    differently: a class holding "[[", "--", "&&", "~~" or "||" (a set operation to come).
    Parsed afresh each time: ``re.compile`` hands back a pattern it compiled before from its
    cache without parsing it again, so the warning (and an answer read off it) would depend on
    what the process compiled earlier. Raises ``re.error`` for an invalid pattern."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", FutureWarning)
        _RE_PARSER.parse(pattern)
    return any(issubclass(w.category, FutureWarning) for w in seen)


def is_input(source: str) -> bool:
    """Whether ``source`` is one of the frame's own inputs (not a parameter, attribute, global)."""
    return INPUT_RE.match(source) is not None


def local_expr(source: str) -> str | None:
    """``L['x']`` → ``x``, ``L['kwargs']['ids']`` → ``kwargs['ids']``; None for other sources."""
    m = _LOCAL_RE.match(source)
    if not m or not is_input(source) or keyword.iskeyword(m.group(1)) \
            or not _PLAIN_INDEX_RE.match(m.group(2)):
        return None
    return m.group(1) + m.group(2)


# How torch prints a source in a guard-failure reason: ``strip_local_scope`` (torch/_dynamo/
# guards.py, 2.14 and 2.15) replaces every ``L['name']`` by ``name`` and leaves the rest:
# ``x``, ``xs[0]``, ``self.cache``, ``self._parameters['w']``, ``g.__closure__[0].cell_contents``,
# ``G['TABLE']['t']`` (globals keep their ``G[...]``).
_REASON_HEAD_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(.*)$")


def from_reason(name: str) -> str:
    """The source torch matches for a name as a recompile reason prints it.

    ``x`` → ``L['x']``, ``xs[0]`` → ``L['xs'][0]``, ``self.k`` → ``L['self'].k``,
    ``g.__closure__[0].cell_contents`` → ``L['g'].__closure__[0].cell_contents`` (the local
    is the head only; the attribute and index chain stays outside the brackets), ``G[...]``
    and ``L[...]`` names as they are.
    """
    if name.startswith(("L[", "G[")):
        return name
    m = _REASON_HEAD_RE.match(name)
    return f"L['{m.group(1)}']{m.group(2)}" if m else name


# ``L['x'].size()[0]`` (a symbol's source as create_symbol prints it) → (``L['x']``, 0).
_SIZE_SOURCE_RE = re.compile(r"^(?P<src>.+?)\.(?:size|shape)\(\)\[(?P<dim>\d+)\]$")


def size_source(source: str) -> tuple[str, int] | None:
    """(tensor source, dim) of a size symbol's source, or None for other sources."""
    m = _SIZE_SOURCE_RE.match(source)
    return (m["src"], int(m["dim"])) if m else None


def is_attribute(source: str) -> bool:
    """Whether ``source`` is a module attribute, parameter or buffer (``L['self']…``)."""
    return source.startswith("L['self']") and source != "L['self']"


# ``L['self'].param_groups[0]['lr']``, ``…['betas'][0]``: a hyperparameter of a torch.optim
# optimizer (its step() compiled, ``self`` the optimizer); the name is the group's key
_OPTIM_RE = re.compile(r"\.param_groups\[\d{1,6}\]\['(?P<name>[A-Za-z_]\w{0,60})'\]")


def optimizer_hyper(source: str) -> str | None:
    """The param-group key (``lr``, ``betas``) of an optimizer's hyperparameter, or None."""
    m = _OPTIM_RE.search(source)
    return m["name"] if m else None


def is_param(source: str) -> bool:
    """A parameter or buffer (``…_parameters['w']``): torch keeps its shape static by default."""
    return "._parameters[" in source or "._buffers[" in source


def is_closure(source: str) -> bool:
    """A cell of a local function's closure (``L['g'].__closure__[0].cell_contents``): a value
    the caller chooses, like an argument, so it is suggested as an input."""
    return source.startswith("L['") and ".__closure__[" in source and not is_attribute(source)


def left_out(source: str) -> bool:
    """Sources ``suggest`` leaves out by default: parameters, module attributes, globals."""
    return not is_input(source) and not is_closure(source)

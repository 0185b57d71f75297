"""PGO state as text: torch's ``render_code_state`` output, as found in a TORCH_TRACE.

torch logs the whole state as a string artifact each time it reads or writes it
(``put_local_code_state``, ``get_local_code_state``, ``put_remote_code_state``,
``get_remote_code_state``, ``get_extra_remote_code_state`` in ``torch/_dynamo/pgo.py``)::

    V1122 01:19:44.836000 7124 torch/_logging/_internal.py:1489] {"artifact": {"name": "put_local_code_state", "encoding": "string"}, ..., "has_payload": "60cc…"}
    \thash(cc0d5748)/work/prog.py:61:scale:
    \t  L['x']: tensor size=[4, ?] stride=[S(1), 1]
    \t  L['n']: fully dynamic scalar or tensor
    \t
    \tPGO detected a recompilation due to dynamic shapes. ... TORCH_COMPILE_DYNAMIC_SOURCES="…"

Each artifact is the full state at that moment, so the LAST one of a file (one process) is
its final state. Merging every snapshot instead would join two static snapshots taken before
and after a size change (with automatic dynamic off: ``dynamic=False``, a recompile limit)
into "dynamic", which torch never recorded. Files (processes, ranks) are merged as
``--pgo-dir`` merges pickles. The trace envelopes are read by ``dyncli.logparse.trace``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from dyncli.errors import InputError
from dyncli.inputs import STDIN, Source, display_name, open_input, trace_files
from dyncli.logparse.guardtext import guard_of, mismatch, zero_one
from dyncli.logparse.safe import clip
from dyncli.logparse.trace import TraceParser
from dyncli.logparse.trace_format import PAYLOAD_ARTIFACTS
from dyncli.sources import from_reason
from dyncli.suggest.pgo_pickle import entry_from_parts
from dyncli.suggest.pgo_state import DYNAMIC, UNSET, Entry, FrameKey, InferStride, PgoState

_HEADER_RE = re.compile(r"^hash\((?P<hash>[^)]*)\)(?P<file>.*):(?P<line>\d{1,9}):(?P<name>[^:]*):$")
_TENSOR_RE = re.compile(r"^tensor size=\[(?P<size>[^\]]*)\] stride=\[(?P<stride>[^\]]*)\]$")
_UNUSUAL_TOKEN_RE = re.compile(r"<AutoDynamic\.token: 0>|<AutoUnset\.token: 0>|InferStride\(dim=(\d{1,9})\)"
                               r"|-?\d{1,30}(?:\.\d{1,30})?(?:e-?\d{1,4})?")
_STRIDE_RE = re.compile(r"S\((\d{1,9})\)")
# A source name may itself hold ": "; the first few candidates are tried, no more (linear).
_MAX_SPLITS = 8


def _atom(text: str) -> object:
    text = text.strip()
    if text == "?":
        return DYNAMIC
    m = _STRIDE_RE.fullmatch(text)
    if m:
        return InferStride(int(m.group(1)))
    try:
        return int(text)
    except ValueError:
        return float(text)


def _is_render(text: str) -> bool:
    """Whether ``text`` has the shape of one of ``FrameStateSizeEntry.render()``'s forms."""
    if text.startswith("tensor size=["):
        return _TENSOR_RE.match(text) is not None
    if text.startswith("scalar "):
        return bool(text[7:]) and not any(c.isspace() for c in text[7:])
    return text == "fully dynamic scalar or tensor" or (
        text.startswith("unusual FrameStateSizeEntry(") and text.endswith(")"))


def split_entry(line: str) -> tuple[str, str] | None:
    r"""``  <source>: <render>`` → (source, render): the first ": " whose rest is a render.

    Written with str.find; the regex it replaces (``^  (.+?): (…|unusual …\(.*\))$``)
    re-scanned the rest of the line from every ": ".
    """
    if not line.startswith("  "):
        return None
    at = 2
    for _ in range(_MAX_SPLITS):
        at = line.find(": ", at + 1)
        if at < 0:
            return None
        if _is_render(line[at + 2:]):
            return line[2:at], line[at + 2:]
    return None


def _unusual_fields(render: str) -> tuple[str, str, str] | None:
    """(scalar, size, stride) of ``unusual FrameStateSizeEntry(scalar=…, size=…, stride=…)``."""
    a = render.find("scalar=")
    b = render.find(", size=", a + 7) if a >= 0 else -1
    c = render.find(", stride=", b + 7) if b >= 0 else -1
    if c < 0:
        return None
    end = render.find(", excluded", c + 9)
    if end < 0:
        if not render.endswith(")"):
            return None
        end = len(render) - 1
    return render[a + 7:b], render[b + 7:c], render[c + 9:end]


def _tuple(text: str) -> tuple[object, ...]:
    return tuple(_atom(p) for p in text.split(",")) if text.strip() else ()


def _unusual_part(text: str) -> object:
    """A field of ``repr(FrameStateSizeEntry)``: a token, an int, or a tuple of those."""
    text = text.strip()
    if text.startswith("("):
        out: list[object] = []
        for m in _UNUSUAL_TOKEN_RE.finditer(text):
            tok = m.group(0)
            out.append(DYNAMIC if "AutoDynamic" in tok else
                       InferStride(int(m.group(1))) if m.group(1) else _atom(tok))
        return tuple(out)
    if "AutoDynamic" in text:
        return DYNAMIC
    if "AutoUnset" in text:
        return UNSET
    return _atom(text)


def parse_render(render: str) -> Entry:
    """Invert ``FrameStateSizeEntry.render()``. Raises ``ValueError`` on text it cannot read."""
    if render == "fully dynamic scalar or tensor":
        return entry_from_parts(DYNAMIC, DYNAMIC, DYNAMIC)
    if render.startswith("scalar "):
        return entry_from_parts(_atom(render[len("scalar "):]), DYNAMIC, DYNAMIC)
    m = _TENSOR_RE.match(render)
    if m:
        return entry_from_parts(DYNAMIC, _tuple(m.group("size")), _tuple(m.group("stride")))
    fields = _unusual_fields(render) if render.startswith("unusual ") else None
    if fields is not None:
        return entry_from_parts(*(_unusual_part(f) for f in fields))
    raise ValueError(f"unrecognized entry {render[:80]!r}")


def parse_rendered_state(lines: Iterable[str]) -> list[tuple[FrameKey, dict[str, Entry]]]:
    """Parse ``render_code_state`` text (without the trace's leading tab) into frames."""
    frames: list[tuple[FrameKey, dict[str, Entry]]] = []
    current: dict[str, Entry] | None = None
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip() or line.startswith("PGO detected"):
            continue
        header = _HEADER_RE.match(line)
        if header:
            key = FrameKey(header.group("file"), int(header.group("line")), header.group("name"),
                           header.group("hash"))
            current = {}
            frames.append((key, current))
            continue
        entry = split_entry(line)
        if entry and current is not None:
            current[entry[0]] = parse_render(entry[1])
            continue
        raise ValueError(f"unrecognized line {line.strip()[:80]!r}")
    return frames


CODE_STATE_ARTIFACTS = frozenset(n for n in PAYLOAD_ARTIFACTS if n.endswith("code_state"))


def code_state_artifacts(source: Source) -> Iterator[tuple[str, str]]:
    """(artifact name, payload) of every ``*_code_state`` artifact in a TORCH_TRACE input."""
    parser = TraceParser(source.name, keep=frozenset({"artifact"}), payloads=frozenset({"artifact"}))
    for record in parser.feed(source.lines()):
        name = record.meta.get("name")
        if isinstance(name, str) and name in CODE_STATE_ARTIFACTS and record.payload is not None:
            yield str(name), record.payload


def trace_inputs(path: str | Path) -> list[str]:
    """``-`` (stdin), a trace file, or the trace files of a TORCH_TRACE dir."""
    if str(path) == STDIN:
        return [STDIN]
    return [str(f) for f in trace_files(Path(path))]


def read_trace_files(files: Iterable[str | Path], state: PgoState | None = None) -> PgoState:
    """Merge the code state of every artifact in each trace file; note files without any."""
    state = state or PgoState()
    for path in files:
        name = display_name(path)
        frames: list[tuple[FrameKey, dict[str, Entry]]] = []
        found = 0
        try:
            with open_input(path, check_text=False, recognize=True) as opened:
                for _name, payload in code_state_artifacts(opened):
                    frames = parse_rendered_state(payload.splitlines())  # the newest snapshot
                    found += 1
        except InputError as e:
            state.skipped.append((name, clip(e.message)))
            continue
        except Exception as e:  # the one guard around one untrusted file: skip it, keep the rest
            text = str(e) if isinstance(e, (OSError, ValueError)) else ""
            state.skipped.append((name, clip(text) or f"not PGO state ({type(e).__name__})"))
            continue
        if found == 0:
            state.skipped.append((name, "no put/get_*_code_state artifacts (was TORCH_COMPILE_JOB_ID set?)"))
            continue
        state.inputs.append(name)
        for key, entries in frames:
            for source, entry in entries.items():
                state.add(key, source, entry)
    return state


def zero_one_dims(reasons: Iterable[str]) -> dict[str, set[int]]:
    """Dims a size 0 or 1 reached after they turned dynamic, or that a compile made at 0 or 1
    kept static, from a run's recompile reasons:
    ``{"L['x']": {0}}``. torch's PGO state keeps no size of a dynamic dim, so only the trace
    shows them (its ``recompile_reasons``, as the text log's recompiles)."""
    out: dict[str, set[int]] = {}
    for reason in reasons:
        # the bound alone: "2 <= x.size()[1] <= 40" fails above 40 too, proving nothing of 0/1
        guard = guard_of(reason)
        found = zero_one(guard)
        if found is not None and found[2]:
            out.setdefault(from_reason(found[0]), set()).add(found[1])
        # a compile made at size 0 or 1 that a larger size failed (a warm-up at batch 1,
        # sglang#23428: "size mismatch at index 0. expected 1, actual 3"): marked dynamic, the
        # dim would still compile at 1 first; unbacked, one graph serves it all
        mm = mismatch(guard)
        if mm is not None and mm.what == "size" and mm.expected in (0, 1):
            out.setdefault(from_reason(mm.name), set()).add(mm.dim)
    return out


def seen_small(state: PgoState, small: dict[str, set[int]]) -> None:
    """Note those dims as 0/1 sizes seen (``Entry.small_sizes``), in every frame that has the
    source: what a PGO file's static 0/1 size or ``excluded_sizes`` notes, for the same list."""
    if not small:
        return
    for _, entries in state.frames.values():
        for source, entry in entries.items():
            for dim in small.get(source, ()):
                entry.small_sizes.setdefault(dim, set()).add(1)

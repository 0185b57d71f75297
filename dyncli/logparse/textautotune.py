"""max-autotune's tuning output → ``TorchNote`` events (kind ``autotune``).

Under ``mode="max-autotune"`` inductor benchmarks each candidate kernel of a matmul or a
convolution and keeps the fastest; ``torch/_inductor/select_algorithm.py`` writes what it
measured to stderr itself, without a logger or a prefix (2.3 ``:1069-1084``, 2.6 ``:1804-1821``,
2.11 ``:4349-4378``, 2.15 ``:6137-6166``)::

    AUTOTUNE mm(4096x2048, 2048x256)
    strides: [2048, 1], [256, 1]                      (2.11 on)
    dtypes: torch.float32, torch.float32              (2.11 on)
      mm 0.0154 ms 100.0%
      triton_mm_4780 0.0162 ms 95.4% ACC_TYPE='tl.float32', …   (a template's config, 2.6 on)
      triton_mm_5 inf ms 0.0% …                        (a candidate that failed)
    SingleProcess AUTOTUNE benchmarking takes 0.9773 seconds and 0.6039 seconds precompiling for 17 choices
    Autotune Choices Stats:                           (2.11 on, max_autotune_report_choices_stats)
    {"num_choices": 18, …}

(2.3: ``SingleProcess AUTOTUNE takes 7.2176 seconds``; ``SubProcess`` under
``autotune_in_subproc``; 2.6-2.7 end the summary at ``… precompiling``.) Its logger's records
(``select_algorithm.py:N]``) are the candidates that failed, each given an infinite time while
tuning goes on (2.11 ``:3895-3940``, 2.15 ``:5496-5540``): ``Runtime error during autotuning:`` /
the error / ``Ignoring this choice.`` (E), ``out of resource: shared memory, Required: N,
Hardware limit: M. …`` (W, Triton's OutOfResources), ``Exception E for benchmark choice C``
(E, a precompile that raised: 2.6 ``:1478``); and the fallback when every Triton candidate
failed (``… defaulting to extern kernels``, ``… Falling back to ExternKernelCaller``).

Pure and linear: each pattern is anchored and bounded; a line costs a few substring tests
before any regex.
"""

from __future__ import annotations

import re
from typing import Any

from dyncli.logparse import events as ev
from dyncli.logparse.textnotes import TEXT_CHARS

KIND = "autotune"
# a log viewer's line number before each line ("  36   triton_bmm_36 …", heavyball#30)
_GUTTER = rb"(?:\d{1,7}[ \t]{1,8})?"
_HEADER_RE = re.compile(rb"^" + _GUTTER + rb"AUTOTUNE [\w.]{1,200}\(.{0,4000}\)$")
# "  triton_mm_4780 0.0162 ms 95.4% ACC_TYPE=…", "  mm 0.0154 ms 100.0%", "inf ms 0.0%",
# "0.0000 ms <DIVIDED BY ZERO ERROR>"
_ROW_RE = re.compile(rb"^" + _GUTTER + rb"[\w.]{1,300} (?:\d{1,15}\.\d{4}|inf|nan) ms "
                     rb"(?:\d{1,5}\.\d%|<DIVIDED BY ZERO ERROR>)(?:\s.{0,8000})?$")
_SUMMARY_RE = re.compile(rb"^" + _GUTTER + rb"(?:SingleProcess|SubProcess) AUTOTUNE "
                         rb"(?:benchmarking )?takes \d{1,15}\.\d{4} seconds")
_STATS_RE = re.compile(rb"^" + _GUTTER + rb"Autotune Choices Stats:$")
_STATS_PAYLOAD = b'{"num_choices": '  # the stats' JSON on the line after them
# the two lines 2.11 on writes under a table's head
_UNDER_HEAD_RE = re.compile(rb"^" + _GUTTER + rb"(?:strides: \[.{0,4000}\]|dtypes: torch\.\w.{0,4000})$")

# the logger's records: the first words of a failed candidate's, and of the fallback's
FAILED = ("Runtime error during autotuning", "CUDA compilation error during autotuning",
          "out of resource:", "Exception ", "Marking choice as failed",
          "Precompilation timeout")
FALLBACK = ("Runtime error for autotuning triton choices", "All autotuning benchmarks failed")
LOGGER = b"select_algorithm.py:"  # in a glog prefix: inductor's autotuning logger
OLD_LOGGER = b"torch._inductor.select_algorithm"  # the same in torch 2.1/2.2's layout


def line_kind(raw: bytes, in_table: bool) -> str | None:
    """What part of the tuning output a line without a prefix is: ``table`` (a table's head),
    ``row``, ``head`` (2.11's strides and dtypes under the head, read only in a table),
    ``summary``, ``stats`` and its ``payload``; None for any other line."""
    if not (b" ms " in raw or b"AUTOTUNE" in raw[:100] or b"Autotune Choices" in raw[:100]
            or b'{"num_choices' in raw[:40] or in_table):
        return None  # (most lines: no copy, a few substring tests)
    line = raw.strip()
    if b" ms " in line:
        return "row" if _ROW_RE.match(line) is not None else None
    if b"AUTOTUNE" in line[:80]:
        if _HEADER_RE.match(line) is not None:
            return "table"
        return "summary" if _SUMMARY_RE.match(line) is not None else None
    if b"Autotune Choices Stats:" in line[:80]:
        return "stats" if _STATS_RE.match(line) is not None else None
    if line.startswith(_STATS_PAYLOAD):
        return "payload"
    if in_table and (b"strides: [" in line[:40] or b"dtypes: torch." in line[:40]):
        return "head" if _UNDER_HEAD_RE.match(line) is not None else None
    return None


def note(what: str, raw: bytes, common: dict[str, Any]) -> ev.TorchNote:
    """The note event of one part of the tuning output."""
    text = raw.strip().decode("utf-8", "replace")[:TEXT_CHARS]
    return ev.TorchNote(kind=KIND, what=what, text=text, **common)


def record(lines: list[str], common: dict[str, Any]) -> list[ev.Event]:
    """A record of inductor's autotuning logger: one ``failed`` note per candidate it says
    failed (a record of two lines' one prefix: two), ``fallback`` where every Triton candidate
    failed, else ``other`` (its other records: prescreening timings, collective benchmarking)."""
    out: list[ev.Event] = []
    for i, line in enumerate(lines):
        text = line.strip()
        what = ("failed" if text.startswith(FAILED) else
                "fallback" if text.startswith(FALLBACK) else "")
        if what:
            if text.endswith(":") and i + 1 < len(lines):  # its error on the next line
                text = f"{text} {lines[i + 1].strip()}"
            out.append(ev.TorchNote(kind=KIND, what=what, text=text[:TEXT_CHARS], **common))
    if not out and lines:
        out.append(ev.TorchNote(kind=KIND, what="other", text=lines[0].strip()[:TEXT_CHARS],
                                **common))
    return out

"""A function first called under a TorchDispatchMode, on the logs two torch releases wrote
(tests/data/make_mode_skip.py: tests/data/programs/under_a_mode.py with TORCH_LOGS=+dynamo).

torch 2.11 never compiled it (dynamo's skip stayed on the code object): a finding, the cause
said as "never compiled". torch 2.15 compiled it once the mode was gone: the skip is read, and
no finding (nothing lasting to fix).
"""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.api import run as diagnose

DATA = Path(__file__).resolve().parents[1] / "data"


def test_torch_2_11_kept_the_skip() -> None:
    d = diagnose(str(DATA / "2.11.0" / "mode_skip" / "under_a_mode.log"))
    ((rank, fn, file, n, _),) = d.mode_skips
    assert (rank, fn, n) == (None, "mm", 1) and file.endswith("programs/under_a_mode.py")
    assert d.compiles == 0
    (a,) = [x for x in d.suggestions if x.kind == "dispatch-mode-skip"]
    assert "never compiled" in a.message and "once outside the mode" in a.fix
    (c,) = d.causes
    assert c.line().startswith("[never compiled] mm ")


def test_torch_2_15_compiled_it_after_the_mode() -> None:
    d = diagnose(str(DATA / "2.15.0" / "mode_skip" / "under_a_mode.log"))
    assert [(fn, n) for _, fn, _, n, _ in d.mode_skips] == [("mm", 1)]
    assert any(f.function == "mm" and f.compiles == 1 for f in d.frames)
    assert not [x for x in d.suggestions if x.kind == "dispatch-mode-skip"]


def test_other_skips_are_not_read() -> None:
    from dyncli.logparse import events as ev
    from dyncli.logparse.textlog import parse_lines

    line = (b"V1008 15:48:32.399000 869523 torch/_dynamo/convert_frame.py:1458] skipping: "
            b"__init__ (reason: in skipfiles, file: /x/torch/autograd/grad_mode.py)\n")
    stats = ev.ParseStats()
    events = [e for e in parse_lines([line], stats) if isinstance(e, ev.ModeSkip)]
    assert events == [] and (stats.recognized, stats.unrecognized) == (1, 0)

"""torch's graph-break message whose type line a paste cut (vllm-ascend#5145, paste hunt 20).

torch 2.7-2.15 print a graph break as exc.py's format_graph_break_message writes it: the type,
then ``  Explanation: …``, ``  Hint: …`` (none or more), a blank and ``  Developer debug context:
…``, then ``from user code:`` and the stack. A paste that begins at the Explanation is torch's
beyond doubt when a second of those parts follows it in that form; it is read as a break whose
type is not in the paste (said so), with its place where the stack follows. An Explanation line
alone is nobody's. 2.12-2.15's recompile limit, raised in the same form, stays a limit.
"""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import DyncliError
from dyncli.logparse import textbreaks as breaks
from dyncli.logparse.events import GraphBreak, ParseStats, RecompileLimit
from dyncli.logparse.textlog import parse_lines

_CORPUS = Path(__file__).parents[1] / "data" / "pasted"
# torch 2.15's Observed exception (symbolic_convert.py), its type line cut
_CUT = """  Explanation: Dynamo found no exception handler at the top-level compiled function when encountering an exception. Exception will propagate outside the compiled region.
  Hint: Dynamo has detected that tracing the code will result in an error when running in eager. Please double check that your code doesn't contain a similar error when actually running eager/uncompiled.

  Developer debug context: raised exception ValueError([ConstantVariable(str: 'bad')])


from user code:
   File "/app/model.py", line 12, in forward
    raise ValueError("bad")
"""
# 2.15's convert_frame.raise_unimplemented_cache_limit_exceeded, its type line cut
_LIMIT = """  Explanation: Dynamo attempted to recompile the code object too many times, exceeding the recompile_limit cache size limit (currently set to 8). Excessive recompilations can degrade performance due to the compilation overhead of each recompilation.
  Hint: To monitor recompilations, enable TORCH_LOGS=recompiles. If recompilations are expected, consider increasing torch._dynamo.config.recompile_limit to an appropriate value.

  Developer debug context: Limit type: recompile_limit
"""


def _events(text: str) -> tuple[list[object], ParseStats]:
    stats = ParseStats()
    lines = text.encode().removesuffix(b"\n").split(b"\n")
    return list(parse_lines(lines, stats)), stats


def test_the_paste_begun_at_the_explanation_is_a_break_of_a_cut_type() -> None:
    found, stats = _events((_CORPUS / "vllm-ascend-5145.log").read_text())
    (b,) = [e for e in found if isinstance(e, GraphBreak)]
    assert b.reason == breaks.CUT_TYPE and not b.gb_type
    assert b.explanation.startswith("Dynamo found no exception handler at the top-level")
    assert len(b.hints) == 2 and b.partial and not b.file  # (its stack is past the excerpt)
    assert not b.raised  # (whether it was raised was on the type line)
    assert stats.unrecognized == 0


def test_its_place_where_the_stack_follows() -> None:
    found, _ = _events(_CUT)
    (b,) = [e for e in found if isinstance(e, GraphBreak)]
    assert (b.file, b.user_line, b.partial) == ("/app/model.py", 12, False)
    assert b.debug.startswith("raised exception ValueError")


def test_the_diagnosis_says_the_type_is_not_in_the_paste(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(_CUT)
    (s,) = [s for s in diagnose_logs([log]).suggestions]
    assert "/app/model.py:12" in s.message
    assert s.fix.startswith("Dynamo has detected that tracing the code")  # torch's hint


def test_an_explanation_line_alone_is_nobodys(tmp_path: Path) -> None:
    text = "  Explanation: the reviewer asked for more tests\nSounds good.\n"
    found, stats = _events(text)
    assert not found and stats.unrecognized == 2 and stats.recognized == 0
    log = tmp_path / "notes.log"
    log.write_text(text)
    try:
        diagnose_logs([log])
    except DyncliError as e:
        assert "not a torch log" in str(e)
    else:
        raise AssertionError("read as a torch log")


def test_the_recompile_limit_in_that_form_stays_a_limit() -> None:
    found, _ = _events(_LIMIT)
    assert not [e for e in found if isinstance(e, GraphBreak)]
    (x,) = [e for e in found if isinstance(e, RecompileLimit)]
    assert (x.limit_name, x.limit) == ("recompile_limit", "8")

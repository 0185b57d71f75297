"""CompileProfiler's "Torchdynamo Profiler Report" (torch 2.0-2.4's _dynamo/utils.py), as users
pasted it: pytorch#110803 (cut after two of its eight reasons), pytorch#113443 (graph breaks
only), pytorch-geometric#8418 (eight recompiles and torch's cache_size_limit line)."""

from __future__ import annotations

from pathlib import Path

from linear_time import assert_linear

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.events import CompileCrash, GraphBreak, ParseStats, Recompile
from dyncli.logparse.textlog import parse_lines

_CORPUS = Path(__file__).parents[1] / "data" / "pasted"
_HEAD = """Torchdynamo Profiler Report
===========================

Graph Breaks
------------
Graph breaks happen when torchdynamo encounters code it can't safely trace.
If you want to find out why breaks are happening, check below for each break reason
You may gain additional insight by passing `fullgraph=True` to torch.compile,
to stop at the first break.

"""
_RECOMPILATION = """

Recompilation
-------------
These subgraphs were recompiled more than once due to guard failures
Guard failures indicate some condition assumed to be static by the tracer changed,
making it unsafe to reuse the compiled program.

"""


def _events(text: str) -> tuple[list[object], ParseStats]:
    stats = ParseStats()
    return list(parse_lines(text.encode().removesuffix(b"\n").split(b"\n"), stats)), stats


def test_a_report_cut_inside_its_reasons_keeps_its_count() -> None:
    found, stats = _events((_CORPUS / "pytorch-110803.log").read_text())
    recompiles = [e for e in found if isinstance(e, Recompile)]
    assert len(recompiles) == 8 and stats.unrecognized == 0
    assert {(r.function, r.file, r.first_line) for r in recompiles} == {("forward", "2657887092.py", 11)}
    said = [r for r in recompiles if r.failures]
    assert [r.failures[0].reason for r in said] == ["__nn_module_guard_0(L['self'])"] * 2
    assert [r.line for r in said] == [21, 22]  # (each at its row: the evidence cites it)


def test_graph_breaks_counted_by_reason() -> None:
    found, _ = _events((_CORPUS / "pytorch-113443.log").read_text())
    breaks = [e.reason for e in found if isinstance(e, GraphBreak)]
    assert sorted(breaks) == ["hasattr no source"] * 2 + ["hasattr: UserDefinedClassVariable()"]
    assert not [e for e in found if isinstance(e, Recompile)]


def test_each_recompile_is_a_compile_its_fix_removes() -> None:
    diag = diagnose_logs([_CORPUS / "pytorch-geometric-8418-b.log"])
    (f,) = diag.frames
    assert (f.function, f.compiles) == ("forward", 9)
    (cause, *_) = diag.causes
    assert cause.compiles == 8 and "global state changed" in cause.title


def test_a_reason_wrapped_onto_rows_is_one_reason() -> None:
    # (tabulate writes a cell with a newline on rows of its own, the other cells blank there)
    text = _HEAD + ("Graph Break Reason           Count\n"
                    "-------------------------  -------\n"
                    "call_function UserDefined        3\n"
                    "  (at line 4)\n"
                    "generic_jump                     1") + _RECOMPILATION + \
        "No recompilation detected.\n"
    found, stats = _events(text)
    breaks = [e.reason for e in found if isinstance(e, GraphBreak)]
    assert breaks == ["call_function UserDefined (at line 4)"] * 3 + ["generic_jump"]
    assert stats.unrecognized == 0


def test_the_report_ends_where_torch_ends_it() -> None:
    # (a recompile record after the report is its own, not a row of the report's)
    after = ("V0101 00:00:00.000000 1 torch/_dynamo/guards.py:3000] [0/1] [__recompiles] "
             "Recompiling function g in /app/g.py:3\n"
             "V0101 00:00:00.000000 1 torch/_dynamo/guards.py:3000] [0/1] [__recompiles]     "
             "triggered by the following guard failure(s):\n"
             "V0101 00:00:00.000000 1 torch/_dynamo/guards.py:3000] [0/1] [__recompiles]     "
             "- 0/0: n == 1\n")
    for end in ("No recompilation detected.\n",
                "Function        Recompiles  Recompile Reasons\n"
                "------------  ------------  -------------------\n"
                "'f' (m.py:3)             1  n == 2\n\n"
                "Set torch._dynamo.config.cache_size_limit to 1 to avoid being cache limited.\n"):
        found, _ = _events(_HEAD + "No graph breaks detected." + _RECOMPILATION + end + after)
        names = sorted(e.function for e in found if isinstance(e, Recompile))
        assert names == (["g"] if end.startswith("No") else ["f", "g"])


def _hostile_report(n: int) -> str:
    return _HEAD + ("Graph Break Reason  Count\n"
                    "------------------  -------\n"
                    f"a                  999999999\n{'x' * n}  \n{' ' * n}1\n")


def test_hostile_counts_and_lines_are_bounded() -> None:
    found, _ = _events(_hostile_report(1_000_000))
    assert 0 < len([e for e in found if isinstance(e, GraphBreak)]) <= 8192
    assert_linear(_events, _hostile_report, 1_000_000)


def test_the_fallback_form_without_tabulate_is_read() -> None:
    # torch's utils.tabulate without the tabulate package (2.1-2.4): the headers and each row
    # joined by ", ", a multi-line cell as it is. Before round 26 the report said nothing.
    text = _HEAD + ("Graph Break Reason, Count\n"
                    "call_function UserDefined, x\n"
                    "  (at line 4), 3\n"
                    "generic_jump, 1") + _RECOMPILATION + (
        "Function, Recompiles, Recompile Reasons\n"
        "'forward' (model.py:11), 2, tensor 'L['x']' size mismatch at index 0. expected 4, actual 8\n"
        "tensor 'L['x']' size mismatch at index 0. expected 8, actual 12\n"
        "'g' (m.py:3), 1, L['n'] == 2\n\n"
        "Set torch._dynamo.config.cache_size_limit to 2 to avoid being cache limited.\n")
    found, stats = _events(text)
    breaks = [e.reason for e in found if isinstance(e, GraphBreak)]
    assert breaks == ["call_function UserDefined, x (at line 4)"] * 3 + ["generic_jump"]
    recompiles = [(e.function, e.file, e.first_line, e.failures[0].reason)
                  for e in found if isinstance(e, Recompile)]
    size = "tensor 'L['x']' size mismatch at index 0. expected {}, actual {}"
    assert recompiles == [("forward", "model.py", 11, size.format(4, 8)),
                          ("forward", "model.py", 11, size.format(8, 12)),
                          ("g", "m.py", 3, "L['n'] == 2")]
    assert stats.unrecognized == 0


# (round 27) a report cut after its table, no cache_size_limit line after it
_CUT_REPORT = (_HEAD + "No graph breaks detected." + _RECOMPILATION
               + "Function                        Recompiles  Recompile Reasons\n"
               "----------------------------  ------------  ------------------------------\n"
               "'forward' (2657887092.py:11)             8  __nn_module_guard_0(L['self'])\n")


def test_a_cut_profiler_report_ends_where_its_form_does(tmp_path: Path) -> None:
    # the report cut after its table (no cache_size_limit line): the traceback after a blank
    # line is the program's, not a row of the report (it was taken up to two blank lines)
    log = tmp_path / "p.log"
    log.write_text(_CUT_REPORT + (
        "\nTraceback (most recent call last):\n"
        '  File "/app/train.py", line 9, in <module>\n'
        "    model(x)\n"
        '  File "/usr/lib/python3.11/site-packages/torch/_inductor/compile_fx.py", line 100, '
        "in compile_fx\n"
        "    raise x\n"
        "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "RuntimeError: boom\n"))
    diag = diagnose_logs([log])
    (x,) = diag.compile_crashes
    assert "RuntimeError: boom" in x.error
    (f,) = diag.frames  # (the report's own rows still read: 8 recompiles of forward)
    assert (f.function, f.compiles) == ("forward", 9)


def test_a_whole_profiler_report_keeps_its_blank_separated_parts() -> None:
    # torch's blank lines inside the report still continue it: its last line is read
    found, stats = _events(_CUT_REPORT + "\nSet torch._dynamo.config.cache_size_limit to 8 to "
                           "avoid being cache limited.\n")
    assert len([e for e in found if isinstance(e, Recompile)]) == 8
    assert stats.unrecognized == 0 and not [e for e in found if isinstance(e, CompileCrash)]

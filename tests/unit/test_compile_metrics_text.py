"""torch's compile-time table at exit, read from text (textmetrics): both layouts, a cut row,
and a hostile line that must stay linear."""

from __future__ import annotations

from linear_time import assert_linear

from dyncli.diagnose.analyzer import analyze
from dyncli.logparse.textlog import parse_lines

P = "I1130 05:28:49.200000 5332 torch/_dynamo/utils.py:967] "
CSV = [P + "TorchDynamo compilation metrics:", P + "Function, Runtimes (s)",
       P + "_compile.compile_inner, 92.9121", P + "OutputGraph.call_user_compiler, 80.5968",
       P + "compile_fx.<locals>.fw_compiler_base, 2.0361"]
OLD = "[2024-01-31 12:55:56,633] torch._dynamo.utils: [INFO] "
TABLE = [OLD + "TorchDynamo compilation metrics:",
         OLD + "Function                                  Runtimes (s)",
         OLD + "--------------------------------------  --------------",
         OLD + "_compile.<locals>.compile_inner               401.729",
         OLD + "OutputGraph.call_user_compiler                376.255",
         OLD + "WrapperCodeGen.generate"]


def _read(lines: list[str]):  # type: ignore[no-untyped-def]
    return analyze(parse_lines(line.encode() for line in lines))


def test_csv_layout_gives_the_total_and_the_backend() -> None:
    d = _read(CSV)
    (x,) = d.compile_metrics
    assert (x.total_row, x.total_s, x.backend_s, x.cut) == (
        "_compile.compile_inner", 92.9121, 80.5968, False)
    assert [a.kind for a in d.suggestions] == ["compile-time"]
    assert "TORCHINDUCTOR_CACHE_DIR" in d.suggestions[0].fix


def test_tabulate_layout_with_a_cut_row() -> None:
    d = _read(TABLE)
    (x,) = d.compile_metrics
    assert (x.total_s, x.backend_s, x.cut) == (401.729, 376.255, True)
    assert d.stats.unrecognized == 0


def test_short_compiles_are_said_not_a_finding() -> None:
    d = _read([CSV[0], CSV[1], P + "_compile.compile_inner, 2.5"])
    assert d.compile_metrics[0].total_s == 2.5 and not d.suggestions


def test_a_hostile_row_is_linear() -> None:
    def rows(n: int) -> list[str]:
        return [CSV[0], P + "a" * 200 + " " * n + "1" * n + ",x" * (n // 2)]

    assert _read(rows(100_000)).compile_metrics[0].cut
    assert_linear(_read, rows, 100_000)

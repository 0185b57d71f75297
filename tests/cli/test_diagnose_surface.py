"""``dyncli diagnose`` as a demanding user drives it (round 26): what the command gives back
for a closed pipe, a file named twice, stdin at a terminal, a name holding a newline,
``--limit``, and whether the JSON has the keys docs/diagnose.md lists."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli import inputs
from dyncli.cli import app

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LOG = DATA / "logs" / "multi_rank.log"
TRACE = DATA / "traces" / "multi_rank"
ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"}


def _json(runner: CliRunner, *args: str) -> dict:
    r = runner.invoke(app, ["diagnose", *args, "--json", "-"], env=ENV)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_a_closed_pipe_exits_2_quietly_not_1_as_a_tripped_gate(tmp_path: Path) -> None:
    # `dyncli diagnose run.log | head -1`: the reader is gone before the view is written.
    # rich's own handling exited 1, which --fail-on means; docs/reliability.md says 2.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "dyncli", "diagnose", str(LOG)],
                              stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False, cwd=tmp_path,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


@pytest.mark.parametrize("kind", ["log", "trace"])
def test_a_file_named_twice_is_read_once(runner: CliRunner, kind: str) -> None:
    # `dyncli diagnose /tmp/trace /tmp/trace/*.log`, `run.log run.log`: every compile (trace)
    # or graph break (log) counted twice before
    path = LOG if kind == "log" else TRACE
    again = [str(path)] if kind == "log" else [str(p) for p in sorted(TRACE.glob("*.log"))]
    once = _json(runner, str(path))
    twice = _json(runner, str(path), *again)
    assert twice["summary"] == once["summary"]
    assert twice["inputs"] == once["inputs"]
    assert any("read once" in w for w in twice["warnings"]), twice["warnings"]


def test_stdin_at_a_terminal_says_it_waits_for_a_paste(runner: CliRunner,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # `dyncli diagnose -` with nothing piped waited without a word
    monkeypatch.setattr(inputs, "_is_terminal", lambda stream: True)
    r = runner.invoke(app, ["diagnose", "-"], input=LOG.read_text(), env=ENV)
    assert r.exit_code == 0, r.output
    assert "paste it, then press Ctrl-D" in r.stderr
    assert "paste it" not in r.stdout


def test_a_name_with_a_newline_stays_on_its_line(runner: CliRunner, tmp_path: Path) -> None:
    odd = tmp_path / "run\nSummary: 0 frame(s).log"
    shutil.copy(LOG, odd)
    r = runner.invoke(app, ["diagnose", str(odd)], env=ENV)
    assert r.exit_code == 0, r.output
    first, second = r.stdout.splitlines()[:2]
    assert first.startswith("dyncli diagnose: ") and "run\\nSummary: 0 frame(s).log" in first
    assert second.startswith("Summary: ") and not second.startswith("Summary: 0 frame(s).log")


def test_limit_says_each_cut_under_its_section(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(LOG), "--limit", "1"], env=ENV)
    assert r.exit_code == 0, r.output
    out = r.stdout
    cut = out.index("(frames: showing 1 of ")
    assert out.index("Frames") < cut < out.index("Recompiles")  # under its title, not above


def test_limit_says_what_it_cut_from_the_trace_sections(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", str(TRACE), "--limit", "1"], env=ENV)
    assert r.exit_code == 0, r.output
    # these were cut without a word
    assert re.search(r"\(compiles timed: showing 1 of \d+; --json has all\)", r.stdout), r.stdout
    assert r.stdout.index("Compile time by phase") < r.stdout.index("(compiles timed: showing")


def _documented_keys() -> set[str]:
    doc = (ROOT / "docs" / "diagnose.md").read_text()
    section = doc.split("## JSON (`--json`, schema_version 1)", 1)[1].split("\n## ", 1)[0]
    keys: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            keys |= set(re.findall(r"`([a-z_0-9]+)`", line.split("|")[1]))
    trace_doc = (ROOT / "docs" / "diagnose-trace.md").read_text()
    example = trace_doc.split("## JSON", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    keys |= set(re.findall(r'^  "([a-z_]+)":', example, re.M))
    return keys


# documented keys that are there only when the input holds what they describe
_ONLY_WHEN = {"compiled_autograd", "cudagraphs", "notes", "torch_notes", "stopped_after_limit",
              "loop_skips"}
_ENVELOPE = {"schema_version", "dyncli", "command"}


def test_the_json_has_the_keys_the_docs_list_and_no_other(runner: CliRunner) -> None:
    documented = _documented_keys()
    text = set(_json(runner, str(LOG)))
    trace = set(_json(runner, str(TRACE)))
    assert (text | trace) - _ENVELOPE - documented == set(), "undocumented keys"
    assert documented - _ONLY_WHEN - trace == set(), "documented keys missing from a trace's"
    trace_only = set(re.findall(r'^  "([a-z_]+)":', (ROOT / "docs" / "diagnose-trace.md")
                                .read_text().split("```json", 1)[1].split("```", 1)[0], re.M))
    assert documented - _ONLY_WHEN - trace_only - text == set(), "missing from a log's"


def test_a_cause_of_some_ranks_only_says_which(runner: CliRunner) -> None:
    # rank 1 marked its input dynamic, rank 0 recompiled: the fix is rank 0's alone
    r = runner.invoke(app, ["diagnose", str(DATA / "traces" / "two_rank_diverge")], env=ENV)
    assert r.exit_code == 0, r.output
    lines = [x for x in r.stdout.splitlines() if re.match(r"\d\. \[", x)]
    assert "] rank 0: inputs L['x']:0 change size" in lines[0], lines
    assert not any("] rank" in x for x in lines[1:])  # of no rank: nothing to say


def test_similar_graphs_decided_elsewhere_join_that_cause(runner: CliRunner) -> None:
    # each rank's similar graphs of L['x'], which the mark-dynamic fix decides, were a cause
    # of their own: no fix, 0 compiles, listed once per rank (16 ranks: 16 lines)
    doc = _json(runner, str(TRACE))
    assert [c["kind"] for c in doc["causes"]] == ["allow-list"]
    kinds = {f["kind"] for f in doc["causes"][0]["findings"]}
    assert {"mark-dynamic", "similar-graphs"} <= kinds


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_a_file_gets_no_trailing_spaces(runner: CliRunner, columns: str) -> None:
    # rich padded every line of a table's block to the width: 200 columns of spaces in a file
    r = runner.invoke(app, ["diagnose", str(TRACE)], env={**ENV, "COLUMNS": columns})
    assert r.exit_code == 0, r.output
    assert "Frames" in r.stdout and not re.search(r" +$", r.stdout, re.M)


def test_a_long_path_in_a_line_breaks_after_a_slash_on_a_terminal() -> None:
    # the view's first line at 60 columns read ".../dedicated_log_tor" over "ch_trace_rank_0…"
    import io

    from dyncli.termfit import FitConsole

    buf = io.StringIO()
    console = FitConsole(file=buf, width=40, force_terminal=True, color_system=None,
                         markup=False, highlight=False)
    path = "/work/data/traces/multi_rank/dedicated_log_torch_trace_rank_0_f4ziw8_s.log"
    console.print(f"dyncli diagnose: {path} (2012 lines)", soft_wrap=True)
    lines = buf.getvalue().splitlines()
    assert all(len(x) <= 40 for x in lines), lines
    assert "/work/data/traces/multi_rank/" in lines
    assert any(x.startswith("dedicated_log_torch_trace_rank_0_f4") for x in lines), lines


def test_many_rank_files_are_one_short_name_in_the_first_line(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    # 16 ranks' file names filled the first line (~1,000 characters) before the summary
    (rank0, rank1) = sorted(TRACE.glob("*.log"))
    folder = tmp_path / "trace"
    folder.mkdir()
    for i in range(8):
        for src, which in ((rank0, 0), (rank1, 1)):
            shutil.copy(src, folder / f"dedicated_log_torch_trace_rank_{2 * i + which}_x.log")
    r = runner.invoke(app, ["diagnose", str(folder)], env=ENV)
    assert r.exit_code == 0, r.output
    first = r.stdout.splitlines()[0]
    assert first.startswith(f"dyncli diagnose: 16 files in {folder}/ ("), first
    assert len(_json(runner, str(folder))["inputs"]) == 16  # the JSON names each

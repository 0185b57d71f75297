"""Regression tests for damaged and hostile input: one or more per class of issue 13.

The inputs live in tests/data/fuzz (made by its make_fuzz_cases.py from the real files of
tests/data). Every run must end with exit 0, 1 or 2 (130 for Ctrl-C), one ``Error:`` line
when it could not run, and never a traceback.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import waiting
from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.logparse import textguards, textstack, textviolations, trace_events, trace_lines
from dyncli.logparse.events import ParseStats
from dyncli.logparse.textlog import parse_lines
from dyncli.output import atomic_target, remove_pending

ROOT = Path(__file__).resolve().parents[2]
FUZZ = ROOT / "tests" / "data" / "fuzz"
LOG = ROOT / "tests" / "data" / "logs" / "int_specialization.log"


def _ok(result: object, codes: tuple[int, ...] = (0,)) -> None:
    code = getattr(result, "exit_code", None)
    if code is None:
        code = getattr(result, "returncode", None)
    out = (getattr(result, "output", "") or "") + (getattr(result, "stderr", "") or "")
    exc = getattr(result, "exception", None)
    assert exc is None or isinstance(exc, SystemExit), repr(exc)
    assert "Traceback" not in out, out[-2000:]
    assert code in codes, (code, out[-2000:])


def _dyncli(*args: str, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "dyncli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, **kw)  # type: ignore[call-overload]


# ------------------------------------------------------------- 1. numbers over 4,300 digits


def test_huge_numbers_are_counted_not_raised(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    result = runner.invoke(app, ["diagnose", str(FUZZ / "huge_numbers.log"), "--json", str(out)])
    _ok(result)
    stats = json.loads(out.read_text())["stats"]
    assert stats["unrecognized"] + stats["malformed"] >= 3
    assert sum(stats["malformed_reasons"].values()) == stats["malformed"]


def test_strict_turns_a_huge_number_into_exit_1(runner: CliRunner) -> None:
    result = runner.invoke(app, ["diagnose", str(FUZZ / "huge_numbers.log"), "--strict"])
    _ok(result, (1,))


# ------------------------------------------------------------- 2. damaged gzip


@pytest.mark.parametrize("name", ["bad_crc.log.gz", "truncated.log.gz"])
def test_damaged_gzip_keeps_what_was_read(runner: CliRunner, name: str) -> None:
    result = runner.invoke(app, ["diagnose", str(FUZZ / name)])
    _ok(result)
    assert "truncated or corrupt" in result.output


def test_gzip_with_a_corrupt_header_is_one_error_line(runner: CliRunner) -> None:
    result = runner.invoke(app, ["diagnose", str(FUZZ / "bad_header.log.gz")])
    _ok(result, (2,))
    assert "Error:" in result.output and "bad_header.log.gz" in result.output


def test_suggest_from_a_damaged_gzip_trace(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["suggest", "--from-trace", str(FUZZ / "truncated.log.gz")])
    _ok(result, (2,))
    assert result.output.count("Error:") == 1


# ------------------------------------------------------------- 3. truncated structures


def test_log_ending_after_a_guard_tree_branch(runner: CliRunner) -> None:
    _ok(runner.invoke(app, ["diagnose", str(FUZZ / "tree_end.log")]))
    stats = ParseStats()
    list(parse_lines([b"V1122 01:19:56.129000 7476 torch/_dynamo/guards.py:1] [0/0] [__guards] +- "]
                     * 2, stats))
    assert stats.lines == 2


# ------------------------------------------------------------- 4. trace fields of the wrong type


def test_trace_fields_of_the_wrong_type_are_malformed_records(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    result = runner.invoke(app, ["diagnose", str(FUZZ / "wrong_types_trace.log"), "--json", str(out)])
    _ok(result)
    doc = json.loads(out.read_text())
    # Fields of the wrong type read as absent (every field is optional); the 100,000-deep
    # line is a counted malformed record; the rest of the trace is still analysed.
    assert doc["stats"]["malformed_reasons"] == {"envelope is not valid JSON": 1}
    assert doc["frames"]


def test_strict_trace_with_wrong_types_exits_1(runner: CliRunner) -> None:
    _ok(runner.invoke(app, ["diagnose", str(FUZZ / "wrong_types_trace.log"), "--strict"]), (1,))


# ------------------------------------------------------------- 5. lone surrogates


def test_surrogates_in_names_reach_json_html_and_terminal(tmp_path: Path) -> None:
    out, html = tmp_path / "d.json", tmp_path / "d.html"
    proc = _dyncli("diagnose", str(FUZZ / "surrogates_trace.log"), "--json", str(out),
                   "--html", str(html))
    _ok(proc)
    doc = json.loads(out.read_text())
    assert "\\udcff" in out.read_text() or "\udcff" in json.dumps(doc)
    assert html.stat().st_size > 0


def test_a_non_utf8_file_name(tmp_path: Path) -> None:
    name = os.fsdecode(b"run\xff.log")
    (tmp_path / name).write_bytes(LOG.read_bytes())
    out = tmp_path / "d.json"
    proc = _dyncli("diagnose", name, "--json", str(out), cwd=tmp_path)
    _ok(proc)
    assert json.loads(out.read_text())["inputs"]


# ------------------------------------------------------------- 6. hostile PGO state

HOSTILE_PGO = ["inf_line", "huge_stride", "paren_source", "shared_lists", "oversized_frame",
               "hash_bomb", "build_on_token"]


@pytest.mark.parametrize("name", HOSTILE_PGO)
def test_a_hostile_pgo_file_beside_a_good_one(runner: CliRunner, tmp_path: Path, name: str) -> None:
    d = tmp_path / "dynamo"
    d.mkdir()
    for stem in (name, "good"):
        (d / f"code_state_{stem}_None_.pkl").write_bytes(
            (FUZZ / "pgo" / f"code_state_{stem}_None_.pkl").read_bytes())
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path), "--include-params",
                                 "--json", str(out)])
    _ok(result)
    doc = json.loads(out.read_text())
    assert any(p.endswith("code_state_good_None_.pkl") for p in doc["inputs"])
    assert all(len(s["error"]) <= 200 for s in doc["skipped"])
    # no value is printed whole in a warning (the fix on stdout is the whole entry, escaped)
    assert all(len(line) < 1_000 for line in result.output.splitlines() if "Warning" in line)


@pytest.mark.parametrize("name", ["shared_lists", "inf_line", "hash_bomb"])
def test_only_hostile_pgo_files_exit_2_with_a_bounded_line(runner: CliRunner, name: str) -> None:
    path = FUZZ / "pgo" / f"code_state_{name}_None_.pkl"
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(path)])
    _ok(result, (2,))
    assert result.output.count("Error:") == 1 and len(result.output) < 1000


# ------------------------------------------------------------- 7. linear time on long lines

LONG = 200_000  # characters; quadratic patterns took minutes on lines of this size


@pytest.mark.parametrize("line", [
    "create_symbol s0 = 1 for " + "a [1" * (LONG // 4),
    "marking " + " as dynamic (from x" * (LONG // 19),
    "eval Eq(s0, 1) [guard added] x  # " + "(:1 in " * (LONG // 7) + "a",
    "Graph break in user code at a:1" + " " * LONG + "x",
    "You marked " * (LONG // 11) + "x as dynamic but your code specialized it",
    "Not all values of " * (LONG // 18) + " are valid because x",
    '  File "a.py", line 1, in f' + " " * LONG + "x",
])
def test_text_patterns_finish_on_long_hostile_lines(line: str) -> None:
    raw = b"V1122 01:19:56.129000 7476 torch/x.py:1] [0/0] " + line.encode()
    stats = ParseStats()
    list(parse_lines([raw, raw], stats))
    assert stats.lines == 2
    textviolations.constraint_violations([line], {})
    textstack.user_stack([line, "x"])


def test_trace_patterns_finish_on_long_hostile_lines() -> None:
    dks = "TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(" + "a, b, DispatchKeySet(" * 10_000
    assert textguards.tensor_check(dks) is None
    assert trace_lines._comment_loc("LAMBDA_GUARD: x  # " + "# a" * 60_000) is None
    assert trace_lines._shape_guard("LAMBDA_GUARD: " + "x.size() " * 20_000 + "#") is not None
    assert trace_lines._limit_hit("Dynamo recompile limit exceeded"
                                + " currently set to 8 x" * 10_000) is None
    inputs, ops = trace_events.graph_signature('        add: "f32[4]" = x' + " " * LONG + "y")
    assert inputs == () and len(ops) == 1


def test_a_line_longer_than_the_read_cap(runner: CliRunner, tmp_path: Path) -> None:
    from dyncli import inputs

    big = tmp_path / "one_line.log"
    prefix = LOG.read_bytes().split(b"\n", 1)[0]
    big.write_bytes(LOG.read_bytes() + prefix + b" " + b"(" * (inputs.MAX_LINE * 2 + 10) + b"\n")
    _ok(runner.invoke(app, ["diagnose", str(big)]))


# ------------------------------------------------------------- 8. one huge table cell


@pytest.mark.parametrize(("name", "size"), [("long_cell.log.gz", 2_000_000),
                                            ("fuzz_tabs_hang.log.gz", 1_000_000)])
def test_a_huge_cell_is_cut_on_the_terminal_and_whole_in_json(
        runner: CliRunner, tmp_path: Path, name: str, size: int) -> None:
    out = tmp_path / "d.json"
    result = runner.invoke(app, ["diagnose", str(FUZZ / name), "--json", str(out)])
    _ok(result)
    assert max(len(line) for line in result.output.splitlines()) < 5_000
    assert "…" in result.output
    assert len(out.read_text()) > size  # the JSON keeps the whole value


# ------------------------------------------------------------- 9. output paths and signals


@pytest.mark.parametrize("target", ["DIR", "", "x" * 250 + ".json", "missing/d.json"])
def test_bad_json_targets_fail_before_the_analysis(runner: CliRunner, tmp_path: Path, target: str) -> None:
    (tmp_path / "DIR").mkdir()
    result = runner.invoke(app, ["diagnose", str(LOG), "--json", str(tmp_path / target) if target else ""])
    _ok(result, (2,))
    assert result.output.count("Error:") == 1
    assert "recompil" not in result.output.lower().split("error:")[0]  # nothing analysed first


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_directory_fails_before_the_analysis(runner: CliRunner, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        _ok(runner.invoke(app, ["diagnose", str(LOG), "--json", str(locked / "d.json")]), (2,))
    finally:
        locked.chmod(stat.S_IRWXU)


def test_json_to_a_device_is_written_in_place(runner: CliRunner) -> None:
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    _ok(runner.invoke(app, ["diagnose", str(LOG), "--json", os.devnull]))
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_html_dash_is_stdout(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["diagnose", str(LOG), "--html", "-"])
    _ok(result)
    assert "<html" in result.stdout.lower()
    assert not (tmp_path / "-").exists()


def test_two_documents_cannot_share_stdout(runner: CliRunner) -> None:
    _ok(runner.invoke(app, ["diagnose", str(LOG), "--html", "-", "--json", "-"]), (2,))


def test_negative_limit_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["diagnose", str(LOG), "--limit", "-1"])
    _ok(result, (2,))
    assert "limit" in result.output


def test_pending_temp_files_are_removed_on_a_signal(tmp_path: Path) -> None:
    with atomic_target(tmp_path / "r.json") as tmp:
        tmp.write_text("partial")
        remove_pending()  # what SIGTERM/SIGINT run before exiting
        assert not tmp.exists()
        tmp.write_text("x")  # (recreated so the block can finish)
    assert list(tmp_path.glob(".r.json.*")) == []


@pytest.mark.timing
def test_ctrl_c_is_one_line_and_exit_130(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen([sys.executable, "-m", "dyncli", "diagnose", "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=waiting.default_sigint)
    assert proc.stdin is not None
    proc.stdin.write(LOG.read_text().split("\n", 1)[0] + "\n")
    proc.stdin.flush()
    # the first line is read and recognized; the next read of stdin blocks: Ctrl-C there
    waiting.wait_blocked(proc, "pipe_read", "pipe_wait")
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip() == "Interrupted"


@pytest.mark.timing
def test_a_temp_file_left_by_sigkill_is_swept_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    writer = ("import sys, time\nfrom dyncli.output import atomic_target\n"
              f"with atomic_target({str(target)!r}) as tmp:\n"
              "    tmp.write_text('partial')\n    print(tmp, flush=True)\n    time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, text=True,
                            env=env)
    assert proc.stdout is not None
    left = Path(proc.stdout.readline().strip())
    assert left.exists()
    # a live writer's temp file is not touched
    from dyncli.output import atomic_write_text, sweep_stale
    assert sweep_stale(target) == 0 and left.exists()
    proc.kill()  # SIGKILL: no handler runs, the temp file stays
    proc.wait(timeout=30)
    assert left.exists()
    other_host = tmp_path / ".r.json.elsewhere-1.abcdefgh.tmp"  # a shared file system's
    other_host.write_text("x")
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"
    assert not left.exists()
    assert other_host.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["r.json", other_host.name])


def test_a_long_legal_name_still_gets_a_temp_file(tmp_path: Path) -> None:
    from dyncli.output import atomic_write_text
    target = tmp_path / ("n" * 250 + ".json")
    atomic_write_text(target, "{}")
    assert target.read_text() == "{}"


# ------------------------------------------------- issue 22: memory, time, tracebacks, injection

PKL = ROOT / "tests" / "data" / "pgo" / "mlp" / "dynamo" / "code_state_mlp_None_.pkl"
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def _pgo_dir(tmp_path: Path, data: bytes, name: str = "h") -> Path:
    d = tmp_path / name / "dynamo"
    d.mkdir(parents=True)
    (d / f"code_state_{name}_None_.pkl").write_bytes(data)
    return d.parent


@pytest.mark.parametrize(("data", "reason"), [
    (b"\x80\x04N" + b"r" + (1 << 26).to_bytes(4, "little") + b".", "memo slot 67,108,864 set out of order"),
    (b"\x80\x04N" + b"2" * (2 << 20) + b".", "opcode b'2'"),
    (b"\x80\x04N\x94(" + b"h\x00" * 200_000 + b"1.", "items on the unpickler's stack"),
    (b"\x80\x04" + b"(" * 100 + b")" + b"t" * 100 + b".", "MARKs nested"),
    (b"\x80\x04\x95" + (2**40).to_bytes(8, "little") + b"N.", "truncated pickle"),
    (b"\x80\x04]\x94(" + (b"]" * 999 + b"e" + b"h\x00(") * 2000 + b"e.", "would take more than"),
], ids=["memo-index", "dup-flood", "mark-binget", "deep-marks", "huge-frame", "list-flood"])
def test_opcode_bombs_are_refused_before_unpickling(runner: CliRunner, tmp_path: Path,
                                                    data: bytes, reason: str) -> None:
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(_pgo_dir(tmp_path, data))])
    _ok(result, (2,))
    assert reason in result.output, result.output


def test_many_small_pgo_files_are_read_without_a_fork_each(runner: CliRunner, tmp_path: Path) -> None:
    d = tmp_path / "dynamo"
    d.mkdir()
    good = PKL.read_bytes()
    for i in range(2000):
        (d / f"code_state_j{i}_None_.pkl").write_bytes(good)
    result = runner.invoke(app, ["suggest", "-q", "--pgo-dir", str(tmp_path), "--json", "-"])
    _ok(result)
    assert len(json.loads(result.stdout)["inputs"]) == 2000


def test_a_frame_of_many_sources_is_cut_on_the_terminal(runner: CliRunner, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # the torch-free PGO pickle writer of the unit tests (on sys.path only when they ran first)
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "unit"))
    import suggest_fake_pgo as fake

    data = fake.dumps({("/m/a.py", 1, "fwd"): {f"L['x{i}']": fake.scalar(fake.DYN, 2) for i in range(600)}})
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(_pgo_dir(tmp_path, data))])
    _ok(result)
    assert "… 550 more inputs of this frame" in result.stderr
    assert result.stderr.count("L['x") < 120  # 50 rows (and torch's hint line)


def test_a_blank_line_bomb_is_not_a_log(runner: CliRunner, tmp_path: Path) -> None:
    bomb = tmp_path / "blank.log.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (3 << 20), 9))
    result = runner.invoke(app, ["diagnose", str(bomb)])
    _ok(result, (2,))
    assert "not a torch log or trace: nothing in its first 1 MB" in result.output


def test_a_decompression_bomb_after_a_real_head_stops_with_a_flag_to_lift_it(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dyncli import inputs

    monkeypatch.setattr(inputs, "MIN_EXPANDED_LINES", 20_000)  # the floor, made small and fast
    bomb = tmp_path / "bomb.log.gz"
    bomb.write_bytes(gzip.compress(LOG.read_bytes() + b"\n" * 100_000, 9))
    result = runner.invoke(app, ["diagnose", str(bomb)])
    _ok(result, (2,))
    assert "decompression bomb" in result.output and "--max-expansion 0" in result.output
    _ok(runner.invoke(app, ["diagnose", "--max-expansion", "0", str(bomb)]))
    result = runner.invoke(app, ["suggest", "--from-trace", str(bomb)])
    _ok(result, (2,))
    assert "decompression bomb" in result.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifos_neither_hang_nor_crash(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = _dyncli("diagnose", "--config", str(fifo), str(LOG), timeout=60)
    _ok(result, (2,))
    assert "not a regular file" in result.stderr
    result = _dyncli("diagnose", str(fifo), timeout=60)  # no writer: empty, not a hang
    _ok(result, (2,))
    assert "is empty" in result.stderr


@pytest.mark.skipif(not Path("/dev/urandom").exists(), reason="no /dev/urandom")
def test_an_endless_device_is_not_read_forever() -> None:
    result = _dyncli("diagnose", "/dev/urandom", timeout=60)
    _ok(result, (2,))


def test_rich_markup_in_a_path_is_text(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "x[").mkdir()
    path = tmp_path / "x[" / "yellow].log"
    path.write_bytes(LOG.read_bytes())
    result = runner.invoke(app, ["diagnose", str(path)])
    _ok(result)
    assert "x[/yellow].log" in result.output


def test_shapes_csv_errors_are_one_line() -> None:
    from dyncli.bench.core.stream_file import StreamError, parse_stream

    with pytest.raises(StreamError, match="not CSV"):
        parse_stream("batch,seq\n" + "1" * (200 << 10) + ",2\n")


def test_a_huge_toml_integer_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "autodyn.toml").write_text("[diagnose]\nlimit = " + "1" * 5000 + "\n")
    (tmp_path / "sub").mkdir()
    result = _dyncli("diagnose", str(LOG), cwd=tmp_path / "sub", timeout=60)
    _ok(result, (2,))
    assert "autodyn.toml: not valid TOML" in result.stderr
    (tmp_path / "autodyn.toml").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.x]\nn = " + "1" * 5000 + "\n")
    _ok(_dyncli("diagnose", str(LOG), cwd=tmp_path / "sub", timeout=60))  # not ours: ignored


def test_control_characters_of_inputs_never_reach_the_terminal(runner: CliRunner, tmp_path: Path) -> None:
    text = LOG.read_text().replace("L['x']", "L['x\x1b]0;pwned\x07\x9b2J']")
    log = tmp_path / "esc\x1b[2J.log"
    log.write_text(text)
    for args in (["diagnose", str(log)], ["diagnose", str(tmp_path / "nope\x1b]0;t\x07.log")],
                 ["suggest", "--redis", "redis://\x1b[2Jh:1"]):
        result = runner.invoke(app, args)
        _ok(result, (0, 2))
        assert not _CONTROL.search(result.stdout + result.stderr), ascii(result.output)
        assert "\\x1b" in result.stdout + result.stderr


def test_one_scan_budget_for_a_whole_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dyncli.suggest import pgo_scan
    from dyncli.suggest.pgo_files import find_pgo_files, read_pgo_files

    d = tmp_path / "dynamo"
    d.mkdir()
    for name in ("mlp", "hf", "graphbreak"):
        src = ROOT / "tests" / "data" / "pgo" / name / "dynamo" / f"code_state_{name}_None_.pkl"
        (d / src.name).write_bytes(src.read_bytes())
    import pickletools

    files = find_pgo_files(tmp_path)
    first = sum(1 for _ in pickletools.genops(files[0].read_bytes()))
    monkeypatch.setattr(pgo_scan, "MAX_TOTAL_OPS", first + 10)  # the first file, not the rest
    state = read_pgo_files(files)
    assert state.inputs == [str(files[0])]
    assert len(state.skipped) == 2
    assert all(f"budget of {first + 10:,} opcodes over all files is spent" in why
               for _, why in state.skipped)

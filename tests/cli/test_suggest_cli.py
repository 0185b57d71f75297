"""`dyncli suggest` through the CLI: exit codes, stdout (the fix), stderr (report, warnings)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app

DATA = Path(__file__).resolve().parents[1] / "data" / "pgo"
ENV = {"COLUMNS": "120", "TERM": "dumb", "NO_COLOR": "1"}


def test_default_env_form_on_stdout_report_on_stderr(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "graphbreak")], env=ENV)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0,L['y']:0\"\n"
    assert "make_pgo.py:" in result.stderr and " split" in result.stderr
    assert "tensor size=[?, 6] stride=[S(1), 1]" in result.stderr
    assert "torch's own hint: TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x'],L['y']\"" in result.stderr


def test_formats_and_quiet(runner: CliRunner) -> None:
    args = ["suggest", "--pgo-dir", str(DATA / "intarg"), "-q"]
    shell = runner.invoke(app, [*args, "--format", "shell"], env=ENV)
    assert (shell.exit_code, shell.stdout, shell.stderr) == (
        0, "export TORCH_COMPILE_DYNAMIC_SOURCES=\"L['n']\"\n", "")
    python = runner.invoke(app, [*args, "-f", "python"], env=ENV)
    assert "os.environ['TORCH_COMPILE_DYNAMIC_SOURCES'] = \"L['n']\"" in python.stdout
    doc = json.loads(runner.invoke(app, [*args, "--format", "json"], env=ENV).stdout)
    assert doc["env"] == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['n']\"" and doc["schema_version"] == 1
    bad = runner.invoke(app, [*args, "--format", "yaml"], env=ENV)
    assert bad.exit_code == 2 and "suggest.format: expected one of env, shell, toml, python, json" in bad.stderr


def test_json_file_and_json_stdout(runner: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "hf"), "--json", str(out), "-q"], env=ENV)
    assert result.exit_code == 0
    assert result.stdout.startswith("TORCH_COMPILE_DYNAMIC_SOURCES=")
    doc = json.loads(out.read_text())
    assert [s["source"] for s in doc["sources"]] == ["L['kwargs']['input_ids']", "L['kwargs']['attention_mask']"]
    assert doc["inputs"] == [str(DATA / "hf" / "dynamo" / "code_state_hf_None_.pkl")] and doc["skipped"] == []
    both = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "hf"), "--json", "-", "-q"], env=ENV)
    assert json.loads(both.stdout) == doc


def test_bad_file_is_skipped_with_a_warning(runner: CliRunner, tmp_path: Path) -> None:
    shutil.copytree(DATA / "mlp" / "dynamo", tmp_path / "dynamo")
    (tmp_path / "dynamo" / "code_state_mlp_1_.pkl").write_bytes(b"\x80\x04\x95")
    (tmp_path / "dynamo" / "code_state_[bold]x_None_.pkl").write_bytes(b"")
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path), "-q"], env=ENV)
    assert result.exit_code == 0
    assert result.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['args'][0]:0\"\n"
    assert "Warning: skipped" in result.stderr and "code_state_mlp_1_.pkl: truncated pickle" in result.stderr
    assert "code_state_[bold]x_None_.pkl: empty file" in result.stderr  # names are not rich markup


def test_nothing_usable_exits_2_naming_the_file(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "code_state_x_None_.pkl").write_text("not a pickle")
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path / "code_state_x_None_.pkl")], env=ENV)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error: no usable PGO state was read (")
    assert "code_state_x_None_.pkl: not a pickle" in result.stderr and "Traceback" not in result.stderr


def test_malicious_pickle_via_cli(runner: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    payload = b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x8c\x06system\x93\x8c" + \
        bytes([len(f"touch {target}")]) + f"touch {target}".encode() + b"\x85R."
    (tmp_path / "code_state_evil_None_.pkl").write_bytes(payload)
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path)], env=ENV)
    assert result.exit_code == 2
    assert "refused to load posix.system" in result.stderr
    assert not target.exists()


def test_usage_errors(runner: CliRunner, tmp_path: Path) -> None:
    absent = tmp_path / "no-cache"
    none = runner.invoke(app, ["suggest"], env={**ENV, "TORCHINDUCTOR_CACHE_DIR": str(absent)})
    assert none.exit_code == 2
    assert ("Error: nothing to read: no --pgo-dir, --from-trace or --redis, and torch's cache "
            f"dir {absent} (TORCHINDUCTOR_CACHE_DIR) does not exist") in none.stderr
    job = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "ranks"), "--job-id", "nope"], env=ENV)
    assert job.exit_code == 2 and "no PGO state for job 'nope'" in job.stderr and "Hint: Jobs found: ranks" in job.stderr
    rx = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "mlp"), "--exclude", "["], env=ENV)
    assert rx.exit_code == 2 and "--exclude: not a valid regex" in rx.stderr


def test_config_file_env_and_verbose(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "autodyn.toml").write_text('[suggest]\nformat = "shell"\ntorch_version = "2.5"\n')
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "graphbreak"), "-q", "-v"], env=ENV)
    assert result.stdout == "export TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x'],L['y']\"\n"
    assert "suggest.torch_version = '2.5'  (autodyn.toml)" in result.stderr
    env = {**ENV, "DYNCLI_SUGGEST_INCLUDE_PARAMS": "1", "DYNCLI_SUGGEST_FORMAT": "env"}
    params = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "modattr"), "-q"], env=env)
    assert params.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['self'].k\"\n"
    flag = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "modattr"), "--no-include-params"], env=env)
    assert flag.stdout == 'TORCH_COMPILE_DYNAMIC_SOURCES=""\n' and "--include-params keeps them" in flag.stderr


def test_from_trace_dir_and_several_jobs_warning(runner: CliRunner, tmp_path: Path) -> None:
    trace = runner.invoke(app, ["suggest", "--from-trace", str(DATA / "ranks"), "-q"], env=ENV)
    assert trace.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']\"\n"
    for program in ("mlp", "intarg"):
        shutil.copytree(DATA / program / "dynamo", tmp_path / "dynamo", dirs_exist_ok=True)
    both = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path), "-q"], env=ENV)
    assert both.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['n'],L['args'][0]:0\"\n"
    assert "merged 2 jobs (intarg, mlp); pick one with --job-id" in both.stderr
    one = runner.invoke(app, ["suggest", "--pgo-dir", str(tmp_path), "--job-id", "mlp", "-q"], env=ENV)
    assert one.stdout == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['args'][0]:0\"\n" and one.stderr == ""


def test_suggest_runs_without_importing_torch(tmp_path: Path) -> None:
    code = ("import sys\nfrom dyncli.cli import main\nsys.argv = ['dyncli', 'suggest', '--pgo-dir', sys.argv[1], '-q']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nassert 'torch' not in sys.modules, 'torch imported'\n")
    proc = subprocess.run([sys.executable, "-c", code, str(DATA / "hf")], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("TORCH_COMPILE_DYNAMIC_SOURCES=\"L['kwargs']['input_ids']")


def test_redis_without_the_client_says_how_to_install_it(runner: CliRunner,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis -> ImportError
    result = runner.invoke(app, ["suggest", "--redis", "redis://127.0.0.1:6379"], env=ENV)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --redis needs the redis client, which is not installed")
    # from this source checkout the hint installs the checkout's extra (dyncli is not on PyPI)
    root = Path(__file__).resolve().parents[2]
    assert f"pip install -e '{root}[redis]'" in result.stderr


def test_list_jobs_of_a_pgo_dir(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suggest", "--pgo-dir", str(DATA / "ranks"), "--list-jobs",
                                 "--json", "-"], env=ENV)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["jobs"] == [{"job": "ranks", "ranks": [0, 1]}]


def test_list_jobs_without_pgo_dir_reads_torchs_own_directory(runner: CliRunner,
                                                              tmp_path: Path) -> None:
    """Round 26: `dyncli suggest` read torch's own cache dir, but `dyncli suggest --list-jobs`
    said it needed --pgo-dir or --redis (exit 2)."""
    cache = tmp_path / "cache"
    shutil.copytree(DATA / "ranks" / "dynamo", cache / "dynamo")
    env = {**ENV, "TORCHINDUCTOR_CACHE_DIR": str(cache)}
    result = runner.invoke(app, ["suggest", "--list-jobs"], env=env)
    assert (result.exit_code, result.stdout) == (0, "ranks\tranks 0, 1\n"), result.stderr
    absent = runner.invoke(app, ["suggest", "--list-jobs"],
                           env={**ENV, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "absent")})
    assert absent.exit_code == 2 and "does not exist" in absent.stderr


def test_job_id_needs_a_place_to_read(runner: CliRunner) -> None:
    result = runner.invoke(app, ["suggest", "--job-id", "x", "--from-trace", "t.log"], env=ENV)
    assert result.exit_code == 2
    assert "--job-id selects PGO files or keys and needs --pgo-dir or --redis" in result.stderr


def test_without_pgo_dir_torchs_own_directory_is_read(runner: CliRunner, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #34: ``--pgo-dir /tmp/torchinductor_$USER`` failed with $USER unset; torch asks
    getpass (LOGNAME, USER, …, then the password database), and so does suggest now."""
    import getpass

    for name in ("LOGNAME", "USER", "LNAME", "USERNAME", "TORCHINDUCTOR_CACHE_DIR",
                 "TORCH_COMPILE_JOB_ID", "TORCH_COMPILE_STICKY_PGO_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    user = getpass.getuser()  # the password database's name, as torch finds it
    shutil.copytree(DATA / "ranks", tmp_path / f"torchinductor_{user}")
    r = runner.invoke(app, ["suggest", "--json", "-"], env=ENV)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert all(str(tmp_path / f"torchinductor_{user}") in i for i in doc["inputs"]), doc["inputs"]
    assert any(n.startswith(f"read torch's cache dir {tmp_path}/torchinductor_{user} (user "
                            f"{user}; TORCHINDUCTOR_CACHE_DIR unset): no --pgo-dir given")
               for n in doc["notes"]), doc["notes"]
    # a job id in the environment is the one torch would use: only its state is read
    job = runner.invoke(app, ["suggest", "--json", "-"],
                        env={**ENV, "TORCH_COMPILE_JOB_ID": "nope"})
    assert job.exit_code == 2 and "no PGO state for job 'nope'" in job.stderr
    # TORCHINDUCTOR_CACHE_DIR wins, made absolute as torch makes it
    monkeypatch.chdir(tmp_path)
    rel = runner.invoke(app, ["suggest", "-q"],
                        env={**ENV, "TORCHINDUCTOR_CACHE_DIR": f"torchinductor_{user}"})
    assert rel.exit_code == 0 and rel.stdout.startswith("TORCH_COMPILE_DYNAMIC_SOURCES=")

"""Every command of README.md and docs/*.md runs in a test, so the docs cannot drift.

``CASES`` says, for each documented command, how it is run: exactly as written (in bash, in a
fresh directory holding the inputs the test makes: a recorded log as ``run.log``, a trace as
``/tmp/trace``, PGO state as ``/tmp/torchinductor_$USER``…), or with smaller options where the
written one compiles for minutes (said in ``how``), or not here and why. A command added to
the docs without a case fails ``test_every_documented_command_has_a_case``.

Marks: ``slow`` where it imports torch or compiles (tiny models; about 2 minutes in all on 2
cores); ``FULL`` cases (resnet50, BERT, the cpu-small suite: minutes each on a CPU) run
exactly as written only with ``DYNCLI_DOCS_FULL=1``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import doccmds
import pytest

ROOT = doccmds.ROOT
DATA = ROOT / "tests" / "data"
FULL = os.environ.get("DYNCLI_DOCS_FULL", "") not in ("", "0")
# smallest settings that still run every phase of a bench (first call, warm-up, timed pairs)
SMALL = "--variations 2 --repeat 2 --warmup 0 --device cpu"


@dataclass
class Case:
    """How one documented command is run: ``run`` (default: the command itself), with
    ``subst`` applied; ``kind`` fast / slow / full / skip; ``rc`` the expected exit code;
    ``check(work, stdout, stderr)`` what its output must show."""

    kind: str = "fast"
    run: str | None = None
    how: str = ""
    rc: int = 0
    check: Callable[[Path, str, str], None] | None = None


def _files(*names: str) -> Callable[[Path, str, str], None]:
    def check(work: Path, _out: str, _err: str) -> None:
        for name in names:
            assert (work / name).is_file() and (work / name).stat().st_size > 0, name
    return check


def _has(*needles: str, where: str = "out") -> Callable[[Path, str, str], None]:
    def check(_work: Path, out: str, err: str) -> None:
        text = out if where == "out" else err
        for n in needles:
            assert n in text, (n, text[-3000:])
    return check


def _all(*checks: Callable[[Path, str, str], None]) -> Callable[[Path, str, str], None]:
    def check(work: Path, out: str, err: str) -> None:
        for c in checks:
            c(work, out, err)
    return check


def _stream_table_like_readme(_work: Path, out: str, _err: str) -> None:
    """The README's traffic excerpt: its columns are the ones this command prints, its
    first line names the stream, and it ends with a recommendation."""
    claimed = doccmds.excerpt("README.md", "request stream · 160 requests")
    assert re.search(r"^request stream · \d+ requests from examples/traffic.csv", out, re.M)
    header = next(ln for ln in out.splitlines() if ln.lstrip().startswith("strategy "))
    assert doccmds.columns(header) == doccmds.columns(claimed[1])
    assert "recommendation: " in out


def _quickstart_columns(_work: Path, out: str, _err: str) -> None:
    """The quickstart's excerpt: the stream table of a plain run (no pad: no pad waste)."""
    claimed = doccmds.excerpt("README.md", "  strategy             total s")
    header = next(ln for ln in out.splitlines() if ln.lstrip().startswith("strategy "))
    assert doccmds.columns(header) == doccmds.columns(claimed[0])


def _resnet5(_work: Path, _out: str, err: str) -> None:
    text = (ROOT / "docs" / "bench.md").read_text()
    claimed = text[text.index("$ dyncli bench resnet5\n"):].split("\n```", 1)[0].splitlines()[1:]
    assert err.splitlines() == claimed


def _suggest_excerpt(_work: Path, out: str, err: str) -> None:
    """docs/suggest.md's first block: the stdout line, and the columns of the stderr table."""
    block = next(b for b in doccmds.blocks() if b.file == "docs/suggest.md")
    stdout_line = doccmds.COMMENT.sub("", block.output[0])
    assert out.splitlines() == [stdout_line]
    claimed = next(ln for ln in block.output if ln.startswith("source "))
    header = next(ln for ln in err.splitlines() if ln.lstrip("│┃ ").startswith("source "))
    assert doccmds.columns(header) == doccmds.columns(claimed)
    assert "torch's own hint: TORCH_COMPILE_DYNAMIC_SOURCES=" in err


def _compare_json_keys(work: Path, out: str, _err: str) -> None:
    """docs/compare.md's JSON: each key it shows for a pair is in the document."""
    text = (ROOT / "docs" / "compare.md").read_text()
    sample = text[text.index('"pairs": [{'):text.index('"only_in_base"')]
    nested = {"pairs", "base", "new", "change", "p_value", "variation", "base_ms", "new_ms"}
    claimed = set(re.findall(r'"(\w+)":', sample)) - nested
    doc = json.loads(subprocess.run(
        ["dyncli", "compare", "main.json", "pr.json", "--json", "-"], cwd=work,
        capture_output=True, text=True, env=_ENV[0], timeout=120, check=False).stdout)
    assert claimed <= set(doc["pairs"][0]), claimed - set(doc["pairs"][0])
    assert "REGRESSION" in out


XDIST = "-n auto --dist loadfile"  # pytest-xdist: a worker per core, each file on one worker
HEAVY = "compiles a full-size model for minutes on a CPU: run as written with DYNCLI_DOCS_FULL=1"
VENV = ("creates a venv and installs from the index: what .ci/run does on every CI run (its "
        "`pip install -e '.[dev]'` and `python -m pytest -m 'not long' -n auto --dist loadfile`)")
REDIS = ("needs a Redis server holding torch's PGO keys: tests/integration/test_suggest_redis.py "
         "runs --redis URL --list-jobs, --redis env and --job-id against a real redis-server")

CASES: dict[str, Case] = {
    # ---- README: quickstart, usage
    "python3 -m venv .venv && .venv/bin/pip install -e '.[bench]' && .venv/bin/dyncli bench resnet50":
        Case("skip", how=VENV + "; its bench command is `dyncli bench resnet50` below"),
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/python -m pytest -m 'not long'"
    " -n auto --dist loadfile":
        Case("skip", how=VENV),
    "pip install -e '.[bench]' \"torch==$(python -c 'import torch; "
    "print(torch.__version__.split(\"+\")[0])')\"":
        Case("skip", how="tests/integration/test_install_keeps_torch.py runs this pin through "
                         "pip's resolver on the newest torch's venv, torchvision hidden"),
    "pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu":
        Case("skip", how="PyTorch's CPU index is not reachable from CI; a +cpu torch kept by "
                         "the bench extra is in docs/torch-versions.md"),
    "PYTHONPATH=. python -m dyncli bench hf:BertModel --device cuda --hf-config "
    "num_hidden_layers=2 --vary batch,seq --shapes benchmarks/isolation_stream.csv --requests 100 "
    "--strategy static,automatic,dynamic,pad --replay --json isolation.json":
        Case("skip", how="needs CUDA (a GPU machine's check, as benchmarks/gpu_check.py's stream); "
                         "tests/integration/test_bench_isolation.py runs the same strategies on "
                         "CPU, a process each below torch 2.13"),
    "dyncli --help": Case(check=_has("bench", "diagnose", "suggest", "compare")),
    "dyncli COMMAND --help": Case(run="for c in bench diagnose suggest compare; do dyncli $c --help; done",
                                  how="COMMAND stands for each command",
                                  check=_has("Examples:", "Exit codes")),
    "dyncli --version": Case(check=_has("dyncli ")),
    # ---- bench
    "dyncli bench resnet50": Case("full", how=HEAVY, check=_quickstart_columns),
    "dyncli bench hf:BertModel --vary batch,seq --strategy static,automatic,dynamic":
        Case("full", how=HEAVY),
    "dyncli bench examples/model.py:build --strategy static,automatic,mark-dynamic,dynamic --variations 5 --device cpu --json out.json --csv out.csv --plot out.png":
        Case("slow", run="dyncli bench examples/model.py:build --strategy sources "
             "--dynamic-sources \"L['x']:0\" " + SMALL + " --json out.json --csv out.csv --plot out.png",
             how="one run for this and the sources command: the sources strategy, 2 variations",
             check=_all(_files("out.json", "out.csv", "out.png"), _quickstart_columns)),
    "dyncli bench examples/model.py:build --strategy automatic,sources --dynamic-sources \"L['x']:0\"":
        Case("skip", how="run by the case above (the same run adds --json/--csv/--plot)"),
    "dyncli bench examples/model.py:build --shapes examples/traffic.csv --device cpu --strategy static,automatic,pad,dynamic,unbacked,eager-then-compile,pgo --plot out.png":
        Case("skip", how="run by docs/bench.md's form of it, which adds --json"),
    "dyncli bench examples/model.py:build --shapes examples/traffic.csv --strategy static,automatic,pad,dynamic,unbacked,eager-then-compile,pgo --device cpu --json out.json --plot out.png":
        Case("slow", run="dyncli bench examples/model.py:build --shapes examples/traffic.csv "
             "--strategy pad --device cpu --json out.json --plot out.png "
             "--repeat 2 --warmup 0 --requests 40",
             how="one of the seven strategies (pad: the pad waste column) on the stream's first "
                 "40 requests (two shapes)",
             check=_all(_files("out.json", "out.png"), _stream_table_like_readme)),
    "dyncli bench --list": Case("skip", how="tests/cli/test_bench_cli.py::test_list runs it"),
    "dyncli bench examples/model.py:build --device cpu --nproc 2 --rank-shapes skewed --strategy automatic,collectives":
        Case("skip", how="tests/integration/test_bench_distributed.py runs this command (with "
             "--variations 3 --repeat 2 --warmup 0) and checks the ranks diverge"),
    "dyncli bench examples/model.py:build --device cpu --nproc 2 --rank-shapes skewed --strategy automatic,collectives --json d.json":
        Case("skip", how="as above: tests/integration/test_bench_distributed.py"),
    "dyncli bench --list-suites": Case(check=_has("cpu-small", "torchvision", "timm", "hf")),
    "dyncli bench --suite cpu-small --strategy static,automatic --json main.json":
        Case("full", how=HEAVY + " (six models)"),
    "dyncli bench --suite cpu-small --strategy static,automatic --json pr.json":
        Case("full", how=HEAVY + " (six models)"),
    "dyncli bench --suite cpu-small --strategy static,automatic --json a.json --csv a.csv":
        Case("full", how=HEAVY + " (six models)"),
    "dyncli bench --suite my-suite.toml --timeout 900 --json pr.json --resume":
        Case("skip", how="tests/integration/test_bench_suite.py runs a suite TOML file with "
             "--json and then --resume, and checks which models were resumed"),
    "dyncli bench --suite ci/suite.toml --timeout 900 --json a.json --resume":
        Case("skip", how="as my-suite.toml above: tests/integration/test_bench_suite.py"),
    "dyncli bench resnet5": Case("slow", rc=2, check=_resnet5),
    "dyncli bench hf:BertModel --vary seq --shapes seq.csv --strategy static,automatic,pad":
        Case("full", how=HEAVY),
    "dyncli bench examples/model.py:build --device cpu --sizes 1,3,8,8,16 --requests 10000 "
    "--strategy automatic,pad --emit python":
        Case("skip", how="tests/integration/test_bench_buckets_auto.py runs bench with --emit "
                         "python through the CLI and imports the module it wrote; "
                         "test_bench_plan_apply.py serves a stream with each strategy's module"),
    'python -c "from dyncli_plan import compile_for_traffic; import torch; '
    'print(compile_for_traffic(torch.nn.Linear(32, 10)))"':
        Case("skip", how="as the --emit python command above: the tests import the emitted "
                         "module and call compile_for_traffic"),
    "dyncli bench examples/model.py:build --sizes 1,3,8,8,16 --requests 10000 --strategy automatic,pad":
        Case("skip", how="tests/integration/test_bench_stream.py benches an inline --sizes "
             "stream (automatic, pad, unbacked…); tests/cli/test_bench_cli.py parses --sizes"),
    # ---- compare (main.json / pr.json / the harness CSV: made by the test)
    "dyncli compare main.json pr.json --fail-on regression --format markdown":
        Case(rc=1, check=_has("### dyncli compare ❌", "| resnet18 | static |")),
    "dyncli compare main.json pr.json": Case(check=_compare_json_keys),
    "dyncli compare main.json pr.json --fail-on regression --format markdown > comment.md":
        Case(rc=1, check=_files("comment.md")),
    "dyncli compare torch_harness_output.csv main.json":
        Case(check=_has("harness-csv", "no p-values")),
    # ---- diagnose (run.log, run.log.gz: a recorded log; /tmp/trace: a recorded trace)
    "dyncli diagnose run.log": Case(check=_has("Summary: ", "Suggestions:")),
    "dyncli diagnose run.log.gz --json d.json": Case(check=_files("d.json")),
    "dyncli diagnose run.log --fail-on recompiles": Case(rc=1),
    "dyncli diagnose run.log --json - > d.json": Case(check=_files("d.json")),
    "cat run.log | dyncli diagnose -": Case(check=_has("Summary: ")),
    "dyncli diagnose /tmp/trace": Case(check=_has("Summary: ", "Ranks")),
    "dyncli diagnose /tmp/trace --json d.json": Case(check=_files("d.json")),
    "dyncli diagnose /tmp/trace --html report.html": Case(check=_files("report.html")),
    "dyncli diagnose /tmp/trace --jobs 8": Case(check=_has("Summary: ")),
    "dyncli diagnose /tmp/trace --perfetto t.json": Case(check=_files("t.json")),
    "dyncli diagnose /tmp/trace --fail-on recompiles": Case(rc=1),
    ".venv/bin/python benchmarks/diagnose_text.py --size-mb 200 --repeat 5":
        Case("slow", run=f"python {ROOT}/benchmarks/diagnose_text.py --size-mb 2 --repeat 1 "
             "--path $PWD/big.log", how="a 2 MB log instead of 200 MB (a benchmark, a minute at 200 MB)"),
    # ---- suggest (/tmp/torchinductor_$USER, cache/: recorded PGO state; /tmp/trace: its trace)
    # torch's own dir: TORCHINDUCTOR_CACHE_DIR of the test's environment holds the state
    "dyncli suggest": Case(check=_suggest_excerpt),
    "dyncli suggest --pgo-dir cache/": Case(check=_has("L['x']:0,L['y']:0")),
    "eval \"$(dyncli suggest -f shell -q)\"":
        Case(run="eval \"$(dyncli suggest -f shell -q)\" && echo \"$TORCH_COMPILE_DYNAMIC_SOURCES\"",
             how="then prints the variable it set", check=_has("L['x']:0,L['y']:0")),
    "dyncli suggest --from-trace /tmp/trace -f python": Case(check=_has("mark_dynamic")),
    "dyncli suggest --from-trace /tmp/trace_dir --format python": Case(check=_has("mark_dynamic")),
    "dyncli suggest --redis redis://cache:6379 --job-id train": Case("skip", how=REDIS),
    "dyncli suggest --redis redis://cache-host:6379 --list-jobs": Case("skip", how=REDIS),
    "dyncli suggest --redis redis://cache-host:6379 --job-id train-7": Case("skip", how=REDIS),
    "dyncli suggest --redis env --job-id train-7": Case("skip", how=REDIS),
    # ---- the user's own program: train.py (made by the test: a tiny compiled function)
    "TORCH_LOGS=\"+dynamic,recompiles,guards,graph_breaks\" python train.py 2> run.log":
        Case("slow", run="TORCH_LOGS=\"+dynamic,recompiles,guards,graph_breaks\" python train.py "
             "2> run.log && dyncli diagnose run.log --strict",
             how="then diagnoses the log it wrote (--strict: every line understood)",
             check=_has("Summary: 1 frame(s)", "recompile")),
    "TORCH_TRACE=/tmp/trace python train.py":
        Case("slow", run="rm -rf /tmp/trace && TORCH_TRACE=/tmp/trace python train.py "
             "&& dyncli diagnose /tmp/trace", how="then diagnoses the trace it wrote",
             check=_has("Compile time: ")),
    "TORCH_COMPILE_JOB_ID=train python train.py":
        Case("slow", run="TORCH_COMPILE_JOB_ID=train python train.py && dyncli suggest --pgo-dir "
             "$TORCHINDUCTOR_CACHE_DIR --job-id train",
             how="torch's cache dir is the test's; then suggest reads the state it wrote",
             check=_has("TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\"")),
    "eval \"$(dyncli suggest --pgo-dir cache/ --format shell -q)\" && python train.py":
        Case("slow", check=_has("done")),
}

TRAIN = '''\
"""A tiny program whose batch size varies: what `python train.py` stands for in the docs."""
import torch


@torch.compile(backend="eager")
def step(x, w):
    return (x @ w).relu().sum(dim=1)


w = torch.randn(6, 3)
for batch in (8, 10, 12, 14):
    step(torch.randn(batch, 6), w)
print("done")
'''

SUITE = '''\
description = "the docs test's suite: one tiny model"
[bench]
variations = 2
repeat = 2
warmup = 0
device = "cpu"
strategy = ["automatic"]
[[models]]
model = "examples/model.py:build"
name = "tiny-mlp"
'''

_ENV: list[dict[str, str]] = [dict(os.environ)]


def _workdir(tmp: Path) -> tuple[Path, dict[str, str]]:
    """A directory with every input the documented commands read, and the environment."""
    work = tmp / "work"
    work.mkdir()
    shutil.copytree(ROOT / "examples", work / "examples")
    shutil.copy(DATA / "logs" / "auto_dynamic_batch.log", work / "run.log")
    (work / "run.log.gz").write_bytes(gzip.compress((work / "run.log").read_bytes()))
    shutil.copytree(DATA / "traces" / "multi_rank", tmp / "trace")
    pgo_trace = tmp / "pgo_trace"
    pgo_trace.mkdir()
    shutil.copy(DATA / "pgo" / "graphbreak" / "trace.log.gz", pgo_trace)
    shutil.copytree(DATA / "pgo" / "graphbreak" / "dynamo", tmp / "torchinductor_docs" / "dynamo")
    # torch's own PGO dir in the environment below (TORCHINDUCTOR_CACHE_DIR): `dyncli suggest`
    shutil.copytree(DATA / "pgo" / "graphbreak" / "dynamo", tmp / "inductor" / "dynamo")
    shutil.copytree(DATA / "pgo" / "graphbreak" / "dynamo", work / "cache" / "dynamo")
    (work / "train.py").write_text(TRAIN)
    (work / "my-suite.toml").write_text(SUITE)
    docs = _compare_inputs()
    docs.write(work / "main.json", docs.base_runs())
    docs.write(work / "pr.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    (work / "torch_harness_output.csv").write_text(
        "dev,name,batch_size,speedup,abs_latency,compilation_latency\n"
        "cpu,resnet18,8,1.9,1.1,30.5\ncpu,BertModel,4,2.0,0.9,20.1\n")
    bindir = tmp / "bin"
    bindir.mkdir()
    for name, line in (("dyncli", f"exec {sys.executable} -m dyncli \"$@\""),
                       ("python", f"exec {sys.executable} \"$@\"")):
        (bindir / name).write_text(f"#!/bin/sh\n{line}\n")
        (bindir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DYNCLI_", "TORCH_"))}
    env.update(PATH=f"{bindir}:{env['PATH']}", PYTHONPATH=str(ROOT), USER="docs",
               COLUMNS="120", NO_COLOR="1", TERM="dumb",
               TORCHINDUCTOR_CACHE_DIR=str(tmp / "inductor"))
    return work, env


def _compare_inputs():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("compare_docs",
                                                  ROOT / "tests" / "unit" / "compare_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _localize(command: str, tmp: Path) -> str:
    """The documented paths under /tmp (shared by every user of the machine) moved into the
    test's directory; nothing else of the command changes."""
    return (command.replace("/tmp/torchinductor_$USER", str(tmp / "torchinductor_$USER"))
            .replace("--from-trace /tmp/trace_dir", f"--from-trace {tmp / 'pgo_trace'}")
            .replace("--from-trace /tmp/trace", f"--from-trace {tmp / 'pgo_trace'}")
            .replace("/tmp/trace", str(tmp / "trace")))


def _params() -> list[object]:
    out = []
    for command, case in CASES.items():
        marks = []
        if case.kind in ("slow", "full"):
            marks.append(pytest.mark.slow)
        if case.kind == "full" and not FULL:
            marks.append(pytest.mark.skip(reason=case.how))
        if case.kind == "skip":
            marks.append(pytest.mark.skip(reason=f"not run here: {case.how}"))
        out.append(pytest.param(command, case, marks=marks, id=command[:70]))
    return out


def test_every_documented_command_has_a_case() -> None:
    documented = doccmds.commands()
    missing = {c: w for c, w in documented.items() if c not in CASES}
    assert not missing, f"documented commands without a case in {__file__}: {missing}"
    stale = [c for c in CASES if c not in documented]
    assert not stale, f"cases for commands the docs no longer show: {stale}"


def test_ci_runs_the_readmes_test_command_without_the_hog_and_the_timing_tests_beside_it() -> None:
    """.ci/run, the README and pyproject's markers agree: the README's test command runs as
    written, after the hog is stopped; beside the hog only ``pytest -m timing``; the long tests
    the command leaves out run too, each once."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"\.venv/bin/python -m pytest (-m '[^']+'[^\n`]*)\n```", readme)
    assert command is not None
    assert command.group(1) == f"-m 'not long' {XDIST}"  # two cores: one worker each
    ci = (ROOT / ".ci" / "run").read_text().split("\n")
    runs = [(i, line.split(" -m pytest ", 1)[1]) for i, line in enumerate(ci)
            if line.startswith("run_pytest .venv/bin/python -m pytest")]
    start = ci.index("start_hog")
    stop = ci.index("stop_hog")
    # (beside the hog: three workers stealing work, so the timing tests' long waits overlap)
    assert [args for i, args in runs if start < i < stop] == ["-m timing -n 3 --dist worksteal"]
    assert [args for i, args in runs if i > stop] == [command.group(1),
                                                     f"-m 'long and not timing' {XDIST}"]
    registered = {m.split(":")[0] for m in re.findall(r'^    "(\w+: [^"]*)",$',
                                                       (ROOT / "pyproject.toml").read_text(),
                                                       re.M)}
    assert {"long", "timing"} <= registered


@pytest.mark.parametrize(("command", "case"), _params())
def test_documented_command(command: str, case: Case, tmp_path: Path) -> None:
    work, env = _workdir(tmp_path)
    _ENV[0] = env
    line = _localize(case.run or command, tmp_path)
    proc = subprocess.run(["bash", "-c", line], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    assert proc.returncode == case.rc, (line, proc.stdout[-3000:], proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    if case.check:
        case.check(work, proc.stdout, proc.stderr)


def test_compare_md_narrow_excerpt_is_what_80_columns_print(tmp_path: Path) -> None:
    """docs/compare.md shows a pair as an 80-column terminal prints it: the same lines."""
    text = (ROOT / "docs" / "compare.md").read_text()
    start = text.index("  ```text\n  resnet18/static  REGRESSION") + len("  ```text\n")
    claimed = [ln[2:] for ln in text[start:text.index("  ```", start)].splitlines()]
    work, env = _workdir(tmp_path)
    proc = subprocess.run(["dyncli", "compare", "main.json", "pr.json"], cwd=work,
                          env={**env, "COLUMNS": "80"}, capture_output=True, text=True,
                          timeout=120, check=False)
    lines = proc.stdout.splitlines()
    i = lines.index(claimed[0])
    assert lines[i:i + len(claimed)] == claimed

"""A new user's first hour (issue #23): one test, at least, per item the issue found.

Fast (no torch.compile): compare at 80/120 columns, compare's latency cell, the missing
model file's hint, completion of option values in a real bash, --show-completion per shell,
Ctrl-C while exit handlers run, torch's CUDA_HOME warning, the progress label, terminal
wrapping, the HTML report, --fail-on comma lists, bench --help defaults, install hints, the
plot's axis and legend. The README excerpt and the documented commands: tests/docs/.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import waiting
from typer.testing import CliRunner

from dyncli.cli import app

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "data" / "logs"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs = _load("compare_docs", ROOT / "tests" / "unit" / "compare_docs.py")
bench_sample = _load("conftest_bench", ROOT / "tests" / "unit" / "conftest_bench.py")


def _env(cols: int) -> dict[str, str]:
    return {"COLUMNS": str(cols), "TERM": "dumb", "NO_COLOR": "1"}


def _pair_files(tmp_path: Path) -> tuple[str, str]:
    a = docs.write(tmp_path / "main.json", docs.base_runs())
    b = docs.write(tmp_path / "pr.json", docs.scaled(docs.base_runs(), "resnet18", 1.5))
    return str(a), str(b)


# ---------------------------------------------------------------- 1. compare at 80/120 columns

HEADERS = ("speedup", "compiled ms", "compiles", "compile s", "first result s")


@pytest.mark.parametrize("cols", [80, 120])
def test_compare_fits_the_terminal_without_cutting_words(runner: CliRunner, tmp_path: Path,
                                                         cols: int) -> None:
    a, b = _pair_files(tmp_path)
    r = runner.invoke(app, ["compare", a, b], env=_env(cols))
    assert r.exit_code == 0, r.output
    # the table, or its blocks, fit COLUMNS; text lines are whole in a pipe (README), the
    # terminal wraps them (tests/cli/test_terminal.py)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(" ")]
    assert lines and max(map(len, lines)) <= cols
    text = r.stdout
    for header in HEADERS:  # each header whole, on one line
        assert header in text
    assert "REGRESSION" in text and "REGRESSIO\n" not in text
    # every number of the JSON document's speedups is printed whole, as x.xx→y.yy
    doc = json.loads(runner.invoke(app, ["compare", a, b, "--json", "-"], env=_env(cols)).stdout)
    for pair in doc["pairs"]:
        sp = pair["speedup"]
        assert re.search(rf"{sp['base']:.2f} ?→ ?{sp['new']:.2f}", text), (sp, text)
    assert "…" not in text  # nothing cut


def test_compare_is_a_table_when_wide_and_blocks_when_narrow(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    a, b = _pair_files(tmp_path)
    wide = runner.invoke(app, ["compare", a, b], env=_env(120)).stdout
    assert re.search(r"model +strategy +speedup +compiled ms +p +compiles", wide)
    narrow = runner.invoke(app, ["compare", a, b], env=_env(80)).stdout
    assert "resnet18/static  REGRESSION" in narrow
    assert re.search(r"^  compiled ms +\d\.\d{3} → \d\.\d{3} +\+50\.0%  p<0\.001$", narrow, re.M)


# ---------------------------------------------------------------- 2. the latency cell agrees


def _one_slow_variation(tmp_path: Path, others: float = 1.0) -> tuple[str, str]:
    base = docs.base_runs()[:1]
    new = json.loads(json.dumps(base))
    for i, v in enumerate(new[0]["variations"]):  # variation 2: 1 ms -> 0.5 s
        v["compiled_samples_ms"] = [x * (540 if i == 2 else others)
                                    for x in v["compiled_samples_ms"]]
    return (str(docs.write(tmp_path / "main.json", base)),
            str(docs.write(tmp_path / "pr.json", new)))


def test_compare_latency_numbers_agree_and_name_the_driving_variation(
        runner: CliRunner, tmp_path: Path) -> None:
    a, b = _one_slow_variation(tmp_path)
    r = runner.invoke(app, ["compare", a, b, "--json", "-"], env=_env(120))
    pair = json.loads(r.stdout)["pairs"][0]
    lat = pair["latency_ms"]
    # base→new are the numbers the change is computed from
    assert lat["new"] / lat["base"] - 1 == pytest.approx(lat["change"], rel=1e-9)
    assert pair["latency_driver"]["variation"].startswith("2 [")
    md = runner.invoke(app, ["compare", a, b, "-f", "markdown"], env=_env(120)).stdout
    cell = re.search(r"\| static \| [^|]+ \| ([\d.]+)→([\d.]+) ([+-][\d.]+)% \|", md)
    assert cell, md
    x, y, pct = (float(g) for g in cell.groups())
    assert (y / x - 1) * 100 == pytest.approx(pct, rel=0.01)
    # not significant (one shape of four): no regression, but where the change is from is said
    assert re.search(r"resnet18/static: compiled latency \+[\d.]+%, most in variation 2 "
                     r"\[9, 32\]: [\d.]+→[\d.]+ ms \(\+[\d.]+%\)", md), md
    # every shape slower, one much more: the regression names it
    a, b = _one_slow_variation(tmp_path, others=1.3)
    out = runner.invoke(app, ["compare", a, b], env=_env(80)).stdout
    assert re.search(r"REGRESSION: latency \+[\d.]+% \(p<0.001\), most in variation 2 "
                     r"\[9, 32\]", " ".join(out.split())), out
    # a uniform change has no single driver to name
    a2, b2 = _pair_files(tmp_path)
    out = runner.invoke(app, ["compare", a2, b2], env=_env(120)).stdout
    assert "most in" not in out


# ---------------------------------------------------------------- 4. model.py:build, a hint


def test_missing_model_file_hints_at_the_example(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "model.py", tmp_path / "examples" / "model.py")
    r = runner.invoke(app, ["bench", "model.py:build"], env=_env(120))
    assert r.exit_code == 2
    assert r.stderr == ("Error: model.py: no such model file\n"
                        "Hint: Did you mean examples/model.py:build?\n")
    r = runner.invoke(app, ["bench", "nowhere/net.py:make"], env=_env(120))
    assert "Hint: Give the path of a Python file whose make() returns" in r.stderr


def test_help_and_readme_name_a_model_file_that_exists() -> None:
    from dyncli.commands.bench import EPILOG

    for text in (EPILOG, (ROOT / "README.md").read_text()):
        for name in re.findall(r"dyncli bench (\S+\.py):\w+", text):
            assert (ROOT / name).is_file(), name


# ---------------------------------------------------------------- 5. completion


def _dyncli_bin(tmp_path: Path) -> Path:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / "dyncli"
    exe.write_text(f"#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m dyncli \"$@\"\n")
    exe.chmod(0o755)
    return bindir


COMPLETE = r'''
source <(dyncli --show-completion bash)
t() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
      _dyncli_completion dyncli; echo "${COMPREPLY[*]}"; }
t dyncli bench --strategy ""
t dyncli bench --strategy "static,au"
t dyncli diagnose --fail-on ""
t dyncli bench resn
t dyncli bench examples/model.py:
t dyncli compare a.json b.json --format m
t dyncli --show-completion ""
'''


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completes_option_values_and_model_names(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "model.py", tmp_path / "examples" / "model.py")
    env = {**os.environ, "PATH": f"{_dyncli_bin(tmp_path)}:{os.environ['PATH']}"}
    out = subprocess.run(["bash", "-c", COMPLETE], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["static", "automatic", "mark-dynamic", "dynamic", "sources",
                                "collectives", "pad", "unbacked", "eager-then-compile", "pgo"]
    assert lines[1] == "static,automatic"
    assert lines[2] == "recompiles specializations graph-breaks"
    assert "resnet50" in lines[3].split() and all(n.startswith("resn") for n in lines[3].split())
    assert lines[4] == "examples/model.py:build"
    assert lines[5] == "markdown"
    assert lines[6] == "bash zsh fish powershell pwsh"


@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete -o default -F"),
                                               ("zsh", "#compdef dyncli"),
                                               ("fish", "complete --command dyncli")])
def test_show_completion_prints_the_named_shells_script(shell: str, marker: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "dyncli", "--show-completion", shell],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0 and marker in proc.stdout
    others = {"bash": "complete -o default", "zsh": "#compdef", "fish": "complete --command"}
    assert not any(m in proc.stdout for s, m in others.items() if s != shell)


def test_show_completion_refuses_an_unknown_shell() -> None:
    proc = subprocess.run([sys.executable, "-m", "dyncli", "--show-completion", "tcsh"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2 and "no completion for shell 'tcsh'" in proc.stderr


# ---------------------------------------------------------------- 6. Ctrl-C in exit handlers

LATE = """
import atexit, sys, time
from dyncli.cli import main
atexit.register(time.sleep, 30)  # like torch's compile workers shutting down after bench
sys.argv = ["dyncli", "--version"]
print("started", flush=True)
main()
"""


@pytest.mark.timing
def test_ctrl_c_while_exit_handlers_run_is_one_line_and_130(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", LATE], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            preexec_fn=waiting.default_sigint)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "started\n"
    assert proc.stdout.readline().startswith("dyncli ")  # the command is done: atexit runs
    waiting.wait_blocked(proc, "nanosleep")  # in the exit handler's sleep: Ctrl-C there
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130
    assert err == "\nInterrupted\n"


# ---------------------------------------------------------------- 7. No CUDA runtime is found


def test_cuda_home_warning_recognized_in_a_log(runner: CliRunner, tmp_path: Path) -> None:
    text = (LOGS / "int_specialization.log").read_text()
    noise = ("W1125 11:52:42.873000 21620 torch/utils/cpp_extension.py:183] No CUDA runtime "
             "is found, using CUDA_HOME='/usr/local/cuda'\n")
    log = tmp_path / "run.log"
    log.write_text(noise + text + "No CUDA runtime is found, using CUDA_HOME='/usr/local'\n")
    r = runner.invoke(app, ["diagnose", str(log), "--strict"], env=_env(120))
    assert r.exit_code == 0, r.output
    assert " 0 unrecognized" in r.stdout.splitlines()[0]


QUIET = """
import logging, sys
import dyncli.bench.api  # adds the filter, before torch
import torch.utils.cpp_extension as ext
seen = []
handler = logging.Handler()
handler.emit = lambda record: seen.append(record.getMessage())
log = logging.getLogger("torch.utils.cpp_extension")
log.addHandler(handler)
ext._find_cuda_home()          # warns again where CUDA_HOME exists and CUDA does not
quiet = list(seen)
log.filters.clear()            # the control: without dyncli's filter torch does warn
ext._find_cuda_home()
print(len(quiet), sum("No CUDA runtime is found" in m for m in seen))
"""


@pytest.mark.slow  # imports torch (~5 s)
def test_bench_filters_the_cuda_home_warning(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-c", QUIET], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    quiet, control = map(int, proc.stdout.split())
    if control == 0:
        pytest.skip("torch warns only where CUDA is not available")
    assert quiet == 0
    assert proc.stderr.count("No CUDA runtime") == control  # only the control's, after import


# ---------------------------------------------------------------- 8. the progress label


def test_progress_bar_says_what_the_first_seconds_are(monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from dyncli.bench import render

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=100)
    monkeypatch.setattr(render, "stderr_console", lambda: console)
    def shown(text: str) -> bool:  # the bar refreshes from its own thread: wait for it
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if text in re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", buf.getvalue()):
                return True
            time.sleep(0.02)
        return False

    with render.progress_hooks(model="resnet50") as hooks:
        assert shown("resnet50: building the model, first compile")  # while built, compiled
        assert hooks.progress is not None
        hooks.progress("static", 8, 8)
        assert shown("static done; next: compiling")


def test_piped_progress_speaks_from_the_start(capsys: pytest.CaptureFixture[str]) -> None:
    from dyncli.bench import render

    with render.progress_hooks(model="resnet50") as hooks:
        assert capsys.readouterr().err == ""  # the settings are checked first: errors alone
        assert hooks.started is not None and hooks.progress is not None
        hooks.started()  # what the runner calls before it builds the model
        assert capsys.readouterr().err == ("resnet50: building the model, first compile (a line "
                                           "follows each variation)\n")
        hooks.progress("static", 1, 2)
        hooks.progress("static", 2, 2)
    assert capsys.readouterr().err.splitlines() == [
        "[1/2] static: variation 1 done", "[2/2] static: variation 2 done"]


# ---------------------------------------------------------------- 9. wrapping


def test_a_table_too_wide_turns_into_blocks_without_cut_words() -> None:
    from rich.console import Console

    from dyncli.output import add_text_row, section_table

    path = "tests/data/programs/user_size_specialization.py:8  if x.shape[0] == 10:"
    table = section_table("Specializations", ["compile", "symbol", "sources", "value", "why",
                                              "user code"])
    add_text_row(table, "0/1", "s77", "L['x'].size()[0]", "10", "range_refined_to_singleton",
                 path)
    for width, vertical in ((80, True), (200, False)):
        buf = io.StringIO()
        Console(file=buf, width=width).print(table)
        out = buf.getvalue()
        assert max(len(x.rstrip()) for x in out.splitlines()) <= width
        assert "range_refined_to_singleton" in out and "L['x'].size()[0]" in out
        assert ("user_size_specialization.py:8" in out) and (("┏" not in out) == vertical)


def test_free_text_wraps_between_words_on_a_terminal() -> None:
    from dyncli.termfit import FitConsole

    words = "recognized unrecognized malformed specialization " * 6
    buf = io.StringIO()
    FitConsole(file=buf, width=80, force_terminal=True, no_color=True).print(
        words, soft_wrap=True, markup=False)
    lines = buf.getvalue().splitlines()
    assert len(lines) > 1 and all(len(x) <= 80 for x in lines)
    assert set(" ".join(lines).split()) == set(words.split())  # no word cut in two
    buf = io.StringIO()  # not a terminal: one line, as before (grep-able)
    FitConsole(file=buf, width=80).print(words, soft_wrap=True, markup=False)
    assert len(buf.getvalue().splitlines()) == 1


# ---------------------------------------------------------------- 10. the HTML report


def test_html_numeric_headers_align_with_their_numbers_and_show_the_sources_line() -> None:
    from dyncli.diagnose.api import run
    from dyncli.diagnose.html import render_html

    page = render_html(run([str(LOGS / "user_size_specialization.log")]))
    assert '<th class="num">compiles</th>' in page and '<td class="num">3</td>' in page
    assert "th.num" in page and "overflow-wrap:anywhere" in page
    assert '<div class="scroll"><table' in page
    assert '<pre class="sources">L[&#x27;x&#x27;]:0</pre>' in page


BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)),
               None)
PROBE = """<script>
window.addEventListener('load', function () {
  var w = document.documentElement.scrollWidth, bad = [];
  document.querySelectorAll('table').forEach(function (t) {
    var ths = t.tHead.rows[0].cells;
    Array.prototype.forEach.call(t.tBodies[0].rows, function (r) {
      Array.prototype.forEach.call(r.cells, function (c, i) {
        if (c.classList.contains('num')) {
          var a = c.getBoundingClientRect(), h = ths[i].getBoundingClientRect();
          if (Math.abs(a.right - h.right) > 1) bad.push(ths[i].textContent);
        }
      });
    });
  });
  document.body.setAttribute('data-probe', 'width=' + w + ';misaligned=' + bad.join('|'));
});
</script>"""


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="no chromium installed")
def test_html_fits_1280_px_in_chromium(tmp_path: Path) -> None:
    from dyncli.diagnose.api import run
    from dyncli.diagnose.html import render_html

    # the longest paths of the recorded logs, a long frame file name on top
    diag = run([str(LOGS / "user_size_specialization.log"), str(LOGS / "multi_rank.log")])
    page = render_html(diag).replace("</body>", PROBE + "</body>")
    long = "/very/long/path/to/a/checkout/" * 6 + "module_with_a_long_name.py"
    page = page.replace("/work/main/tests/data/programs/", long, 1)
    report = tmp_path / "r.html"
    report.write_text(page)
    import tempfile

    with tempfile.TemporaryDirectory() as profile:
        dom = subprocess.run([str(BROWSER), "--headless", "--no-sandbox", "--disable-gpu",
                              "--no-first-run", f"--user-data-dir={profile}",
                              "--window-size=1280,2000", "--virtual-time-budget=3000",
                              "--dump-dom", report.as_uri()],
                             capture_output=True, text=True, timeout=90, check=False)
    probe = re.search(r'data-probe="width=(\d+);misaligned=([^"]*)"', dom.stdout)
    assert probe, dom.stderr[-2000:]
    assert int(probe.group(1)) <= 1280 and probe.group(2) == ""


# ---------------------------------------------------------------- 11. options


def test_diagnose_fail_on_takes_a_comma_list(runner: CliRunner) -> None:
    log = str(LOGS / "int_specialization.log")
    r = runner.invoke(app, ["diagnose", log, "--fail-on", "graph-breaks,specializations"],
                      env=_env(120))
    assert r.exit_code == 1 and "specializations" in r.stderr
    r = runner.invoke(app, ["diagnose", log, "--fail-on", "graph-breaks,nonsense"], env=_env(120))
    assert r.exit_code == 2 and "nonsense" in r.stderr


def test_diagnose_usage_says_it_takes_several_paths(runner: CliRunner) -> None:
    r = runner.invoke(app, ["diagnose", "--help"], env=_env(100))
    assert "Usage: dyncli diagnose [OPTIONS] {PATH...}" in r.stdout


def test_bench_help_shows_the_defaults_of_the_bench_table(runner: CliRunner) -> None:
    from dyncli.config import BenchConfig

    text = " ".join(runner.invoke(app, ["bench", "--help"], env=_env(100)).stdout.split())
    defaults = {f.name: getattr(BenchConfig(), f.name) for f in fields(BenchConfig)}
    for option, key in (("--strategy", "strategy"), ("--variations", "variations"),
                        ("--spread", "spread"), ("--seed", "seed"), ("--vary", "vary"),
                        ("--repeat", "repeat"), ("--warmup", "warmup"), ("--mode", "mode"),
                        ("--device", "device"), ("--dtype", "dtype"), ("--buckets", "buckets"),
                        ("--nproc", "nproc"), ("--rank-shapes", "rank_shapes")):
        value = defaults[key]
        shown = ",".join(value) if isinstance(value, list) else str(value)
        part = text[text.index(f" {option} "):]
        part = part[:part.index("[default:") + 40]
        assert f"[default: {shown}]" in part, (option, part)


# ---------------------------------------------------------------- 12. install hints


def test_install_hint_from_a_checkout_and_from_an_index(monkeypatch: pytest.MonkeyPatch) -> None:
    from dyncli import install

    monkeypatch.chdir(ROOT)
    assert install.pip_extra("bench") == "pip install -e '.[bench]'"
    monkeypatch.chdir("/")
    assert install.pip_extra("bench") == f"pip install -e '{ROOT}[bench]'"
    monkeypatch.setattr(install, "_checkout", lambda: None)
    assert install.pip_extra("compare") == "pip install 'dyncli[compare]'"


# ---------------------------------------------------------------- 13. the bench plot


def test_plot_uses_a_log_axis_across_orders_of_magnitude(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from dyncli.bench.render_files import write_plot

    seen: list[Figure] = []
    real = Figure.savefig
    monkeypatch.setattr(Figure, "savefig",
                        lambda self, *a, **k: (seen.append(self), real(self, *a, **k))[1])
    result = bench_sample.sample_result()
    slow = result.runs[0].variations[1]
    slow.compiled_samples = [500.0] * 3  # one outlier 500x the rest
    result.runs[1].compiles = 1
    write_plot(result, tmp_path / "p.png")
    ax = seen[0].axes[0]
    assert ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "compiled: dynamic (1 compile)" in labels and "compiled: static (2 compiles)" in labels
    seen.clear()
    write_plot(bench_sample.sample_result(), tmp_path / "q.png")
    assert seen[0].axes[0].get_yscale() == "linear"


@pytest.mark.parametrize("command", [[], ["bench"], ["diagnose"], ["suggest"], ["compare"]])
def test_help_fits_80_columns(runner: CliRunner, command: list[str]) -> None:
    """--help's example blocks are not re-wrapped by click: each line must fit by itself."""
    r = runner.invoke(app, [*command, "--help"], env=_env(80))
    assert r.exit_code == 0
    assert [ln for ln in r.stdout.splitlines() if len(ln) > 80] == []

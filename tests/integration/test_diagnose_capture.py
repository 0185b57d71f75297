"""dyncli diagnose on a log captured now, with the installed torch (real torch.compile, CPU).

The checked-in logs pin torch 2.14.1; this catches a newer torch that changes a line format:
``--strict`` fails on any line the parser does not recognize.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from logged import Script, Variant, run_variants

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "data" / "programs"


def _doc(tmp_path: Path, log: Path) -> dict[str, Any]:
    """``dyncli diagnose --json`` of ``log``."""
    out = subprocess.run([sys.executable, "-m", "dyncli", "diagnose", str(log), "--json", "-"],
                         cwd=tmp_path, capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    return cast(dict[str, Any], json.loads(out.stdout))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["int_specialization", "graph_break_frames"])
def test_fresh_log_is_fully_understood(case: str, tmp_path: Path) -> None:
    log = tmp_path / f"{case}.log"
    env = {**os.environ, "TORCH_LOGS": "+dynamic,recompiles,guards,graph_breaks",
           "PYTHONPATH": str(PROGRAMS), "OMP_NUM_THREADS": "1"}
    env.pop("TORCH_TRACE", None)
    with log.open("wb") as err:
        subprocess.run([sys.executable, str(PROGRAMS / f"{case}.py")], cwd=tmp_path, env=env,
                       stdout=subprocess.DEVNULL, stderr=err, check=True, timeout=300)
    out = subprocess.run([sys.executable, "-m", "dyncli", "diagnose", str(log), "--strict",
                          "--json", "-"], cwd=tmp_path, capture_output=True, text=True,
                         check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["stats"]["unrecognized"] == doc["stats"]["malformed"] == 0
    if case == "int_specialization":
        assert [r["cause"] for r in doc["recompiles"]] == ["scalar", "scalar"]
        (s,) = doc["specializations"]
        assert (s["sources"], s["value"], s["user_line"]) == (["L['n']"], "33", 11)
    else:
        assert [(f["function"], f["compiles"]) for f in doc["frames"]] == [
            ("two_halves", 2), ("torch_dynamo_resume_in_two_halves_at_9", 2)]
        (b,) = doc["graph_breaks"]
        assert (b["line"], b["count"]) == (9, 2)


# A branch on the number of nonzero()'s rows: torch cannot decide `u0 > 1` at trace time. Under
# fullgraph=True that is an error; the program's traceback is what users paste (round 13:
# five real pastes of it were "not understood" or rejected).
BRANCH_ON_DATA = '''
import torch
import torch._dynamo.config

torch._dynamo.config.capture_dynamic_output_shape_ops = True


def rows(x):
    idx = torch.nonzero(x > 0)
    if idx.size(0) > 1:
        return idx * 2
    return idx


torch.compile(rows, backend="eager", fullgraph=True)(torch.tensor([[1.0, -1.0], [2.0, -3.0]]))
'''


@pytest.mark.slow
def test_a_data_dependent_error_as_the_program_printed_it(tmp_path: Path) -> None:
    program = tmp_path / "branch_on_data.py"
    program.write_text(BRANCH_ON_DATA)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TORCH_TRACE": str(tmp_path / "trace")}
    env.pop("TORCH_LOGS", None)
    log = tmp_path / "run.log"
    with log.open("wb") as err:
        ran = subprocess.run([sys.executable, str(program)], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=err, check=False, timeout=300)
    assert ran.returncode != 0  # fullgraph=True: the error stops the program
    assert b"data-dependent expression" in log.read_bytes()
    doc = _doc(tmp_path, log)  # a traceback is read, not refused
    (x,) = doc["data_dependent_errors"]
    assert "u0" in x["expr"] and x["what"] in ("guard", "int"), x
    (a,) = [s for s in doc["suggestions"] if s["kind"] == "data-dependent-error"]
    assert "torch._check" in a["fix"]
    branch = BRANCH_ON_DATA.splitlines().index("    if idx.size(0) > 1:") + 1
    if x["user_line"] is not None:  # where torch's message names the line (its Caused by)
        assert (x["user_file"].endswith("branch_on_data.py"), x["user_line"]) == (True, branch), x
        assert f"branch_on_data.py:{branch}" in a["fix"]
    # the trace of the same run: its failed compile's reason holds the same facts, and the
    # frame's own file resolves the path torch shortened
    (t,) = _doc(tmp_path, tmp_path / "trace")["data_dependent_errors"]
    assert (t["expr"], t["compile_id"]) == (x["expr"], "0/0"), t
    if t["user_line"] is not None:
        assert (t["user_file"], t["user_line"]) == (str(program), branch), t


# mark_dynamic with a range on an input of size 1 (pytorch#135005): torch compiles sizes 0 and 1
# as constants, so the range is violated by the example itself, not by a line of code. The
# program serves four sizes, the first of them 1; `# FIX` is where the printed fix goes.
MARKED_ONE = '''
import torch
from torch._dynamo.testing import CompileCounter
# FIX
counter = CompileCounter()


def double(x):
    return x * 2


f = torch.compile(double, backend=counter)
for n in (1, 5, 1, 9):
    x = torch.randn(n, 4)
    torch._dynamo.mark_dynamic(x, 0, min=1, max=8196)
    f(x)
print("frames", counter.frame_count)
'''


@pytest.mark.slow
@pytest.mark.parametrize("logs", ["", "+dynamic"])
def test_a_range_marked_on_a_size_one_input_is_read_and_its_fix_runs(
        logs: str, tmp_path: Path) -> None:
    program = tmp_path / "marked_one.py"
    program.write_text(MARKED_ONE)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TORCH_LOGS": logs}
    env.pop("TORCH_TRACE", None)
    if not logs:  # torch's default: the program's own exception text only
        env.pop("TORCH_LOGS")
    log = tmp_path / "run.log"
    with log.open("wb") as err:
        ran = subprocess.run([sys.executable, str(program)], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=err, check=False, timeout=300)
    assert ran.returncode != 0 and b"ConstraintViolationError" in log.read_bytes()
    if logs:  # +dynamic: produce_guards' line, torch's E-level record and the exception
        assert b"track_symint L['x'].size()[0] 1 StrictMinMaxConstraint" in log.read_bytes()
    doc = _doc(tmp_path, log)
    # one violation, however many times the log tells it
    (s,) = doc["specializations"]
    assert (s["sources"], s["value"], s["reason"]) == (["L['x'].size()[0]"], "1",
                                                       "constraint_violation"), s
    (a,) = [x for x in doc["suggestions"] if x["kind"] == "constraint-violation"]
    assert "size 1" in a["message"] and "0/1 specialization" in a["message"], a
    assert "maybe_mark_dynamic instead" not in a["fix"] and "TORCH_LOGS" not in a["fix"], a
    # the fix, run: its statement before compiling serves 1, 5, 1, 9 with one graph
    statements = re.findall(r"torch(?:\.\w+)+ = True", a["fix"])
    assert statements, a["fix"]
    fixed = tmp_path / "fixed.py"
    fixed.write_text(MARKED_ONE.replace("# FIX", "\n".join(statements)))
    env.pop("TORCH_LOGS", None)
    done = subprocess.run([sys.executable, str(fixed)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["frames", "1"], done.stdout


# A compiled function first called under FlopCounterMode (a TorchDispatchMode): dynamo skips
# the frame; torch 2.11 keeps the skip for every later call (pytorch#186085), 2.14.1 and 2.15 do not.
# `# FIX` is where the printed fix's call goes.
UNDER_A_MODE = (PROGRAMS / "under_a_mode.py").read_text()


def _env() -> dict[str, str]:
    """This environment without TORCH_LOGS and TORCH_TRACE, one OpenMP thread."""
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_LOGS", "TORCH_TRACE")}
    env["OMP_NUM_THREADS"] = "1"
    return env


def _logged(tmp_path: Path, name: str, source: str, logs: str | None,
            *args: str) -> tuple[Path, bytes, dict[str, Any]]:
    """Run ``source`` as ``name`` under TORCH_LOGS=``logs`` (None: unset, torch's default
    warnings), its stderr the log; (the program, its stdout, ``dyncli diagnose --json`` of it)."""
    program = tmp_path / name
    program.write_text(source)
    env = _env()
    if logs is not None:
        env["TORCH_LOGS"] = logs
    log = tmp_path / "run.log"
    with log.open("wb") as err:
        ran = subprocess.run([sys.executable, str(program), *args], cwd=tmp_path, env=env,
                             stdout=subprocess.PIPE, stderr=err, check=True, timeout=300)
    return program, ran.stdout, _doc(tmp_path, log)


def _variants(tmp_path: Path, name: str, source: str, *argvs: tuple[str, ...],
              **extra: str) -> tuple[Path, dict[str, Variant]]:
    """``source`` written as ``name``, run with each of ``argvs`` in one Python (as `python
    NAME ARGS`; each from a reset dynamo, logged.run_variants), no TORCH_LOGS; ``extra``:
    programs of their own, by name (a fixed copy)."""
    program = tmp_path / name
    program.write_text(source)
    scripts: dict[str, str | Script] = {" ".join(a): Script(program, a) for a in argvs}
    for other, text in extra.items():
        (tmp_path / f"{other}.py").write_text(text)
        scripts[other] = Script(tmp_path / f"{other}.py")
    return program, run_variants(scripts, tmp_path)


def _raised(tmp_path: Path, name: str, source: str, arg: str,
            env: dict[str, str] | None = None) -> tuple[Path, str, dict[str, Any] | None]:
    """Run ``source`` as ``name`` with ``arg`` and no TORCH_LOGS (what a user sees by default):
    (the program, its stderr, ``dyncli diagnose --json`` of that stderr, or None where the
    program did not raise)."""
    program = tmp_path / name
    program.write_text(source)
    ran = subprocess.run([sys.executable, str(program), arg], cwd=tmp_path, env={**_env(), **(env or {})},
                         capture_output=True, text=True, check=False, timeout=300)
    if ran.returncode == 0:
        return program, ran.stderr, None
    log = tmp_path / "run.log"
    log.write_text(ran.stderr)
    return program, ran.stderr, _doc(tmp_path, log)


@pytest.mark.slow
def test_a_function_first_called_under_a_dispatch_mode(tmp_path: Path) -> None:
    program, stdout, doc = _logged(tmp_path, "under_a_mode.py", UNDER_A_MODE, "+dynamo")
    frames = int(stdout.split()[-1])
    (skip,) = doc["mode_skips"]
    assert (skip["function"], skip["file"], skip["count"]) == ("mm", str(program), 1), skip
    found = [s for s in doc["suggestions"] if s["kind"] == "dispatch-mode-skip"]
    if frames:  # this torch compiled it once the mode was gone: nothing lasting to fix
        assert frames == 1 and found == [], found
        return
    (a,) = found  # this torch kept the skip: mm ran eagerly all along
    assert "never compiled" in a["message"], a
    assert "once outside the mode" in a["fix"], a
    # the fix, run: one call outside the mode first, and the function compiles
    fixed = tmp_path / "fixed.py"
    fixed.write_text(UNDER_A_MODE.replace("# FIX", "f(a, b)"))
    done = subprocess.run([sys.executable, str(fixed)], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, check=True, timeout=300)
    assert done.stdout.split() == ["frames", "1"], done.stdout


# Three sizes under automatic dynamic: two compiles of one frame, then a graph break in a
# second function (two frames of its own). torch's counters give the compiles to expect.
COUNTED = """
import torch
from torch._dynamo.utils import counters
def fn(x):
    return x * 2
def broken(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y * 2
f, g = torch.compile(fn, backend="eager"), torch.compile(broken, backend="eager")
for n in (3, 5, 7):
    f(torch.randn(n))
g(torch.randn(4))
print("compiles", counters["frames"]["ok"])
"""


@pytest.mark.slow
@pytest.mark.parametrize("logs", ["+dynamo", "+dynamo,recompiles"])
def test_a_dynamo_debug_log_counts_each_compile_once(tmp_path: Path, logs: str) -> None:
    """A +dynamo log writes "Step 1: torchdynamo start tracing" and "Step 1: torchdynamo done
    tracing" under one compile id: the second was read as a second start (a reset), and every
    compile counted twice (paste hunt 5: a 2-compile run read as 3 frames and 5 compiles)."""
    _, stdout, doc = _logged(tmp_path, "counted.py", COUNTED, logs)
    compiles = int(stdout.split()[-1])
    assert doc["summary"]["compiles"] == compiles == 4, (compiles, doc["summary"])
    frames = {f["function"]: f["compiles"] for f in doc["frames"]}
    assert frames["fn"] == 2 and frames["broken"] == 1, frames
    assert doc["summary"]["frames"] == 3, frames  # fn, broken and broken's resume function
    # fn's one recompile: its reason is the recompiles log's, or, in +dynamo alone, torch's
    # automatic-dynamic marking at [0/1] ("marking L['x'] as dynamic", 2.15; round 20); never
    # an unexplained recompile per frame
    unexplained = [s["evidence"] for s in doc["suggestions"] if s["kind"] == "unexplained-recompiles"]
    marked = "marking L['x'] as dynamic" in (tmp_path / "run.log").read_text()
    assert unexplained == ([] if "recompiles" in logs or marked else
                           [["compile ids [0/0], [0/1]: 2 compile(s) of frame 0"]]), unexplained


# A C function dynamo cannot trace, with no TORCH_LOGS: torch's own UserWarning is all a user
# sees (sageattention#73, #337). With fullgraph=True torch also raises, naming the place.
BUILTIN = """
import sys, zlib
import torch
from torch._dynamo.utils import counters
def f(x):
    return x + zlib.crc32(b"abc")
full = sys.argv[1] == "fullgraph"
try:
    torch.compile(f, backend="eager", fullgraph=full)(torch.randn(4))
except Exception:
    import traceback
    traceback.print_exc()
print("graphs", counters["stats"]["unique_graphs"])
"""


BUILTIN_FIXED = """
import zlib
import torch
from torch._dynamo.utils import counters
@torch.library.custom_op("dyncli_test::crc_add", mutates_args=())
def crc_add(x: torch.Tensor) -> torch.Tensor:
    return x + zlib.crc32(b"abc")
@crc_add.register_fake
def _(x):
    return torch.empty_like(x)
def f(x):
    return crc_add(x)
x = torch.randn(4)
got = torch.compile(f, backend="eager", fullgraph=True)(x)
print("graphs", counters["stats"]["unique_graphs"], "equal", torch.equal(got, x + zlib.crc32(b"abc")))
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["default", "fullgraph"])
def test_torchs_own_warning_of_a_builtin_is_a_break_and_its_fix_compiles_whole(
        tmp_path: Path, how: str) -> None:
    # (diagnose read it: it was "not a torch log", exit 2)
    # (and the fix, a custom operator, applied below)
    _, ran = _variants(tmp_path, "builtin.py", BUILTIN, (how,), fixed=BUILTIN_FIXED)
    assert not any(v.raised for v in ran.values()), ran
    doc = _doc(tmp_path, ran[how].log)
    (b,) = doc["graph_breaks"]
    if how == "fullgraph":  # the exception names the place; the warning is the same break
        assert (Path(b["file"]).name, b["line"]) == ("builtin.py", 6), b
    (a,) = [s for s in doc["suggestions"] if s["kind"] == "graph-break"]
    assert a["fix"].startswith("wrap zlib.crc32 in a custom operator (torch.library.custom_op)")

    # the fix, applied: the call inside a custom operator compiles in one graph, no break
    done = ran["fixed"]
    assert done.stdout.split() == ["graphs", "1", "equal", "True"], (done.stdout, done.text[-2000:])


# A backend that fails on the graph after a graph break, under suppress_errors: torch logs
# "WON'T CONVERT torch_dynamo_resume_in_f_at_N" at its default level and runs that code eagerly
# (ComfyUI-NAG#33). No record of the break is in that log: the resume function's name places it.
NOT_CONVERTED = """
import sys
import torch
import torch._dynamo.config
from torch._dynamo.utils import counters
failing = sys.argv[1] == "failing"
torch._dynamo.config.suppress_errors = failing
def picky(gm, inputs):
    if failing and any("cos" in str(n.target) for n in gm.graph.nodes):
        raise RuntimeError("picky backend cannot compile cos")
    return gm.forward
def f(x):
    y = x.sin() + 1
    print("between")
    return y.cos() * 2
g = torch.compile(f, backend=picky)
for _ in range(2):
    g(torch.randn(4))
print("graphs", counters["stats"]["unique_graphs"])
"""


@pytest.mark.slow
def test_a_frame_torch_gave_up_compiling_and_the_break_before_it(tmp_path: Path) -> None:
    # (and the fix: the backend compiles what it is given, suppress_errors off)
    program, ran = _variants(tmp_path, "not_converted.py", NOT_CONVERTED, ("failing",), ("fixed",))
    assert not any(v.raised for v in ran.values()), ran
    doc = _doc(tmp_path, ran["failing"].log)
    stdout = ran["failing"].stdout
    assert stdout.split()[-2:] == ["graphs", "1"], stdout  # torch compiled f's first graph only
    line = NOT_CONVERTED.split("\n").index('    print("between")') + 1
    (x,) = doc["not_converted"]
    assert x["function"] == f"torch_dynamo_resume_in_f_at_{line}", x
    assert "RuntimeError: picky backend cannot compile cos" in x["error"], x
    (b,) = doc["graph_breaks"]
    assert (b["file"], b["line"], b["function"], b["resumed_in"]) == (
        str(program), line, "f", x["function"]), b
    first = doc["causes"][0]  # a frame that runs eagerly comes before the split it follows
    assert first["title"].startswith(f"{x['function']} ({program}:{line}) is not compiled"), first
    assert "suppress_errors = False" in first["fix"], first

    # the fix, applied (the backend compiles what it is given), with suppress_errors off: both
    # graphs compile, and torch warns of nothing
    done = ran["fixed"]
    assert done.stdout.split()[-2:] == ["graphs", "2"], done.stdout
    assert "WON'T CONVERT" not in done.text, done.text[-2000:]


# A graph break whose resume function recompiles (n changes after the break): a recompiles log
# names only torch_dynamo_resume_in_f_at_N; a log with graph_breaks too has the break's record.
RESUMED = """
import torch
def f(x, n):
    y = x * 2
    torch._dynamo.graph_break()
    return y + n
g = torch.compile(f, backend="eager")
for n in (1, 2, 3):
    g(torch.randn(4), n)
"""


@pytest.mark.slow
def test_a_break_a_recompiles_log_proves_by_its_resume_function(tmp_path: Path) -> None:
    line = RESUMED.split("\n").index("    torch._dynamo.graph_break()") + 1
    places = []
    for logs in ("recompiles", "recompiles,graph_breaks"):
        program, _, doc = _logged(tmp_path, "resumed.py", RESUMED, logs)
        assert {r["function"] for r in doc["recompiles"]} == {f"torch_dynamo_resume_in_f_at_{line}"}
        (b,) = doc["graph_breaks"]  # one break, whether its own record is there or not
        places.append((b["file"], b["line"], "resumed_in" in b))
        if "graph_breaks" not in logs:
            (a,) = [s for s in doc["suggestions"] if s["kind"] == "graph-break"]
            assert 'TORCH_LOGS="graph_breaks"' in a["fix"], a
    assert places == [(str(program), line, True), (str(program), line, False)], places


# TORCH_COMPILE_DISABLE=1 under fullgraph=True: torch 2.14.1 and 2.15 skip the frame and raise
# "found no compiled frames" (pytorch#181247: vLLM's CPU tests; 2.12.0 warned, 2.11 ran eagerly)
NOTHING_COMPILED = """
import torch
def f(x):
    return x * 2
print("ran", torch.compile(f, backend="eager", fullgraph=True)(torch.randn(4)).shape[0])
"""


@pytest.mark.slow
def test_a_fullgraph_call_that_compiled_nothing_and_its_fix(tmp_path: Path) -> None:
    program, _, doc = _raised(tmp_path, "nothing.py", NOTHING_COMPILED, "",
                              {"TORCH_COMPILE_DISABLE": "1"})
    if doc is None:
        pytest.skip("this torch runs a fullgraph call it skipped eagerly")
    (x,) = doc["no_compiled_frames"]
    assert x["skipped"] == [{"function": "f", "file": str(program), "first_line": 3,
                             "reason": "Dynamo tracing is disabled"}], x
    (a,) = [s for s in doc["suggestions"] if s["kind"] == "fullgraph-compiled-nothing"]
    assert "TORCHDYNAMO_DISABLE=1 instead" in a["fix"], a
    # the fix, applied: compiling off the other way, and the call runs
    done = subprocess.run([sys.executable, str(program)], cwd=tmp_path,
                          env={**_env(), "TORCHDYNAMO_DISABLE": "1"}, capture_output=True,
                          text=True, check=True, timeout=300)
    assert done.stdout.split() == ["ran", "4"], done.stdout


# fullgraph=True at the recompile limit: torch warns, then raises Unsupported("Dynamo recompile
# limit exceeded", GB0039) chained into FailOnRecompileLimitHit (torchtitan#3898, where it was
# read as a graph break "to move out"). The fix it names, applied: the number as a 0-d tensor.
LIMIT_FULLGRAPH = """
import sys
import torch
from torch._dynamo.utils import counters
torch._dynamo.config.recompile_limit = 2
@torch.compile(fullgraph=True, backend="eager", dynamic=False)
def f(x, n):
    return x * n
for n in range(5):
    f(torch.ones(3), torch.tensor(float(n)) if sys.argv[1] == "tensor" else n)
print("graphs", counters["stats"]["unique_graphs"])
"""


@pytest.mark.slow
def test_the_recompile_limit_under_fullgraph_is_a_limit_not_a_break(tmp_path: Path) -> None:
    # (and the fix: the number as a 0-d tensor)
    _, ran = _variants(tmp_path, "limit.py", LIMIT_FULLGRAPH, ("int",), ("tensor",))
    stderr = ran["int"].text
    assert ran["int"].raised and "FailOnRecompileLimitHit" in stderr, stderr[-2000:]
    doc = _doc(tmp_path, ran["int"].log)
    assert doc["graph_breaks"] == [], doc["graph_breaks"]
    (x,) = doc["recompile_limits"]
    assert (x["function"], x["limit_name"], x["limit"]) == ("f", "recompile_limit", "2"), x
    assert doc["limit_raised"] and not any(m.startswith("raise ") for m in doc["limit_raised"])
    (a,) = [s for s in doc["suggestions"] if s["kind"] == "recompile-limit"]
    assert "raised an error" in a["message"] and "0-d tensor" in a["fix"], a
    # the fix, applied: the number as a 0-d tensor compiles once and runs to the end
    done = ran["tensor"]
    assert not done.raised and done.stdout.split() == ["graphs", "1"], done.stdout


# torch.export with a Dim the model pins (pytorch#140011: seq_len inferred to be a constant):
# one failed export, whatever the number of inputs sharing the Dim; the fix is torch.export's
# own (Dim.AUTO), not mark_dynamic's, and it is applied here
EXPORT = """
import sys
import torch
from torch.export import Dim, export
class M(torch.nn.Module):
    def forward(self, input_ids, attention_mask):
        return (input_ids + attention_mask).reshape(2, 6)
seq = Dim.AUTO if sys.argv[1] == "auto" else Dim("seq_len", max=128)
ids = torch.ones(2, 6, dtype=torch.long)
ep = export(M(), (ids, ids.clone()), dynamic_shapes={"input_ids": {1: seq}, "attention_mask": {1: seq}})
print("exported", len(ep.graph.nodes) > 0)
"""


@pytest.mark.slow
def test_an_export_dim_the_model_pins_is_one_failure_with_exports_fix(tmp_path: Path) -> None:
    # (and the fix: Dim.AUTO)
    _, ran = _variants(tmp_path, "export.py", EXPORT, ("named",), ("auto",))
    stderr = ran["named"].text
    assert ran["named"].raised and "Constraints violated" in stderr, stderr[-2000:]
    doc = _doc(tmp_path, ran["named"].log)
    # one finding for the one failed export (both inputs share the Dim)
    (a,) = [s for s in doc["suggestions"] if s["kind"] == "constraint-violation"]
    assert a["message"].startswith("torch.export's Dim seq_len"), a
    assert "Dim.AUTO" in a["fix"] and "mark_dynamic" not in a["fix"], a
    # the fix, applied: Dim.AUTO, and the export goes through
    done = ran["auto"]
    assert not done.raised and done.stdout.split() == ["exported", "True"], done.stdout

"""Suites without torch: built-in lists, suite files, settings precedence, how a child's end
becomes a status, resume, and the merged CSV."""

from __future__ import annotations

import csv
import io
import json
import signal
from pathlib import Path
from typing import Any

import compare_docs as docs
import pytest

from dyncli.bench import suite_render
from dyncli.bench.child import Ended
from dyncli.bench.core import suites
from dyncli.bench.core.result import RunResult
from dyncli.bench.core.status import Status
from dyncli.bench.core.suite_result import ModelOutcome, SuiteInfo, SuiteResult
from dyncli.bench.render_files import CSV_COLUMNS
from dyncli.bench.suite import _completed
from dyncli.bench.suite_child import outcome
from dyncli.errors import ConfigError, InputError, UsageError

SETTINGS = {"strategy": ["static", "automatic"], "mode": "inference", "timeout": 5.0}


def test_builtin_suites_parse_and_cpu_small_finds_the_example() -> None:
    names = [s.name for s in suites.listing()]
    assert names == ["cpu-small", "torchvision", "timm", "hf"]
    small = suites.load("cpu-small")
    assert len(small.entries) == 6 and small.defaults["variations"] == 4
    example = next(e for e in small.entries if e.name == "examples/model.py")
    assert Path(example.model.rpartition(":")[0]).is_file()
    bert = next(e for e in small.entries if e.name == "bert-tiny")
    assert bert.model == "hf:BertModel" and bert.overrides["hf_config"]["num_hidden_layers"] == 2


def test_suite_file_with_overrides_and_relative_model_path(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def build(): ...\n")
    path = tmp_path / "mine.toml"
    path.write_text('description = "two"\n[bench]\nrepeat = 3\n'
                    '[[models]]\nmodel = "resnet18"\nbatch_size = 4\n'
                    '[[models]]\nmodel = "m.py:build"\nname = "mlp"\nstrategy = ["dynamic"]\n')
    s = suites.load(str(path))
    assert s.name == "mine" and s.defaults == {"repeat": 3}
    assert s.entries[0].overrides == {"batch_size": 4}
    assert s.entries[1].model == f"{tmp_path / 'm.py'}:build" and s.entries[1].name == "mlp"


@pytest.mark.parametrize(("text", "message"), [
    ('[[models]]\nmodel = "a"\nrepaet = 3\n', "models[1]: bench.repaet: unknown key"),
    ('[[models]]\nmodel = "a"\n[[models]]\nmodel = "b"\nrepeat = "x"\n',
     "models[2]: bench.repeat: expected int"),
    ('[[models]]\nname = "a"\n', 'models[1]: needs model = "NAME"'),
    ('[[models]]\nmodel = "a"\n[[models]]\nmodel = "a"\n', "a listed twice"),
    ('[bench]\nrepeat = 2\n', "no [[models]] tables"),
    ('models = 3\nextra = 1\n', "unknown top-level key(s) extra"),
    ('[[models]]\nmodel = "a"\nresume = true\n', "resume: describes the whole run"),
])
def test_bad_suite_files_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        suites.load(str(path))
    assert message in err.value.message and str(path) in err.value.message


def test_unknown_suite_and_unreadable_file() -> None:
    with pytest.raises(UsageError, match="no built-in suite 'cpu-smal'"):
        suites.load("cpu-smal")
    with pytest.raises(InputError, match="no such suite file"):
        suites.load("missing.toml")


def test_flags_beat_the_suite_and_the_model_beats_the_suite() -> None:
    s = suites.Suite("s", "built-in", "", {"repeat": 3, "variations": 4},
                     [suites.SuiteEntry("a", "a", {"variations": 2, "batch_size": 5})])
    base = {"repeat": 10, "variations": 8, "batch_size": None, "suite": "s", "resume": True}
    out = suites.effective_settings(base, {"repeat"}, s, s.entries[0])
    assert out == {"repeat": 10, "variations": 2, "batch_size": 5, "suite": None, "resume": False}


def _entry() -> suites.SuiteEntry:
    return suites.SuiteEntry("/x/m.py:build", "m")


def _doc(*strategies: str) -> dict[str, Any]:
    return docs.document([docs.run("/x/m.py:build", s, 1) for s in strategies])


def _outcome(rc: int | None, doc: dict[str, Any] | None, tail: str, progressed: bool,
             timed_out: bool, interrupted: bool, timeout: float | None) -> ModelOutcome:
    """How a child that ended so becomes the model's outcome (the child protocol's Ended)."""
    ended = Ended(rc, doc, tail, progressed, timed_out, interrupted, timeout, 0.0)
    return outcome(_entry(), SETTINGS, ended)


def test_finished_child_keeps_its_runs_under_the_suite_name() -> None:
    out = _outcome(0, _doc("static", "automatic"), "", True, False, False, 5)
    assert out.status == "pass" and [r.model for r in out.runs] == ["m", "m"]
    assert out.environment and out.environment.device == "cpu" and not out.stderr_tail


def test_sigkill_is_oom_for_the_strategies_not_finished() -> None:
    out = _outcome(-signal.SIGKILL, _doc("static"), "tail", True, False,
                   False, 5)
    assert out.status == "OOM"
    assert [(r.strategy, r.status) for r in out.runs] == [("static", "pass"),
                                                               ("automatic", "OOM")]
    assert "SIGKILL" in out.runs[1].error and out.stderr_tail == "tail"


def test_a_killed_child_marks_each_unfinished_strategy_and_mode_by_its_label() -> None:
    doc = _doc("static")
    doc["runs"][0]["compile_mode"] = "max-autotune-no-cudagraphs"
    settings = SETTINGS | {"compile_mode": ["default", "max-autotune-no-cudagraphs"]}
    ended = Ended(-signal.SIGKILL, doc, "tail", True, False, False, 5, 0.0)
    out = outcome(_entry(), settings, ended)
    assert [(r.label, r.status) for r in out.runs] == [
        ("static@max-autotune-no-cudagraphs", "pass"), ("static", "OOM"), ("automatic", "OOM"),
        ("automatic@max-autotune-no-cudagraphs", "OOM")]
    rows = suite_render.summary_table(SuiteResult(SuiteInfo("s", "s", "", 1), settings, [out]))
    assert [str(c) for c in rows.columns[1]._cells] == [r.label for r in out.runs]


def test_timeout_marks_every_unfinished_strategy() -> None:
    out = _outcome(-signal.SIGTERM, None, "", False, True, False, 5)
    assert out.status == "timeout" and out.error == "still running after 5 s; killed"
    assert [r.status for r in out.runs] == ["timeout", "timeout"]


def test_could_not_run_is_model_fail_to_load_with_the_error_line() -> None:
    tail = "Error: Unknown model 'resnet'\nHint: See the built-in names with: dyncli bench --list"
    out = _outcome(2, None, tail, False, False, False, None)
    assert out.status == "model_fail_to_load" and out.error == "Unknown model 'resnet'"


def test_a_crash_after_progress_is_fail_to_compile_before_it_model_fail_to_load() -> None:
    tail = "Fatal Python error: Segmentation fault"
    late = _outcome(-signal.SIGSEGV, None, tail, True, False, False, None)
    early = _outcome(-signal.SIGSEGV, None, tail, False, False, False, None)
    assert late.status == "fail_to_compile" and "SIGSEGV" in late.error
    assert early.status == "model_fail_to_load"
    oom = _outcome(1, None, "MemoryError", True, False, False, None)
    assert oom.status == "OOM"


def _suite_doc(statuses: dict[str, str], name: str = "s") -> dict[str, Any]:
    result = SuiteResult(SuiteInfo(name, "built-in", "", len(statuses)), {})
    for model, status in statuses.items():
        run = RunResult.from_dict(docs.run(model, "static", 0, status=status))
        result.outcomes.append(ModelOutcome(model, model, Status(status), SETTINGS, [run]))
    return json.loads(json.dumps(result.to_dict(), default=str))


def test_resume_keeps_complete_models_and_reruns_interrupted_and_unbuilt_ones() -> None:
    doc = _suite_doc({"a": "pass", "b": "timeout", "c": "interrupted", "d": "model_fail_to_load"})
    s = suites.Suite("s", "built-in", "", {}, [suites.SuiteEntry(m, m) for m in "abcde"])
    done = _completed(doc, s)
    assert sorted(done) == ["a", "b"]
    assert done["b"].status == "timeout" and done["a"].runs[0].model == "a"
    with pytest.raises(UsageError, match="suite 'other', not 's'"):
        _completed(_suite_doc({"a": "pass"}, name="other"), s)
    with pytest.raises(UsageError, match="not a suite result"):
        _completed(docs.document([]), s)


def test_resume_from_a_damaged_document_reruns_what_it_cannot_read() -> None:
    s = suites.Suite("s", "built-in", "", {}, [suites.SuiteEntry(m, m) for m in "abcd"])
    doc = _suite_doc({"a": "pass", "b": "pass", "c": "pass", "d": "pass"})
    doc["models"][1]["model"] = ["b"]          # not a name: b runs again
    doc["models"][2]["wall_s"] = "slow"        # wrong type: reads as absent
    doc["models"][2]["settings"] = [1, 2]
    doc["models"][3] = "d"                     # not an entry
    doc["runs"] = 7                            # not a list: no runs kept
    done = _completed(doc, s)
    assert sorted(done) == ["a", "c"]
    assert done["c"].wall_s == 0.0 and done["c"].settings == {} and done["a"].runs == []
    for bad_suite in ([], "s", None, {"name": ["s" * 10_000]}):
        broken = {**_suite_doc({"a": "pass"}), "suite": bad_suite}
        with pytest.raises(UsageError) as err:
            _completed(broken, s)
        assert len(str(err.value)) < 300


def test_suite_document_and_csv_use_the_bench_schema_and_harness_columns() -> None:
    doc = _suite_doc({"a": "pass", "b": "OOM"})
    assert doc["command"] == "bench" and doc["suite"]["name"] == "s"
    assert [m["model"] for m in doc["models"]] == ["a", "b"]
    assert [r["model"] for r in doc["runs"]] == ["a", "b"]
    result = SuiteResult.from_dict(doc)
    rows = list(csv.DictReader(io.StringIO(suite_render.to_csv(result))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert {r["name"] for r in rows} == {"a", "b"} and len(rows) == 8
    assert rows[0]["abs_latency"] and rows[0]["strategy"] == "static"

"""Reading PGO state: real pickles and traces from torch 2.14, hostile and broken files."""

from __future__ import annotations

import gzip
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import suggest_fake_pgo as fake

from dyncli.errors import InputError
from dyncli.inputs import open_input
from dyncli.suggest.pgo_files import find_pgo_files, job_of, read_pgo_files
from dyncli.suggest.pgo_pickle import loads_state
from dyncli.suggest.pgo_state import DYNAMIC, Entry, InferStride, PgoState
from dyncli.suggest.pgo_trace import (
    code_state_artifacts,
    parse_render,
    read_trace_files,
    trace_inputs,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "pgo"
PROGRAMS = ["mlp", "intarg", "graphbreak", "hf", "modattr", "serve", "ranks"]


def _rendered(state: PgoState) -> dict[tuple[str, int, str], dict[str, str]]:
    return {ident: {src: e.render() for src, e in entries.items()}
            for ident, (_, entries) in state.frames.items()}


def test_reading_needs_no_torch() -> None:
    # In a fresh interpreter: other tests in this process may have imported torch.
    code = ("import sys; from pathlib import Path\n"
            "from dyncli.suggest.api import run; from dyncli.config import SuggestConfig\n"
            "for p in Path(sys.argv[1]).iterdir():\n"
            "    if (p / 'dynamo').is_dir():\n"
            "        run(pgo_dir=p, from_trace=p, config=SuggestConfig())\n"
            "assert 'torch' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code, str(DATA)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("program", PROGRAMS)
def test_pickle_and_trace_give_the_same_state(program: str) -> None:
    from_pickle = read_pgo_files(find_pgo_files(DATA / program))
    from_trace = read_trace_files(trace_inputs(DATA / program))
    assert from_pickle.skipped == [] and from_trace.skipped == []
    assert from_pickle.frames and _rendered(from_pickle) == _rendered(from_trace)


@pytest.mark.parametrize("program", PROGRAMS)
def test_render_matches_torch_text_line_for_line(program: str) -> None:
    for path in trace_inputs(DATA / program):
        with open_input(path) as source:
            artifacts = list(code_state_artifacts(source))
        for _name, payload in artifacts:
            for line in payload.splitlines():
                m = re.match(r"^  (.+?): (tensor size=.*|scalar \S+|fully dynamic scalar or tensor)$", line)
                if m:
                    assert parse_render(m.group(2)).render() == m.group(2)


def test_real_mlp_state() -> None:
    state = read_pgo_files(find_pgo_files(DATA / "mlp"))
    [(key, entries)] = state.frames.values()
    assert key.name == "inner" and key.filename.endswith("external_utils.py")
    entry = entries["L['args'][0]"]
    assert entry.size == (DYNAMIC, 8)
    assert entry.stride == (InferStride(1), 1)
    assert entry.dynamic_dims() == (0,)
    assert state.jobs == ["mlp"]


def test_graph_break_makes_two_frames_and_drops_empty_duplicates() -> None:
    # torch writes each frame twice (a second CodeId with another closure hash and no entries).
    state = read_pgo_files(find_pgo_files(DATA / "graphbreak"))
    names = [key.name for key, _ in state.frames.values()]
    assert names[0] == "split" and names[1].startswith("torch_dynamo_resume_in_split_at_")
    assert len(names) == 2


def test_ranks_merge_dynamic_in_any_is_dynamic() -> None:
    files = find_pgo_files(DATA / "ranks")
    assert [f.name for f in files] == ["code_state_ranks_0_.pkl", "code_state_ranks_1_.pkl"]
    single = [read_pgo_files([f]) for f in files]
    dims = [next(iter(s.frames.values()))[1]["L['x']"].dynamic_dims() for s in single]
    assert dims == [(0,), (1,)]
    merged = read_pgo_files(files)
    assert next(iter(merged.frames.values()))[1]["L['x']"].dynamic_dims() == (0, 1)


def test_serve_remembers_the_size_one_it_specialized() -> None:
    state = read_pgo_files(find_pgo_files(DATA / "serve"))
    entry = next(iter(state.frames.values()))[1]["L['args'][0]"]
    assert entry.small_sizes == {0: {1}}


def test_dir_forms_and_job_selection(tmp_path: Path) -> None:
    assert find_pgo_files(DATA / "mlp" / "dynamo") == find_pgo_files(DATA / "mlp")
    single = DATA / "mlp" / "dynamo" / "code_state_mlp_None_.pkl"
    assert find_pgo_files(single) == [single] == find_pgo_files(single, "mlp")
    with pytest.raises(InputError, match="not a PGO file of job 'other'"):
        find_pgo_files(single, "other")
    dyn = tmp_path / "dynamo"
    dyn.mkdir()
    for program in ("mlp", "intarg"):
        for f in (DATA / program / "dynamo").iterdir():
            shutil.copy(f, dyn / f.name)
    (dyn / "code_state_mlp_None_.pkl.lock").write_text("")
    assert len(find_pgo_files(tmp_path)) == 2
    assert [p.name for p in find_pgo_files(tmp_path, "intarg")] == ["code_state_intarg_None_.pkl"]
    with pytest.raises(InputError) as err:
        find_pgo_files(tmp_path, "train")
    assert "'train'" in err.value.message and err.value.hint == "Jobs found: intarg, mlp"


def test_job_matching_with_underscores_in_job_and_tag() -> None:
    from dyncli.suggest.pgo_files import matches_job
    assert matches_job("code_state_my_job_None_.pkl", "my_job")
    assert matches_job("code_state_train_3_tag_with_parts.pkl", "train")
    assert not matches_job("code_state_train_x_3_.pkl", "train")
    assert matches_job("code_state_a_b_0_.pkl", "a:b")  # torch maps ':' to '_' in names


def test_job_of_handles_underscores() -> None:
    assert job_of("code_state_my_job_None_.pkl") == "my_job"
    assert job_of("code_state_train_3_.pkl") == "train"
    assert job_of("code_state_train_0_v2.pkl") == "train"
    # Round 26: a TORCH_COMPILE_CACHE_KEY_TAG with "_" (real torch 2.15: tag my_tag, job tj)
    # made the job "tj_None", so --list-jobs printed a job --job-id did not find
    assert job_of("code_state_tj_None_my_tag.pkl") == "tj"
    assert job_of("code_state_run_2024_a_0_my_tag.pkl") == "run_2024_a"
    assert job_of("code_state_train_2024_run_0_.pkl") == "train_2024_run"


def test_list_jobs_with_a_tag_holding_underscores(tmp_path: Path) -> None:
    from dyncli.suggest.joblist import jobs_in_dir

    for name in ("code_state_tj_None_my_tag.pkl", "code_state_tj_1_my_tag.pkl",
                 "code_state_a_b_0_.pkl"):
        (tmp_path / name).write_bytes(b"")
    assert jobs_in_dir(tmp_path) == {"a_b": [0], "tj": [1, None]}


def test_missing_or_empty_dir(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        find_pgo_files(tmp_path / "nope")
    with pytest.raises(InputError, match=r"no code_state_\*\.pkl") as err:
        find_pgo_files(tmp_path)
    assert "TORCH_COMPILE_JOB_ID" in (err.value.hint or "")


def test_unreadable_dir_or_file_is_said_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round 26: a dynamo/ dir the user may not list read as 'no code_state_*.pkl files' with
    the hint to set TORCH_COMPILE_JOB_ID (the files were there); an unreadable file's reason
    repeated its path ('FILE: [Errno 13] Permission denied: 'FILE''); a device or FIFO given
    as --pgo-dir was 'no code_state_*.pkl files here or in /dev/zero/dynamo'. Simulated:
    root reads any file, so chmod proves nothing under CI's root."""
    dyn = tmp_path / "dynamo"
    dyn.mkdir()
    (dyn / "code_state_j_None_.pkl").write_bytes(b"")
    real_scandir = os.scandir

    def refuse(path: object = ".") -> object:
        if Path(str(path)) == dyn:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", refuse)
    with pytest.raises(InputError) as err:
        find_pgo_files(tmp_path)
    assert str(err.value) == f"{dyn}: cannot list this directory: Permission denied"
    assert "TORCH_COMPILE_JOB_ID" not in (err.value.hint or "")
    monkeypatch.setattr(os, "scandir", real_scandir)

    file = dyn / "code_state_j_None_.pkl"

    def denied(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)
    state = read_pgo_files([file])
    assert state.skipped == [(str(file), "Permission denied")]
    with pytest.raises(InputError, match=r"^/dev/null: not a directory or a regular file$"):
        find_pgo_files(Path("/dev/null"))


# ---------------------------------------------------------------- hostile input


class _Evil:
    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.target}",))


class _EvalEvil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (eval, ("open('/tmp/dyncli-pwned', 'w')",))


def test_malicious_pickle_runs_nothing(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    data = pickle.dumps(_Evil(target))
    pickle.loads  # noqa: B018 - the real loader would run `touch`; ours must refuse first
    with pytest.raises(pickle.UnpicklingError, match=r"refused to load (posix|os)\.system"):
        loads_state(data)
    assert not target.exists()
    with pytest.raises(pickle.UnpicklingError, match=r"refused to load builtins\.eval"):
        loads_state(pickle.dumps(_EvalEvil()))


def test_malicious_payload_nested_inside_real_looking_state(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    # A well-formed state whose entry smuggles a reduce call in a field.
    entry = fake.FrameStateSizeEntry(scalar=_Evil(target), size=fake.DYN, stride=fake.DYN)
    data = fake.dumps({("m.py", 1, "f"): {"L['n']": entry}})
    path = tmp_path / "code_state_evil_None_.pkl"
    path.write_bytes(data)
    state = read_pgo_files([path])
    assert state.inputs == [] and "refused to load" in state.skipped[0][1]
    assert not target.exists()


def test_broken_files_are_skipped_and_named(tmp_path: Path) -> None:
    real = (DATA / "mlp" / "dynamo" / "code_state_mlp_None_.pkl").read_bytes()
    files = {
        "code_state_trunc_None_.pkl": real[: len(real) // 2],
        "code_state_empty_None_.pkl": b"",
        "code_state_text_None_.pkl": b"hello, not a pickle\n",
        "code_state_list_None_.pkl": pickle.dumps([1, 2, 3]),
        "code_state_gz_None_.pkl": gzip.compress(real),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    shutil.copy(DATA / "mlp" / "dynamo" / "code_state_mlp_None_.pkl", tmp_path)
    state = read_pgo_files(find_pgo_files(tmp_path))
    assert [Path(p).name for p in state.inputs] == ["code_state_mlp_None_.pkl"]
    errors = {Path(f).name: e for f, e in state.skipped}
    assert errors["code_state_trunc_None_.pkl"] == "truncated pickle"
    assert errors["code_state_empty_None_.pkl"] == "empty file"
    assert errors["code_state_text_None_.pkl"].startswith("not a pickle")
    assert errors["code_state_gz_None_.pkl"].startswith("not a pickle")
    assert errors["code_state_list_None_.pkl"].startswith("not PGO state: the pickle holds a list")


def test_other_torch_versions_extra_and_missing_fields(tmp_path: Path) -> None:
    entry = fake.tensor(fake.DYN, 4, excluded=(1, 4))
    entry.__dict__["new_field_in_torch_3"] = "x"
    del entry.__dict__["excluded_scalar"]
    data = fake.dumps({("m.py", 3, "f"): {"L['x']": entry}}, new_code_field=7)
    [(key, entries)] = loads_state(data)
    assert (key.filename, key.line, key.name) == ("m.py", 3, "f")
    assert entries["L['x']"].dynamic_dims() == (0,)
    assert entries["L['x']"].small_sizes == {0: {1}}


def test_trace_without_code_state_and_garbage(tmp_path: Path) -> None:
    (tmp_path / "dedicated_log_torch_trace_a.log").write_text("V1122 01:00:00.000000 1 x.py:1] {\"dynamo_start\": {}}\n")
    (tmp_path / "dedicated_log_torch_trace_b.log").write_text(
        'V1122 01:00:00.000000 1 x.py:1] {"artifact": {"name": "put_local_code_state", "encoding": "string"}, "has_payload": "0"}\n'
        "\thash(ab)/m.py:1:f:\n\t  L['x']: something torch never wrote\n")
    state = read_trace_files(trace_inputs(tmp_path))
    assert state.inputs == []
    errors = {Path(f).name: e for f, e in state.skipped}
    assert "no put/get_*_code_state artifacts" in errors["dedicated_log_torch_trace_a.log"]
    assert "unrecognized line" in errors["dedicated_log_torch_trace_b.log"]


def test_unusual_render_is_read() -> None:
    text = ("unusual FrameStateSizeEntry(scalar=<AutoUnset.token: 0>, size=(2, <AutoDynamic.token: 0>), "
            "stride=<AutoUnset.token: 0>, excluded_sizes=None, excluded_scalar=None)")
    entry = parse_render(text)
    assert entry.size == (2, DYNAMIC) and entry.dynamic_dims() == (1,)


def test_merge_follows_torch_semilattice() -> None:
    a = Entry(DYNAMIC, (2, 8), (InferStride(1), 1))
    a.merge(Entry(DYNAMIC, (3, 8), (InferStride(1), 1)))
    assert a.size == (DYNAMIC, 8)
    b = Entry(DYNAMIC, (2, 8), (8, 1))
    b.merge(Entry(DYNAMIC, (2, 8, 1), (8, 1, 1)))  # rank changed: the whole size is dynamic
    assert b.size is DYNAMIC and not b.is_tensor and b.is_dynamic

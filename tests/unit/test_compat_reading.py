"""diagnose reads what every torch release writes: the compatibility corpus and issue #25.

The corpus (tests/data/<torch version>/compat/, recorded by tests/data/make_compat.py with
tests/data/compat_program.py under each release; recipe in each RECIPE.md) holds, per release,
a text log and a trace of the same run, a two-rank gloo trace through torch's launcher, and
PGO state where the release has it. Each is read here with the compiles, seconds and ranks
torch made. Where a case needs input that no installable release writes (two runs into one
directory, a file renamed, a payload damaged, a field removed), the test builds it from a
recorded file and says so.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dyncli.diagnose import read_trace
from dyncli.diagnose.read import diagnose_inputs
from dyncli.errors import InputError, StrictError
from dyncli.logparse import glog

DATA = Path(__file__).resolve().parents[1] / "data"
VERSIONS = sorted((p.parent.name for p in DATA.glob("*/compat")),
                  key=lambda v: tuple(int(x) for x in v.split(".")))

# What each release's run of compat_program.py compiled, read off its raw records (see the
# docstring of compat_program.py). ``single``: frames and compiles in all, compiles after the
# reset (generation 1), failed compiles, whether compilation_metrics carry seconds.
# ``ranks``: compiles per rank.
_USUAL: dict[str, object] = {"compiles": 8, "frames": 6, "gen1": 2, "failed": 1,
                             "seconds": True, "ranks": {0: 2, 1: 1}}
# where a release differs: 2.3 writes no compilation_metrics (no seconds, no failed compile);
# 2.4 and 2.5 write null seconds for the int-only frame and the failed compile
_DIFFERS: dict[str, dict[str, object]] = {
    "2.3.1": {"failed": 0, "seconds": False}, "2.4.1": {"unknown": 2}, "2.5.1": {"unknown": 2}}
EXPECTED: dict[str, dict[str, object]] = {
    v: {**_USUAL, **_DIFFERS.get(v, {})}
    for v in ("2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.10.0",
              "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0")}


# releases whose traces carry no recompile_reasons / no dynamo_graph_break_reason artifact
NO_REASONS = {"2.3.1", "2.4.1"}
NO_BREAKS = {"2.3.1", "2.4.1", "2.5.1"}


def compat(version: str) -> Path:
    return DATA / version / "compat"


def dynamo_starts(directory: Path) -> dict[str, int]:
    return {p.name: p.read_text(errors="replace").count('{"dynamo_start"')
            for p in sorted(directory.glob("*.log"))}


def test_corpus_spans_five_releases_from_the_oldest() -> None:
    assert len(VERSIONS) >= 5 and VERSIONS[0] == "2.3.1" and VERSIONS[-1] == "2.15.0"
    assert set(VERSIONS) <= set(EXPECTED)


@pytest.mark.parametrize("version", VERSIONS)
def test_trace_of_each_release(version: str) -> None:
    want = EXPECTED[version]
    d = read_trace.diagnose_traces([compat(version) / "trace"], strict=True)
    assert d.trace is not None
    assert (d.compiles, len(d.frames)) == (want["compiles"], want["frames"])
    # every compile torch started is counted once: compiles == dynamo_start records
    assert d.compiles == sum(dynamo_starts(compat(version) / "trace").values())
    # torch._dynamo.reset() started the ids over: the second run is generation 1
    gen1 = [c for c in d.trace.compile_times if c.compile_id.startswith("r1:")]
    assert len(gen1) == want["gen1"]
    assert {c["generation"] for c in d.trace.to_json()["compile_time_s"]["per_compile"]} == {0, 1}
    assert len(d.trace.failures) == want["failed"]
    # 2.3 and 2.4 traces hold no recompile reasons: said, not shown as "0 recompiles" alone
    assert any("holds no recompile reasons" in w for w in d.warnings) == (version in NO_REASONS)
    if want["seconds"]:
        # (2.4 and 2.5 write a null time for the int-only frame and the failed compile)
        assert d.trace.unknown_time == want.get("unknown", 0) and d.trace.total_compile_s > 0
        assert {c.seconds_field for c in d.trace.compile_times if c.seconds is not None} <= {
            "entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us"}
    else:  # no compilation_metrics at all: unknown, never 0
        assert d.trace.unknown_time == d.compiles
        assert all(c.seconds is None for c in d.trace.compile_times)


@pytest.mark.parametrize("version", VERSIONS)
def test_text_log_agrees_with_the_trace(version: str) -> None:
    """Same run, two formats: the same compiles (the int/float-only frame ``bump`` and both
    reset generations included)."""
    text = diagnose_inputs([compat(version) / "text.log"])
    trace = read_trace.diagnose_traces([compat(version) / "trace"])
    assert text.compiles == trace.compiles == EXPECTED[version]["compiles"]
    assert sorted(f.frame_id for f in text.frames) == sorted(f.frame_id for f in trace.frames)
    if version not in NO_REASONS:  # those traces have no recompile_reasons
        # the second run's recompile (after the reset) is kept, in both formats
        assert [r.compile_id for r in trace.recompiles] == ["0/1", "r1:0/1"]
        assert [r.compile_id for r in text.recompiles] == ["0/1", "r1:0/1"]
        assert [r.reasons for r in text.recompiles] == [r.reasons for r in trace.recompiles]


@pytest.mark.parametrize("version", VERSIONS)
def test_two_ranks_through_torchs_launcher(version: str) -> None:
    d = read_trace.diagnose_traces([compat(version) / "ranks"], strict=True)
    assert d.trace is not None
    per_rank = {r.rank: r.compiles for r in d.trace.ranks}
    assert per_rank == EXPECTED[version]["ranks"]
    # the per-rank counts add up to each file's dynamo_start records
    assert sorted(per_rank.values()) == sorted(dynamo_starts(compat(version) / "ranks").values())
    assert [(p.rank, p.rank_from) for p in d.trace.processes] == [(0, "envelope"), (1, "envelope")]
    assert any(x.kind == "compiles" for x in d.trace.divergences)


@pytest.mark.parametrize("version", [v for v in VERSIONS if list(compat(v).glob("pgo/*.pkl"))])
def test_pgo_state_is_loaded(version: str) -> None:
    d = read_trace.diagnose_traces([compat(version) / "pgo"], strict=True)
    assert d.trace is not None and d.trace.pgo_loaded
    assert list((compat(version) / "pgo").glob("*code_state*"))


@pytest.mark.parametrize("version", [v for v in VERSIONS if list(compat(v).glob("pgo/*.pkl"))])
def test_suggest_reads_each_releases_pgo_state(version: str) -> None:
    """pgo(): mix() with batch 2, 3, 4 leaves dim 0 of L['x'] dynamic in the state that
    release wrote; suggest reads it (restricted unpickler) into the list torch reads."""
    from dyncli.suggest.api import run as suggest

    result = suggest(pgo_dir=compat(version) / "pgo", torch_version="2.15.0")
    assert result.entries == ("L['x']:0",)
    assert "L['x']" in result.torch_hint


# ------------------------------------------------------------------ what each release writes
# (the wordings of the graph break, the guards and the constraint violation changed over the
# releases; each is read from the release that wrote it)


@pytest.mark.parametrize("version", VERSIONS)
def test_graph_break_with_its_reason_in_every_release(version: str) -> None:
    """split()'s print: 2.3–2.5 log "Graph break: from user code at:" + stack + the
    exception (their traces have no graph-break artifact), 2.6 "Reason: Unsupported: …",
    2.7–2.8 "Graph
    Break Reason:" with torch's explanation, later releases with its code (GB0059) too."""
    views = [diagnose_inputs([compat(version) / "text.log"])]
    if version not in NO_BREAKS:
        views.append(read_trace.diagnose_traces([compat(version) / "trace"]))
    for d in views:
        (gb,) = d.graph_breaks
        assert (Path(gb.file).name, gb.user_line) == ("compat_program.py", 38)
        assert gb.reason and ("print" in gb.reason + gb.explanation or gb.gb_code), gb
        assert 'print("break"' in gb.code


@pytest.mark.parametrize("version", VERSIONS)
def test_dynamic_inputs_agree_between_text_log_and_trace(version: str) -> None:
    """scale() turns L['x'] dynamic in both runs (0/1, r1:0/1). torch before 2.11 logs no
    "marking … as dynamic" line and 2.3 writes no tree (one guard per line in the text log, a
    ``dynamo_guards`` list in the trace): there the guards' size=[None, 3] is the evidence."""
    text = diagnose_inputs([compat(version) / "text.log"])
    trace = read_trace.diagnose_traces([compat(version) / "trace"])

    def dynamic(d: object) -> set[tuple[str, str]]:
        return {(x.compile_id, x.source) for f in d.frames  # type: ignore[attr-defined]
                for x in f.dynamic_inputs if x.origin != "mark_dynamic"}

    assert dynamic(text) == dynamic(trace) == {("0/1", "L['x']"), ("r1:0/1", "L['x']")}
    assert text.stats.unrecognized <= 4  # the program's own stdout lines, nothing of torch's


@pytest.mark.parametrize("version", VERSIONS)
def test_a_mark_dynamic_specialization_is_one_finding(version: str) -> None:
    """fixed(): mark_dynamic(x, 0) and ``x.size(0) == 4``; torch <= 2.6 names the source
    inside ``RelaxedUnspecConstraint(…)``: still one specialization of L['x'].size()[0]."""
    text = diagnose_inputs([compat(version) / "text.log"])
    assert [(s.sources, s.value) for s in text.specializations] == [(("L['x'].size()[0]",), "4")]


@pytest.mark.parametrize("version", VERSIONS)
def test_frames_named_from_guard_comments_get_the_whole_path(version: str) -> None:
    """A frame known only from a guard comment carries torch's shortened path
    (``wt/i25/tests/data/compat_program.py``); it is resolved against the absolute files
    the log names elsewhere, as recompile and specialization locations are."""
    d = diagnose_inputs([compat(version) / "text.log"])
    files = {f.file for f in d.frames if f.file}
    assert files and all(f.startswith("/") for f in files), files


@pytest.mark.parametrize("version", ["2.1.2", "2.2.2"])
def test_text_log_of_torch_2_1_and_2_2(version: str, tmp_path: Path) -> None:
    """torch 2.1/2.2 write TORCH_LOGS in Python logging's layout (recorded: tests/data/<v>/
    old_log/RECIPE.md): milliseconds, a logger name, no pid, and "Recompiling" outside the
    compile it starts (2.1 even as a one-line tuple). Read like the later logs: the same
    compiles, recompiles on the compile ids they start, the graph break, the dynamic dims.
    (No reset generation: their frame ids go on counting after torch._dynamo.reset().)"""
    log = DATA / version / "old_log" / "text.log"
    d = diagnose_inputs([log], strict=False)
    assert d.compiles == 8 and len(d.frames) == 6
    assert [(r.compile_id, r.function) for r in d.recompiles] == [("0/1", "scale"), ("5/1", "scale")]
    assert all("size mismatch at index 0" in r.reasons[0] for r in d.recompiles)
    (gb,) = d.graph_breaks
    assert (Path(gb.file).name, gb.user_line) == ("compat_program.py", 38) and "print" in gb.reason
    dynamic = {(x.compile_id, x.source) for f in d.frames for x in f.dynamic_inputs}
    assert dynamic == {("0/1", "L['x']"), ("5/1", "L['x']")}
    assert d.stats.unrecognized == 2 and d.stats.malformed == 0  # the program's own 2 lines
    # a big one passes the first-megabyte check as a torch log
    big = tmp_path / "big.log"
    big.write_bytes(log.read_bytes() * (2 * (1 << 20) // log.stat().st_size + 1))
    assert diagnose_inputs([big]).compiles > 8


# ------------------------------------------------------------------ 1. older prefixes


def test_thread_id_prefix_of_torch_2_3_is_a_trace() -> None:
    """torch 2.3/2.4 write the thread id (15 digits) where later releases write the pid."""
    trace = next((compat("2.3.1") / "trace").glob("*.log"))
    head = trace.read_bytes().split(b"\n", 1)[0]
    assert re.match(rb"V\d{4} [\d:.]+ \d{15} ", head)
    assert glog.parse_prefix(head) is not None
    assert read_trace.is_trace_input(trace)
    d = diagnose_inputs([trace])  # a file: sniffed as a trace, not read as a text log
    assert d.trace is not None and d.compiles == 8


# ------------------------------------------------------------------ 2. every file a process


def test_rank_from_file_name_when_envelopes_have_none(tmp_path: Path) -> None:
    """Synthesized (renamed copies): a single-process 2.3.1 trace has no ``rank`` in its
    envelopes; copied as ``…_rank_0.log`` / ``…_rank_1.log`` (nothing after the rank) each
    file is its own rank, its compiles its own."""
    src = next((compat("2.3.1") / "trace").glob("*.log"))
    for r in (0, 1):
        shutil.copy(src, tmp_path / f"dedicated_log_torch_trace_rank_{r}.log")
    d = read_trace.diagnose_traces([tmp_path])
    assert d.trace is not None
    assert [(p.rank, p.rank_from, p.label) for p in d.trace.processes] == [
        (0, "file name", ""), (1, "file name", "")]
    assert {r.rank: r.compiles for r in d.trace.ranks} == {0: 8, 1: 8}
    assert d.compiles == 16 and all("no recompile reasons" in w for w in d.warnings)


def test_two_runs_into_one_directory_stay_apart(tmp_path: Path) -> None:
    """Synthesized (the same job's rank files copied twice, as two runs would leave them):
    two files claim rank 0 and two rank 1; all four are kept, labelled by file name, and a
    warning says so. Nothing merges: 2 x (2 + 1) compiles."""
    for run in ("a", "b"):
        for f in sorted((compat("2.3.1") / "ranks").glob("*.log")):
            shutil.copy(f, tmp_path / f.name.replace(".log", f"{run}.log"))
    d = read_trace.diagnose_traces([tmp_path])
    assert d.trace is not None and d.compiles == 6
    labels = [(p.rank, p.label) for p in d.trace.processes]
    assert [r for r, _ in labels] == [0, 0, 1, 1] and all(label for _, label in labels)
    assert len({label for _, label in labels}) == 4
    assert sum("trace files have rank 0" in w for w in d.warnings) == 1
    views = {(r.rank, r.process): r.compiles for r in d.trace.ranks}
    assert sorted(views.values()) == [1, 1, 2, 2] and all(p for _, p in views)
    doc = d.to_dict()["result"] if "result" in d.to_dict() else d.to_dict()
    frame_ids = {(f["rank"], f["process"], f["frame_id"]) for f in doc["frames"]}
    assert len(frame_ids) == 4


def test_parallel_read_of_colliding_files_is_the_serial_one(tmp_path: Path) -> None:
    for run in ("a", "b"):
        for f in sorted((compat("2.15.0") / "ranks").glob("*.log")):
            shutil.copy(f, tmp_path / f.name.replace(".log", f"{run}.log"))
    one = read_trace.diagnose_traces([tmp_path], jobs=1).to_json()
    two = read_trace.diagnose_traces([tmp_path], jobs=2).to_json()
    assert one == two and len(one["processes"]) == 4


def test_two_rankless_files_do_not_share_compile_ids(tmp_path: Path) -> None:
    src = next((compat("2.3.1") / "trace").glob("*.log"))
    for name in ("dedicated_log_torch_trace_one.log", "dedicated_log_torch_trace_two.log"):
        shutil.copy(src, tmp_path / name)
    d = read_trace.diagnose_traces([tmp_path])
    assert d.compiles == 16
    assert {f.frame_id.split(":")[0] for f in d.frames} == {"one", "two", "one/r1", "two/r1"}


# ------------------------------------------------------------------ 3. compile seconds


def test_seconds_from_dynamo_cumulative_when_entire_frame_is_absent(tmp_path: Path) -> None:
    """Synthesized: ``entire_frame_compile_time_s`` removed from a 2.15.0 trace's metrics,
    as in traces that carry only ``dynamo_cumulative_compile_time_us``."""
    src = next((compat("2.15.0") / "trace").glob("*.log"))
    text = re.sub(r'"entire_frame_compile_time_s": [0-9.e-]+, ', "", src.read_text())
    assert '"entire_frame_compile_time_s"' not in text.split("compilation_metrics", 1)[1][:2000]
    (tmp_path / "t.log").write_text(text)
    d = read_trace.diagnose_traces([tmp_path / "t.log"])
    assert d.trace is not None and d.trace.total_compile_s > 0
    timed = [c for c in d.trace.compile_times if c.seconds is not None]
    assert timed and {c.seconds_field for c in timed} == {"dynamo_cumulative_compile_time_us"}
    doc = d.trace.to_json()["compile_time_s"]["per_compile"]
    assert {c["seconds_field"] for c in doc if c["seconds"] is not None} == {
        "dynamo_cumulative_compile_time_us"}


# ------------------------------------------------------------------ 4. unreadable files


def test_a_directorys_unreadable_files_are_skipped_with_a_warning_each(tmp_path: Path) -> None:
    for f in (compat("2.15.0") / "ranks").glob("*.log"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "dedicated_log_torch_trace_rank_2_empty.log").write_bytes(b"")
    (tmp_path / "dedicated_log_torch_trace_rank_3_bin.log").write_bytes(b"\x00\x01\x02\n")
    (tmp_path / "dedicated_log_torch_trace_rank_4_text.log").write_text("hello\n")
    d = read_trace.diagnose_traces([tmp_path])
    assert d.trace is not None and {p.rank for p in d.trace.processes} == {0, 1}
    skipped = [w for w in d.warnings if "skipped" in w]
    assert len(skipped) == 3 and all("rank_" in w for w in skipped)


def test_nothing_readable_left_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "dedicated_log_torch_trace_rank_0_x.log").write_bytes(b"")
    with pytest.raises(InputError, match="no readable TORCH_TRACE file"):
        read_trace.diagnose_traces([tmp_path])


# ------------------------------------------------------------------ 7. --strict, failures


def test_strict_checks_payload_hashes(tmp_path: Path) -> None:
    """Synthesized: one payload line of a real 2.15.0 trace changed, its hash kept."""
    src = next((compat("2.15.0") / "trace").glob("*.log"))
    lines = src.read_text().split("\n")
    i = next(i for i, line in enumerate(lines) if line.startswith("\t") and "def forward" in line)
    lines[i] = lines[i].replace("def forward", "def forwarx")
    (tmp_path / "t.log").write_text("\n".join(lines))
    read_trace.diagnose_traces([src], strict=True)  # the real one passes
    with pytest.raises(StrictError, match="has_payload"):
        read_trace.diagnose_traces([tmp_path / "t.log"], strict=True)
    d = read_trace.diagnose_traces([tmp_path / "t.log"])
    assert d.trace is not None and d.trace.payload_mismatch == 0  # only --strict hashes


def test_failed_compile_reason_is_kept_whole_in_json() -> None:
    d = read_trace.diagnose_traces([compat("2.15.0") / "trace"])
    assert d.trace is not None
    (failed,) = d.trace.failures
    assert failed.fail_type == "ConstraintViolationError"
    assert len((failed.fail_reason or "").splitlines()) > 1
    assert json.dumps(d.trace.to_json()["failed_compiles"])


# ------------------------------------------------------------------ every trace in tests/data

TRACE_DIRS = sorted({p.parent for p in DATA.glob("**/dedicated_log_torch_trace*.log")
                     if "fuzz" not in p.parts})


@pytest.mark.parametrize("directory", TRACE_DIRS, ids=[str(d.relative_to(DATA)) for d in TRACE_DIRS])
def test_per_rank_compiles_add_up_to_dynamo_start_records(directory: Path) -> None:
    """Every trace of every release: each process's compiles (its rank view) equal its
    file's dynamo_start records, and all of them add up to the directory's."""
    d = read_trace.diagnose_traces([directory], strict=True)
    assert d.trace is not None
    starts = dynamo_starts(directory)
    per_file = {Path(p.file).name: p.dynamo_start for p in d.trace.processes}
    assert per_file == starts
    assert d.compiles == sum(starts.values())
    if any(p.rank is not None for p in d.trace.processes):
        views = {(r.rank, r.process): r.compiles for r in d.trace.ranks}
        by_rank = {p.rank: n for p, n in ((p, starts[Path(p.file).name]) for p in d.trace.processes)}
        assert {rank: views[(rank, "")] for rank in by_rank} == by_rank


# compat_program.py's ``backend``: a new backend callable for each torch.compile of one
# function, under a recompile limit of 2. No guard of the cached entry fails; what torch writes
# for it changed three times: ___check_current_backend (2.3), an empty reason line (2.4; the
# limit's last reason "Unable to find recompilation reasons"), the entry's id with nothing after
# it (2.5-2.9, as pasted in
# pytorch#154707 and #164119), "BACKEND_MATCH failure: …" (2.10 on). Both older forms had been
# read as a reason the paste cut off, with recompiles_verbose as the fix, which names nothing
# more there.
BACKEND_VERSIONS = [v for v in VERSIONS if (compat(v) / "backend.log").exists()]
_NAMED_FROM = (2, 10)


def _backend_kind(version: str) -> str:
    minor = tuple(int(x) for x in version.split(".")[:2])
    return "backend" if minor >= _NAMED_FROM or minor < (2, 4) else "no_guard"


def test_the_backend_corpus_spans_every_form() -> None:
    assert {"2.4.1", "2.11.0", "2.15.0"} <= set(BACKEND_VERSIONS)
    assert {_backend_kind(v) for v in BACKEND_VERSIONS} == {"backend", "no_guard"}


@pytest.mark.parametrize("version", BACKEND_VERSIONS)
def test_a_backend_mismatch_is_read_as_one_in_every_release(version: str) -> None:
    want = _backend_kind(version)
    d = diagnose_inputs([compat(version) / "backend.log"])
    # calls 2 and 3 recompiled (0/1, 0/2); the fourth call's recompile hit the limit of 2
    # (2.3 logs its recompile records outside the compile: no ids)
    assert [r.compile_id for r in d.recompiles] == (["", ""] if version == "2.3.1"
                                                    else ["0/1", "0/2"])
    assert {k for r in d.recompiles for k in r.kinds} == {want}
    assert len(d.recompile_limits) == 1
    (cause,) = [c for c in d.causes if c.kind == "non-shape"]
    assert cause.fix.startswith("compile the function once and call that")
    assert "recompiles_verbose" not in cause.fix
    t = read_trace.diagnose_traces([compat(version) / "backend"], strict=True)
    # the refused third compile is not a compile in the trace either: torch 2.5-2.10 write
    # its compilation_metrics with fail_type RecompileLimitExceeded ("recompile_limit
    # reached"), 2.11 on an Unsupported "Dynamo recompile limit exceeded"
    assert t.compiles == d.compiles == 2
    if version not in NO_REASONS:  # the trace's recompile_reasons say the same
        assert {k for r in t.recompiles for k in r.kinds} == {want}
        # the refused compile: its compilation_metrics name the limit (2.9 on); 2.5-2.8 write
        # nothing of it but its recompile reasons (no dynamo_start), and the limit's setting
        # is in the earlier compiles' dynamo_config from 2.6 (2.5's metrics carry none)
        (limit,) = t.recompile_limits
        assert limit.compile_id == "0/2" and limit.function == "shift"
        named = tuple(int(x) for x in version.split(".")[:2]) >= (2, 6)
        assert (limit.limit_name, limit.limit) == ((d.recompile_limits[0].limit_name, "2")
                                                   if named else ("", ""))


@pytest.mark.parametrize(("fail_type", "fail_reason", "config", "hit"), [
    ("RecompileLimitExceeded", "recompile_limit reached",
     '{"accumulated_recompile_limit": 256, "recompile_limit": 2}', ("recompile_limit", "2")),
    ("RecompileLimitExceeded", "accumulated_recompile_limit reached",
     '{"accumulated_recompile_limit": 256, "recompile_limit": 2}',
     ("accumulated_recompile_limit", "256")),
    ("CacheLimitExceeded", "cache_size_limit reached", None, ("cache_size_limit", "")),
    ("RecompileLimitExceeded", "recompile_limit reached; and more", None, None),
    ("BackendCompilerFailed", "recompile_limit reached", None, None),
])
def test_a_limit_exception_in_a_trace_is_the_refused_compile(
        fail_type: str, fail_reason: str, config: str | None, hit: tuple[str, str] | None) -> None:
    from dyncli.logparse.trace_lines import _limit_exceeded

    assert _limit_exceeded(fail_type, fail_reason, config) == hit

"""From PGO state to the allow-list: entries per real program, filters, regex safety, formats."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import suggest_fake_pgo as fake
import tomllib

from dyncli.config import SuggestConfig
from dyncli.errors import InputError, UsageError
from dyncli.quoting import shell_quote
from dyncli.suggest.allowlist import build_allowlist
from dyncli.suggest.api import run
from dyncli.suggest.pgo_pickle import loads_state
from dyncli.suggest.pgo_state import PgoState
from dyncli.suggest.render import render_fix
from dyncli.suggest.result import AllowList
from dyncli.suggest.source_lists import parse_torch_version

DATA = Path(__file__).resolve().parents[1] / "data" / "pgo"
CFG = SuggestConfig()

# What dyncli suggests for each real program, next to torch's own hint (from its trace), with
# dims seen with size 0/1 kept in the dynamic list (--no-unbacked; else serve's batch dim goes
# to the unbacked list: tests/unit/test_suggest_lists.py).
EXPECTED = {
    "mlp": ("L['args'][0]:0", "L['args'][0]"),
    "serve": ("L['args'][0]:0", "L['args'][0]"),
    "intarg": ("L['n']", "L['n']"),
    "graphbreak": ("L['x']:0,L['y']:0", "L['x'],L['y']"),
    "hf": ("L['kwargs']['input_ids'],L['kwargs']['attention_mask']",
           "L['kwargs']['input_ids'],L['kwargs']['attention_mask']"),
    "ranks": ("L['x']", "L['x']"),
    "modattr": ("", "L['self'].k"),
}


def _torch_matches(value: str, name: str, dim: int | None = None) -> bool:
    """torch 2.14's is_dynamic_source(), restated: spaces dropped, split on ',', ':N' suffix."""
    for entry in (s for s in value.replace(" ", "").split(",") if s):
        m = re.match(r"^(.+):(\d+)$", entry)
        pattern, pat_dim = (m.group(1), int(m.group(2))) if m else (entry, None)
        if (pattern == name or re.match(pattern, name)) and (dim is None or pat_dim is None or pat_dim == dim):
            return True
    return False


def _from(program: str, **cfg: object) -> AllowList:
    return run(pgo_dir=DATA / program, config=replace(CFG, **cfg))  # type: ignore[arg-type]


@pytest.mark.parametrize("program", sorted(EXPECTED))
def test_real_programs(program: str) -> None:
    ours, torchs = EXPECTED[program]
    for result in (run(pgo_dir=DATA / program, unbacked=False, config=CFG),
                   run(from_trace=DATA / program, unbacked=False, config=CFG)):
        assert result.value == ours
        assert result.env == f'TORCH_COMPILE_DYNAMIC_SOURCES="{ours}"'
        assert result.torch_hint == f'TORCH_COMPILE_DYNAMIC_SOURCES="{torchs}"'


def test_torch_hint_is_the_one_torch_printed() -> None:
    import gzip
    for program in EXPECTED:
        for trace in sorted((DATA / program).glob("trace*.log.gz")):
            text = gzip.decompress(trace.read_bytes()).decode()
            hints = re.findall(r'TORCH_COMPILE_DYNAMIC_SOURCES="([^"]*)"', text)
            result = run(from_trace=trace, config=CFG)
            assert result.torch_hint == f'TORCH_COMPILE_DYNAMIC_SOURCES="{hints[-1]}"'


@pytest.mark.parametrize("program", sorted(EXPECTED))
def test_entries_select_exactly_the_dynamic_dims(program: str) -> None:
    result = _from(program, include_params=True)
    every = {src for fr in result.frames for src in (r.source for r in fr.inputs)}
    chosen = {s.source: s for s in result.sources}
    for fr in result.frames:
        for row in fr.inputs:
            if row.source in chosen and row.kind == "tensor":
                rank = len(row.render.split("size=[")[1].split("]")[0].split(","))
                for dim in range(rank):
                    want = dim in chosen[row.source].dynamic_dims
                    assert _torch_matches(result.value, row.source, dim) == want, (row.source, dim)
    for name in every - set(chosen):
        assert not _torch_matches(result.value, name), name


def test_params_are_left_out_by_default_with_a_note() -> None:
    result = _from("modattr")
    assert result.left_out == ("L['self'].k",) and result.sources == ()
    # the note says what leaving it out costs (issue 26: torch's hint did better than the default)
    assert any("at least one more compile per run" in n and "--include-params" in n
               for n in result.notes)
    assert _from("modattr", include_params=True).value == "L['self'].k"
    rows = {r.source: (r.status, r.param) for fr in result.frames for r in fr.inputs}
    assert rows == {"L['x']": ("static", False), "L['self'].k": ("param", True)}


def test_frame_and_exclude_filters() -> None:
    assert _from("graphbreak", frame=r":split$").value == "L['x']:0"
    assert _from("graphbreak", exclude=r"\['y'\]").value == "L['x']:0"
    excluded = [r.status for fr in _from("graphbreak", exclude="y").frames for r in fr.inputs]
    assert "excluded" in excluded
    nothing = _from("graphbreak", frame="no-such-frame")
    assert nothing.value == "" and nothing.warnings == ("--frame 'no-such-frame' matched none of the 2 frames",)
    with pytest.raises(UsageError, match="--frame: not a valid regex"):
        _from("mlp", frame="(")


def test_torch_version() -> None:
    assert _from("graphbreak", torch_version="2.5.1").value == "L['x'],L['y']"
    assert _from("graphbreak", torch_version="2.14.1+cu130").value == "L['x']:0,L['y']:0"
    assert parse_torch_version("v2.13.0.dev20260101") == (2, 13)
    with pytest.raises(UsageError, match="--torch-version"):
        _from("mlp", torch_version="latest")


def test_a_source_static_in_another_frame_is_noted() -> None:
    data = fake.dumps({("m.py", 1, "f"): {"L['x']": fake.tensor(fake.DYN, 3)},
                       ("m.py", 9, "g"): {"L['x']": fake.tensor(4, 3)}})
    state = PgoState()
    for key, entries in loads_state(data):
        for src, e in entries.items():
            state.add(key, src, e)
    result = build_allowlist(state, CFG)
    assert result.value == "L['x']:0"
    assert any("m.py:9:g, static there" in n for n in result.notes)


def test_one_source_in_frames_of_different_static_sizes() -> None:
    # Each frame keeps dim 1 static (6 here, 7 there): only dim 0 is listed, unlike a lattice merge.
    state = PgoState(inputs=["x.pkl"])
    frames = {("m.py", 1, "f"): {"L['x']": fake.tensor(fake.DYN, 6)},
              ("m.py", 9, "g"): {"L['x']": fake.tensor(fake.DYN, 7)},
              ("m.py", 20, "h"): {"L['z']": fake.tensor(fake.DYN, 2)},
              ("m.py", 30, "k"): {"L['z']": fake.tensor(fake.DYN, 2, 2)}}
    for key, entries in loads_state(fake.dumps(frames)):
        for src, e in entries.items():
            state.add(key, src, e)
    result = build_allowlist(state, CFG)
    assert result.value == "L['x']:0,L['z']"  # z: its rank differs between frames
    by_source = {s.source: s for s in result.sources}
    assert by_source["L['z']"].kind == "tensor" and by_source["L['z']"].local is None
    assert "os.environ['TORCH_COMPILE_DYNAMIC_SOURCES'] = \"L['z']\"" in render_fix(result, "python")


def _state(names: dict[str, object]) -> PgoState:
    state = PgoState(inputs=["x.pkl"])
    for key, entries in loads_state(fake.dumps({("m.py", 1, "f"): names})):  # type: ignore[dict-item]
        for src, e in entries.items():
            state.add(key, src, e)
    return state


@pytest.mark.filterwarnings("error")  # no warning of Python's re reaches the user
def test_names_that_cannot_be_written_raw_get_anchored_regexes() -> None:
    names = {
        "L['a b']": fake.scalar(fake.DYN, 2),       # space: torch strips it
        "L['c,d']": fake.scalar(fake.DYN, 2),       # comma: torch splits on it
        "L['e'])": fake.scalar(fake.DYN, 2),        # invalid regex: torch would raise
        "L['f'][[0]": fake.scalar(fake.DYN, 2),     # "[[": Python warns, may change meaning
        "Lx": fake.scalar(3),                      # what L['x'] means as a regex...
        "L['x']": fake.tensor(fake.DYN, 2),        # ...so this one must be anchored
        "L['y']": fake.tensor(fake.DYN, 2),
    }
    result = build_allowlist(_state(names), replace(CFG, include_params=True))
    by_source = {s.source: s for s in result.sources}
    assert by_source["L['y']"].entries == ("L['y']:0",) and not by_source["L['y']"].escaped
    assert by_source["L['x']"].escaped
    for src in ("L['a b']", "L['c,d']", "L['e'])", "L['f'][[0]", "L['x']"):
        assert by_source[src].escaped
        assert any(w.startswith(src) for w in result.warnings)
    for src in by_source:
        assert _torch_matches(result.value, src)
    assert not _torch_matches(result.value, "Lx")
    assert " " not in result.value and result.value.count(",") == len(result.entries) - 1


def test_maybe_mark_dynamic_for_every_dim() -> None:
    """PGO state does not say what pins a dim: mark_dynamic would raise there (issue 26:
    an nn.Linear pinning x's last dim made 7 of 9 calls raise ConstraintViolationError)."""
    result = run(pgo_dir=DATA / "serve", unbacked=False, config=replace(CFG, format="python"))
    [src] = result.sources
    assert src.maybe_dims == (0,)
    assert "torch._dynamo.maybe_mark_dynamic(args[0], 0)" in render_fix(result, "python")
    mlp = render_fix(_from("mlp"), "python")
    assert "torch._dynamo.maybe_mark_dynamic(args[0], 0)" in mlp
    assert "torch._dynamo.mark_dynamic(" not in mlp


def test_python_format_puts_unreachable_sources_in_the_environment() -> None:
    """Round 26: not a `torch.compiler.config.dynamic_sources = …` override, which is
    thread-local; set before `import torch`, the default holds on every thread."""
    text = render_fix(_from("graphbreak"), "python")
    assert "torch._dynamo.maybe_mark_dynamic(x, 0)" in text
    assert "os.environ['TORCH_COMPILE_DYNAMIC_SOURCES'] = \"L['y']:0\"" in text
    assert text.index("os.environ[") < text.index("import torch")
    assert "torch.compiler.config" not in text
    assert "os.environ['TORCH_COMPILE_DYNAMIC_SOURCES'] = \"L['n']\"" in render_fix(_from("intarg"), "python")
    hf = render_fix(_from("hf"), "python")
    assert "torch._dynamo.maybe_mark_dynamic(kwargs['input_ids'], [0, 1])" in hf
    compile(text, "<suggest>", "exec")
    compile(hf, "<suggest>", "exec")


def test_env_shell_toml_json_forms() -> None:
    result = _from("graphbreak")
    assert render_fix(result, "env") == "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0,L['y']:0\"\n"
    assert render_fix(result, "shell") == "export TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0,L['y']:0\"\n"
    assert tomllib.loads(render_fix(result, "toml"))["bench"]["dynamic_sources"] == ["L['x']:0", "L['y']:0"]
    doc = json.loads(render_fix(result, "json"))
    assert doc == result.to_dict()
    assert doc["schema_version"] == 1 and doc["command"] == "suggest"
    assert doc["sources"][0] == {
        "source": "L['x']", "kind": "tensor", "dims": [0], "entries": ["L['x']:0"], "maybe_dims": [],
        "escaped": False, "unbacked_dims": [], "unbacked_entries": [], "static_dims": [],
        "frames": doc["sources"][0]["frames"]}
    assert doc["sources"][0]["frames"][0]["function"] == "split"
    assert set(doc["sources"][0]["frames"][0]) == {"function", "file", "line"}
    intarg = _from("intarg").to_dict()
    assert intarg["sources"][0]["kind"] == "scalar" and intarg["sources"][0]["dims"] is None


def test_shell_quote_switches_to_single_quotes_for_escaped_entries() -> None:
    assert shell_quote("L['x']") == "\"L['x']\""
    assert shell_quote(r"L\['x'\]$") == "'L\\['\\''x'\\''\\]$'"


def test_nothing_usable_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "code_state_bad_None_.pkl").write_bytes(b"junk")
    with pytest.raises(InputError, match=r"no usable PGO state.*code_state_bad_None_\.pkl: not a pickle"):
        run(pgo_dir=tmp_path, config=CFG)
    # nothing given: torch's own directory is read (#34); here it does not exist
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "absent"))
    with pytest.raises(UsageError, match="no --pgo-dir, --from-trace or --redis"):
        run(config=CFG)
    with pytest.raises(UsageError, match="--job-id"):
        run(from_trace=DATA / "mlp", job_id="mlp", config=CFG)


def test_a_number_the_state_cannot_show_to_be_an_int_is_listed_as_torchs_hint_with_why() -> None:
    """torch records the int a scalar leaves when it turns dynamic (excluded_scalar); a float
    leaves none, and neither does an int its frame compiled again after: one specialized at
    every value (range(n): int_loop 3 -> 3), or one beside a branch on one value (``if n ==
    33``: torch's hint takes it 3 -> 2, issue 33). The state cannot tell them apart, so the
    list keeps what torch's hint keeps, and says why it may lower nothing (issue 26 left them
    out, and missed the branch's compile)."""
    names = {
        "L['scale']": fake.scalar(fake.DYN),  # float_input or int_branch: no excluded_scalar
        "L['n']": fake.scalar(fake.DYN, 2),   # int_input: left 2 behind
        "L['self'].k": fake.scalar(fake.DYN),  # a module int: static by default, kept
    }
    result = build_allowlist(_state(names), replace(CFG, include_params=True))
    assert result.value == "L['scale'],L['n'],L['self'].k"
    row = next(r for fr in result.frames for r in fr.inputs if r.source == "L['scale']")
    assert row.status == "suggested"
    assert any(n.startswith("L['scale'] may lower no compiles") and "--from-trace" in n
               and "torch's own hint" in n for n in result.notes)
    assert "L['scale']" in result.torch_hint


def test_no_fix_entries_from_a_diagnosis_are_left_out() -> None:
    names = {"L['x']": fake.tensor(fake.DYN, fake.DYN), "L['y']": fake.tensor(fake.DYN, 2)}
    result = build_allowlist(_state(names), CFG, no_fix={"L['x']:0": "the code marks it static",
                                                         "L['y']:0": "a guard limit pins it"})
    assert result.value == "L['x']:1"
    assert any("left out L['y']:0: a guard limit pins it" in n for n in result.notes)


def test_a_tensor_whose_frame_compiled_again_gets_one_line_of_caveat() -> None:
    """Issue 26: the state cannot tell a pin (mark_static, the guard limit) from a benign
    recompile after a dim turned dynamic (excluded_sizes cleared); the output says so."""
    names = {"L['x']": fake.tensor(fake.DYN, 3), "L['y']": fake.tensor(fake.DYN, 3, excluded=(2, 3))}
    result = build_allowlist(_state(names), CFG)
    assert result.value == "L['x']:0,L['y']:0"
    [note] = [n for n in result.notes if "compiled again after they turned dynamic" in n]
    assert note.startswith("L['x']: ") and "L['y']" not in note and "--from-trace" in note


def test_a_dim_seen_at_0_1_after_it_turned_dynamic_goes_unbacked_from_a_trace() -> None:
    """Issue 33: zero_one's batch is 1 after dim 0 turned dynamic. The PGO state keeps no size
    of a dynamic dim; the trace's recompile reason (``2 <= L['x'].size()[0]`` failed) shows
    it, and the dim goes to the unbacked list as a PGO file's 0/1 size sends it (applied:
    tests/integration/test_hint_parity.py, 1 compile where the dynamic list leaves 2)."""
    trace = Path(__file__).resolve().parents[1] / "data" / "2.15.0" / "advice" / "zero_one.trace.log.gz"
    # (include_stale: corpus.py, the frame's file, changes whenever a program is added)
    result = run(from_trace=trace, include_stale=True, config=CFG)
    assert result.env == "TORCH_COMPILE_UNBACKED_SOURCES=\"L['x']:0\""
    assert run(from_trace=trace, unbacked=False, include_stale=True, config=CFG).env == \
        "TORCH_COMPILE_DYNAMIC_SOURCES=\"L['x']:0\""

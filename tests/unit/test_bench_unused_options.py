"""Options given where they do not apply: one table, said as warnings (dyncli.bench.core.unused)."""

from __future__ import annotations

from dyncli.bench.core.unused import COMMAND, RUN, TABLE, Model, notes
from dyncli.config import BenchConfig

FILE = Model("m.py:build", "file", None)
HF = Model("hf:BertModel", "hf", 32)


def test_buckets_without_a_padding_strategy_are_said_with_their_origin() -> None:
    # round 26: --buckets and --max-buckets from autodyn.toml were dropped without a word
    cfg = BenchConfig(strategy=["static", "automatic"], buckets="8,16", max_buckets=2)
    origins = {"buckets": "autodyn.toml", "max_buckets": "environment DYNCLI_BENCH_MAX_BUCKETS"}
    assert notes(cfg, RUN, FILE, origins) == [
        "bench.buckets = 8,16 (from autodyn.toml): for the pad strategy; no strategy run here "
        "pads (static, automatic), so it was not used",
        "bench.max_buckets = 2 (from DYNCLI_BENCH_MAX_BUCKETS): for --buckets auto with the pad "
        "strategy; nothing chooses buckets here (buckets 8,16; static, automatic), so it was "
        "not used"]
    flags = {"buckets": "command line", "max_buckets": "default"}
    cfg = BenchConfig(strategy=["static", "automatic"], buckets="8,16")
    assert notes(cfg, RUN, FILE, flags) == [
        "--buckets 8,16: for the pad strategy; no strategy run here pads (static, automatic), "
        "so it was not used"]


def test_options_where_they_apply_or_at_their_default_say_nothing() -> None:
    padded = BenchConfig(strategy=["pad"], buckets="auto", max_buckets=3, hf_config={"a": 1},
                         seq_len=16)
    assert notes(padded, RUN, HF) == []
    assert notes(BenchConfig(), RUN, FILE) == [] and notes(BenchConfig(), COMMAND) == []
    # the repository's autodyn.toml spells the defaults out: a default changes nothing
    spelled = {k: "autodyn.toml" for k in ("buckets", "hf_config", "resume", "seq_len")}
    assert notes(BenchConfig(), RUN, FILE, spelled) == []
    assert notes(BenchConfig(), COMMAND, None, spelled) == []
    suite = BenchConfig(suite="cpu-small", resume=True, timeout=9.0)
    assert notes(suite, COMMAND, origins={k: "command line" for k in ("resume", "timeout")}) == []
    # the pad strategy with fixed buckets: max_buckets caps only what auto chooses
    assert [t.split(":")[0] for t in notes(BenchConfig(strategy=["pad"], buckets="8,16",
                                                       max_buckets=3), RUN, FILE)] == \
        ["bench.max_buckets = 3"]


def test_the_model_rows_name_the_model_and_each_row_is_judged_at_its_stage() -> None:
    cfg = BenchConfig(hf_config={"num_hidden_layers": 2}, seq_len=8, resume=True)
    said = notes(cfg, RUN, FILE)
    assert said == [
        "bench.hf_config = num_hidden_layers=2: for hf: models; m.py:build is not one, so it "
        "was not used",
        "bench.seq_len = 8: for models with a sequence dim; m.py:build has none (only hf: "
        "text and audio models do), so it was not used"]
    assert {r.stage for r in TABLE} == {RUN, COMMAND}
    assert [r.key for r in TABLE if r.stage == COMMAND] == ["resume", "timeout", "emit_file"]
    assert all(hasattr(BenchConfig(), r.key) for r in TABLE)


def test_a_strategys_child_process_gets_the_options_said_unused_at_their_defaults() -> None:
    # process-per-strategy children said them again, worded otherwise (no origins, one strategy)
    from dyncli.bench.core.unused import settled

    cfg = BenchConfig(strategy=["static", "pad"], buckets="8,16", max_buckets=2,
                      hf_config={"a": 1}, seq_len=8, resume=True)
    assert settled(cfg, FILE) == {"hf_config": {}, "seq_len": None, "max_buckets": None}
    assert settled(BenchConfig(hf_config={"a": 1}, seq_len=8), HF) == {}

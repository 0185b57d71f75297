"""dyncli's fix is never worse than torch's own hint, by applying both (issue 33, pattern 9).

Two programs of tests/advice/corpus.py where the default fell short of what works:

- ``int_branch``: an int changes value beside a branch on one value (``if n == 33``). The PGO
  state cannot show that listing the int helps (it looks like a float's or an int specialized
  at every value), torch's hint lists it and lowers 3 -> 2 compiles: ``suggest --pgo-dir`` now
  lists it as the hint does, with a note that it may lower nothing.
- ``zero_one``: a batch of 1 after the batch dim turned dynamic. The state keeps no size of a
  dynamic dim, the trace's recompile reasons show the failed ``2 <= L['x'].size()[0]``:
  ``suggest --from-trace`` puts the dim in the unbacked list, as it does from a PGO file's 0/1
  sizes (1 compile, where torch's dynamic-list hint leaves 2).

Each program is recorded once (TORCH_TRACE and PGO), then run with dyncli's fix and with
torch's hint; the runner counts the graphs torch's backend saw and checks the outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ADVICE = Path(__file__).resolve().parents[1] / "advice"
sys.path.insert(0, str(ADVICE))
from fixes import from_text  # noqa: E402
from jobs import run_jobs  # noqa: E402

from dyncli.suggest.api import run as suggest  # noqa: E402


@pytest.mark.slow
@pytest.mark.long  # 15-55 s at load 2-3: out of the README's command, CI runs it
def test_fix_is_never_worse_than_torchs_hint(tmp_path: Path) -> None:
    programs = ("int_branch", "zero_one")
    record = [{"program": p, "level": "none", "save": str(tmp_path / f"{p}.pt"),
               "trace": str(tmp_path / f"{p}.trace"),
               "pgo": [str(tmp_path / "pgo" / p), f"parity-{p}"]} for p in programs]
    base = {job["program"]: res for job, res in zip(record, run_jobs(record, tmp_path, "record"),
                                                       strict=True)}
    pgo = suggest(pgo_dir=tmp_path / "pgo" / "int_branch")
    trace = suggest(from_trace=tmp_path / "zero_one.trace")
    assert "L['n']" in pgo.value and any("L['n'] may lower no compiles" in n for n in pgo.notes)
    assert trace.env == "TORCH_COMPILE_UNBACKED_SOURCES=\"L['x']:0\""
    fixes = {"int_branch": from_text("suggest --pgo-dir", pgo.env),
             "zero_one": from_text("suggest --from-trace", trace.env)}
    apply, owners = [], []
    for p in programs:
        hint = base[p]["torch_hint"]
        assert hint, f"{p}: torch printed no hint"
        for label, job in [(f.where, f.job()) for f in fixes[p]] + [
                ("torch's hint", {"env": {"TORCH_COMPILE_DYNAMIC_SOURCES": hint}})]:
            job.update(program=p, compare=str(tmp_path / f"{p}.pt"),
                       pgo=[str(tmp_path / "pgo-fix" / str(len(apply))), f"parity-{p}"])
            apply.append(job)
            owners.append((p, label))
    got: dict[str, dict[str, int]] = {p: {} for p in programs}
    for (p, label), res in zip(owners, run_jobs(apply, tmp_path, "apply"), strict=True):
        assert res["error"] is None and res["equal"] is True, (p, label, res)
        got[p][label] = res["compiles"]
    before = {p: base[p]["compiles"] for p in programs}
    assert before == {"int_branch": 3, "zero_one": 3}, before
    assert got["int_branch"] == {"suggest --pgo-dir": 2, "torch's hint": 2}, got
    assert got["zero_one"] == {"suggest --from-trace": 1, "torch's hint": 2}, got

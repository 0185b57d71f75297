"""Make the real PGO state in tests/data/[<torch version>/]pgo/ from real torch.compile runs.

Recipe (re-run to refresh; needs torch, and transformers for the ``hf`` program)::

    .venv/bin/python tests/data/make_pgo.py            # all programs -> <version folder>/pgo/
    .venv/bin/python tests/data/make_pgo.py mlp hf     # some of them
    DYNCLI_REFRESH_GOLDEN=1 .venv/bin/pytest tests/unit/test_suggest_golden.py   # then this

The state is recorded under the torch that runs this script, into that version's folder
(``torch_versions.data_dir``): ``tests/data/pgo/`` for 2.14.1, ``tests/data/2.15.0/pgo/`` for
2.15.0, and so on. The programs run from a copy of this file at :data:`SRC` (removed after),
so the recorded frames name a file that exists on no machine: dyncli suggest's stale-state
check (which hashes a frame's file at its recorded path) leaves them unchecked everywhere,
instead of finding them stale wherever the repo's own copy has since been edited.

Each program runs in a fresh subprocess with ``TORCH_COMPILE_JOB_ID=<program>``,
``TORCHINDUCTOR_CACHE_DIR=<tmp>/cache`` and ``TORCH_TRACE=<tmp>/trace``; the PGO pickles
torch writes (``cache/dynamo/code_state_<job>_<rank>_<tag>.pkl``) and the structured trace
(gzipped, ``trace*.log.gz``) are copied to ``tests/data/pgo/<program>/``. Programs compile with ``backend="eager"``: the PGO state
is recorded by dynamo before any backend runs, so it is the same as with inductor, at a fraction
of the compile time on a 2-core CPU box. ``manifest.json`` records the torch version and what
each program feeds.

The same file is the child the slow integration test runs::

    python tests/data/make_pgo.py --run mlp   # prints {"unique_graphs": N, "frames": M}

with whatever TORCH_COMPILE_JOB_ID / TORCH_COMPILE_DYNAMIC_SOURCES the caller set.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = Path(tempfile.gettempdir()) / "dyncli-make-pgo"

# What each program feeds the compiled function, for the manifest and the docs.
DESCRIPTIONS = {
    "mlp": "nn.Sequential MLP, x of shape (b, 8) for b in 2, 3, 4, 5",
    "intarg": "f(x, n) = x * n + n with x (4, 3) fixed and the int n in 2, 3, 4",
    "graphbreak": "f(x) split by torch._dynamo.graph_break(); x (b, 6) for b in 2, 3, 4",
    "hf": "tiny BertModel (2 layers, hidden 32), input_ids/attention_mask (b, s): (2,8) (3,8) (3,12) (4,16)",
    "modattr": "module with an int attribute k set to 2, 3, 4 between calls; x (3, 4) fixed",
    "serve": "nn.Sequential MLP fed batch sizes 1, 2, 3 (the first one specialized: size 1)",
    "ranks": "two gloo ranks run one MLP: rank 0 varies dim 0 of x (b, 8); rank 1 varies dim 1 of x (2, s)",
}


def _mlp() -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    compiled = torch.compile(model, backend="eager")
    for b in (2, 3, 4, 5):
        compiled(torch.randn(b, 8))


def _intarg() -> None:
    import torch

    @torch.compile(backend="eager")
    def scale(x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n + n

    for n in (2, 3, 4):
        scale(torch.randn(4, 3), n)


def _graphbreak() -> None:
    import torch

    @torch.compile(backend="eager")
    def split(x: torch.Tensor) -> torch.Tensor:
        y = x.sin() + 1
        torch._dynamo.graph_break()
        return y.cos() * x.shape[0]

    for b in (2, 3, 4):
        split(torch.randn(b, 6))


def _hf() -> None:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    model = BertModel(config).eval()
    compiled = torch.compile(model, backend="eager")
    with torch.no_grad():
        for b, s in ((2, 8), (3, 8), (3, 12), (4, 16)):
            ids = torch.randint(0, 100, (b, s))
            compiled(input_ids=ids, attention_mask=torch.ones(b, s, dtype=torch.long))


def _modattr() -> None:
    import torch

    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.k = 2

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.lin(x) * self.k

    torch.manual_seed(0)
    model = Scaled()
    compiled = torch.compile(model, backend="eager")
    for k in (2, 3, 4):
        model.k = k
        compiled(torch.randn(3, 4))


def _serve() -> None:
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    compiled = torch.compile(model, backend="eager")
    for b in (1, 2, 3):
        compiled(torch.randn(b, 8))


def _ranks_worker(rank: int, world: int, port: str) -> None:
    import torch
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())

        def step(x: torch.Tensor) -> torch.Tensor:
            return model(x).sum(-1) if x.shape[1] == 8 else (x * 2).sum(-1)

        compiled = torch.compile(step, backend="eager")
        shapes = [(2, 8), (3, 8), (4, 8)] if rank == 0 else [(2, 5), (2, 6), (2, 7)]
        for shape in shapes:
            compiled(torch.randn(*shape))
    finally:
        dist.destroy_process_group()


def _ranks() -> None:
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    mp.spawn(_ranks_worker, args=(2, port), nprocs=2, join=True)


PROGRAMS: dict[str, Callable[[], None]] = {
    "mlp": _mlp, "intarg": _intarg, "graphbreak": _graphbreak, "hf": _hf,
    "modattr": _modattr, "serve": _serve, "ranks": _ranks,
}


def run_program(name: str) -> dict[str, Any]:
    """Run one program in this process; return torch's own compile counters."""
    PROGRAMS[name]()
    from torch._dynamo.utils import counters

    return {"unique_graphs": int(counters["stats"]["unique_graphs"]),
            "frames": int(counters["frames"]["ok"])}


def _make(name: str, out: Path) -> None:
    dest = out / name
    with tempfile.TemporaryDirectory(prefix=f"pgo-{name}-") as tmp:
        env = dict(os.environ, TORCH_COMPILE_JOB_ID=name, TORCHINDUCTOR_CACHE_DIR=f"{tmp}/cache",
                   TORCH_TRACE=f"{tmp}/trace", OMP_NUM_THREADS="1")
        env.pop("TORCH_COMPILE_DYNAMIC_SOURCES", None)
        proc = subprocess.run([sys.executable, str(SRC / "make_pgo.py"), "--run", name], env=env,
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise SystemExit(f"{name} failed:\n{proc.stderr[-4000:]}")
        if dest.exists():
            shutil.rmtree(dest)
        (dest / "dynamo").mkdir(parents=True)
        for pkl in sorted(Path(tmp, "cache", "dynamo").glob("code_state_*.pkl")):
            shutil.copy(pkl, dest / "dynamo" / pkl.name)
        traces = sorted(Path(tmp, "trace").glob("*.log"))
        for i, trace in enumerate(traces):
            suffix = "" if len(traces) == 1 else f"_{i}"
            # gzip: the traces are mostly graph dumps; dyncli reads .log.gz as is.
            with (dest / f"trace{suffix}.log.gz").open("wb") as raw, \
                    gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                out.write(trace.read_bytes())
        counts = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"{name}: {sorted(p.name for p in (dest / 'dynamo').iterdir())} {counts}")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--run"]:
        print(json.dumps(run_program(argv[1])))
        return
    import torch
    from torch_versions import data_dir

    out = data_dir() / "pgo"
    names = argv or list(PROGRAMS)
    shutil.rmtree(SRC, ignore_errors=True)
    SRC.mkdir(parents=True)
    shutil.copy(__file__, SRC / "make_pgo.py")
    try:
        for name in names:
            _make(name, out)
    finally:
        shutil.rmtree(SRC, ignore_errors=True)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest["torch"] = torch.__version__
    manifest["python"] = sys.version.split()[0]
    manifest["recipe"] = "python tests/data/make_pgo.py"
    manifest["programs_ran_from"] = f"{SRC}/make_pgo.py (a copy of tests/data/make_pgo.py, removed after)"
    manifest.setdefault("programs", {}).update({n: DESCRIPTIONS[n] for n in names})
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])

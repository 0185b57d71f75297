"""A compiled training step that draws its loss with matplotlib (Lightning#17214's validation
step logging an image): torch traces into matplotlib, and each step's new values, objects and
types compile matplotlib's functions again, until they hit the recompile limit. Before round 20
diagnose listed matplotlib's internals as causes ("make L['vmin'] dynamic up front" first);
now one cause says the compiled code reaches matplotlib, and its fix, the drawing kept out of
compiled code with torch.compiler.disable, is applied here: the graphs go from dozens to two
(on torch 2.11 tracing matplotlib raised instead: the fix lets the program run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_variants

from dyncli.diagnose.causes import rank_causes
from dyncli.diagnose.findings import CauseKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = [pytest.mark.slow, pytest.mark.long]  # torch traces matplotlib: 25-60 s
torch = pytest.importorskip("torch")
pytest.importorskip("matplotlib")

PROGRAM = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import torch
import torch._dynamo
from torch._dynamo.utils import counters

torch._dynamo.config.cache_size_limit = 4

def log_image(loss):
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.text(0.1, 0.5, f"loss {{loss:.3f}}")
    fig.canvas.draw()
    plt.close(fig)

{fix}

@torch.compile(backend="eager")
def step(x):
    loss = (x * x).mean()
    log_image(loss.item())
    return loss

for i in range(6):
    step(torch.randn(8) * (i + 1))
print("graphs", counters["stats"]["unique_graphs"])
"""


def test_a_step_that_reaches_matplotlib_is_one_cause_whose_fix_runs(tmp_path: Path) -> None:
    # (and the fix as printed, the drawing kept out of the compiled step)
    ran = run_variants({"run": PROGRAM.format(fix=""),
                        "fixed": PROGRAM.format(fix="log_image = torch.compiler.disable(log_image)")},
                       tmp_path, logs="recompiles")
    run = ran["run"]
    causes = rank_causes(diagnose_inputs([run.log]))
    if not run.raised:
        assert int(run.stdout.split()[-1]) > 10, run.stdout
        library = causes[0]  # (2.14.1, 2.15: dozens of graphs, limits hit in matplotlib)
    else:  # (2.11: tracing matplotlib raised; the crash comes first, then the library)
        assert causes[0].stops, causes[0]
        library = causes[1]
    assert library.kind is CauseKind.LIBRARY and library.title.startswith(
        "compiled code reaches matplotlib (plotting)"), library
    assert "torch.compiler.disable" in library.fix
    fixed = ran["fixed"]
    assert not fixed.raised, fixed.text
    assert int(fixed.stdout.split()[-1]) <= 2, fixed.stdout
    assert "recompile_limit" not in fixed.text

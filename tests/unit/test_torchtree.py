"""torchtree: one answer to "is this file torch's own", checked against torch's own tree.

The ground truth is the installed torch's package directory (read, not imported): every Python
file in it, as torch prints it (relative to the package, ``utils/_traceback.shorten_filename``),
is torch's; every file a recorded or pasted log names is torch's exactly when that file exists
in torch's tree. Before this module two checks disagreed: diagnose's specializations read
``_prims_common/``, ``export/``, ``distributed/``, ``autograd/`` … as the user's code.
"""

from __future__ import annotations

import gzip
import importlib.util
import os
import re
from pathlib import Path

import pytest

from dyncli.diagnose.api import run as diagnose
from dyncli.logparse.torchtree import TOP, is_compiler_file, is_torch_file, is_torch_location

DATA = Path(__file__).resolve().parents[1] / "data"
_spec = importlib.util.find_spec("torch")
TORCH = Path(next(iter(_spec.submodule_search_locations))) if _spec and \
    _spec.submodule_search_locations else None
needs_torch_tree = pytest.mark.skipif(TORCH is None, reason="no torch installed to read")

# "(FILE:LINE in FN)" torch's framework location, "# FILE:LINE in FN" a user location
_LOC_RE = re.compile(r"(?:\(|# )([\w./\\:-]{1,300}?\.py):\d{1,9} in [\w<>]+")


def _torch_files() -> list[str]:
    assert TORCH is not None
    return [os.path.relpath(os.path.join(d, f), TORCH).replace(os.sep, "/")
            for d, _, files in os.walk(TORCH) for f in files if f.endswith(".py")]


@needs_torch_tree
def test_every_python_file_of_torch_is_torch_s() -> None:
    files = _torch_files()
    assert len(files) > 1000
    missed = [f for f in files if not is_torch_file(f)]
    assert missed == []


@needs_torch_tree
def test_the_top_level_names_cover_this_torch() -> None:
    """A release that adds a top-level package fails here until TOP has it."""
    assert TORCH is not None
    tops = {p.name for p in TORCH.iterdir() if not p.name.startswith("_")
            and (p.suffix == ".py" or (p.is_dir() and any(p.rglob("*.py"))))}
    assert tops - TOP == set()


def _logged_files() -> set[str]:
    out: set[str] = set()
    for path in DATA.rglob("*.log*"):
        raw = path.read_bytes()
        if path.suffix == ".gz":
            try:
                raw = gzip.decompress(raw)
            except (OSError, EOFError):  # the corpus's deliberately broken .gz inputs
                continue
        text = raw.decode("utf-8", "replace")
        out.update(m[1] for m in _LOC_RE.finditer(text))
    return out


@needs_torch_tree
def test_files_the_logs_name_are_torch_s_exactly_when_torch_has_them() -> None:
    assert TORCH is not None
    files = _logged_files()
    assert {"nn/modules/linear.py", "_prims_common/__init__.py",
            "tests/data/programs/user_size_specialization.py"} <= files
    wrong = [f for f in sorted(files) if f not in _MOVED
             and is_torch_file(f) != (not os.path.isabs(f) and (TORCH / f).is_file())]
    assert wrong == []
    assert all(is_torch_file(f) for f in _MOVED & files)


# torch's files that an older release's log names and this torch moved (pytorch-165012, 2.10's
# utils/_debug_mode.py: a package, utils/_debug_mode/, in 2.15)
_MOVED = {"utils/_debug_mode.py"}


@pytest.mark.parametrize("path", [
    "train.py", "lib/model.py", "scripts/run.py", "transformers/models/bert/modeling_bert.py",
    "mp/x.py", "/home/u/proj/model.py", r"C:\proj\model.py", "comfy\\model_patcher.py",
    "/site-packages/torchvision/models/resnet.py", "nn", "executorch/exir/pass_base.py"])
def test_user_files(path: str) -> None:
    assert not is_torch_file(path)


@pytest.mark.parametrize("path", [
    "_prims_common/__init__.py", "export/_trace.py", "distributed/fsdp/_fsdp.py",
    "autograd/function.py", "cuda/graphs.py", "overrides.py", "_functorch/aot_autograd.py",
    "_ops.py", "functional.py", "/usr/lib/python3/site-packages/torch/_refs/__init__.py",
    r"C:\Python\Lib\site-packages\torch\nn\modules\linear.py", "distributions/normal.py"])
def test_torch_files(path: str) -> None:
    assert is_torch_file(path)


def test_locations() -> None:
    assert is_torch_location("_meta_registrations.py:4832 in meta_select")
    assert is_torch_location("export/_trace.py:12")
    assert not is_torch_location("/tmp/x.py:5 in f")
    assert not is_torch_location(r"C:\proj\model.py:7 in forward")


_LINEAR = "nn/modules/linear.py"


@pytest.mark.parametrize("elsewhere", [
    "_prims_common/__init__.py", "export/_trace.py", "distributed/tensor/_api.py",
    "_functorch/_aot_autograd/runtime_wrappers.py", "distributions/categorical.py"])
def test_a_specialization_in_torch_is_the_framework_s_wherever_in_torch(
        elsewhere: str, tmp_path: Path) -> None:
    """The recorded log where nn.Linear pins a size (torch 2.15), its torch location moved to
    another of torch's directories: still torch's, never "rewrite the branch" in torch's file."""
    text = gzip.decompress(
        (DATA / "2.15.0" / "advice" / "linear_pins_last.full.log.gz").read_bytes()).decode()
    assert _LINEAR in text
    log = tmp_path / "moved.log"
    log.write_text(text.replace(_LINEAR, elsewhere))
    d = diagnose(str(log))
    kinds = [s.kind for s in d.suggestions]
    assert "framework-specialization" in kinds and "user-specialization" not in kinds
    fw = next(s for s in d.suggestions if s.kind == "framework-specialization")
    assert elsewhere in fw.message


@pytest.mark.parametrize(("path", "compiler", "at_work"), [
    ("/usr/lib/python3/site-packages/torch/_dynamo/convert_frame.py", True, True),
    ("C:\\py\\Lib\\site-packages\\torch\\_inductor\\cudagraph_trees.py", True, True),
    ("/tmp/torchinductor_u/ab/cabcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstu.py", True, True),
    # what the compiler traces with, which a program also runs outside a compile
    ("/x/torch/_higher_order_ops/cond.py", True, False),  # pytorch#111329
    ("/x/torch/fx/graph_module.py", True, False),
    ("/x/torch/_guards.py", True, False),
    ("/x/torch/utils/_sympy/functions.py", True, False),
    ("/x/torch/nn/modules/linear.py", False, False),
    ("/home/u/_dynamo/train.py", False, False),
])
def test_the_compiler_at_work_is_a_part_of_the_compilers_files(
        path: str, compiler: bool, at_work: bool) -> None:
    """One list of the compiler's directories: textcrash's frames of the compiler at work are
    the first of them (dynamo, AOTAutograd, inductor), never a file outside the whole."""
    assert is_compiler_file(path) is compiler
    assert is_compiler_file(path, at_work=True) is at_work

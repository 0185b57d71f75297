"""Model names for completion, read from source (issue #34): a file's functions with ast, timm's
and transformers' names from the installed packages, an index cached per version; no imports.
The same in a real bash: tests/cli/test_terminal.py."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dyncli import completion_models as cm

ROOT = Path(__file__).resolve().parents[2]


def test_a_files_functions_that_take_no_argument(tmp_path: Path) -> None:
    model = tmp_path / "m.py"
    model.write_text("import torch\n"
                     "def build():\n    return 1\n"
                     "def build_small(batch=4, *, seq=None):\n    pass\n"
                     "async def abuild():\n    pass\n"
                     "def needs(x):\n    pass\n"
                     "def kw_needed(*, y):\n    pass\n"
                     "class C:\n    def method(self):\n        pass\n"
                     "if True:\n    def hidden():\n        pass\n"
                     "raise SystemExit('never run')\n")
    assert cm.file_functions(str(model)) == ["build", "build_small", "abuild"]
    assert cm.complete_model(f"{model}:build_") == [f"{model}:build_small"]
    assert cm.complete_model(f"{model}:") == [f"{model}:{n}" for n in ("build", "build_small",
                                                                        "abuild")]


@pytest.mark.parametrize("text", ["def broken(:\n", "\x00\x01", ""])
def test_a_file_that_does_not_parse_gives_nothing(tmp_path: Path, text: str) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(text)
    assert cm.file_functions(str(bad)) == []
    assert cm.file_functions(str(tmp_path / "absent.py")) == []


def test_directories_and_py_files_are_offered_where_typed(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "model.py").write_text("def build():\n    pass\n")
    (tmp_path / ".hidden.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert cm.complete_model("exa") == ["examples/"]
    assert cm.complete_model("examples/") == ["examples/model.py:"]
    assert cm.complete_model("examples/model.py:") == ["examples/model.py:build"]


@pytest.mark.skipif(importlib.util.find_spec("timm") is None, reason="timm not installed")
def test_timm_names_come_from_its_source_and_are_cached(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    names = cm.timm_names()
    assert {"resnet50", "vit_tiny_patch16_224", "convnext_tiny"} <= set(names)
    cache = tmp_path / "dyncli" / "completion-timm.txt"
    stamp = cache.read_text().splitlines()[0]
    assert stamp.split()[0] == __import__("importlib.metadata").metadata.version("timm")
    cache.write_text(stamp + "\nonly_from_the_cache\n")  # read back, not remade
    assert cm.complete_model("timm:only") == ["timm:only_from_the_cache"]
    cache.write_text("an older version\nstale_name\n")  # another stamp: remade
    assert "timm:resnet50" in cm.complete_model("timm:resnet5")


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                    reason="transformers not installed")
def test_hf_names_are_transformers_model_classes(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "ro"))
    (tmp_path / "ro").write_text("a file where the cache dir would be")  # not writable: read
    names = cm.hf_names()
    assert {"BertModel", "BertForSequenceClassification", "GPT2LMHeadModel"} <= set(names)
    assert cm.complete_model("hf:GPT2LM") == ["hf:GPT2LMHeadModel"]


def test_completing_imports_no_model_library(tmp_path: Path) -> None:
    code = ("import sys; from dyncli.completion_models import complete_model as c; "
            "c('timm:res'); c('hf:Bert'); c('res'); c('examples/model.py:'); "
            "print(sorted(m for m in ('torch', 'timm', 'transformers', 'torchvision', 'numpy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT),
                                           "XDG_CACHE_HOME": str(tmp_path)}, check=True)
    assert out.stdout.strip() == "[]"

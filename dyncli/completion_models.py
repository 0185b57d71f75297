"""Model names for ``dyncli bench <TAB>``, found without importing torch, timm or transformers.

Completing runs ``dyncli`` once per TAB, and importing torchvision, timm or transformers takes
seconds; so each name comes from the installed package's own source, read as text:

- torchvision: the ``@register_model()`` functions of ``torchvision/models/*.py`` (the bare
  names bench resolves first);
- ``timm:``: timm's ``@register_model`` functions in ``timm/models/*.py`` (its architectures,
  what ``timm.create_model`` accepts without a pretrained tag);
- ``hf:``: the model classes transformers' auto mappings name (``*_MAPPING_NAMES`` in
  ``transformers/models/auto/modeling_auto.py``: ``BertModel``, ``GPT2LMHeadModel``…);
- ``FILE.py:``: the file's top-level functions that take no required argument, read with
  :mod:`ast` (the file is never imported or run).

So the names are those of the packages installed here, and none are offered for a package that
is not. timm's ~1,400 names and transformers' ~1,600 take 0.1-0.3 s to read, so they are kept
in an index file per package version under ``$XDG_CACHE_HOME/dyncli`` (``~/.cache/dyncli``),
remade when the package's version or its file changes; without a writable cache, read each time.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import re
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

# ``@register_model`` or ``@register_model()``, other decorators, then ``def NAME(``; compiled on
# first use (re caches it): nothing is compiled while the app starts
_REGISTERED = r"@register_model(?:\([^)]*\))?[ \t]*\n\s*(?:@[^\n]*\n\s*)*def\s+(\w+)\s*\("
MAX_FILE_BYTES = 4 << 20  # a FILE.py past this is not read for completion


def _package_dir(name: str) -> Path | None:
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations)))
    return None


def _registered(models: Path) -> list[str]:
    names: set[str] = set()
    for file in models.glob("*.py"):  # the top level only: detection etc. are not bench's
        with contextlib.suppress(OSError, UnicodeDecodeError):
            names.update(re.findall(_REGISTERED, file.read_text(encoding="utf-8")))
    return sorted(names)


def torchvision_names() -> list[str]:
    """torchvision's classification models (the names ``bench`` accepts bare), without import."""
    root = _package_dir("torchvision")
    return _registered(root / "models") if root is not None else []


def _timm_index(root: Path) -> list[str]:
    return _registered(root / "models")


def _hf_index(root: Path) -> list[str]:
    """The class names of transformers' auto mappings (literal tuples in modeling_auto.py)."""
    tree = ast.parse((root / "models" / "auto" / "modeling_auto.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("MAPPING_NAMES")
                and isinstance(node.value, ast.Call) and node.value.args):
            continue
        with contextlib.suppress(ValueError, TypeError, SyntaxError):
            for pair in ast.literal_eval(node.value.args[0]):
                value = pair[1] if isinstance(pair, tuple) and len(pair) == 2 else None
                for cls in value if isinstance(value, tuple) else (value,):
                    if isinstance(cls, str) and cls.isidentifier():
                        names.add(cls)
    return sorted(names)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dyncli"


def _indexed(package: str, make: Callable[[Path], list[str]], source: str) -> list[str]:
    """``make(package dir)``, kept in the cache per package version and source file mtime."""
    root = _package_dir(package)
    if root is None:
        return []
    try:
        stamp = f"{version(package)} {(root / source).stat().st_mtime_ns}"
    except (PackageNotFoundError, OSError):
        stamp = None
    cache = _cache_dir() / f"completion-{package}.txt"
    if stamp is not None:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            head, _, body = cache.read_text(encoding="utf-8").partition("\n")
            if head == stamp:
                return body.split()
    try:
        names = make(root)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return []
    if stamp is not None:
        with contextlib.suppress(OSError):
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
            tmp.write_text(stamp + "\n" + "\n".join(names) + "\n", encoding="utf-8")
            tmp.replace(cache)
    return names


def timm_names() -> list[str]:
    """timm's architectures (``timm:NAME``), from its source; [] without timm."""
    return _indexed("timm", _timm_index, "version.py")


def hf_names() -> list[str]:
    """transformers' model classes (``hf:CLASS``), from its auto mappings; [] without it."""
    return _indexed("transformers", _hf_index, "models/auto/modeling_auto.py")


def file_functions(path: str) -> list[str]:
    """Top-level functions of ``path`` callable with no argument (``build()``), via ast."""
    try:
        file = Path(path)
        if file.stat().st_size > MAX_FILE_BYTES:
            return []
        tree = ast.parse(file.read_bytes())
    except (OSError, ValueError, SyntaxError, RecursionError, MemoryError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            required = len(a.posonlyargs) + len(a.args) - len(a.defaults) + sum(
                d is None for d in a.kw_defaults)
            if required == 0:
                out.append(node.name)
    return out


def python_files(incomplete: str) -> list[str]:
    """``FILE.py:`` candidates under the directory being typed (one level, no hidden files)."""
    typed_dir = incomplete[: incomplete.rfind("/") + 1]  # "examples/" of "examples/mo"
    out: list[str] = []
    with contextlib.suppress(OSError):
        for p in sorted(Path(typed_dir or ".").iterdir()):
            if p.name.startswith(".") or p.name.startswith("__"):
                continue
            text = typed_dir + p.name
            if p.is_dir():
                out.append(text + "/")
            elif p.suffix == ".py":
                out.append(text + ":")
    return out


def complete_model(incomplete: str) -> list[str]:
    """Model names for ``dyncli bench <TAB>``: torchvision names, ``timm:NAME``, ``hf:CLASS``
    and ``.py`` files in the directory being typed, then ``FILE.py:FUNCTION``."""
    head, colon, tail = incomplete.partition(":")
    if colon and head.endswith(".py"):
        return [f"{head}:{f}" for f in file_functions(head) if f.startswith(tail)]
    if colon and head in ("timm", "hf"):
        names = timm_names() if head == "timm" else hf_names()
        return [f"{head}:{n}" for n in names if n.startswith(tail)]
    if incomplete.startswith((".", "/", "~")) or "/" in incomplete:
        return python_files(incomplete)
    prefixes = [p for p in ("timm:", "hf:") if _package_dir(p[:-1]) is not None]
    names = [*torchvision_names(), *prefixes, *python_files(incomplete)]
    return [n for n in names if n.startswith(incomplete)]

"""Packages a training or serving step calls for their side effects, never the model: plotting,
experiment logging, progress bars. Compiled code that reaches them (a step that logs an image,
Lightning#17214) compiles their functions again and again: each call's new values, objects and
types are guards. The fix is the same for every finding there: keep the call out of the
compiled code (call it outside, or ``torch.compiler.disable`` on the function that calls it).
Measured on torch 2.15 (tests/integration/test_side_library_fix.py): a compiled step that draws
its loss with matplotlib, 8 steps, ~100 graphs and 5 recompile-limit hits in matplotlib's code;
with the drawing disabled, 2 graphs.
"""

from __future__ import annotations

import re

from dyncli.diagnose.releases import Releases, named

# package -> what a step calls it for
SIDE_LIBRARIES = {
    "matplotlib": "plotting", "PIL": "image handling", "wandb": "W&B logging",
    "tensorboard": "TensorBoard logging", "tensorboardX": "TensorBoard logging",
    "mlflow": "MLflow logging", "comet_ml": "Comet logging", "neptune": "Neptune logging",
    "clearml": "ClearML logging", "aim": "Aim logging", "tqdm": "progress bar",
    "rich": "console output", "logging": "logging",
}
_PACKAGE_RE = re.compile(r"[/\\](?:site-packages|dist-packages|python3\.\d{1,2}|Lib)[/\\]"
                         r"(?P<name>[A-Za-z_]\w{0,60})[/\\]")


def side_library(file: str) -> tuple[str, str] | None:
    """(package, what it is called for) of a file in such a package, or None."""
    m = _PACKAGE_RE.search(file)
    if m is None or m["name"] not in SIDE_LIBRARIES:
        return None
    return m["name"], SIDE_LIBRARIES[m["name"]]


def side_fix(what: str, known: Releases | None = None) -> str:
    """The fix for compiled code that reaches a package called for ``what``, in the API of the
    log's releases ``known`` (torch 2.0: torch._dynamo.disable; releases.NAMES)."""
    return (f"keep the {what} out of the compiled function: call it outside (after the step), "
            f"or wrap the function of yours that calls it in "
            f"{named('torch.compiler.disable', known)}")


def library_file(name: str) -> str:
    """A place for a function named by its module (``matplotlib._path.affine_transform``, a C
    function dynamo could not trace) in the form :func:`side_library` reads; "" for others."""
    package = name.split(".", 1)[0]
    return f"/site-packages/{package}/" if package in SIDE_LIBRARIES else ""


# Python's own library: ``…/lib/python3.11/copy.py`` (not its site-packages), ``…\Lib\copy.py``
_STDLIB_RE = re.compile(r"[/\\](?:python3\.\d{1,2}|Lib)[/\\](?!site-packages|dist-packages)[\w/\\]{1,200}"
                        r"\.py\Z")


def is_stdlib(file: str) -> bool:
    """Whether ``file`` is in Python's own library."""
    return _STDLIB_RE.search(file) is not None

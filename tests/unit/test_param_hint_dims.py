"""A size guard torch calls a parameter's is left to static-parameters, whatever its source.

torch appends "Guard failed on a parameter, consider using …force_parameter_static_shapes"
to every failed guard of an nn.Parameter (guards.cpp), also where the source does not read as
one (``X[0]``: a list of parameters passed in, microsoft/dion#23). Such a dim is not a user's
input that something keeps static: advising on it beside torch's own hint contradicted it.
"""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.api import run

_HINT = ("Guard failed on a parameter, consider using torch._dynamo.config."
         "force_parameter_static_shapes = False to allow dynamism on parameters.")
_P = "V0110 12:27:0{s}.332000 158 torch/_dynamo/guards.py:2997] [0/{n}] [__recompiles] "


def _recompiles() -> str:
    lines = []
    for n, fails in ((1, [("0/0", 640, 8)]), (2, [("0/1", 8, 32), ("0/0", 640, 32)])):
        lines.append(_P.format(s=n, n=n) + "Recompiling function step in /work/opt.py:10")
        lines.append(_P.format(s=n, n=n) + "    triggered by the following guard failure(s):")
        lines += [_P.format(s=n, n=n) + f"    - {e}: tensor 'X[0]' size mismatch at index 1. "
                  f"expected {a}, actual {b}. {_HINT}" for e, a, b in fails]
    return "\n".join(lines) + "\n"


def _limit() -> str:  # dion#23's warning, as pasted
    w = "W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] "
    return (w + "torch._dynamo hit config.recompile_limit (8)\n"
            + w + "   function: 'post' (/usr/lib/python3.12/dist-packages/dion/dion2.py:621)\n"
            + w + f"   last reason: 2/7: tensor 'X[0]' size mismatch at index 1. expected 640, "
                  f"actual 8. {_HINT}\n")


def _kinds(tmp_path: Path, text: str) -> list[str]:
    p = tmp_path / "run.log"
    p.write_text(text, encoding="utf-8")
    return [s["kind"] for s in run(p).to_dict()["suggestions"]]


def test_recompiles_on_a_parameter_named_like_an_input_are_static_parameters_only(tmp_path):
    kinds = _kinds(tmp_path, _recompiles())
    assert kinds == ["static-parameters"]


def test_a_limit_whose_last_reason_is_a_parameter_is_not_read_as_a_pinned_input(tmp_path):
    kinds = _kinds(tmp_path, _limit())
    assert "size-pinned" not in kinds and "mark-dynamic" not in kinds
    assert "recompile-limit" in kinds

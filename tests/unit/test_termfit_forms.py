"""The forms a table too wide takes (issue #34): its headers' words stacked, parts that repeat
the first column (strategies side by side), a block per row; each with every cell whole."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich import box
from rich.text import Text

from dyncli import termfit

STRATEGIES = ["static", "automatic", "mark-dynamic", "dynamic", "sources", "pad", "unbacked",
              "eager-then-compile", "pgo"]


def _render(table: object, width: int) -> list[str]:
    buf = io.StringIO()
    termfit.FitConsole(file=buf, width=width, color_system=None).print(table)
    return buf.getvalue().splitlines()


def _words(lines: list[str]) -> set[str]:
    return set(re.findall(r"[\w.%*-]+", "\n".join(lines)))


def _stream() -> termfit.FitTable:
    t = termfit.FitTable(title="request stream", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("strategy", "total s", "first s", "compiles (s)", "ms/req", "beats eager",
                "pad waste"):
        t.add_column(col, no_wrap=True)
    for s in STRATEGIES:
        t.add_row(s, "7.16", "0.90", "7 (7.1)", "0.276", "1053 req*", "4%")
    return t


def _side_by_side() -> termfit.FitTable:
    t = termfit.FitTable(title="strategies side by side", title_justify="left",
                         box=box.SIMPLE_HEAD, split_columns=True)
    t.add_column("", no_wrap=True)
    for s in STRATEGIES:
        t.add_column(s, justify="right", no_wrap=True)
    for row in ("status", "speedup median", "compile wall s"):
        t.add_row(row, *[f"{row[:4]}-{s[:3]}" for s in STRATEGIES])
    return t


def test_a_table_that_fits_is_left_alone() -> None:
    lines = _render(_stream(), 200)
    assert any("compiles (s)" in ln for ln in lines)


def test_stacked_headers_when_that_fits() -> None:
    wide = _render(_stream(), 200)
    lines = _render(_stream(), 80)
    assert max(map(len, lines)) <= 80
    assert not any("compiles (s)" in ln for ln in lines)  # stacked: "compiles" over "(s)"
    assert any("compiles" in ln for ln in lines) and any("waste" in ln for ln in lines)
    assert _words(wide) <= _words(lines)  # every word still there
    assert sum("1053 req*" in ln for ln in lines) == len(STRATEGIES)  # one row each


def test_side_by_side_splits_into_parts_repeating_the_labels() -> None:
    wide = _render(_side_by_side(), 300)
    lines = _render(_side_by_side(), 80)
    assert max(map(len, lines)) <= 80
    assert lines[0].startswith("strategies side by side")
    assert sum(ln.lstrip().startswith("speedup median") for ln in lines) >= 2  # in every part
    assert _words(wide) <= _words(lines)
    for s in STRATEGIES:  # each strategy's column once, whole
        assert sum(f"stat-{s[:3]}" in ln for ln in lines) == 1, s


def test_blocks_when_no_other_form_fits() -> None:
    lines = _render(_stream(), 30)
    assert max(len(ln.rstrip()) for ln in lines) <= 30
    assert any(ln.strip().startswith("beats eager") for ln in lines)  # a name  value line
    assert any(ln.split() == ["pad", "waste", "4%"] for ln in lines)


# comfyui-wanvideowrapper-1584's user line, as diagnose's CUDA-graph errors table shows it
_USER_LINE = ("/workspace/ComfyUI/custom_nodes/ComfyUI-WanVideoWrapper/wanvideo/modules/"
              "model.py:1300 in cross_attn_ffn")


def _errors() -> termfit.FitTable:
    t = termfit.FitTable(title="CUDA-graph errors", title_justify="left", box=box.SIMPLE_HEAD)
    for col in ("kind", "message", "user code", "count", "raised"):
        t.add_column(col)
    t.add_row("overwritten", "accessing tensor output of CUDAGraphs that has been overwritten "
              "by a subsequent run.", _USER_LINE, "1", "-")
    return t


def _colour(table: object, width: int) -> list[str]:
    """As a terminal shows it (rich's grid lays the block out, not the plain path)."""
    buf = io.StringIO()
    termfit.FitConsole(file=buf, width=width, force_terminal=True, color_system="truecolor",
                       _environ={}).print(table)
    return re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue()).splitlines()


@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("render", [_render, _colour], ids=["plain", "terminal"])
def test_a_long_path_breaks_after_its_separators(width: int, render: Any) -> None:
    """WanVideoWrapper#1584's path showed as ".../wanvideo/mo" over "dules/model.py…" at 80
    columns: each line of it now ends after a "/" (the last one that fits)."""
    lines = render(_errors(), width)
    assert max(len(ln.rstrip()) for ln in lines) <= width
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("user code"))
    pieces = [lines[at].split("user code", 1)[1].strip()]
    for ln in lines[at + 1:]:
        if ln.strip().startswith("count"):
            break
        pieces.append(ln.strip())
    assert "".join(p if p.endswith("/") else p + " " for p in pieces).strip() == _USER_LINE
    assert all(p.endswith("/") for p in pieces[:-1]), pieces
    assert pieces[-1].startswith(("modules/", "model.py")), pieces


def test_path_breaks() -> None:
    path = "/workspace/ComfyUI/custom_nodes/ComfyUI-WanVideoWrapper/wanvideo/modules/model.py:1300"

    def lines(width: int) -> list[str]:
        cuts = termfit._path_breaks(path, width)
        return [path[i:j] for i, j in zip([0, *cuts], [*cuts, len(path)], strict=True)]

    assert lines(65) == ["/workspace/ComfyUI/custom_nodes/ComfyUI-WanVideoWrapper/wanvideo/",
                         "modules/model.py:1300"]
    assert lines(40) == ["/workspace/ComfyUI/custom_nodes/", "ComfyUI-WanVideoWrapper/wanvideo/",
                         "modules/model.py:1300"]
    # no separator far enough into the line: folded at the width, as rich folds
    assert lines(10)[:2] == ["/workspace", "/ComfyUI/"]
    # Windows' separator; a dot where no directory's is a quarter of the width in
    assert termfit._path_breaks("C:\\a\\" + "b" * 30 + ".py", 20) == [5, 25]
    assert termfit._path_breaks("C:\\" + "b" * 12 + "." + "c" * 10, 20) == [16]
    words = "x" * 30
    assert termfit.fold_paths(Text("see " + words), 10).plain == "see\n" + "\n".join(
        words[i:i + 10] for i in range(0, 30, 10))

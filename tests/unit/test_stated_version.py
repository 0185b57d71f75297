"""The torch version a paste states beside its log (round 27, dyncli.logparse.textversion):
collect_env's, a package list's, a printed torch.__version__; and what diagnose makes of it.
The lines are real ones from issue threads (pytorch#96064's "Versions of relevant libraries",
vllm#27519's padded collect_env, pytorch#94579's pre-2.0 build). Round 28: the two-line forms
(``VersionLines``), the Python prompt's answer to ``>>> torch.__version__`` or
``>>> print(torch.__version__)`` and ``pip show torch``'s ``Name:`` and ``Version:`` lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textversion import VersionLines, stated

DATA = Path(__file__).parent.parent / "data"


@pytest.mark.parametrize(("line", "version", "form"), [
    ("PyTorch version: 2.7.0+cu126", "2.7.0+cu126", "collect_env"),
    ("PyTorch version              : 2.9.0+cu129", "2.9.0+cu129", "collect_env"),  # vLLM's
    ("PyTorch version: 2.10.0.dev20251021+cu128", "2.10.0.dev20251021+cu128", "collect_env"),
    ("PyTorch version: 1.14.0a0+44dac51", "1.14.0a0+44dac51", "collect_env"),
    ("[pip3] torch==2.1.0.dev20230304+cu117", "2.1.0.dev20230304+cu117", "pip"),
    ("torch==2.5.1", "2.5.1", "pip"),
    ("[conda] torch                     2.1.0.dev20230304+cu117          pypi_0    pypi",
     "2.1.0.dev20230304+cu117", "conda"),
    ("[conda] pytorch                   2.1.0           py3.10_cuda11.8_cudnn8.7.0_0    pytorch",
     "2.1.0", "conda"),
    ("torch                     2.5.1", "2.5.1", "pip list"),
    ("torch.__version__='2.5.1+cu124'", "2.5.1+cu124", "torch.__version__"),
    ("  torch.__version__: 2.4.0", "2.4.0", "torch.__version__"),
])
def test_each_form_states_the_version(line: str, version: str, form: str) -> None:
    e = stated(line.encode(), 7)
    assert e is not None and (e.version, e.form, e.line) == (version, form, 7), e


@pytest.mark.parametrize("line", [
    "[pip3] pytorch-triton==2.0.0+b8b470bc59",  # other packages (pytorch#96064)
    "[pip3] torch-geometric==2.2.0",
    "[pip3] torchvision==0.15.0.dev20230227+cu117",
    "[conda] torchaudio                2.0.0.dev20230223+cu117          pypi_0    pypi",
    "[conda] torch-scatter             2.1.0                    pypi_0    pypi",
    "torchvision==0.20.1",
    "pytorch-triton 3.1.0",
    # prose: a version a sentence names is no statement of the install
    "This worked on torch 2.4.1 but fails on 2.5.1",
    "I am using PyTorch version 2.5.1 with CUDA 12.4",
    "torch 2.5.1 fails here",
    "PyTorch version: Could not collect",
    " - PyTorch Version (e.g., 1.0):",  # the issue template's checklist
])
def test_lines_of_other_packages_and_prose_state_nothing(line: str) -> None:
    assert stated(line.encode(), 1) is None


def test_a_pasted_version_is_the_logs_release_and_no_evidence_of_a_log(tmp_path: Path) -> None:
    # pytorch#146797: a raised graph break of torch 2.6 (its form tells no release) beside
    # collect_env's lines: the release is 2.6.0, and the fix names no API 2.6 lacks
    # (torch._dynamo.error_on_graph_break is 2.9's)
    diag = diagnose_logs([DATA / "pasted" / "pytorch-146797.log"])
    r = diag.releases
    assert r is not None and (r.low, r.high, r.version) == (6, 6, "2.6.0+cu126"), r
    assert r.sources == ('the input\'s "PyTorch version: 2.6.0+cu126" (line 13)',)
    assert "error_on_graph_break" not in diag.causes[0].title, diag.causes[0].title
    assert "fullgraph=True or torch.export make every graph break one" in diag.causes[0].title
    # collect_env's lines alone are still "not a torch log"
    alone = tmp_path / "env.txt"
    alone.write_text("Collecting environment information...\nPyTorch version: 2.6.0+cu126\n"
                     "Is debug build: False\n[pip3] torch==2.6.0\n")
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_logs([alone])


def test_a_stated_version_beats_the_logs_form_and_the_conflict_is_said(tmp_path: Path) -> None:
    # a 2.3-2.5 log (its graph-break records' form) pasted beside collect_env of torch 2.6:
    # the stated version is the release, and the form's disagreement is said
    log = tmp_path / "mixed.log"
    log.write_text((DATA / "2.3.1" / "compat" / "text.log").read_text()
                   + "\nPyTorch version: 2.6.0\n")
    r = diagnose_logs([log]).releases
    assert r is not None and (r.low, r.high, r.version) == (6, 6, "2.6.0"), r
    assert r.conflicts and r.conflicts[0].endswith("tells torch 2.3-2.5"), r.conflicts
    assert "; but the graph-break records' form" in r.line()


def _read(lines: list[str]) -> list[tuple[str, str, str, int]]:
    """(version, form, text, line) of each version ``lines`` state, read in order from line 1."""
    reader = VersionLines()
    out = []
    for n, text in enumerate(lines, 1):
        for e in reader.read(text.encode(), n) or ():
            out.append((e.version, e.form, e.text, e.line))
    return out


@pytest.mark.parametrize(("lines", "version", "form", "text"), [
    # the Python prompt echoes the expression's repr: quoted
    ([">>> torch.__version__", "'2.5.1+cu121'"], "2.5.1+cu121", "torch.__version__",
     ">>> torch.__version__ / '2.5.1+cu121'"),
    ([">>> import torch", ">>> torch.__version__", "'2.6.0'"], "2.6.0", "torch.__version__",
     ">>> torch.__version__ / '2.6.0'"),
    ([">>> torch.__version__", '"2.4.0a0+git1234567"'], "2.4.0a0+git1234567",
     "torch.__version__", '>>> torch.__version__ / "2.4.0a0+git1234567"'),
    (["  >>> torch.__version__  ", "  '2.10.0.dev20251021+cu128'"], "2.10.0.dev20251021+cu128",
     "torch.__version__", ">>> torch.__version__ / '2.10.0.dev20251021+cu128'"),
    # print() writes it bare
    ([">>> print(torch.__version__)", "2.5.1"], "2.5.1", "torch.__version__",
     ">>> print(torch.__version__) / 2.5.1"),
    ([">>> print( torch.__version__ )", "2.3.0+cpu"], "2.3.0+cpu", "torch.__version__",
     ">>> print( torch.__version__ ) / 2.3.0+cpu"),
    # pip show: Name, then Version, then the rest
    (["$ pip show torch", "Name: torch", "Version: 2.5.1", "Summary: Tensors and Dynamic neural "
      "networks in Python with strong GPU acceleration", "Home-page: https://pytorch.org/"],
     "2.5.1", "pip show", "Name: torch / Version: 2.5.1"),
    (["Name: torch", "Version: 2.7.0+cu126"], "2.7.0+cu126", "pip show",
     "Name: torch / Version: 2.7.0+cu126"),
    # pip show of several packages, torch's after another's
    (["Name: torchvision", "Version: 0.20.1", "---", "Name: torch", "Version: 2.5.1"], "2.5.1",
     "pip show", "Name: torch / Version: 2.5.1"),
])
def test_two_line_forms_state_the_version(lines: list[str], version: str, form: str,
                                          text: str) -> None:
    opener = next(n for n, t in enumerate(lines, 1)
                  if t.strip() == "Name: torch" or t.strip().startswith((">>> t", ">>> p")))
    assert _read(lines) == [(version, form, text, opener)]


@pytest.mark.parametrize("lines", [
    # another package's version (pip show, the prompt)
    ["Name: torchvision", "Version: 0.20.1"],
    ["Name: pytorch-triton", "Version: 3.1.0"],
    ["Name: torch-geometric", "Version: 2.2.0"],
    [">>> torchvision.__version__", "'0.20.1'"],
    [">>> print(torchaudio.__version__)", "2.5.1"],
    # another expression at the prompt, whose answer looks like a version
    [">>> torch.version.cuda", "'12.1'"],
    [">>> x.__version__", "'2.5.1'"],
    [">>> torch.__version__ + 'x'", "'2.5.1x'"],
    # the answer's form is the other opener's (print writes it bare; the prompt quotes it)
    [">>> torch.__version__", "2.5.1"],
    [">>> print(torch.__version__)", "'2.5.1'"],
    # not on the line right under the opener
    [">>> torch.__version__", "", "'2.5.1'"],
    ["Name: torch", "Summary: Tensors", "Version: 2.5.1"],
    # an answer with no opener, or a version of nothing in prose
    ["'2.5.1'"],
    ["2.5.1"],
    ["Version: 2.5.1"],
    ["Name: torch", "Version: unknown"],
])
def test_other_lines_state_nothing(lines: list[str]) -> None:
    assert _read(lines) == []


def test_an_opener_that_ends_the_input_or_is_asked_again_states_nothing_more() -> None:
    # the prompt asked twice: the second answer is the one read
    assert _read([">>> torch.__version__", ">>> torch.__version__", "'2.6.0'"]) == [
        ("2.6.0", "torch.__version__", ">>> torch.__version__ / '2.6.0'", 2)]
    assert _read([">>> torch.__version__"]) == []
    # a one-line form still reads where an opener came just before it
    assert _read([">>> torch.__version__", "torch==2.4.0"]) == [
        ("2.4.0", "pip", "torch==2.4.0", 2)]


@pytest.mark.parametrize(("tail", "said"), [
    ("\n>>> import torch\n>>> torch.__version__\n'2.6.0+cu124'\n>>> \n",
     ">>> torch.__version__ / '2.6.0+cu124'"),
    ("\n>>> print(torch.__version__)\n2.6.0+cu124\n", ">>> print(torch.__version__) / 2.6.0+cu124"),
    ("\n$ pip show torch\nName: torch\nVersion: 2.6.0+cu124\nSummary: Tensors and Dynamic "
     "neural networks in Python with strong GPU acceleration\n", "Name: torch / Version: 2.6.0+cu124"),
])
def test_a_two_line_statement_is_the_logs_release(tmp_path: Path, tail: str, said: str) -> None:
    # a 2.3-2.5 log (its graph-break records' form) with the version its paste states under it
    text = (DATA / "2.3.1" / "compat" / "text.log").read_text()
    log = tmp_path / "mixed.log"
    log.write_text(text + tail)
    r = diagnose_logs([log]).releases
    assert r is not None and (r.low, r.high, r.version) == (6, 6, "2.6.0+cu124"), r
    opener = text.count("\n") + 1 + next(n for n, t in enumerate(tail.split("\n"))
                                         if t.startswith((">>> t", ">>> p", "Name:")))
    assert r.sources == (f'the input\'s "{said}" (line {opener})',)


def test_another_packages_version_is_not_the_logs_release(tmp_path: Path) -> None:
    log = tmp_path / "other.log"
    log.write_text((DATA / "2.3.1" / "compat" / "text.log").read_text()
                   + "\nName: torchvision\nVersion: 0.21.0\n>>> torchvision.__version__\n'0.21.0'\n")
    r = diagnose_logs([log]).releases
    assert r is not None and (r.low, r.high, r.version) == (3, 5, ""), r


def test_the_prompts_lines_alone_are_no_torch_log(tmp_path: Path) -> None:
    alone = tmp_path / "repl.txt"
    alone.write_text(">>> import torch\n>>> torch.__version__\n'2.6.0'\n"
                     "$ pip show torch\nName: torch\nVersion: 2.6.0\n")
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_logs([alone])

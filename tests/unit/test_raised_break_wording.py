"""A graph break raised as torch._dynamo.exc.Unsupported (round 24's ``raised``) is said to have
stopped the program, and why a break can be an error: fullgraph=True, or torch's
``torch._dynamo.error_on_graph_break(True)`` (a decorator and context manager, 2.9 on; 2.12's and
2.15's torch._dynamo.config have no ``error_on_graph_break``: round 24 named that setting, which
a user cannot find)."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

_TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/home/u/prog.py", line 9, in <module>',
    "    torch.compile(f, fullgraph=True)(torch.ones(3))",
    '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/exc.py", line 700, in unimplemented',
    "    raise Unsupported(msg)",
    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped",
    "  Explanation: Dynamo developers have intentionally marked that the function `open` "
    "should not be traced.",
    "",
    "from user code:",
    '   File "/home/u/prog.py", line 5, in f',
    '    open("x")',
    "",
]


def test_a_raised_break_names_the_settings_that_raise_it_as_torch_spells_them(
        tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("\n".join(_TRACEBACK) + "\n")
    diag = diagnose_logs([log])
    (b,) = diag.graph_breaks
    assert b.raised
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    title = diag.causes[0].title
    for said in (a.message, title):
        assert "stopped the program" in said, said
        assert "torch._dynamo.error_on_graph_break(True)" in said, said
        assert "config.error_on_graph_break" not in said, said


_COMFY_REPORT = [
    "# ComfyUI Error Report",
    "## Error Details",
    "- **Node ID:** 36",
    "- **Node Type:** KSamplerAdvanced",
    "- **Exception Type:** {exc}",
    "- **Exception Message:** Attempted to call function marked as skipped",
    "  Explanation: Dynamo developers have intentionally marked that the function `open` "
    "should not be traced.",
    "",
    "from user code:",
    '   File "/home/u/prog.py", line 5, in f',
    '    open("x")',
    "",
]


def test_comfyuis_report_of_an_unsupported_says_the_break_raised(tmp_path: Path) -> None:
    # ComfyUI's error report (ComfyUI#10114) names the class its "Exception Message" is of:
    # torch's Unsupported stopped the prompt; an exception of another class quoting torch's
    # message proves no raised break
    for exc, raised in (("torch._dynamo.exc.Unsupported", True),
                        ("RuntimeError", False)):
        log = tmp_path / "report.log"
        log.write_text("\n".join(_COMFY_REPORT).replace("{exc}", exc) + "\n")
        (b,) = diagnose_logs([log]).graph_breaks
        assert b.raised is raised, exc
    # its console's head (execution.py logs the exception that ended the node: KJNodes#533)
    console = tmp_path / "console.log"
    console.write_text("!!! Exception during processing !!! " + "\n".join(_COMFY_REPORT[5:])
                       .removeprefix("- **Exception Message:** ") + "\n")
    (b,) = diagnose_logs([console]).graph_breaks
    assert b.raised
    # the corpus's report and console
    for name in ("comfyui-10114", "kjnodes-533"):
        pasted = Path(__file__).parent.parent / "data" / "pasted" / f"{name}.log"
        (b,) = diagnose_logs([pasted]).graph_breaks
        assert b.raised, name

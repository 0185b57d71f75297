"""Paste hunt 34b (round 34, dynamic-shape pastes of 2024-2026): glog's path and compile id
made links by JupyterLab, and vLLM's process tag alone before a traceback its engine printed.

pytorch#121036: JupyterLab links what looks like a path in a cell's output, glog's emitting file
and compile id among them ("torch[/_guards.py:250](http://localhost:8888/_guards.py#line=249)]
[0[/0](http://localhost:8888/0)]"); dyncli refused the paste as "not a torch log".

pytorch#95848: ShapeEnv's warning as it pins a size to a number where print_specializations is
on ("Specializing L['x'].size()[0] to 10", 2.1-2.15; a 2023 nightly's "Specializing s1 to 10:"
with the stack under it) was a torch record "not understood".

vllm#23970: vLLM (0.10 on) puts "(EngineCore_0 pid=34269) " before every line its engine process
writes; a traceback printed outside vLLM's logger has that tag and no logger stamp after it, and
dyncli refused the paste as "not a torch log"."""

from __future__ import annotations

from pathlib import Path

from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import textforeign, textmsg, textpaste

# pytorch#121036's first line, as the thread has it
_JUPYTER = (b"E0311 12:53:59.334000 131877945239360 torch[/_guards.py:250](http://localhost:8888/"
            b"_guards.py#line=249)] [0[/0](http://localhost:8888/0)]     Source: shape_env")
_GLOG = b"E0311 12:53:59.334000 131877945239360 torch/_guards.py:250] [0/0]     Source: shape_env"


def test_a_glog_path_jupyter_made_links_is_torchs_prefix() -> None:
    """The links undone, the line is torch's glog line; the paste's record, begun before it,
    is a guard-creation error of compile 0/0 (it was refused: "not a torch log")."""
    assert textpaste.normalize(_JUPYTER) == (_GLOG, "glog paths unlinked")
    for lead in (b"> ", b"[rank1]:", b"  "):
        found = textpaste.normalize(lead + _JUPYTER)
        rank = lead if lead.startswith(b"[rank") else b""
        assert found == (rank + _GLOG, "glog paths unlinked"), lead
    diag = diagnose_logs([PASTED / "pytorch-121036.log"])
    assert diag.stats.pasted == {"glog paths unlinked": 7} and diag.stats.unread == 0
    assert [e[1:3] for e in diag.guard_errors] == [("0/0", "SHAPE_ENV")]


def test_a_link_elsewhere_than_a_glog_path_is_not_torchs() -> None:
    """Prose with a link, and a link after a glog-like head that is no glog line once undone
    (no ":line]"), stay what they are."""
    for text in (b"see [/_guards.py:250](http://localhost:8888/_guards.py) for the guard",
                 b"E0311 12:53:59.334000 1 torch[/_guards.py](http://localhost:8888/x) hi",
                 b"E0311 12:53:59.334000 1 torch[/_guards.py:250](ftp://h/x)] [0/0] hi"):
        assert textpaste.normalize(text) is None, text


def test_a_hostile_linked_path_costs_linear_time() -> None:
    def make(n: int) -> bytes:
        return b"E0311 12:53:59.334000 1 torch[/a](http://x)" + b"[a](http://" * (n // 11)

    assert_linear(textpaste.normalize, make, 330_000)


def test_vllms_process_tag_alone_before_a_traceback_is_taken_off(tmp_path: Path) -> None:
    """vllm#23970: the engine's traceback behind "(EngineCore_0 pid=34269) " is a compile that
    raised (cut inside _compile_inner); it was "not a torch log"."""
    diag = diagnose_logs([PASTED / "vllm-23970.log"])
    (crash,) = diag.compile_crashes
    assert crash.cut and crash.at is not None
    assert crash.at.file.endswith("torch/_dynamo/convert_frame.py") and crash.at.line == 906
    # (a worker's tag with its rank, and Ray's, the same way; a tag without a pid is not one)
    for tag in ("(VllmWorker TP0 pid=1518511) ", "(pid=560) "):
        text = "".join(f"{tag}{line}\n" for line in PASTED.joinpath("vllm-23970.log").read_text()
                       .replace("(EngineCore_0 pid=34269) ", "").splitlines())
        assert len(diagnose_text(tmp_path, text).compile_crashes) == 1, tag
    assert textforeign._WRAPPER_TAG_RE.match(b"(EngineCore_0)   File \"x.py\", line 1") is None


def test_a_hostile_process_tag_costs_linear_time() -> None:
    def make(n: int) -> bytes:
        return b"(EngineCore_0 " + b"pid=1 " * (n // 6)

    assert_linear(textforeign._WRAPPER_TAG_RE.match, make, 300_000)


def test_print_specializations_warning_is_a_specialization(tmp_path: Path) -> None:
    """pytorch#95848's nightly form names the symbol (s1 = 10); no user line is claimed (the
    stack under it is the frame dynamo was compiling, not the line that pinned the size)."""
    diag = diagnose_logs([PASTED / "pytorch-95848.log"])
    (spec,) = diag.specializations
    assert (spec.symbol, spec.sources, spec.value, spec.reason, spec.user) == \
        ("s1", (), "10", "print_specializations", None)
    assert diag.stats.unread == 0
    # torch 2.15's as it wrote it (print_specializations = True, no TORCH_LOGS): the source
    line = ("W1203 16:56:11.610000 5422 torch/fx/experimental/symbolic_shapes.py:8250] [0/0] "
            "Specializing L['x'].size()[0] to 10\n")
    (spec,) = diagnose_text(tmp_path, line).specializations
    assert (spec.sources, spec.value, spec.user) == (("L['x'].size()[0]",), "10", None)


def test_the_warning_beside_dynamics_records_is_one_specialization(tmp_path: Path) -> None:
    """Under TORCH_LOGS=+dynamic torch writes the warning before set_replacement and the guard
    (symbolic_shapes.py 2.15): one specialization, torch's reason and the guard's user line."""
    head = "torch/fx/experimental/symbolic_shapes.py"
    text = (
        f"I1203 16:56:11.600000 5422 {head}:3557] [0/0] create_symbol s77 = 10 for "
        "L['x'].size()[0] [2, int_oo] at /a/m.py:6 in fn (_dynamo/variables/builder.py:2710 in "
        "<lambda>)\n"
        f"W1203 16:56:11.610000 5422 {head}:8250] [0/0] Specializing L['x'].size()[0] to 10\n"
        f"I1203 16:56:11.610000 5422 {head}:8254] [0/0] set_replacement s77 = 10 "
        "(range_refined_to_singleton) VR[10, 10]\n"
        f"I1203 16:56:11.611000 5422 {head}:5106] [0/0] eval Eq(s77, 10) [guard added] if "
        "x.shape[0] == 10:  # /a/m.py:7 in fn (_dynamo/variables/tensor.py:3083 in evaluate_expr)\n")
    (spec,) = diagnose_text(tmp_path, text).specializations
    assert (spec.symbol, spec.reason, spec.value) == ("s77", "range_refined_to_singleton", "10")
    assert spec.user is not None and (spec.user.file, spec.user.line) == ("/a/m.py", 7)


def test_a_hostile_specializing_line_costs_linear_time() -> None:
    def make(n: int) -> list[str]:
        return ["Specializing " + "x to 1x" * (n // 7)]

    def read(lines: list[str]) -> object:
        try:
            return textmsg.specializing(lines, {"line": 1})
        except ValueError:
            return None

    assert_linear(read, make, 140_000)

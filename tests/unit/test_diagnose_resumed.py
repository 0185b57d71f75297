"""Graph breaks proven by torch's resume-function names, and frames torch gave up compiling
(dyncli.diagnose.resumed, textframes.wont_convert); real runs: test_diagnose_capture.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dyncli.diagnose.model import GraphBreakReport
from dyncli.diagnose.reasons import broke_at, is_resume, resume_line
from dyncli.diagnose.resumed import proven_breaks
from dyncli.logparse import events as ev
from dyncli.logparse.textlog import parse_lines

W = "W0711 17:08:34.348000 76404 torch/_dynamo/convert_frame.py:1280]"


def test_names_of_every_release() -> None:
    # 2.3 on: the line in the name; nested: a break in the code after a break
    assert broke_at("torch_dynamo_resume_in_forward_at_13") == [("forward", 13)]
    assert broke_at("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_5_at_7") == [
        ("f", 5), ("f", 7)]
    assert broke_at("torch_dynamo_resume_in__mm_wrap_LayerNorm_at_6") == [("_mm_wrap_LayerNorm", 6)]
    # 2.0/2.1 "<resume in f>", 2.2 "resume_in_f": the first line is the break's, when known
    assert broke_at("<resume in paste_mask_in_image>", 406) == [("paste_mask_in_image", 406)]
    assert broke_at("resume_in_forward", 31) == [("forward", 31)]
    assert broke_at("<resume in f>") == [] and broke_at("forward", 3) == []
    assert is_resume("<resume in f>") and is_resume("resume_in_f") and not is_resume("resume")
    assert resume_line("torch_dynamo_resume_in_torch_dynamo_resume_in_f_at_5_at_7") == 7


@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True),
       st.lists(st.integers(1, 10**6), min_size=1, max_size=5))
def test_a_nested_name_gives_back_every_break(function: str, lines: list[int]) -> None:
    name = function
    for line in lines:
        name = f"torch_dynamo_resume_in_{name}_at_{line}"
    assert broke_at(name) == [(function, line) for line in lines]


def _break(line: int, file: str = "/w/m.py", sites: tuple[str, ...] = ()) -> GraphBreakReport:
    return GraphBreakReport(rank=None, file=file, user_line=line, reason="print",
                            call_sites=sites)


def test_a_break_its_record_places_is_not_told_twice() -> None:
    named = [(None, "torch_dynamo_resume_in_f_at_9", "/w/m.py", 9, 4)]
    assert proven_breaks(named, [_break(9)]) == []
    # a break inside an inlined helper: its record is at the helper's line, the resume
    # function at the caller's call
    assert proven_breaks(named, [_break(3, "/w/h.py", ("/w/m.py:9 in f",))]) == []
    # a shortened spelling of the same file (guard comments cut directories)
    assert proven_breaks([(None, "torch_dynamo_resume_in_f_at_9", "w/m.py", 9, 4)],
                         [_break(9)]) == []
    (b,) = proven_breaks(named, [_break(12)])
    assert (b.file, b.user_line, b.function, b.resumed_in, b.reason, b.line) == (
        "/w/m.py", 9, "f", "torch_dynamo_resume_in_f_at_9", "", 4)
    assert b.place == "/w/m.py:9"


def test_one_break_per_place_from_many_records() -> None:
    name = "torch_dynamo_resume_in_forward_at_13"
    (b,) = proven_breaks([(0, name, "", None, 0), (0, name, "/w/m.py", 13, 8),
                          (0, name, "", None, 2)], [])
    assert (b.file, b.line, b.rank) == ("/w/m.py", 8, 0)  # the evidence that has the file
    (b,) = proven_breaks([(None, name, "", None, 6)], [])
    assert b.place == "line 13 of forward"


def _events(text: str) -> tuple[list[ev.Event], ev.ParseStats]:
    stats = ev.ParseStats()
    return list(parse_lines([ln.encode() for ln in text.splitlines()], stats)), stats


def test_wont_convert_reads_the_error_its_traceback_ends_in() -> None:
    lines = ["WON'T CONVERT torch_dynamo_resume_in_f_at_16 /tmp/w.py line 16 ", "due to: ",
             "Traceback (most recent call last):",
             '  File "/t/convert_frame.py", line 2397, in __call__', "    result = self._inner()",
             "torch._dynamo.exc.BackendCompilerFailed: backend='picky' raised:",
             "RuntimeError: picky backend cannot compile cos", "",
             "Set TORCHDYNAMO_VERBOSE=1 for the full Dynamo stack trace", "",
             "Traceback (most recent call last):", '  File "/t/x.py", line 1, in g', "    x()",
             "torch._dynamo.exc.BackendCompilerFailed: backend='picky' raised:"]
    (e,), stats = _events("\n".join(f"{W} {x}" for x in lines))
    assert isinstance(e, ev.NotConverted)
    assert (e.function, e.file, e.first_line) == ("torch_dynamo_resume_in_f_at_16", "/tmp/w.py", 16)
    assert e.error == ("torch._dynamo.exc.BackendCompilerFailed: backend='picky' raised: "
                       "RuntimeError: picky backend cannot compile cos")
    assert stats.recognized == len(lines) and stats.unrecognized == 0
    # a paste cut inside the traceback (ComfyUI-NAG#33): the frame, no error
    (e,), _ = _events("\n".join(f"{W} {x}" for x in lines[:5]))
    assert isinstance(e, ev.NotConverted) and e.error == ""


def test_a_cut_record_of_a_code_dump_is_known_by_its_tag() -> None:
    pre = "V1008 15:48:32.490000 869523 torch/_dynamo/symbolic_convert.py:1237] [2/0] [__trace_source]"
    events, stats = _events(f"{pre}             return {{'out': out}}")
    assert stats.unrecognized == 0 and stats.recognized == 1
    assert [type(e) for e in events] == [ev.CreateEnv]


def test_a_builtin_of_torchs_own_is_reported_not_wrapped() -> None:
    from dyncli.logparse.textbuiltins import builtin_hint

    # pytorch#154536: reached from inductor's cached output code, never the user's call
    fix = builtin_hint("torch._C._dynamo.guards.assert_size_stride")
    assert "report it to torch" in fix and "custom operator" not in fix
    assert "custom operator" in builtin_hint("zlib.crc32")

"""torch's recompile-limit warning pasted bare, as a terminal shows it: without the logger's
prefix (``W0101 12:00:00.000000 123 torch/_dynamo/convert_frame.py:1000] [0/8] ``), in each
release's wording (torch/_dynamo/convert_frame.py: torchdynamo's "torchdynamo hit
config.cache_size_limit (64)" with ``reasons:``, 2.0's "torch._dynamo hit …", 2.1's line asking
for TORCHDYNAMO_REPORT_GUARD_FAILURES=1, 2.2-2.5's ``last reason:`` and
accumulated_cache_size_limit, 2.6-2.15's recompile_limit). The real paste is torchdynamo-494
(tests/data/pasted); the others are torch's text of each release with the prefix taken off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.events import ParseStats, RecompileLimit
from dyncli.logparse.glog import GLOG_RE
from dyncli.logparse.textlog import parse_lines
from dyncli.logparse.textpaste import normalize

_PREFIX = "W0101 12:00:00.000000 123 torch/_dynamo/convert_frame.py:1000] [0/8] "
# 2.6-2.15 (convert_frame.py:2062 in 2.15)
_2_15 = """torch._dynamo hit config.recompile_limit (8)
   function: 'forward' (/path/model.py:42)
   last reason: 0/7: tensor 'x' size mismatch at index 0. expected 8, actual 16
To log all recompilation reasons, use TORCH_LOGS="recompiles".
To diagnose recompilation issues, see https://pytorch.org/docs/main/torch.compiler_troubleshooting.html
"""
_ACCUMULATED = """torch._dynamo hit config.accumulated_recompile_limit (256)
   function: 'lora_linear_forward' (C:\\envs\\wan\\Lib\\site-packages\\mmgp\\offload.py:2202)
   last reason: 3/255: submodule_name == 'blocks.25.cross_attn.k'
To log all recompilation reasons, use TORCH_LOGS="recompiles".
To diagnose recompilation issues, see https://pytorch.org/docs/main/torch.compiler_troubleshooting.html.
"""
# 2.0: "reasons:" (one reason), "to diagnose" in lower case
_2_0 = """torch._dynamo hit config.cache_size_limit (64)
   function: 'forward' (/a/resnet.py:284)
   reasons:  tensor 'x' strides mismatch at index 0. expected 562500, actual 2447991
to diagnose recompilation issues, see https://pytorch.org/docs/master/dynamo/troubleshooting.html.
"""
# 2.1 without TORCHDYNAMO_REPORT_GUARD_FAILURES: no reason, that line where it would be
_2_1_OFF = """torch._dynamo hit config.cache_size_limit (8)
   function: 'forward' (/a/m.py:10)
   to diagnose recompilation issues, set env variable TORCHDYNAMO_REPORT_GUARD_FAILURES=1 and also see https://pytorch.org/docs/master/compile/troubleshooting.html.
"""


def _limits(text: str) -> tuple[list[RecompileLimit], ParseStats]:
    stats = ParseStats()
    # (lines as the reader cuts them: at "\n" only, a carriage return stays in its line)
    lines = text.encode().removesuffix(b"\n").split(b"\n")
    found = [e for e in parse_lines(lines, stats) if isinstance(e, RecompileLimit)]
    return found, stats


def _fields(limit: RecompileLimit) -> tuple[Any, ...]:
    return (limit.limit_name, limit.limit, limit.function, limit.file, limit.first_line,
            limit.last_reason, limit.before_2_2, limit.reasons_off, limit.partial)


@pytest.mark.parametrize("head", [
    b"torch._dynamo hit config.recompile_limit (8)", b"torch._dynamo hit config.cache_size_limit (64)",
    b"torch._dynamo hit config.accumulated_cache_size_limit (256)",
    b"torchdynamo hit config.cache_size_limit (64)", b"> torch._dynamo hit config.recompile_limit (8)",
])
def test_a_bare_limit_head_gets_a_prefix(head: bytes) -> None:
    line, done = normalize(head) or (b"", "")
    assert done == "prefixes rebuilt" and GLOG_RE.match(line) is not None
    assert line.endswith(head.lstrip(b"> "))


@pytest.mark.parametrize("text", [
    b"I keep getting torch._dynamo hit config.recompile_limit (8) on every run",  # prose
    b"torch._dynamo hit config.recompile_limit",  # no value: a name, not torch's warning
])
def test_words_about_the_limit_are_not_its_warning(text: bytes) -> None:
    assert normalize(text) is None


@pytest.mark.parametrize("text", [_2_15, _ACCUMULATED, _2_0, _2_1_OFF])
def test_a_bare_limit_warning_is_the_limit_hit_its_prefixed_form_is(text: str) -> None:
    """Every field the prefixed warning gives (name, value, function, file:line, last reason,
    the release's form) comes from the bare one, and every line of it is understood."""
    (bare,), stats = _limits(text)
    assert stats.unrecognized == 0 and stats.malformed == 0
    # torch 2.2+ prefix every line; 2.0/2.1 (logging's layout) only the first
    lines = text.splitlines()
    prefixed = "\n".join(_PREFIX + t for t in lines) if "last reason" in text else \
        "\n".join([f"[2023-01-01 00:00:00,000] torch._dynamo.convert_frame: [WARNING] {lines[0]}", *lines[1:]])
    (with_prefix,), _ = _limits(prefixed)
    assert _fields(bare) == _fields(with_prefix)
    assert bare.function and bare.first_line and bare.limit


def test_the_bare_fields_are_torchs() -> None:
    (a,), _ = _limits(_ACCUMULATED)
    assert (a.limit_name, a.limit, a.function, a.first_line) == (
        "accumulated_recompile_limit", "256", "lora_linear_forward", 2202)
    assert a.file.endswith("offload.py") and a.last_reason == "3/255: submodule_name == 'blocks.25.cross_attn.k'"
    (old,), _ = _limits(_2_1_OFF)
    assert old.before_2_2 and old.reasons_off and not old.last_reason


def test_a_quoted_bare_warning_is_read_whole() -> None:
    (a,), stats = _limits("".join(f"> {t}\n" for t in _2_15.splitlines()))
    (b,), _ = _limits(_2_15)
    assert _fields(a) == _fields(b) and stats.unrecognized == 0


def _causes(path: Path) -> list[tuple[Any, ...]]:
    return [(c["title"], c["fix"], c["compiles"]) for c in diagnose_logs([path]).to_json()["causes"]]


def test_a_bare_warning_is_ranked_and_fixed_as_the_prefixed_one(tmp_path: Path) -> None:
    bare, prefixed = tmp_path / "bare.log", tmp_path / "prefixed.log"
    bare.write_text(_2_15)
    prefixed.write_text("".join(_PREFIX + t + "\n" for t in _2_15.splitlines()))
    causes = _causes(bare)
    assert causes and causes == _causes(prefixed)
    assert causes[0][2] == 7 and "hit torch._dynamo.config.recompile_limit (8)" in causes[0][0]


def test_in_a_longer_paste_it_is_read_once(tmp_path: Path) -> None:
    """The warning between a program's prints and a traceback, twice for one function (two
    steps that hit it): one limit hit, its body understood, the rest the program's."""
    paste = tmp_path / "mixed.log"
    paste.write_text("epoch 1 loss 0.53\n" + _2_15 + "step 2\n" + _2_15
                     + "Traceback (most recent call last):\n"
                     '  File "/home/u/train.py", line 8, in main\n    raise ValueError("bad")\n'
                     "ValueError: bad\n")
    d = diagnose_logs([paste])
    assert len(d.recompile_limits) == 1
    doc = d.to_json()
    assert doc["summary"]["recompile_limit_hits"] == 1 and doc["summary"]["frames"] == 1
    assert doc["summary"]["compiles"] == 8  # not 16: one frame's eight, however often it warned
    assert [s.kind for s in d.suggestions].count("recompile-limit") == 1
    assert d.stopped_after_limit is not None  # the traceback came after the warning
    assert d.stats.unrecognized == 6  # the two prints and the traceback's four lines


# Round 23: the bare head where a terminal shows it behind something else on its line. Built
# from real pastes' lines: comfy-wavespeed-12's progress bar and warning (tests/data/pasted,
# 2.5's words; its glog prefix taken off, as a handler without torch's format prints it), and
# torchtitan-2130's warning under torchrun's "[rank3]:" tag (the tag tail_log.py puts before
# every line of a rank's output). A logging formatter of the program's own (TORCH_LOGS_FORMAT,
# a server's logging config) stamps a message's first line only: the lines under it are bare.
# (torch's GLOBAL_STATE reason ends in a blank, kept: "\x20")
_BAR = "  0%|" + " " * 110 + "| 0/28 [00:00<?, ?it/s]"
_WAVESPEED = """torch._dynamo hit config.cache_size_limit (8)
   function: 'forward' (/root/autodl-tmp/ComfyUI/comfy/ops.py:66)
   last reason: 2/0: GLOBAL_STATE changed: allow_tf32\x20
To log all recompilation reasons, use TORCH_LOGS="recompiles".
To diagnose recompilation issues, see https://pytorch.org/docs/main/torch.compiler_troubleshooting.html.
"""
_TITAN = """torch._dynamo hit config.recompile_limit (8)
   function: 'forward' (/fsx/ferdinandmom/ferdinand-hf/huggingface/torchtitan/env_torchtitan_official/lib/python3.12/site-packages/transformers/models/qwen3/modeling_qwen3.py:224)
   last reason: 0/7: ___dict_contains(148, self._modules['_checkpoint_wrapped_module']._modules['self_attn']._forward_pre_hooks_with_kwargs)
To log all recompilation reasons, use TORCH_LOGS="recompiles".
To diagnose recompilation issues, see https://pytorch.org/docs/main/user_guide/torch_compiler/compile/programming_model.recompilation.html
"""


@pytest.mark.parametrize(("name", "text"), [
    ("progress bar", _BAR + _WAVESPEED),
    ("raw capture", "\r" + _BAR + "\r" + _BAR.replace("0/28", "1/28") + _WAVESPEED),
    ("a status the warning overwrote", "Loading weights 50%\r" + _WAVESPEED),  # (round 24)
    ("asctime levelname", "2025-01-09 10:23:44,277 WARNING " + _WAVESPEED),
    ("asctime name levelname", (
        "2025-01-09 10:23:44,277 - torch._dynamo.convert_frame - WARNING - " + _WAVESPEED)),
    ("uvicorn's padded level", "WARNING:  " + _WAVESPEED),
    ("ComfyUI's stamp", "[2025-01-09 10:23:44.277] " + _WAVESPEED),
])
def test_a_bare_warning_behind_a_bar_or_a_stamp_is_read(name: str, text: str) -> None:
    """Behind a progress bar or a logger's stamp the warning read nothing before round 23:
    "Nothing to fix". It is the warning torch wrote at the line's start."""
    (limit,), stats = _limits(text)
    (alone,), _ = _limits(_WAVESPEED)
    assert _fields(limit) == _fields(alone) and stats.unrecognized == 0, name


@pytest.mark.parametrize("blank", ["", " "])
def test_a_bare_warning_under_torchruns_tag_is_that_ranks(blank: str) -> None:
    text = "".join(f"[rank3]:{blank}{t}\n" for t in _TITAN.splitlines())
    (limit,), stats = _limits(text)
    (alone,), _ = _limits(_TITAN)
    assert _fields(limit) == _fields(alone) and limit.rank == 3 and stats.unrecognized == 0


@pytest.mark.parametrize("text", [
    b"I keep getting torch._dynamo hit config.recompile_limit (8) on every run",
    b"see | the docs [it/s] and torch._dynamo hit config.recompile_limit (8)",  # no bar's end
    b"2025-01-09 10:23:44 we saw torch._dynamo hit config.recompile_limit (8)",  # a stamp, prose
    b"Loading 50%\rwe saw torch._dynamo hit config.recompile_limit (8)",  # prose after a return
])
def test_prose_behind_other_words_is_not_the_warning(text: bytes) -> None:
    assert normalize(text) is None


def test_the_frame_is_the_one_the_last_reason_names(tmp_path: Path) -> None:
    """The frame of a bare warning was "?". torch writes a guard failure as
    ``f"{compile_id}: {reasons}"``, the compile id of the cache entry whose guards failed
    (guards.get_guard_fail_reason), and every entry of a code object has that code object's
    frame id (convert_frame.get_compile_id): "2/0" is frame 2. The entries proven are the
    limit's (2.5 named the oldest entry, 2/0) and, on 2.7+, those up to the one named."""
    for text, frame, compiles in ((_BAR + _WAVESPEED, "2", 8), (_TITAN, "0", 8),
                                  (_2_15.replace("0/7:", "3/11:"), "3", 12)):
        paste = tmp_path / "bare.log"
        paste.write_text(text)
        d = diagnose_logs([paste])
        (f,) = d.frames
        assert (f.frame_id, f.compiles, f.function) == (frame, compiles, "forward")
        (a,) = [s for s in d.suggestions if s.kind == "recompile-limit"]
        assert a.frame == frame
        assert d.causes[0].compiles == compiles - 1  # the limit's cause keeps its recompiles
    # where the reason names no entry (torch before 2.5, compiled autograd), still "?"
    paste.write_text(_2_0)
    assert [f.frame_id for f in diagnose_logs([paste]).frames] == ["?"]


def test_a_limit_that_is_no_plain_number_is_no_count(tmp_path: Path) -> None:
    """"(8²)": str.isdigit takes "²" and int refuses it, so a damaged limit raised a
    traceback (round 23's bare form, and the prefixed one's advice). A limit that is no
    plain number proves no count of entries: the last reason's entry still does."""
    text = _2_15.replace("(8)", "(8\u00b2)")
    bare, prefixed = tmp_path / "bare.log", tmp_path / "prefixed.log"
    bare.write_text(text, encoding="utf-8")
    prefixed.write_text("".join(_PREFIX + t + "\n" for t in text.splitlines()), encoding="utf-8")
    for paste in (bare, prefixed):
        d = diagnose_logs([paste])
        assert [f.compiles for f in d.frames] == [8]  # (0/7: the eighth entry)
        (a,) = [s for s in d.suggestions if s.kind == "recompile-limit"]
        assert "only hides the recompiles" in a.fix


# Round 25: the stamp of a handler with a format of its own behind a rank's tag, the tag on
# every line (torchrun's "[rank3]:" with --role rank, "[default3]:" with the default role, or a
# launcher's "[rank3]: " with a blank, as torch's own excepthook writes it): the stamp is on the
# warning's first line only, as the formatter writes it. Before, the tag and a stamp together
# hid the warning (read: nothing); a tag before torch's glog prefix, with a blank after it, lost
# the rank.
_STAMPS = ["2025-01-09 10:23:44,277 WARNING ", "2025-01-09 10:23:44,277 - torch._dynamo.convert_frame - WARNING - ",
           "[2025-01-09 10:23:44,277] WARNING: ", "WARNING:  ", "[2025-01-09 10:23:44.277] ", ""]


@pytest.mark.parametrize("tag", ["[rank3]:", "[rank3]: ", "[default3]:"])
@pytest.mark.parametrize("stamp", _STAMPS)
def test_a_stamped_bare_warning_under_a_rank_tag_is_that_ranks(tag: str, stamp: str) -> None:
    lines = _TITAN.splitlines()
    text = "".join(f"{tag}{stamp if i == 0 else ''}{t}\n" for i, t in enumerate(lines))
    (limit,), stats = _limits(text)
    (alone,), _ = _limits(_TITAN)
    assert _fields(limit) == _fields(alone) and limit.rank == 3 and stats.unrecognized == 0


@pytest.mark.parametrize("stamp", [s for s in _STAMPS if s])
def test_a_stamp_that_starts_like_torchs_layout_is_a_stamp(stamp: str) -> None:
    """"[2025-01-09 10:23:44,277] " begins torch 2.0-2.2's layout; with no logger after it,
    it is a handler's stamp before the bare warning (read before round 25 with a "." only)."""
    (limit,), stats = _limits(stamp + _TITAN)
    (alone,), _ = _limits(_TITAN)
    assert _fields(limit) == _fields(alone) and limit.rank is None and stats.unrecognized == 0


@pytest.mark.parametrize("tag", ["[rank3]: ", "[default3]: "])
def test_torchs_prefix_behind_a_tag_with_a_blank_is_that_ranks(tag: str) -> None:
    prefixed = "".join(f"{tag}{_PREFIX}{t}\n" for t in _TITAN.splitlines())
    (limit,), stats = _limits(prefixed)
    (alone,), _ = _limits("".join(f"{_PREFIX}{t}\n" for t in _TITAN.splitlines()))
    assert _fields(limit) == _fields(alone) and limit.rank == 3 and stats.unrecognized == 0


@pytest.mark.parametrize("text", [
    b"[rank3]: we saw torch._dynamo hit config.recompile_limit (8)",  # a tag, then prose
    b"[rank3]: 2025-01-09 10:23:44 we saw torch._dynamo hit config.recompile_limit (8)",
    b"[rank3]:[W1130 12:00:00.123456789 ProcessGroupNCCL.cpp:1538] torch._dynamo hit "
    b"config.recompile_limit (8)",  # c10's C++ layout: torch's Python records are never in it
])
def test_a_tag_before_prose_is_not_the_warning(text: bytes) -> None:
    assert normalize(text) is None


def test_a_prefix_cut_down_to_its_level_is_torchs_warning() -> None:
    """A bug write-up's excerpt (a public repository's notes, 2026): torch's prefix cut to the
    rank tag and the level, the function line re-indented, the reason left out."""
    text = ("[rank0]:W torch._dynamo hit config.accumulated_cache_size_limit (256)\n"
            "        function: 'torch_dynamo_resume_in_forward_at_2326' (src/model/dit.py:2326)\n")
    for tagged in (text, text.replace("[rank0]:", "")):
        (limit,), stats = _limits(tagged)
        assert (limit.limit_name, limit.limit, limit.function, limit.file, limit.first_line) == (
            "accumulated_cache_size_limit", "256", "torch_dynamo_resume_in_forward_at_2326",
            "src/model/dit.py", 2326)
        assert limit.rank == (0 if tagged is text else None) and stats.unrecognized == 0
    assert normalize(b"W we saw torch._dynamo hit config.recompile_limit (8)") is None

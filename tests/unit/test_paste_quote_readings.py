"""Pastes whose form diagnose misread after paste hunts 18 and 19 (round 23): torch's warning and
exception behind a markdown quote, a quoted log line in inline code, an ``Unsupported:`` line a
paste wrapped, and a break torch places in its own polyfills with the user's call above it.
Each on real paste lines (the issue cited at each; the quote marks are the user's form)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textpaste import normalize, rejoined_message

PASTED = Path(__file__).parent.parent / "data" / "pasted"

# pytorch#137068 (torch 2.4): the builtin warning and Python's line under it, as a reply quotes it
_WARNING = (
    b"/usr/lib/python3/dist-packages/torch/_dynamo/variables/functions.py:663: UserWarning: Graph "
    b"break due to unsupported builtin time.time. This function is either a Python builtin (e.g. "
    b"_warnings.warn) or a third-party C/C++ Python extension (perhaps created with pybind). If "
    b"it is a Python builtin, please file an issue on GitHub so the PyTorch team can add support "
    b"for it and see the next case for a workaround. If it is a third-party C/C++ Python "
    b"extension, please either wrap it into a PyTorch-understood custom operator (see "
    b"https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html for more details) or, "
    b"if it is traceable, use torch.compiler.allow_in_graph.\n"
    b"  torch._dynamo.utils.warn_once(msg)\n")
# pytorch#141964: the exception's one line, wrapped by the paste inside a repr
_WRAPPED = (
    b"torch._dynamo.exc.Unsupported: call_method GetAttrVariable(GenericContextWrappingVariable("
    b"TensorDict), __dict__) __setitem__ [ConstantVariable(str: '__lock_par\n"
    b"ents_weakrefs'), ListVariable(length=0)] {}\n")


def _diagnosed(tmp_path: Path, text: bytes) -> Diagnosis:
    log = tmp_path / "paste.log"
    log.write_bytes(text)
    return diagnose_logs([log])


def _quoted(text: bytes, quote: bytes = b"> ") -> bytes:
    return b"".join(quote + line for line in text.splitlines(keepends=True))


def test_a_quoted_builtin_warning_is_read_as_unquoted(tmp_path: Path) -> None:
    plain = _diagnosed(tmp_path, _WARNING)
    for quote in (b"> ", b">", b"> > "):
        d = _diagnosed(tmp_path, _quoted(_WARNING, quote))
        assert [b.reason for b in d.graph_breaks] == [b.reason for b in plain.graph_breaks]
        assert "time.time" in d.graph_breaks[0].reason
        assert d.stats.unrecognized == 0, quote  # (Python's code line under it is the warning's)
    # the warning's head alone behind the quote (a paste that dropped its path)
    head = b"> UserWarning: " + _WARNING.split(b"UserWarning: ", 1)[1].split(b"\n", 1)[0] + b"\n"
    assert len(_diagnosed(tmp_path, head).graph_breaks) == 1


def test_a_quoted_unsupported_block_keeps_its_explanation_and_hint(tmp_path: Path) -> None:
    # pytorch#167369's message (main, Nov 2025), quoted
    block = (b"Unsupported: Failed to trace builtin operator\n"
             b"  Explanation: Dynamo does not know how to trace builtin operator `repr` with "
             b"argument types ['Config'] (has_kwargs False)\n"
             b"  Hint: Avoid calling builtin `repr` with argument types ['Config']. Consider using "
             b"an equivalent alternative function/method to `repr`.\n")
    d = _diagnosed(tmp_path, _quoted(block))
    (a,) = [s for s in d.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "Avoid calling builtin `repr`" in a.fix and d.stats.unrecognized == 0


def test_a_quoted_log_line_in_inline_code_is_the_log_line() -> None:
    # pytorch#120608's lines (tests/data/pasted), each quoted as one code span
    lines = (PASTED / "pytorch-120608.log").read_bytes().splitlines()[:3]
    for line in lines:
        plain = normalize(line)
        assert plain is not None
        assert normalize(b"> `" + line + b"`") == plain
        assert normalize(b"> `" + line) == plain  # (a span a wrap carried to the next line)
    # prose in the quote stays prose: text after the span, a second span, a sentence around it
    assert normalize(b"> `" + lines[0] + b"` is what torch printed") is None
    assert normalize(b"> see `" + lines[0] + b"`") is None
    assert normalize(b"> `x` and `" + lines[0] + b"`") is None


def test_quoted_code_spans_of_a_recompile_are_read(tmp_path: Path) -> None:
    text = (b"> `[0/1] [__recompiles] Recompiling function forward in /tmp/x.py:10`\n"
            b"> `[0/1] [__recompiles]     triggered by the following guard failure(s):`\n"
            b"> `[0/1] [__recompiles]     - 0/0: L['x'].size()[0] == 4`\n")
    d = _diagnosed(tmp_path, text)
    assert len(d.recompiles) == 1 and d.stats.unrecognized == 0
    table = b"| `[0/1] [__recompiles] Recompiling function forward in /tmp/x.py:10` | a recompile |\n"
    with pytest.raises(InputError, match="not a torch log"):  # prose and a table: refused
        _diagnosed(tmp_path, text.replace(b"> ", b"> see ") + table)


def test_a_wrapped_unsupported_line_is_joined(tmp_path: Path) -> None:
    d = _diagnosed(tmp_path, _WRAPPED)
    assert d.stats.unrecognized == 0
    (b,) = d.graph_breaks
    assert "'__lock_parents_weakrefs'), ListVariable(length=0)] {}" in b.reason
    first, rest = _WRAPPED.splitlines()
    assert rejoined_message(first, rest) == first + rest
    # a line of its own after a complete message, or one that does not close what is open
    assert rejoined_message(first + rest, b"Traceback (most recent call last):") is None
    assert rejoined_message(first, b"  File \"x.py\", line 3, in f") is None
    assert rejoined_message(first, b"next line (with its own brackets)") is None
    # (round 24) a rest that closes more than the line opened is no rest of it
    assert rejoined_message(first, rest + b")") is None


def test_a_break_in_torchs_polyfill_names_the_users_call(tmp_path: Path) -> None:
    # torch 2.15's record of a ctypes class built in a compiled function (its construction runs
    # through polyfills/__init__.py's instantiate_user_defined_class_object)
    pre = b"V1130 17:30:47.914000 32752 torch/_dynamo/symbolic_convert.py:5577] [0/0] [__graph_breaks] "
    poly = b"/work/main/.venv/lib/python3.11/site-packages/torch/_dynamo/polyfills/__init__.py"
    body = [
        b"Graph break in user code at " + poly + b":468",
        b"Graph Break Reason: Encountered graph break when attempting to trace CALL: a function "
        b"call, e.g. f(x, y):",
        b"",
        b"Unsupported method call",
        b"  Explanation: Dynamo does not know how to trace method `__new__` of class `PyCSimpleType`",
        b"  Hint: Avoid calling `PyCSimpleType.__new__` in your code.",
        b"  Hint: Please report an issue to PyTorch.",
        b"",
        b"User code traceback:",
        b"  File \"/tmp/q23/poly.py\", line 7, in <module>",
        b"    torch.compile(f, backend=\"eager\")(torch.randn(3))",
        b"  File \"/tmp/q23/poly.py\", line 5, in f",
        b"    c = C(3)",
        b"  File \"" + poly + b"\", line 468, in instantiate_user_defined_class_object",
        b"    obj = cls.__new__(cls, *args, **kwargs)",
    ]
    d = _diagnosed(tmp_path, b"".join(pre + t + b"\n" for t in body))
    (a,) = [s for s in d.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "change your call at /tmp/q23/poly.py:5 in f" in a.fix, a.fix
    assert "Avoid calling `PyCSimpleType.__new__`" in a.fix and "not a line of yours" not in a.fix
    # without the user's frame (pytorch#160757's paste ends before it): torch's own code still
    b = _diagnosed(tmp_path, b"".join(pre + t + b"\n" for t in body[:7]))
    (c,) = [s for s in b.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "not a line of yours" in c.fix


def test_prose_about_a_log_that_round_24_checked_and_left(tmp_path: Path) -> None:
    """Round 24 checked the prose forms round 23 left (no real thread found that shows either
    read wrongly): a quote's sentence with the compile id in a code span, and a plain sentence
    quoting torch's words, are refused; a sentence holding a whole glog line, prefix and all,
    is read as the line after a launcher's stamp is (the words before the prefix cannot be told
    from a stamp: vLLM's "(EngineCore_DP0 pid=…)", Ray's tags, a progress bar)."""
    for prose in (b"> `[0/1]` is the second compile of frame 0: `L['x'].size()[0]` changed\n",
                  b'I see "Recompiling function forward in /tmp/x.py:10" every step\n',
                  b'It says "torch._dynamo hit config.recompile_limit (8)" every step\n'):
        with pytest.raises(InputError, match="not a torch log"):
            _diagnosed(tmp_path, prose)
    glog = (b"W0101 10:00:00.000000 1 torch/_dynamo/convert_frame.py:100] torch._dynamo hit "
            b"config.recompile_limit (8)")
    assert normalize(b"I see " + glog) == (glog, "prefixes trimmed")
    assert normalize(b"(EngineCore_DP0 pid=7) " + glog) == (glog, "prefixes trimmed")

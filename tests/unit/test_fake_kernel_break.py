"""An operator without a fake kernel (GB0090 "Operator does not support running with fake
tensors", round 24): torch 2.7 on names the op only in the record's "Developer debug context",
which diagnose keeps (a field of the break, shown as text) and names in the fix: register a fake
kernel for it, or keep the call out. The record is torch 2.15's (TORCH_LOGS=graph_breaks, a real
run of tests/integration/test_fake_kernel_fix.py's program: a torch.library.Library op with a
CPU kernel only, compiled with fullgraph=False), where the fix is applied."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.advice import _fake_kernel_fix
from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import GraphBreakReport
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.releases import judge

PASTED = Path(__file__).parent.parent / "data" / "pasted"
_PRE = b"V1130 20:32:41.795000 27587 torch/_dynamo/symbolic_convert.py:5577] [0/0] [__graph_breaks] "
_DOC = (b"see https://docs.google.com/document/d/1GgvOe7C8_NVOMLOCwDaYV1mXXyHMXY7ExoewHqooxrs/"
        b"edit#heading=h.64r4npvq0w0 for how to fix")
_RECORD = [
    b"Graph break in user code at /tmp/h53/prog.py:8",
    b"Graph Break Reason: Encountered graph break when attempting to trace CALL: a function "
    b"call, e.g. f(x, y):",
    b"",
    b"Operator does not support running with fake tensors",
    b"  Explanation: ",
    b"  Hint: " + _DOC,
    b"",
    b"  Developer debug context: unsupported operator: dyncli_demo.scale.default",
    b"",
    b" For more details about this graph break, please visit: "
    b"https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0090.html",
    b"",
    b"User code traceback:",
    b'  File "/tmp/h53/prog.py", line 11, in <module>',
    b'    out = torch.compile(f, backend="eager", fullgraph=False)(torch.randn(4))',
    b'  File "/tmp/h53/prog.py", line 8, in f',
    b"    z = torch.ops.dyncli_demo.scale(y)",
    b"",
]


def _diag(tmp_path: Path, lines: list[bytes]):  # type: ignore[no-untyped-def]
    log = tmp_path / "fake.log"
    log.write_bytes(b"".join(_PRE + t + b"\n" for t in lines))
    return diagnose_logs([log])


def _fix(diag) -> str:  # type: ignore[no-untyped-def]
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    return a.fix


def test_the_debug_context_is_kept_and_the_fix_names_its_op(tmp_path: Path) -> None:
    diag = _diag(tmp_path, _RECORD)
    (b,) = diag.graph_breaks
    assert b.debug == "unsupported operator: dyncli_demo.scale.default"
    fix = _fix(diag)
    assert 'torch.library.register_fake("dyncli_demo::scale")' in fix, fix
    assert "keep the call out of the compiled function" in fix and "docs.google" not in fix
    (c,) = [c for c in diag.causes if c.graph_breaks]
    assert c.fix == fix
    (d,) = diag.distinct_graph_breaks
    assert d.to_json()["debug"] == b.debug and "torch's debug context: unsupported operator" in d.said
    assert diag.to_json()["graph_breaks"][0]["debug"] == b.debug


def test_a_context_over_lines_is_joined_and_only_the_first_breaks_counts(tmp_path: Path) -> None:
    # (torch indents a context's later lines 4 spaces; a break while handling it is a consequence)
    lines = [*_RECORD[:7], b"  Developer debug context: unsupported operator:",
             b"    dyncli_demo.scale.default", b"",
             b"*** While handling this graph break, another graph break occurred: ***", b"",
             b"  Developer debug context: something else", *_RECORD[8:]]
    (b,) = _diag(tmp_path, lines).graph_breaks
    assert b.debug == "unsupported operator: dyncli_demo.scale.default"


def test_torchs_import_hint_comes_first_and_torchs_own_op_is_reported(tmp_path: Path) -> None:
    # utils.py: "It's possible that the support was implemented in module `M` and you may need
    # to `import M`(ctx), otherwise see …" where the op's Python stub names a module
    stub = (b"  Hint: It's possible that the support was implemented in module `mylib.ops` and "
            b"you may need to `import mylib.ops`(mylib.ops.scale), otherwise " + _DOC)
    fix = _fix(_diag(tmp_path, [*_RECORD[:5], stub, *_RECORD[6:]]))
    assert fix.startswith("import mylib.ops before compiling"), fix
    assert 'register_fake("dyncli_demo::scale")' in fix
    aten = [*_RECORD[:7], b"  Developer debug context: unsupported operator: aten.foo.default",
            *_RECORD[8:]]
    fix = _fix(_diag(tmp_path, aten))
    assert "torch's own operator" in fix and "register_fake" not in fix, fix


def test_the_pasted_vllm_breaks_name_the_op_in_both_releases_words() -> None:
    # 2.7 on: the op in the debug context (vllm-ascend#2235); 2.5-2.6: in the reason (#1962)
    for name in ("vllm-ascend-2235.log", "vllm-ascend-1962.log"):
        fix = _fix(diagnose_logs([PASTED / name]))
        assert 'torch.library.register_fake("_C::rotary_embedding")' in fix, (name, fix)


def test_an_overload_other_than_default_is_kept_in_the_name_register_fake_takes(
        tmp_path: Path) -> None:
    # torch prints the op as its OpOverload, "ns.name.overload"; register_fake("ns::name")
    # registers the default overload only (fake_tensor.py finds the kernel by func.name(),
    # "ns::name.out"), so the printed call must name a non-default overload
    def fix_for(op: bytes) -> str:
        lines = [*_RECORD[:7], b"  Developer debug context: unsupported operator: " + op,
                 *_RECORD[8:]]
        return _fix(_diag(tmp_path, lines))

    assert 'torch.library.register_fake("dyncli_demo::scale.out")' in fix_for(
        b"dyncli_demo.scale.out")
    assert 'torch.library.register_fake("dyncli_demo::scale")' in fix_for(
        b"dyncli_demo.scale.default")
    # a name cut to its namespace or op alone is no qualname register_fake takes: no code
    # with it (parse_namespace raises ValueError on "scale")
    cut = fix_for(b"scale")
    assert 'register_fake("scale")' not in cut and "register a fake kernel" in cut, cut


def test_a_context_of_many_lines_is_kept_to_its_cap(tmp_path: Path) -> None:
    # (round 25: the cap's branch had no test) 20,000 continuation lines: at most 2,000
    # characters kept, and the op on the context's first line still named
    lines = [*_RECORD[:8], *[b"    " + b"x" * 40] * 20_000, *_RECORD[8:]]
    diag = _diag(tmp_path, lines)
    (b,) = diag.graph_breaks
    assert b.debug.startswith("unsupported operator: dyncli_demo.scale.default x")
    assert 1900 < len(b.debug) <= 2000
    assert 'register_fake("dyncli_demo::scale")' in _fix(diag)


# (round 25) the API that registers a fake kernel depends on the release (register_fake 2.4 on,
# torch.library.impl_abstract 2.2-2.3, torch._custom_ops.impl_abstract 2.1): the break record's
# form tells the releases, read here in each release's recorded log (tests/data/<release>/,
# real runs), its print break's reason made the one torch 2.1-2.6 write for an op with no fake
# kernel (utils.get_fake_value)
_UNSUPPORTED = "unsupported operator: dyncli_demo.scale.default (" + _DOC.decode() + ")"
_REGISTER = 'torch.library.register_fake("dyncli_demo::scale")'
_IMPL_ABSTRACT = 'torch.library.impl_abstract("dyncli_demo::scale")'
_CUSTOM_OPS = ('torch._custom_ops.impl_abstract("dyncli_demo::scale") '
               "(import torch._custom_ops first)")
_RELEASE_FIX = {
    "2.1.2": f"{_IMPL_ABSTRACT} (torch 2.2; {_CUSTOM_OPS} on torch 2.1)",
    "2.2.2": f"{_IMPL_ABSTRACT} (torch 2.2; {_CUSTOM_OPS} on torch 2.1)",
    "2.3.1": f"{_REGISTER} (torch 2.4-2.5; {_IMPL_ABSTRACT} on torch 2.3)",
    "2.4.1": f"{_REGISTER} (torch 2.4-2.5; {_IMPL_ABSTRACT} on torch 2.3)",
    "2.5.1": f"{_REGISTER} (torch 2.4-2.5; {_IMPL_ABSTRACT} on torch 2.3)",
    "2.6.0": f"{_REGISTER} on a function",
}


@pytest.mark.parametrize("release", sorted(_RELEASE_FIX))
def test_the_fake_kernel_api_is_the_one_of_the_release_the_record_form_tells(
        tmp_path: Path, release: str) -> None:
    folder = PASTED.parent / release
    (whole,) = [p for p in (folder / "old_log" / "text.log", folder / "compat" / "text.log")
                if p.exists()]
    (b,) = [x for x in diagnose_logs([whole]).graph_breaks if x.user_line == 38]
    log = tmp_path / "op.log"
    log.write_text(whole.read_text().replace(b.reason, _UNSUPPORTED))
    fix = _fix(diagnose_logs([log]))
    assert _RELEASE_FIX[release] in fix, fix
    if release >= "2.6":
        assert "impl_abstract" not in fix


def test_a_raised_break_names_each_api_with_its_releases(tmp_path: Path) -> None:
    # torch._dynamo.exc.Unsupported at a traceback's end: any of 2.1-2.6 raise it alike
    fix = _fix(diagnose_logs([PASTED / "vllm-ascend-1962.log"]))
    assert ('torch.library.register_fake("_C::rotary_embedding") (torch 2.4 and later; '
            'torch.library.impl_abstract("_C::rotary_embedding") on torch 2.2-2.3, '
            'torch._custom_ops.impl_abstract("_C::rotary_embedding") (import torch._custom_ops '
            'first) on torch 2.1)') in fix, fix


def test_torchs_import_hint_tells_2_3_or_later(tmp_path: Path) -> None:
    # the import hint in the reason is 2.3's on (utils.get_fake_value): a raised break with it
    # names register_fake and 2.3's impl_abstract, not 2.1's API
    text = (PASTED / "vllm-ascend-1962.log").read_text().replace(
        "(see https", "(It's possible that the support was implemented in module `vllm._C` and "
        "you may need to `import vllm._C`(vllm/_C.py:1), otherwise see https", 1)
    log = tmp_path / "raised.log"
    log.write_text(text)
    fix = _fix(diagnose_logs([log]))
    assert fix.startswith("import vllm._C before compiling"), fix
    assert ('torch.library.register_fake("_C::rotary_embedding") (torch 2.4 and later; '
            'torch.library.impl_abstract("_C::rotary_embedding") on torch 2.3)') in fix, fix
    assert "_custom_ops" not in fix


def test_a_traces_break_names_no_api_before_2_3() -> None:
    # (round 27) a TORCH_TRACE trace is torch 2.3's on: a break whose record tells no release
    # (a trace of 2.3-2.9 states no version) names register_fake and 2.3's impl_abstract,
    # never 2.1's torch._custom_ops
    b = GraphBreakReport(rank=None, file="/tmp/prog.py", user_line=8, reason=_UNSUPPORTED)
    fix = _fake_kernel_fix(b, judge([], (), trace=True))
    assert f"{_REGISTER} (torch 2.4 and later; {_IMPL_ABSTRACT} on torch 2.3)" in fix, fix
    assert "_custom_ops" not in fix
    assert "_custom_ops" in _fake_kernel_fix(b, None)  # (a text log that tells nothing)

"""A torch.library.custom_op with no fake kernel (round 24): the tail of torch 2.15's traceback
(a real run of tests/integration/test_custom_op_fake_fix.py's program, paths shortened), where
the TorchRuntimeError's explanation names the op and torch's hint. diagnose's fix, for the crash
and for its break alike, is that hint with the op named, not "report it to PyTorch" or "in
torch's own code"."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs

_TRACEBACK = [
    'Traceback (most recent call last):',
    '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
    '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/utils.py", line 4479, in _get_fake_value_impl',
    '    raise FakeTensorObservedException(msg, real_stack=e.real_stack) from None',
    'torch._dynamo.exc.TorchRuntimeError: RuntimeError when making fake tensor call',
    "  Explanation: Dynamo failed to run FX node with fake tensors: call_function dyncli_co.scale.default(*(FakeTensor(..., size=(4,)),), **{}): got RuntimeError('There was no fake impl registered for <CustomOpDef(dyncli_co::scale)>. This is necessary for torch.compile/export/fx tracing to work. Please use `scale.register_fake` to add an fake impl.')",
    '  Hint: Your code may result in an error when running in eager. Please double check that your code doesn\'t contain a similar error when actually running eager/uncompiled. You can do this by removing the `torch.compile` call, or by using `torch.compiler.set_stance("force_eager")`. ',
    '',
    '  Developer debug context: ',
    '',
    ' For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb4315.html',
    '',
    'from user code:',
    '   File "/home/u/prog.py", line 8, in f',
    '    return scale(x + 1) - 1',
    '           ~~~~~^^^^^^^',
    '  File "/usr/lib/python3.11/site-packages/torch/_library/custom_ops.py", line 877, in __call__',
    '    return self._opoverload(*args, **kwargs)',
    '           ~~~~~~~~~~~~~~~~^^^^^^^^^^^^^^^^^',
    '',
    'Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you\'re reporting a bug to PyTorch). For even more developer context, set TORCH_LOGS="+dynamo"',
    '',
]


def test_a_custom_op_without_a_fake_kernel_gets_torchs_hint_with_the_op_named(
        tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("\n".join(_TRACEBACK) + "\n")
    diag = diagnose_logs([log])
    fixes = [s.fix for s in diag.suggestions
             if s.kind in (AdviceKind.COMPILE_CRASH, AdviceKind.GRAPH_BREAK)]
    assert len(fixes) == 2, diag.suggestions
    for fix in fixes:
        assert fix.startswith("register a fake kernel for the custom op dyncli_co::scale"), fix
        assert "@scale.register_fake (torch's hint)" in fix, fix
    (cause,) = diag.causes
    assert cause.stops and "@scale.register_fake" in cause.fix


def test_without_torchs_hint_the_fix_names_the_op_for_torch_library(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("\n".join(_TRACEBACK).replace(
        " Please use `scale.register_fake` to add an fake impl.", "") + "\n")
    (b,) = [s for s in diagnose_logs([log]).suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert 'torch.library.register_fake("dyncli_co::scale")' in b.fix, b.fix


# (round 25) the exception's own line names the op and torch's hint where no break record or
# Explanation line is in the paste: 2.4-2.6's "Failed running call_function <CustomOpDef(…)>" with
# the message on the next line, and the one-line "Dynamo failed to run FX node … got
# RuntimeError('There was no fake impl …')" of lightning-thunder#2530 (Sep 2025); both were told
# "if it runs, report it to PyTorch", which it does (eagerly), though the fix is register_fake
_OWN_LINES = {
    "2.4-2.6": [
        "Traceback (most recent call last):",
        '  File "/home/u/prog.py", line 12, in <module>',
        "    out = torch.compile(f)(torch.ones(4))",
        '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/utils.py", line 1837, in '
        "get_fake_value",
        "    raise TorchRuntimeError(str(e)).with_traceback(e.__traceback__) from None",
        "torch._dynamo.exc.TorchRuntimeError: Failed running call_function "
        "<CustomOpDef(mylib::scale)>(*(FakeTensor(..., size=(4,)),), **{}):",
        "There was no fake impl registered for <CustomOpDef(mylib::scale)>. This is necessary for "
        "torch.compile/export/fx tracing to work. Please use `scale.register_fake` to add an "
        "fake impl.",
        "",
        "from user code:",
        '   File "/home/u/prog.py", line 8, in f',
        "    return scale(x + 1) - 1",
    ],
    "thunder-2530": [
        "    raise RuntimeError(",
        "torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node with fake tensors: "
        "call_function mylib.scale(*(FakeTensor(..., size=(3,), dtype=torch.int64),), **{}): got "
        "RuntimeError('There was no fake impl registered for <CustomOpDef(mylib::scale)>. This is "
        "necessary for torch.compile/export/fx tracing to work. Please use `scale.register_fake` "
        "to add an fake impl.')",
        "",
        "from user code:",
        '   File "/home/u/test.py", line 13, in use_func',
        "    ret = torch.ops.mylib.scale(a)",
    ],
}


def test_the_crash_alone_names_the_op_from_its_own_message(tmp_path: Path) -> None:
    for name, lines in _OWN_LINES.items():
        log = tmp_path / f"{name}.log"
        log.write_text("\n".join(lines) + "\n")
        (crash,) = [s for s in diagnose_logs([log]).suggestions
                    if s.kind is AdviceKind.COMPILE_CRASH]
        assert crash.fix.startswith("register a fake kernel for the custom op mylib::scale"), \
            (name, crash.fix)
        assert "@scale.register_fake (torch's hint)" in crash.fix and "report it" not in crash.fix

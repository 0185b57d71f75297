"""torch.compiler.set_stance("fail_on_recompile") refusing a recompile of a function whose cache
entries are precompiled (a compile package's, torch 2.9 on: pytorch#156433): its RuntimeError
lists each entry's guard tree and GuardManager.check_verbose's GuardDebugInfo, whose
``verbose_code_parts`` are the failed guards' reasons. Read on this torch's own pieces: the
message is built as eval_frame.py's fail_callback builds it, from a real compile's guard
manager and its check of a call with a new size; diagnose reads the failed guard (a size), not
"names no guard".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.read import diagnose_logs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")


def test_a_precompiled_entrys_failed_guard_is_read(tmp_path: Path) -> None:
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list

    def f(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    torch._dynamo.reset()
    torch.compile(f, backend="eager", dynamic=False)(torch.ones(3))
    (entry,) = _debug_get_cache_entry_list(f.__code__)
    gm = entry.guard_manager
    info = gm.check_verbose({"x": torch.ones(4)})
    assert not info.result
    # (eval_frame.py's fail_callback, 2.9-2.15)
    message = ("Detected recompile when torch.compile stance is 'fail_on_recompile'. "
               f"filename: '{f.__code__.co_filename}', function name: 'f', line number: 0")
    message += "\nFailed on the following precompiled guards: "
    message += f"\n{gm}{info}"
    log = tmp_path / "stance.log"
    log.write_text(f"RuntimeError: {message}\n")
    diag = diagnose_logs([log])
    (r,) = diag.recompiles
    assert r.stance and not r.compiled and r.function == "f"
    assert any("size mismatch at index 0. expected 3, actual 4" in x for x in r.reasons)
    assert r.cause == "size"

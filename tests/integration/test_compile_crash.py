"""A compile that raises inside torch's compiler, as the program's own traceback shows it
(keras#22282: an AssertionError in dynamo's bytecode_transformation.py, read as "Nothing to
fix" before round 19).

torch's own test switch for a broken inductor (``config.cpp.inject_relu_bug_TESTING_ONLY =
"compile_error"``: the C++ it writes for relu does not compile, 2.0 to 2.15) makes the program
stop on ``InductorError: CppCompileError`` (2.14, 2.15; ``BackendCompilerFailed`` before).
diagnose reads its stderr: the compile raised in inductor, called from the program's line. The
fix it prints for the meantime, ``torch._dynamo.config.suppress_errors = True``, is applied: the
program runs to its end, and diagnose then reads the frame torch ran eagerly.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logged import run_logged

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_inputs

pytestmark = pytest.mark.slow
torch = pytest.importorskip("torch")

PROGRAM = """
import torch
import torch._inductor.config
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
{fix}
def f(x):
    return torch.relu(x) + 1
out = torch.compile(f)(torch.randn(8))
print("ran", tuple(out.shape))
"""


def test_a_crash_in_inductor_is_said_and_the_fix_lets_the_program_run(tmp_path: Path) -> None:
    log = tmp_path / "crash.log"
    run = run_logged(PROGRAM.format(fix=""), log)
    assert run.returncode != 0 and "ran" not in run.stdout
    diag = diagnose_inputs([log])
    (c,) = diag.compile_crashes
    assert "CppCompileError" in c.error + c.cause and not c.cut
    assert c.at is not None and "_inductor" in c.at.file.replace("\\", "/")
    assert c.user is not None and c.user.file == "<string>"  # python -c's own line
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert diag.suggestions[0] is a
    fix = "torch._dynamo.config.suppress_errors = True"
    assert fix in a.fix
    # the fix as printed
    fixed = tmp_path / "fixed.log"
    run = run_logged(PROGRAM.format(fix=fix), fixed, check=True)
    assert run.stdout.strip() == "ran (8,)"
    diag = diagnose_inputs([fixed])
    assert diag.compile_crashes == ()
    (n,) = diag.not_converted  # torch ran f eagerly, and says why
    assert n.function == "f" and "CppCompileError" in n.error

"""``quoting.shell_word``: a path as one argument of a command line the user pastes (bench's
hint ``python PATH shows the whole error``): bare when nothing needs quoting, else quoted so
that the shell hands back the path itself."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from dyncli.quoting import shell_word

SH = shutil.which("sh")


@pytest.mark.parametrize(("path", "word"), [
    ("examples/model.py", "examples/model.py"),
    ("../a-b/m_1.py", "../a-b/m_1.py"),
    ("my model.py", '"my model.py"'),
    ("$(touch pwned).py", "'$(touch pwned).py'"),
    ("it's.py", '"it\'s.py"'),
    ("a;b`c`.py", "'a;b`c`.py'"),
    ("~/m.py", '"~/m.py"'),  # (a path opened as given: no ~ expansion)
    ("", '""'),
])
def test_shell_word(path: str, word: str) -> None:
    assert shell_word(path) == word
    if SH:
        out = subprocess.run([SH, "-c", f"printf %s {word}"], capture_output=True, timeout=10,
                             check=False)
        assert out.stdout == path.encode()

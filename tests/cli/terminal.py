"""Run a command in a real terminal of a given size (tmux when installed, else a pty) and
read back the screen: what a user sees, with the terminal's own wrapping."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import termios
import time
import uuid
from pathlib import Path


def run_in_pty(argv: list[str], cols: int, env: dict[str, str], cwd: Path,
               timeout: float = 300) -> tuple[int, str]:
    """(exit code, output) of ``argv`` on a pty ``cols`` wide. Lines are as the program wrote
    them; a line longer than ``cols`` is one the terminal would wrap."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, {**env, "COLUMNS": "", "LINES": ""} | {
                k: v for k, v in env.items()})
        finally:
            os._exit(127)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    else:
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode("utf-8", "replace")


def tmux_screen(command: str, cols: int, env: dict[str, str], cwd: Path,
                timeout: float = 300) -> tuple[int, str]:
    """(exit code, the whole scrollback) of ``command`` run by sh in a detached tmux window
    ``cols`` wide; wrapped lines are joined (-J) so a too-long line shows as one long line."""
    name = f"dyncli-{uuid.uuid4().hex[:8]}"
    done = cwd / f".{name}.rc"
    script = f"{command}; echo $? > {done}; sleep 600"
    base = ["tmux", "-L", name, "-f", "/dev/null"]
    subprocess.run([*base, "new-session", "-d", "-x", str(cols), "-y", "50", "-c", str(cwd),
                    "-e", "TERM=xterm-256color", *(a for k, v in env.items()
                                                   for a in ("-e", f"{k}={v}")),
                    "sh", "-c", script], check=True)
    try:
        subprocess.run([*base, "set-option", "-g", "history-limit", "20000"], check=False)
        deadline = time.monotonic() + timeout
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.3)
        out = subprocess.run([*base, "capture-pane", "-p", "-J", "-S", "-", "-E", "-"],
                             capture_output=True, text=True, check=True).stdout
        rc = int(done.read_text().strip()) if done.exists() else 124
        return rc, out
    finally:
        subprocess.run([*base, "kill-server"], check=False, capture_output=True)
        done.unlink(missing_ok=True)


def has_tmux() -> bool:
    return shutil.which("tmux") is not None

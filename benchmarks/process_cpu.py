"""CPU seconds per Python process of a run (a test command, a bench): which processes import
torch, how many there are, what they cost. docs/torch-versions.md (round 13) quotes it.

A ``.pth`` file in the venv's site-packages imports a small hook into every Python process of
that venv (pytest, its xdist workers, the subprocesses tests start, bench's children); where
``PROCCPU_OUT`` is set, the hook writes one JSON file per process at exit: its argv, its own CPU
(user + system), its children's, its wall time and whether torch, dynamo and inductor were
imported. Processes that leave through ``os._exit`` write nothing (their CPU is in their
parent's children figure).

    .venv/bin/python benchmarks/process_cpu.py install .venv
    PROCCPU_OUT=/tmp/pc .venv/bin/python -m pytest -m 'not long' -n auto --dist loadfile
    .venv/bin/python benchmarks/process_cpu.py report /tmp/pc
    .venv/bin/python benchmarks/process_cpu.py uninstall .venv

Without ``PROCCPU_OUT`` the hook does nothing but register itself (it stays cheap), and
``uninstall`` removes both files.
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

HOOK = "dyncli_process_cpu_hook"
PTH = "zz_dyncli_process_cpu.pth"
HOOK_SOURCE = '''"""Written by benchmarks/process_cpu.py: one JSON file per process at exit."""
import atexit, json, os, resource, sys, time

_T0 = time.time()
_OUT = os.environ.get("PROCCPU_OUT")


def _dump():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = {"pid": os.getpid(), "ppid": os.getppid(), "argv": sys.argv[:8],
           "cpu": me.ru_utime + me.ru_stime, "children": kids.ru_utime + kids.ru_stime,
           "wall": time.time() - _T0, "torch": "torch" in sys.modules,
           "dynamo": "torch._dynamo" in sys.modules,
           "inductor": "torch._inductor.compile_fx" in sys.modules}
    try:
        with open(os.path.join(_OUT, f"{os.getpid()}.json"), "w") as f:
            json.dump(doc, f)
    except OSError:
        pass


if _OUT:
    atexit.register(_dump)
'''


def _site(venv: Path) -> Path:
    """The venv's site-packages (its own Python's purelib)."""
    exe = venv / "bin" / "python"
    if not exe.exists():
        raise SystemExit(f"{venv}: no bin/python (not a venv)")
    import subprocess

    out = subprocess.run([str(exe), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def install(venv: Path) -> None:
    site = _site(venv)
    (site / f"{HOOK}.py").write_text(HOOK_SOURCE)
    (site / PTH).write_text(f"import {HOOK}\n")
    print(f"installed in {site}")


def uninstall(venv: Path) -> None:
    site = _site(venv)
    for name in (f"{HOOK}.py", PTH):
        (site / name).unlink(missing_ok=True)
    print(f"removed from {site}")


def _kind(doc: dict) -> str:
    argv = doc.get("argv") or ["?"]
    head = " ".join(argv[:3]) if argv[0] == "-m" else Path(str(argv[0])).name
    if argv[0] == "-c":
        head = "-c (pytest-xdist workers, inline programs)"
    return ("torch+inductor " if doc.get("inductor") else "torch " if doc.get("torch")
            else "") + head[:70]


def report(out: Path, top: int) -> None:
    docs = [json.loads(p.read_text()) for p in out.glob("*.json")]
    if not docs:
        raise SystemExit(f"{out}: no process wrote a record (PROCCPU_OUT set? hook installed?)")
    cpu: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for d in docs:
        cpu[_kind(d)] += d["cpu"]
        count[_kind(d)] += 1
    total = sum(d["cpu"] for d in docs)
    with_torch = [d for d in docs if d.get("torch")]
    print(f"{len(docs)} processes, {total:.0f} CPU-s of their own")
    print(f"{len(with_torch)} imported torch: {sum(d['cpu'] for d in with_torch):.0f} CPU-s")
    print(f"{'CPU-s':>8} {'count':>5}  kind")
    for kind, seconds in cpu.most_common(top):
        print(f"{seconds:8.1f} {count[kind]:5d}  {kind}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    for name in ("install", "uninstall"):
        sub.add_parser(name).add_argument("venv", type=Path)
    r = sub.add_parser("report")
    r.add_argument("out", type=Path)
    r.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    if args.what == "install":
        install(args.venv)
    elif args.what == "uninstall":
        uninstall(args.venv)
    else:
        report(args.out, args.top)


if __name__ == "__main__":
    main()

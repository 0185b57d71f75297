"""Mutation fuzzer: dyncli on damaged and hostile inputs, seeded from the repo's own test data.

Every case is a mutation of a real file of ``tests/data`` (TORCH_LOGS text logs, TORCH_TRACE
traces, PGO pickles) or a hand-made hostile input (long lines, huge numbers, deep JSON,
shared-reference pickles, damaged gzip), run through the real command line
(``dyncli.cli.main``) in a forked child of this process, with a wall-clock limit. A case
fails when the child:

- prints a traceback (crash; reported by the dyncli function it came from),
- exits with a code other than 0, 1 or 2 (130 for Ctrl-C is never sent here),
- runs past ``--timeout`` seconds (hang; the child is killed),
- peaks above ``--max-rss`` MB of resident memory (``ru_maxrss`` of the child, which
  includes the ~50 MB of the interpreter and dyncli it inherits).

Usage (from the repo root)::

    python benchmarks/fuzz.py --seed 1 --text 10000 --trace 3000 --pickle 2000 --json fuzz.json
    python benchmarks/fuzz.py --seed 1 --text 60 --trace 30 --pickle 30     # CI's budget

Issue 22 added two kinds: ``--opcode`` (opcode-level pickles: memo bombs, stack floods, deep
MARKs, random opcode streams; measured for time and peak RSS like every case) and ``--inject``
(hostile names in PGO state and logs; a case also fails when a control character of the input
reaches stdout or stderr, or when ``--format python`` is more than suggest's statements).

``--keep DIR`` copies every failing case there (to turn into a regression file under
``tests/data/fuzz``). Exit status: 0 when every case passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import random
import re
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "unit"))

import suggest_fake_pgo as fake  # noqa: E402

# ------------------------------------------------------------------------- seeds


def seeds() -> dict[str, list[bytes]]:
    """The real files every mutation starts from."""
    logs = [p.read_bytes() for p in sorted((DATA / "logs").glob("*.log"))]
    traces = [p.read_bytes() for p in sorted((DATA / "traces").glob("*/*.log"))]
    pickles = [p.read_bytes() for p in sorted(DATA.glob("pgo/*/dynamo/code_state_*.pkl"))]
    return {"text": logs, "trace": traces, "pickle": pickles}


# ---------------------------------------------------------------- byte mutations

_SURROGATE = "\udcff\ud800x".encode("utf-8", "surrogatepass")
_LONG_PARTS = [b"(", b" (", b"[", b", ", b" ", b"# a:1 in f ", b"\t", b":1", b"a", b" as dynamic (from ",
               b"You marked ", b"Not all values of ", b"  # ", b"+- ", b"=", b";  ", b"1"]


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[:rng.randrange(len(data) + 1)]


def flip(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.choice((1, 2, 8, 64))):
        if buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
    return bytes(buf)


def huge_number(rng: random.Random, data: bytes) -> bytes:
    runs = list(re.finditer(rb"\d+", data[:2_000_000]))
    if not runs:
        return data
    m = rng.choice(runs)
    digits = rng.choice((400, 4400, 20000))
    return data[:m.start()] + b"9" * digits + data[m.end():]


def long_line(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    part = rng.choice(_LONG_PARTS)
    size = rng.choice((40_000, 250_000, 1_000_000))
    at = rng.randrange(len(lines[i]) + 1)
    lines[i] = lines[i][:at] + part * (size // len(part)) + lines[i][at:]
    return b"\n".join(lines)


def surrogates(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    at = rng.randrange(len(lines[i]) + 1)
    bad = rng.choice((_SURROGATE, b"\xff\xfe", b"\xe2\x82", b"\x00"))
    lines[i] = lines[i][:at] + bad + lines[i][at:]
    return b"\n".join(lines)


def shuffle_lines(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    for _ in range(rng.choice((1, 5, 50))):
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.randrange(3)
        if op == 0:
            lines[a], lines[b] = lines[b], lines[a]
        elif op == 1:
            lines.insert(a, lines[b])
        elif len(lines) > 1:
            del lines[a]
    return b"\n".join(lines)


def tree_end(rng: random.Random, data: bytes) -> bytes:
    """Cut the log right after a guard tree's ``+- `` (the IndexError of issue 13)."""
    cuts = [m.end() for m in re.finditer(rb"\+- ", data)]
    return data[:rng.choice(cuts)] if cuts else data + b"\n" + data.split(b"]", 1)[0] + b"] +- "


def repeat_prefix(rng: random.Random, data: bytes) -> bytes:
    """A record repeated many times: tests streaming of records that share a prefix."""
    lines = [ln for ln in _lines(data) if ln.strip()]
    line = rng.choice(lines) if lines else data
    return data + b"\n" + (line + b"\n") * rng.choice((1000, 20000))


# Messages built to hit each pattern's worst case (issue 13, class 7): n is the repeat count.
HOSTILE_MESSAGES: list[Callable[[int], bytes]] = [
    lambda n: b"create_symbol s0 = 1 for " + b"a [1" * n,
    lambda n: b"create_symbol s0 = 1 for x [2, 4] " + b"(a:1 in " * n,
    lambda n: b"marking " + b" as dynamic (from x" * n,
    lambda n: b"eval Eq(s0, 1) [guard added] x  # " + b"(:1 in " * n + b"a",
    lambda n: b"| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(" + b"a, b, DispatchKeySet(" * n,
    lambda n: b"Graph break in user code at " + b"a:1" + b" " * (4 * n) + b"x",
    lambda n: b"Recompiling function f in " + b"a:1 " * n,
    lambda n: b"You marked " * n + b"x as dynamic but your code specialized it",
    lambda n: b"Not all values of " * n + b" are valid because x",
    lambda n: b"set_replacement s0 = " + b"a (b " * n,
    lambda n: b'  File "a.py", line 1, in f' + b" " * (4 * n) + b"x",
]


def hostile_line(rng: random.Random, data: bytes) -> bytes:
    """A glog line of the file's own prefix carrying a message built against one pattern."""
    prefixes = re.findall(rb"^(?:\[rank\d+\]:)?[VIWEC]\d{4} [^\n]{0,200}?\] (?:\[[^\]\n]*\] )*",
                          data[:200_000], re.M)
    prefix = rng.choice(prefixes) if prefixes else b"V1122 01:19:36.607000 7042 torch/x.py:1] "
    message = rng.choice(HOSTILE_MESSAGES)(rng.choice((10_000, 60_000)))
    lines = _lines(data)
    lines.insert(rng.randrange(len(lines) + 1), prefix + message)
    return b"\n".join(lines)


TEXT_MUTATIONS: list[Callable[[random.Random, bytes], bytes]] = [
    truncate, flip, huge_number, long_line, surrogates, shuffle_lines, tree_end, repeat_prefix,
    hostile_line, hostile_line,
]


# ---------------------------------------------------------------- trace mutations

_WRONG: list[Any] = [None, [], ["a", 1], {}, {"x": [1]}, "string", "1e999", 10**400, -1, 2**70,
                     1.5, True, "\udcff", "a" * 5000]


def _mutate_value(rng: random.Random, value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict) and value and depth < 4:
        key = rng.choice(list(value))
        value = dict(value)
        value[key] = _mutate_value(rng, value[key], depth + 1) if rng.random() < 0.6 else rng.choice(_WRONG)
        return value
    if isinstance(value, list) and value and depth < 4:
        value = list(value)
        i = rng.randrange(len(value))
        value[i] = _mutate_value(rng, value[i], depth + 1) if rng.random() < 0.6 else rng.choice(_WRONG)
        return value
    return rng.choice(_WRONG)


def wrong_types(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    envelopes = [i for i, ln in enumerate(lines) if b"] {" in ln]
    for _ in range(rng.choice((1, 3, 20))):
        if not envelopes:
            break
        i = rng.choice(envelopes)
        head, _, body = lines[i].partition(b"] ")
        try:
            env = json.loads(body)
        except (ValueError, RecursionError):  # a line an earlier mutation made deep
            continue
        text = json.dumps(_mutate_value(rng, env), ensure_ascii=False)
        text = text.replace('"1e999"', "1e999") if rng.random() < 0.5 else text  # -> Infinity
        lines[i] = head + b"] " + text.encode("utf-8", "surrogatepass")
    return b"\n".join(lines)


def deep_json(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    envelopes = [i for i, ln in enumerate(lines) if b"] {" in ln] or [0]
    i = rng.choice(envelopes)
    n = rng.choice((1000, 100_000))
    head = lines[i].split(b"] ", 1)[0] if b"] " in lines[i] else b"V1122 01:19:01.836000 1 a.py:1"
    lines[i] = head + b'] {"artifact": ' + b"[" * n + b"]" * n + b"}"
    return b"\n".join(lines)


def payload_long(rng: random.Random, data: bytes) -> bytes:
    """A long payload line (graph, guards, fail_reason) of a kept record."""
    lines = _lines(data)
    payloads = [i for i, ln in enumerate(lines) if ln.startswith(b"\t")]
    if not payloads:
        return long_line(rng, data)
    i = rng.choice(payloads)
    part = rng.choice([*_LONG_PARTS, b"TENSOR_MATCH: check_tensor(", b"LAMBDA_GUARD: ", b"#"])
    lines[i] = lines[i] + part * (rng.choice((40_000, 250_000)) // len(part))
    return b"\n".join(lines)


HOSTILE_PAYLOADS: list[Callable[[int], bytes]] = [
    lambda n: b"| +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(" + b"a), b, " * n,
    lambda n: b"| +- LAMBDA_GUARD: " + b"x.size() " * n + b"#",
    lambda n: b"| +- LAMBDA_GUARD: L['x'].size()[0] == 2  # " + b"# a" * n,
    lambda n: b"        add: \"f32[4]\" = x" + b" " * (4 * n) + b"y",
    lambda n: b"    def forward(self, " + b"a" * (4 * n) + b")",
    lambda n: b"Graph break in user code at " + b"a:1" * n,
]


def hostile_record(rng: random.Random, data: bytes) -> bytes:
    """A kept trace record whose payload or fail_reason is built against one pattern."""
    n = rng.choice((10_000, 60_000))
    head = b"V1122 01:19:01.836000 4440 torch/_dynamo/guards.py:1]"
    if rng.random() < 0.3:
        reason = "Dynamo recompile limit exceeded" + " currently set to 8" * (n // 4) + " x" * n
        env = {"compilation_metrics": {"fail_type": "RecompileLimitExceeded", "fail_reason": reason},
               "frame_id": 0, "frame_compile_id": 1, "attempt": 0}
        record = head + b" " + json.dumps(env).encode()
    else:
        kind = rng.choice(("dynamo_cpp_guards_str", "dynamo_output_graph", "artifact"))
        meta: dict[str, Any] = {"name": "dynamo_graph_break_reason", "encoding": "string"} \
            if kind == "artifact" else {}
        env = {kind: meta, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "0"}
        record = (head + b" " + json.dumps(env).encode() + b"\n\t"
                  + rng.choice(HOSTILE_PAYLOADS)(n))
    lines = _lines(data)
    at = rng.randrange(len(lines) + 1)
    while at < len(lines) and lines[at].startswith(b"\t"):
        at += 1
    lines.insert(at, record)
    return b"\n".join(lines)


TRACE_MUTATIONS = [wrong_types, wrong_types, deep_json, payload_long, truncate, flip, huge_number,
                   long_line, surrogates, shuffle_lines, hostile_record, hostile_record]


# ---------------------------------------------------------------- gzip damage


def gzip_damage(rng: random.Random, data: bytes) -> bytes:
    packed = bytearray(gzip.compress(data, compresslevel=1))
    kind = rng.randrange(4)
    if kind == 0:  # corrupt header
        packed[3] = 0xFF
    elif kind == 1:  # bad CRC
        packed[-8] ^= 0xFF
    elif kind == 2:  # truncated stream
        del packed[rng.randrange(10, max(11, len(packed))):]
    else:  # a flipped byte in the deflate data
        if len(packed) > 20:
            packed[rng.randrange(10, len(packed) - 8)] ^= 0x55
    return bytes(packed)


# ---------------------------------------------------------------- pickle cases


def _bomb(depth: int, width: int) -> list[Any]:
    node: list[Any] = [1]
    for _ in range(depth):
        node = [node] * width
    return node


def hash_bomb(depth: int = 40) -> bytes:
    """A dict keyed by ``depth`` levels of shared pairs: hashing the key costs 2**depth."""
    ops = b"\x80\x02}q\x00K\x01\x85q\x010"  # PROTO 2, {}, (1,) memoized at 1
    for i in range(1, depth + 1):  # (t_i, t_i) memoized at i + 1
        ops += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86q" + bytes([i + 1]) + b"0"
    return ops + b"h" + bytes([depth + 1]) + b"K\x01s."


def build_on_token() -> bytes:
    """BUILD on torch's AutoDynamic token: would set attributes on a shared object."""
    good = fake.dumps({("/a.py", 1, "f"): {"L['x']": fake.tensor(fake.DYN, 2)}})
    return good[:-1] + (b"\x8c\x11torch._dynamo.pgo\x8c\x0bAutoDynamic\x93K\x00\x85R"
                        b"}\x8c\x07_value_K\x07sb0.")


def hostile_pickle(rng: random.Random) -> bytes:
    """Valid pickles of PGO classes with hostile values (issue 13, class 6)."""
    kind = rng.randrange(11)
    if kind == 9:
        return hash_bomb(rng.choice((30, 40, 60)))
    if kind == 10:
        return build_on_token()
    entry: Any
    if kind == 0:
        entry = fake.tensor(fake.DYN, 8)
        entry.size = _bomb(rng.choice((4, 8)), rng.choice((20, 40)))  # shared nested lists
    elif kind == 1:
        entry = fake.FrameStateSizeEntry(scalar=fake.DYN, size=(float("inf"), 2),
                                         stride=(10**400, 1))
    elif kind == 2:
        entry = fake.tensor(*([7] * rng.choice((100_000, 1_000_000))))
    elif kind == 3:
        entry = fake.scalar(10**5000 if rng.random() < 0.5 else float("nan"))
    else:
        entry = fake.tensor(fake.DYN, 3)
    line: Any = float("inf") if kind == 4 else 7
    name = "(" * 5000 if kind == 5 else "f"
    source = "(" * 5000 if kind == 6 else "L['x']"
    frames = {("/a.py", line, name): {source: entry}}
    if kind == 7:
        frames = {(f"/f{i}.py", i, "g"): {f"L['x{j}']": fake.tensor(fake.DYN, j) for j in range(50)}
                  for i in range(2000)}
    data = fake.dumps(frames)
    if kind == 8:  # an oversized FRAME length in a protocol 4+ pickle
        data = data[:2] + b"\x95" + (2**62).to_bytes(8, "little") + data[11:]
    return data


def opcode_pickle(rng: random.Random, seed: bytes) -> bytes:
    """An opcode-level pickle (issue 22, classes 1-2): a memo bomb, a stack flood, deep MARKs,
    a huge FRAME, or a random stream of opcodes with plausible arguments, often spliced into a
    real PGO state. The campaign measures each case's time and peak RSS."""
    kind = rng.randrange(8)
    if kind == 0:  # LONG_BINPUT / BINPUT at a huge index: the C memo is sized from it
        index = rng.choice((1 << 20, 1 << 24, 1 << 26, 1 << 30))
        return b"\x80\x04N" + b"r" + index.to_bytes(4, "little") + b"."
    if kind == 1:  # DUP flood
        return b"\x80\x04N" + b"2" * rng.choice((1 << 20, 8 << 20, 30 << 20)) + b"."
    if kind == 2:  # MARK + BINGET x N
        return b"\x80\x04N\x94(" + b"h\x00" * rng.choice((1 << 18, 4 << 20, 15 << 20)) + b"1."
    if kind == 3:  # MARKs nested deep, then a tuple of them
        n = rng.choice((1000, 100_000, 5 << 20))
        return b"\x80\x04" + b"(" * n + b")" + b"t" * n + b"."
    if kind == 4:  # a FRAME claiming more than the file
        return b"\x80\x04\x95" + rng.choice((2**62, 2**40, 100)).to_bytes(8, "little") + b"N."
    if kind == 5:  # many small objects appended to one list (memory per opcode byte)
        n = rng.choice((1 << 16, 1 << 20, 8 << 20))
        return b"\x80\x04]\x94(" + b"]" * min(n, 999) + b"e" + (b"h\x00(" + b"]" * 999 + b"e") * (n // 1000) + b"."
    ops = [bytes([op.code.encode("latin-1")[0]]) for op in _OPCODES]
    body = bytearray()
    for _ in range(rng.randrange(1, 400)):
        body += rng.choice(ops)
        body += bytes(rng.randrange(256) for _ in range(rng.choice((0, 0, 1, 1, 2, 4, 8))))
    if kind == 6 and len(seed) > 20:  # spliced into a real state
        at = rng.randrange(11, len(seed) - 1)
        return seed[:at] + bytes(body) + seed[at:]
    return b"\x80" + bytes([rng.choice((2, 4, 5))]) + bytes(body) + b"."


def _opcodes() -> list[Any]:
    import pickletools

    return list(pickletools.opcodes)


_OPCODES = _opcodes()

# Names that an input can carry into a human view or generated code (issue 22, classes 11-14).
HOSTILE_NAMES = ["x\x1b]0;pwned\x07", "a\nimport os; os.system('touch pwned')\n", "[bold]x[/bold]",
                 "x[/yellow]", "L['$(touch pwned)']", "\x9b2J\x1b[2J", "a\rb", "\u202eevil",
                 "'; touch pwned; '", "\"$(id)\"", "`id`", "x\\", "[link=https://x]y"]


def injection_pickle(rng: random.Random) -> bytes:
    """A PGO state whose file, function and source names carry control and shell characters."""
    def name() -> str:
        return "".join(rng.choice(HOSTILE_NAMES) for _ in range(rng.randrange(1, 3)))

    frames = {(f"/{name()}.py", rng.randrange(1, 99), name()): {
        rng.choice([f"L[{name()!r}]", f"L['x'][{name()!r}]", f"L['self'].{name()}", name(),
                    "L['x']"]): fake.tensor(fake.DYN, 3) for _ in range(rng.randrange(1, 4))}
              for _ in range(rng.randrange(1, 3))}
    return fake.dumps(frames)


def injection_log(rng: random.Random, seed: bytes) -> bytes:
    """A real log with hostile text put where names go (function names, sources, messages)."""
    lines = _lines(seed)
    for _ in range(rng.randrange(1, 20)):
        i = rng.randrange(len(lines))
        hostile = rng.choice(HOSTILE_NAMES).encode("utf-8", "surrogatepass")
        line = lines[i]
        for needle in (b"L['x']", b"forward", b"'", b" "):
            if needle in line:
                line = line.replace(needle, needle[:1] + hostile + needle[1:], 1)
                break
        lines[i] = line
    return b"\n".join(lines)


def pickle_case(rng: random.Random, seed: bytes) -> bytes:
    r = rng.random()
    if r < 0.35:
        return hostile_pickle(rng)
    if r < 0.55:
        return truncate(rng, seed)
    return flip(rng, seed)


# ---------------------------------------------------------------- running a case


@dataclass
class Outcome:
    kind: str
    mutation: str
    code: int | None
    seconds: float
    rss_mb: float
    crash: str = ""
    args: list[str] = field(default_factory=list)
    leak: str = ""  # a control character of an input in the output, or code from a name


def _child(args: list[str], out: str, err: str) -> None:
    fd_out = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    fd_err = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd_out, 1)
    os.dup2(fd_err, 2)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False), encoding="utf-8", line_buffering=True)
    sys.stdin = io.TextIOWrapper(io.BytesIO(b""))
    sys.argv = ["dyncli", *args]
    code = 0
    try:
        from dyncli.cli import main

        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 99
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _site(stderr: str) -> str:
    """``ExcType at dyncli/x.py:func`` from the last dyncli frame of a traceback."""
    frames = re.findall(r'File "[^"]*?(dyncli/[^"]+)", line \d+, in (\S+)', stderr)
    exc = re.findall(r"^(\w[\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b)", stderr, re.M)
    where = f"{frames[-1][0]}:{frames[-1][1]}" if frames else "?"
    return f"{exc[-1] if exc else 'Traceback'} at {where}"


def run(args: list[str], workdir: Path, timeout: float) -> tuple[int | None, float, float, str]:
    """(exit code or None on a hang, seconds, peak RSS MB, crash site or '') of one CLI run."""
    out, err = str(workdir / "stdout"), str(workdir / "stderr")
    r, w = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        _child(args, out, err)
    os.close(w)
    ready, _, _ = select.select([r], [], [], timeout)
    hung = not ready
    if hung:
        os.kill(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    os.close(r)
    seconds = time.perf_counter() - start
    rss = usage.ru_maxrss / 1024
    if hung:
        return None, seconds, rss, "hang"
    code = os.waitstatus_to_exitcode(status)
    text = Path(err).read_text("utf-8", "replace")
    crash = _site(text) if "Traceback (most recent call last)" in text or code == 99 else ""
    return code, seconds, rss, crash


def leak(args: list[str], workdir: Path) -> str:
    """What an output of the last run let through: a control character (C0 but newline, ESC,
    DEL, C1, bidi) on stdout or stderr, or --format python text that is more than the
    import, assignment and mark_dynamic calls suggest writes."""
    import ast

    from dyncli.textsafe import UNSAFE

    for stream in ("stdout", "stderr"):
        text = (workdir / stream).read_bytes().decode("utf-8", "surrogateescape")
        m = UNSAFE.search(text.replace("\n", ""))
        if m:
            return f"{stream}: {m.group()!r}"
    if "python" in args:
        try:
            tree = ast.parse((workdir / "stdout").read_text("utf-8", "replace"))
        except SyntaxError:
            return "python: not valid Python"
        for node in tree.body:
            if not isinstance(node, (ast.Import, ast.Assign, ast.Expr)) or (
                    isinstance(node, ast.Expr) and not isinstance(node.value, ast.Call)):
                return f"python: a {type(node).__name__} statement"
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and sub is not getattr(node, "value", None):
                    return "python: a call inside an argument"
    return ""


# ---------------------------------------------------------------- the campaign


def _write(workdir: Path, name: str, data: bytes) -> Path:
    path = workdir / name
    path.write_bytes(data)
    return path


def make_case(rng: random.Random, kind: str, pool: dict[str, list[bytes]],
              workdir: Path) -> tuple[str, list[str]]:
    """Write one mutated input under ``workdir``; (mutation name, CLI args)."""
    for old in workdir.glob("case*"):
        if old.is_dir():
            shutil.rmtree(old)
        else:
            old.unlink()
    out = workdir / "out"
    if kind == "inject":
        out.mkdir(exist_ok=True)
        if rng.random() < 0.5:
            case = workdir / "case"
            (case / "dynamo").mkdir(parents=True)
            (case / "dynamo" / "code_state_fuzz_None_.pkl").write_bytes(injection_pickle(rng))
            form = rng.choice(("env", "shell", "toml", "python"))
            return f"names-{form}", ["suggest", "--pgo-dir", str(case), "--include-params",
                                     "--format", form]
        data = injection_log(rng, rng.choice(pool["text"]))
        name = rng.choice(HOSTILE_NAMES).replace("/", "|").replace("\x00", "")
        return "log-text", ["diagnose", str(_write(workdir, f"case{name}.log", data))]
    if kind in ("pickle", "opcode"):
        data = (opcode_pickle if kind == "opcode" else pickle_case)(rng, rng.choice(pool["pickle"]))
        case = workdir / "case"
        (case / "dynamo").mkdir(parents=True)
        (case / "dynamo" / "code_state_fuzz_None_.pkl").write_bytes(data)
        if rng.random() < 0.3:  # a good file beside the bad one must still be used
            (case / "dynamo" / "code_state_good_None_.pkl").write_bytes(pool["pickle"][0])
        args = ["suggest", "--pgo-dir", str(case), "--json", str(out / "s.json")]
        if rng.random() < 0.5:
            args.append("--include-params")
        out.mkdir(exist_ok=True)
        return kind, args
    mutations = TEXT_MUTATIONS if kind == "text" else TRACE_MUTATIONS
    mutate = rng.choice(mutations)
    data = rng.choice(pool[kind])
    data = mutate(rng, data)
    if rng.random() < 0.25:
        data = mutate_again = rng.choice(mutations)(rng, data)
        del mutate_again
    name = mutate.__name__
    if rng.random() < 0.15:
        data, name = gzip_damage(rng, data), name + "+gzip"
    case = _write(workdir, "case.log", data)
    out.mkdir(exist_ok=True)
    args = ["diagnose", str(case), "--json", str(out / "d.json")]
    if rng.random() < 0.2:
        args += ["--html", str(out / "d.html")]
    if rng.random() < 0.1:
        args.append("--strict")
    if kind == "trace" and rng.random() < 0.25:
        args = ["suggest", "--from-trace", str(case), "--json", str(out / "s.json")]
    return name, args


def campaign(counts: dict[str, int], seed: int, timeout: float, max_rss: float,
             keep: Path | None, progress: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    pool = seeds()
    from dyncli import cli  # noqa: F401 - imported once here, inherited by every child
    from dyncli.diagnose import html, read, read_trace  # noqa: F401
    from dyncli.suggest import allowlist, render  # noqa: F401

    results: list[Outcome] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dyncli-fuzz-") as tmp:
        workdir = Path(tmp)
        for kind, n in counts.items():
            for i in range(n):
                mutation, args = make_case(rng, kind, pool, workdir)
                code, seconds, rss, crash = run(args, workdir, timeout)
                leaked = leak(args, workdir) if kind == "inject" and code is not None else ""
                outcome = Outcome(kind, mutation, code, seconds, rss, crash, args, leaked)
                results.append(outcome)
                bad = crash or code not in (0, 1, 2) or rss > max_rss or leaked
                if bad and keep is not None:
                    dest = keep / f"{kind}-{i}-{mutation}"
                    dest.mkdir(parents=True, exist_ok=True)
                    for p in workdir.glob("case*"):
                        (shutil.copytree if p.is_dir() else shutil.copy)(p, dest / p.name)
                    shutil.copy(workdir / "stderr", dest / "stderr")
                    (dest / "args.json").write_text(json.dumps(args))
                if progress and (bad or (i + 1) % 200 == 0):
                    status = crash or leaked or f"exit {code}" if bad else "ok"
                    print(f"[{kind} {i + 1}/{n}] {mutation}: {status} "
                          f"({seconds:.2f} s, {rss:.0f} MB)", file=sys.stderr, flush=True)
    return summarize(results, time.perf_counter() - started, timeout, max_rss)


def summarize(results: list[Outcome], wall: float, timeout: float, max_rss: float) -> dict[str, Any]:
    by_kind: dict[str, Any] = {}
    for kind in dict.fromkeys(o.kind for o in results):
        rows = [o for o in results if o.kind == kind]
        by_kind[kind] = {
            "cases": len(rows),
            "crashes": sum(bool(o.crash and o.crash != "hang") for o in rows),
            "hangs": sum(o.code is None for o in rows),
            "bad_exit": sum(o.code not in (0, 1, 2, None) and not o.crash for o in rows),
            "over_memory": sum(o.rss_mb > max_rss for o in rows),
            "leaks": sum(bool(o.leak) for o in rows),
            "exit_codes": dict(Counter(str(o.code) for o in rows)),
            "max_seconds": round(max(o.seconds for o in rows), 2),
            "peak_rss_mb": round(max(o.rss_mb for o in rows), 1),
            "mutations": dict(Counter(o.mutation.split("+")[0] for o in rows)),
        }
    sites = Counter(o.crash for o in results if o.crash and o.crash != "hang")
    return {"wall_s": round(wall, 1), "timeout_s": timeout, "max_rss_mb": max_rss,
            "kinds": by_kind, "crash_sites": dict(sites.most_common()),
            "slowest": [{"kind": o.kind, "mutation": o.mutation, "seconds": round(o.seconds, 2)}
                        for o in sorted(results, key=lambda o: -o.seconds)[:5]],
            "failures": sum(bool(o.crash) or o.code not in (0, 1, 2) or o.rss_mb > max_rss
                            or bool(o.leak) for o in results)}


# ------------------------------------------------- the classes of issue 22, one case each


def class_cases(workdir: Path) -> list[tuple[str, list[str]]]:
    """(class, CLI args) of one representative case per hostile class of issue 22, written
    under ``workdir``: the table in docs/reliability.md."""
    import struct

    def pgo(name: str, data: bytes) -> str:
        d = workdir / name / "dynamo"
        d.mkdir(parents=True)
        (d / f"code_state_{name}_None_.pkl").write_bytes(data)
        return str(d.parent)

    log = (DATA / "logs" / "auto_dynamic_batch.log").read_bytes()
    cases: list[tuple[str, list[str]]] = []
    memo = b"\x80\x04N" + b"r" + struct.pack("<I", 1 << 26) + b"."
    cases.append(("1 memo index 2**26 (9 bytes)", ["suggest", "--pgo-dir", pgo("memo", memo)]))
    cases.append(("2 30 MB of DUP", ["suggest", "--pgo-dir", pgo("dup", b"\x80\x04N" + b"2" * (30 << 20) + b".")]))
    cases.append(("2 MARK + BINGET x 15M", ["suggest", "--pgo-dir", pgo("mark", b"\x80\x04N\x94(" + b"h\x00" * (15 << 20) + b"1.")]))
    many = workdir / "many" / "dynamo"
    many.mkdir(parents=True)
    good = (DATA / "pgo" / "mlp" / "dynamo" / "code_state_mlp_None_.pkl").read_bytes()
    for i in range(20_000):
        (many / f"code_state_j{i}_None_.pkl").write_bytes(good)
    cases.append(("3 20,000 valid PGO files", ["suggest", "-q", "--pgo-dir", str(many.parent)]))
    slow = workdir / "slow" / "dynamo"
    slow.mkdir(parents=True)
    for i in range(4):
        (slow / f"code_state_h{i}_None_.pkl").write_bytes(hash_bomb(40))
    cases.append(("3 four hash-bomb files", ["suggest", "--pgo-dir", str(slow.parent)]))
    wide = fake.dumps({("/m/a.py", 1, "fwd"): {f"L['x{i}']": fake.scalar(fake.DYN) for i in range(50_000)}})
    cases.append(("4 one frame of 50,000 sources", ["suggest", "--pgo-dir", pgo("wide", wide)]))
    blank = workdir / "blank.log.gz"
    with gzip.open(blank, "wb", 9) as f:
        f.write(b"\n" * (64 << 20))
    cases.append(("5 65 KB .gz of 64 Mi empty lines", ["diagnose", str(blank)]))
    blank2 = workdir / "blank2.log.gz"
    with gzip.open(blank2, "wb", 9) as f:
        f.write(log + b"\n" * (256 << 20))
    cases.append(("5 a log, then 256 Mi empty lines (.gz)", ["diagnose", str(blank2)]))
    cases.append(("5 the same, suggest --from-trace", ["suggest", "--from-trace", str(blank2)]))
    fifo = workdir / "fifo"
    os.mkfifo(fifo)
    cases.append(("6 --config is a FIFO", ["diagnose", "--config", str(fifo), str(DATA / "logs" / "auto_dynamic_batch.log")]))
    cases.append(("6 input FIFO with no writer", ["diagnose", str(fifo)]))
    cases.append(("6 /dev/urandom as a log", ["diagnose", "/dev/urandom"]))
    (workdir / "x[").mkdir()
    marked = workdir / "x[" / "yellow].log"
    marked.write_bytes(log)
    cases.append(("7 rich markup in a path", ["diagnose", str(marked)]))
    shapes = workdir / "shapes.csv"
    shapes.write_text("batch,seq\n" + "1" * (200 << 10) + ",2\n")
    cases.append(("8 --shapes CSV field of 200 KB", ["bench", str(ROOT / "examples" / "model.py") + ":build", "--shapes", str(shapes), "--device", "cpu"]))
    big_int = workdir / "bigint" / "autodyn.toml"
    big_int.parent.mkdir()
    big_int.write_text("[diagnose]\nlimit = " + "1" * 5000 + "\n")
    cases.append(("9 TOML int of 5,000 digits", ["diagnose", "--config", str(big_int), str(DATA / "logs" / "auto_dynamic_batch.log")]))
    esc = injection_pickle(random.Random(5))
    cases.append(("11-14 hostile names, --format python", ["suggest", "--pgo-dir", pgo("names", esc), "--include-params", "--format", "python"]))
    cases.append(("11-14 hostile names, --format toml", ["suggest", "--pgo-dir", str(workdir / "names"), "--include-params", "--format", "toml"]))
    cases.append(("11 ESC in a log's names", ["diagnose", str(_write(workdir, "case\x1b]0;t\x07.log", injection_log(random.Random(3), log)))]))
    cases.append(("11 ESC in a missing file's name", ["diagnose", str(workdir / "nope\x1b[2J.log")]))
    return cases


def class_table(timeout: float) -> str:
    """Run each of :func:`class_cases` once; a markdown table (exit, seconds, peak RSS)."""
    from dyncli import cli  # noqa: F401 - imported once here, inherited by every child
    from dyncli.diagnose import html, read, read_trace  # noqa: F401
    from dyncli.suggest import allowlist, render  # noqa: F401

    rows = ["| class | exit | s | peak RSS MB | leak | first line of stderr |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="dyncli-classes-") as tmp:
        workdir = Path(tmp)
        for name, args in class_cases(workdir):
            code, seconds, rss, crash = run(args, workdir, timeout)
            leaked = leak(args, workdir) if code is not None else ""
            err = (workdir / "stderr").read_text("utf-8", "replace").strip().splitlines()
            first = next((line for line in err if line.startswith(("Error", "Warning"))), err[0] if err else "")
            first = first.replace("|", "\\|")[:110]
            rows.append(f"| {name} | {'hang' if code is None else code}{' ' + crash if crash else ''} "
                        f"| {seconds:.2f} | {rss:.0f} | {leaked or '-'} | {first} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--text", type=int, default=100, help="text-log cases")
    ap.add_argument("--trace", type=int, default=50, help="trace cases")
    ap.add_argument("--pickle", type=int, default=50, help="PGO pickle cases")
    ap.add_argument("--opcode", type=int, default=50, help="opcode-level pickle cases")
    ap.add_argument("--inject", type=int, default=50, help="output-injection cases")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds before a case is a hang")
    ap.add_argument("--max-rss", type=float, default=150.0, help="MB of peak RSS allowed")
    ap.add_argument("--keep", type=Path, help="copy failing cases here")
    ap.add_argument("--json", type=Path, help="write the summary here")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--classes", action="store_true",
                    help="run one case of each hostile class of issue 22 and print a table")
    ns = ap.parse_args(argv)
    if ns.classes:
        print(class_table(ns.timeout))
        return 0
    summary = campaign({"text": ns.text, "trace": ns.trace, "pickle": ns.pickle,
                        "opcode": ns.opcode, "inject": ns.inject}, ns.seed,
                       ns.timeout, ns.max_rss, ns.keep, progress=not ns.quiet)
    text = json.dumps(summary, indent=2)
    if ns.json:
        ns.json.write_text(text + "\n")
    print(text)
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the regression files of tests/data/fuzz: one small damaged input per class of issue 13.

Each is a real file of tests/data (or a PGO pickle shaped like torch's) with the damage the
fuzzer (benchmarks/fuzz.py) or the issue's report found to crash or hang dyncli. Deterministic:
run it again and the same bytes come out. (``fuzz_*`` files are cases the fuzzer kept with
``--keep``, gzipped as found; this script does not make them.)

    python tests/data/fuzz/make_fuzz_cases.py
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent
sys.path.insert(0, str(DATA.parent / "unit"))

import suggest_fake_pgo as fake  # noqa: E402

LOG = (DATA / "logs" / "constraint_violation.log").read_bytes()
TREE_LOG = (DATA / "logs" / "int_specialization.log").read_bytes()  # guard trees, guards added
TRACE = next((DATA / "traces" / "constraint_violation").glob("*.log")).read_bytes()
GOOD_PKL = (DATA / "pgo" / "mlp" / "dynamo" / "code_state_mlp_None_.pkl").read_bytes()


def huge_numbers() -> bytes:
    """Class 1: a pid, a compile id, a line number and a size of 5,000 digits, each on a line
    of a kind the parser reads (create_symbol, guard added, set_replacement, TENSOR_MATCH)."""
    lines = TREE_LOG.splitlines(keepends=True)
    big = b"9" * 5000

    def first(word: bytes) -> int:
        return next(i for i, ln in enumerate(lines) if word in ln)

    i = first(b"] create_symbol ")
    lines[i] = re.sub(rb" \d+ torch/", b" " + big + b" torch/", lines[i], count=1)
    i = first(b"[guard added]")
    lines[i] = re.sub(rb"\[0/\d+\]", b"[0/" + big + b"]", lines[i], count=1)
    i = first(b"] set_replacement ")
    lines[i] = re.sub(rb"\.py:\d+\]", b".py:" + big + b"]", lines[i], count=1)
    i = first(b"+- TENSOR_MATCH")
    lines[i] = re.sub(rb"size=\[\d+", b"size=[" + big, lines[i], count=1)
    i = first(b"] Recompiling function ")
    lines[i] = re.sub(rb":\d+\s*$", b":" + big + b"\n", lines[i], count=1)
    return b"".join(lines)


def gz_variants() -> dict[str, bytes]:
    """Class 2: a corrupt header, a bad CRC, a truncated stream."""
    packed = gzip.compress(LOG, compresslevel=6, mtime=0)
    header = bytearray(packed)
    header[3] = 0xFF  # reserved FLG bits set
    crc = bytearray(packed)
    crc[-8] ^= 0xFF
    return {"bad_header.log.gz": bytes(header), "bad_crc.log.gz": bytes(crc),
            "truncated.log.gz": packed[: len(packed) // 2]}


def tree_end() -> bytes:
    """Class 3: the log ends right after a guard tree's ``+- ``."""
    cut = TREE_LOG.index(b"+- ") + 3
    return TREE_LOG[:cut]


def wrong_types() -> bytes:
    """Class 4: trace fields of the wrong type, a 400-digit time, 100k nested brackets."""
    out = []
    for line in TRACE.splitlines():
        head, sep, body = line.partition(b"] {")
        if not sep:
            out.append(line)
            continue
        env = json.loads(b"{" + body)
        kind = next(iter(env))
        meta = env[kind]
        if kind == "artifact":
            meta["name"] = [meta.get("name"), 1]
        elif kind == "describe_tensor":
            meta["describer_id"] = [1, 2]
        elif kind == "describe_source":
            meta["describer_id"] = {"a": 1}
        elif kind == "compilation_metrics":
            meta["restart_reasons"] = 7
            meta["entire_frame_compile_time_s"] = 10 ** 400
            meta["co_name"] = ["f"]
        elif kind in ("create_symbol", "guard_added", "guard_added_fast") and meta.get("user_stack"):
            meta["user_stack"][-1]["line"] = "12"
        elif kind == "dynamo_start" and meta.get("stack"):
            meta["stack"][-1]["line"] = 1e999
        out.append(head + b"] " + json.dumps(env).encode())
    out.append(b'V1122 01:19:39.552000 7081 torch/x.py:1] {"artifact": ' + b"[" * 100_000
               + b"]" * 100_000 + b"}")
    return b"\n".join(out) + b"\n"


def surrogates() -> bytes:
    """Class 5: lone surrogates (JSON ``\\udcff`` escapes) in a trace's names and sources."""
    return TRACE.replace(b"L['x']", b"L['x\\udcff\\ud800']").replace(
        b'"co_name": "branchy"', b'"co_name": "branchy\\udcff"')


def long_cell() -> bytes:
    """Class 8: a guard expression of 2 MB (one huge table cell)."""
    lines = LOG.splitlines(keepends=True)
    i = next(i for i, ln in enumerate(lines) if b"[guard added]" in ln)
    lines[i] = lines[i].replace(b"[guard added]", b"+ s77" * 400_000 + b" [guard added]", 1)
    return b"".join(lines)


def pickles() -> dict[str, bytes]:
    """Class 6: valid pickles of hostile data (no code runs; the data itself is the attack)."""
    bomb: list[object] = [1]
    for _ in range(8):
        bomb = [bomb] * 30  # 30**8 leaves in ~1 KB through shared references
    dag = fake.tensor(fake.DYN, 8)
    dag.size = bomb
    out = {
        "inf_line.pkl": fake.dumps({("/a.py", float("inf"), "f"): {"L['x']": fake.tensor(fake.DYN, 2)}}),
        "huge_stride.pkl": fake.dumps({("/a.py", 1, "f"): {"L['x']": fake.FrameStateSizeEntry(
            scalar=fake.DYN, size=(fake.DYN, 2), stride=(10 ** 400, 1))}}),
        "paren_source.pkl": fake.dumps({("/a.py", 1, "f"): {"(" * 3000: fake.tensor(fake.DYN, 2)}}),
        "shared_lists.pkl": fake.dumps({("/a.py", 1, "f"): {"L['x']": dag}}),
    }
    # a dict keyed by 40 levels of shared pairs: hashing it costs 2**40 (257 bytes)
    bomb_ops = b"\x80\x02}q\x00K\x01\x85q\x010"
    for i in range(1, 41):
        bomb_ops += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86q" + bytes([i + 1]) + b"0"
    out["hash_bomb.pkl"] = bomb_ops + b"h" + bytes([41]) + b"K\x01s."
    good = out["inf_line.pkl"]
    # BUILD on the shared AutoDynamic token (would change it for every later file)
    out["build_on_token.pkl"] = good[:-1] + (
        b"\x8c\x11torch._dynamo.pgo\x8c\x0bAutoDynamic\x93K\x00\x85R}\x8c\x07_value_K\x07sb0.")
    # an oversized FRAME length (protocol 4 pickles open with one)
    out["oversized_frame.pkl"] = good[:2] + b"\x95" + (2 ** 62).to_bytes(8, "little") + good[11:]
    return out


def main() -> None:
    files: dict[str, bytes] = {
        "huge_numbers.log": huge_numbers(),
        "tree_end.log": tree_end(),
        "surrogates_trace.log": surrogates(),
        "wrong_types_trace.log": wrong_types(),
        **gz_variants(),
    }
    for name, data in files.items():
        (HERE / name).write_bytes(data)
    (HERE / "long_cell.log.gz").write_bytes(gzip.compress(long_cell(), mtime=0))
    pgo = HERE / "pgo"
    pgo.mkdir(exist_ok=True)
    for name, data in pickles().items():
        (pgo / f"code_state_{name.removesuffix('.pkl')}_None_.pkl").write_bytes(data)
    (pgo / "code_state_good_None_.pkl").write_bytes(GOOD_PKL)


if __name__ == "__main__":
    main()

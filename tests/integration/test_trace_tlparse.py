"""Cross-check against tlparse (PyPI ``tlparse``, the reference reader of TORCH_TRACE).

For every captured trace file, the compile ids per frame, the failed compiles, the restarts
and the recompile reasons dyncli reports equal what tlparse extracts from the same file:
its ``compile_directory.json``, its ``failures_and_restarts.html`` table and the
``recompile_reasons`` payloads it writes. Skips cleanly when tlparse is not installed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from dyncli.diagnose.read_trace import diagnose_traces
from dyncli.logparse.events import split_id
from dyncli.logparse.trace_payload import decode_recompile_reasons

DATA = Path(__file__).resolve().parents[1] / "data"
TLPARSE = shutil.which("tlparse") or shutil.which("tlparse", path=str(Path(sys.executable).parent))
# every trace of every release under tests/data: traces/ (2.14.1), <version>/traces/, the
# compatibility corpus <version>/compat/{trace,ranks,pgo} (2.3.1 … 2.15.0); not fuzz cases
FILES = sorted(p for p in DATA.glob("**/dedicated_log_torch_trace*.log") if "fuzz" not in p.parts)
_ROW = re.compile(r"<a href='[^']*'>\[(?P<cid>[^\]]+)\]</a>\s*</td><td>\s*(?:<pre>)?\s*"
                  r"(?P<type>[^<]+?)\s*(?:</pre>)?\s*</td>")

def _guard(reason: str) -> str:
    return reason.split("  #", 1)[0].split(" # ", 1)[0].rstrip()


pytestmark = [pytest.mark.slow, pytest.mark.skipif(TLPARSE is None, reason="tlparse not installed")]


def _key(cid: str) -> str:
    return cid.split("_")[0]


def tlparse_facts(trace: Path, out: Path) -> dict[str, object]:
    run = subprocess.run([str(TLPARSE), str(trace), "-o", str(out), "--overwrite", "--no-browser"],
                         capture_output=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr.decode(errors="replace")[-2000:]
    directory = json.loads((out / "compile_directory.json").read_text())
    per_frame: dict[str, set[str]] = defaultdict(set)
    reasons: dict[str, list[str]] = {}
    for cid, entry in directory.items():
        # "[0/1]", "[0/1_1]"; under compiled autograd "[!0/2/0]": its capture !0's dynamo
        # compile 2/0, the frame "!0/2" (as dyncli names it)
        m = re.fullmatch(r"(?P<frame>(?:!\d+/)?\d+)/\d+(?:_\d+)?", cid[1:-1])
        if m is None:
            continue  # "[-/-]", "[!0/-/-]": records outside any compile
        per_frame[m["frame"]].add(_key(cid[1:-1]))
        for art in entry["artifacts"]:
            if art["name"].startswith("recompile_reasons"):
                text = (out / art["url"]).read_text()
                # the guard of each reason: dyncli reports it without torch's "# user code"
                # comment, as the text log does (issue 21); the comment is the row's user_*
                reasons[_key(cid[1:-1])] = [_guard(r.split("\nUser stack trace:")[0].strip())
                                            for r in decode_recompile_reasons(text)]
    failures: set[str] = set()
    restarts: set[str] = set()
    for m in _ROW.finditer((out / "failures_and_restarts.html").read_text()):
        (restarts if m["type"] == "RestartAnalysis" else failures).add(_key(m["cid"]))
    return {"frames": {f: sorted(ids) for f, ids in per_frame.items()}, "failures": failures,
            "restarts": restarts, "reasons": reasons}


def _bare(cid: str) -> str:
    return split_id(cid)[0]


def dyncli_facts(trace: Path) -> dict[str, object]:
    """dyncli's facts in tlparse's terms. tlparse knows no reset generations: a compile id
    seen again after torch._dynamo.reset() is one id to it, so generations are folded here
    (the ids as torch wrote them), and a reason list is the last generation's, as tlparse
    keeps the last artifact of an id."""
    d = diagnose_traces([trace], strict=True)
    assert d.trace is not None
    # tlparse lists a compile id the recompile limit refused under its frame; dyncli counts
    # only real compiles and reports the refused one as a recompile with compiled=False.
    refused: dict[str, set[str]] = defaultdict(set)
    for r in d.recompiles:
        if not r.compiled:
            refused[_bare(r.compile_id).split("/")[0]].add(_bare(r.compile_id))
    frames: dict[str, set[str]] = defaultdict(set)
    for f in d.frames:
        frames[_bare(f.frame_id)] |= {_bare(c) for c in f.compile_ids} | refused[_bare(f.frame_id)]
    return {
        "frames": {f: sorted(ids) for f, ids in frames.items()},
        "failures": {_bare(c.compile_id) for c in d.trace.failures},
        "restarts": {_bare(c.compile_id) for c in d.trace.compile_times if c.restart_reasons},
        "reasons": {_bare(r.compile_id): [x.split("\nUser stack trace:")[0].strip()
                                          for x in r.reasons] for r in d.recompiles},
    }


def _id(p: Path) -> str:
    return "/".join(p.relative_to(DATA).parts[:-1]) + "/" + p.name[26:40]


@pytest.mark.parametrize("trace", FILES, ids=[_id(p) for p in FILES])
def test_same_facts_as_tlparse(trace: Path, tmp_path: Path) -> None:
    assert dyncli_facts(trace) == tlparse_facts(trace, tmp_path / "tl_out")


def test_cross_check_covers_failures_restarts_and_reasons(tmp_path: Path) -> None:
    """The captured traces exercise every compared field at least once."""
    seen = [tlparse_facts(p, tmp_path / str(i)) for i, p in enumerate(FILES)]
    assert any(s["failures"] for s in seen) and any(s["restarts"] for s in seen)
    assert any(len(r) > 1 for s in seen for r in s["reasons"].values())  # type: ignore[attr-defined]

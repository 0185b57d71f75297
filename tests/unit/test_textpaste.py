"""The tolerant reader of pasted text (issue 33): torch's records where a paste put them, and
nothing from text that is not a log. Lines are from the real pastes of tests/data/pasted
(each test names its case); forms no public paste showed are made from such a line the way an
editor or a web page changes it, and say so."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dyncli.cli import app
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError, StrictError
from dyncli.logparse.events import ParseStats
from dyncli.logparse.glog import GLOG_RE
from dyncli.logparse.textlog import TextLogParser
from dyncli.logparse.textpaste import clean, normalize

ROOT = Path(__file__).resolve().parents[2]
PASTED = ROOT / "tests" / "data" / "pasted"


def _lines(case: str) -> list[bytes]:
    return (PASTED / case).read_bytes().splitlines()


@pytest.mark.parametrize(("case", "index", "done", "head"), [
    ("comfyui-9289.log", 0, "prefixes trimmed", b"V0812 03:17:45.177000 19120 Lib\\site-packages"),  # launcher stamp
    ("pytorch-138813.log", 0, "prefixes trimmed", b"[rank0]:V1029 11:10:10.715000 2621391 "),  # > quote
    ("vllm-8821.log", 3, "prefixes trimmed", b"[rank0]:V0925 13:34:27.040958 "),  # progress bar
    ("pytorch-128071.log", 0, "prefixes rebuilt", b"V0101 00:00:00.000000 0 /torch/_dynamo/guards.py:2772] [16/8] [__recompiles_verbose] Recompiling"),
    ("pytorch-128095.log", 0, "prefixes rebuilt", b"V0101 00:00:00.000000 0 ?:0] [47/0] [__graph_breaks] Graph break"),
    ("pytorch-120608.log", 1, "prefixes rebuilt", b"I0101 00:00:00.000000 0 torch.fx.experimental.symbolic_shapes:0] [0/1] create_symbol"),
    ("pytorch-135429.log", 0, "prefixes rebuilt", b"I0101 00:00:00.000000 0 torch.fx.experimental.symbolic_shapes:0] create_symbol"),
    ("torchdynamo-330.log", 1, "prefixes rebuilt", b"W0101 00:00:00.000000 0 torchdynamo.convert_frame:0] torchdynamo hit"),
    ("pytorch-93698.log", 1, "prefixes rebuilt", b"W0101 00:00:00.000000 0 torchdynamo.convert_frame:0] torchdynamo hit"),
    ("torchdynamo-281.log", 0, "prefixes rebuilt", b"W0101 00:00:00.000000 0 ?:0] torchdynamo hit recompilation"),
    # lovely-tensors#24: glog's level and date kept, its time and pid removed by the user
    ("lovely-tensors-24.log", 0, "prefixes rebuilt", b"V0101 00:00:00.000000 0 torch/_dynamo/exc.py:209] [0/0] [__graph_breaks] WON'T CONVERT forward"),
])
def test_normalize_finds_the_record(case: str, index: int, done: str, head: bytes) -> None:
    line, what = normalize(_lines(case)[index]) or (b"", "")
    assert what == done and line.startswith(head)
    assert GLOG_RE.match(line) is not None


@pytest.mark.parametrize("text", [
    b"  0%|          | 0/50 [00:00<?, ?it/s]", b"Traceback (most recent call last):",
    b"$ TORCH_LOGS=+recompiles python global_recompile.py", b"## Debug logs", b"```python",
    b"The guard `torch._dynamo hit config.recompile_limit (8)` means...", b"{\"frames\": []}",
    b"Recompiling function f in a.py:3",  # torch's words without torch's prefix: not a record
    b"W0627 mylib/train.py:12] step 3",  # a dated head of a file that is not torch's
])
def test_normalize_leaves_text_that_is_not_a_record(text: bytes) -> None:
    assert normalize(text) is None


def test_links_and_entities_of_a_paste_are_undone() -> None:
    """torchtune-1663 was pasted from VS Code, its paths became links; the issue's
    ``[model.py](http://_vscodecontentref_/3):120`` form and HTML entities (a page's source)
    are made here from real lines, as an editor or a web page makes them."""
    line = next(x for x in _lines("torchtune-1663.log") if b"Recompiling" in x)
    assert b"external_utils.py:38](https://" in line
    assert clean("in [model.py](http://_vscodecontentref_/3):120") == "in model.py:120"
    quoted = _lines("pytorch-143670.log")[2].replace(b"'", b"&#39;")
    fixed, _ = normalize(b"> " + quoted) or (b"", "")
    assert fixed.endswith(b"- 0/0: L['n'] == 1")
    d = diagnose_logs([PASTED / "torchtune-1663.log"])
    assert next(r.file for r in d.recompiles).endswith("torch/_dynamo/external_utils.py")


def test_crlf_pastes_read_as_lf(tmp_path: Path) -> None:
    """A paste saved on Windows: every line ends in CR LF."""
    src = PASTED / "comfyui-9289-tail.log"
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(src.read_bytes().replace(b"\n", b"\r\n"))
    a, b = diagnose_logs([src]), diagnose_logs([crlf])
    assert [(r.compile_id, r.reasons) for r in a.recompiles] == [(r.compile_id, r.reasons) for r in b.recompiles]
    assert b.stats.unrecognized == a.stats.unrecognized == 0


def test_orphan_lines_prove_what_they_belong_to() -> None:
    """pytorch-139474: rank 6's lines are the tail of a limit warning, its first line cut."""
    stats = ParseStats()
    events = list(TextLogParser(stats).parse(_lines("pytorch-139474.log")))
    limits = [e for e in events if type(e).__name__ == "RecompileLimit"]
    assert [(e.rank, e.partial, e.function) for e in limits] == [(6, True, "forward"), (3, False, "forward")]
    assert stats.partial == 1 and stats.unrecognized == 0


@pytest.mark.parametrize("name", ["README.md", "dyncli/cli.py", "pyproject.toml", "docs/diagnose.md",
                                  "tests/data/pasted/manifest.toml"])
def test_files_that_are_not_logs_are_refused(name: str) -> None:
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_logs([ROOT / name])


def test_json_is_not_a_torch_log(tmp_path: Path) -> None:
    doc = tmp_path / "x.json"
    doc.write_text('{\n  "frames": [],\n\n  "recompiles": []\n}\n')
    r = CliRunner().invoke(app, ["diagnose", str(doc)], env={"COLUMNS": "120", "NO_COLOR": "1"})
    assert r.exit_code == 2 and "not a torch log" in r.stderr


def test_strict_fails_on_torch_lines_it_did_not_understand(tmp_path: Path) -> None:
    """A torch record of no kind dyncli knows, inside a quoted paste: the paste is read, the
    record named as not understood, and it fails --strict. pytorch-138813's [__perf_hints]
    records (`Using FallbackKernel`, `reduction over non-contiguous dims`) are known now: they
    say nothing about sizes, and no longer make every such paste "cannot tell"."""
    d = diagnose_logs([PASTED / "pytorch-138813.log"])
    assert d.recompiles and d.stats.unread == 0
    paste = tmp_path / "paste.log"
    paste.write_bytes((PASTED / "pytorch-138813.log").read_bytes() + (
        b"> [rank1]:I1029 11:10:16.700000 2621392 site-packages/torch/_inductor/graph.py:9] "
        b"[1/4] [__perf_hints] frobnicated 3 buffers\n"))
    d = diagnose_logs([paste])
    assert d.recompiles and d.stats.unread == 1
    with pytest.raises(StrictError):
        diagnose_logs([paste], strict=True)


def test_the_human_view_says_how_the_paste_was_read() -> None:
    r = CliRunner().invoke(app, ["diagnose", str(PASTED / "pytorch-161119.log")],
                           env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0
    assert "Summary: 1 frame(s), 37 compile(s)" in r.stdout
    r = CliRunner().invoke(app, ["diagnose", str(PASTED / "pytorch-138813.log")],
                           env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert "read as pasted text: " in r.stdout and "prefixes trimmed (7)" in r.stdout
    assert "at least 10 compile(s)" in r.stdout


LONG = 200_000  # characters (as tests/cli/test_hostile_inputs.py): linear patterns only


@pytest.mark.parametrize("line", [
    b"..." * (LONG // 3), b".../a" * (LONG // 5), b"[0/1] " * (LONG // 6),
    b"V1122 01:19:56.1" * (LONG // 16), b"[a](http://" * (LONG // 11),
    b"x [a](http://b)" * (LONG // 15), b"torch.a: [INFO" * (LONG // 14),
    b"DEBUG:torch" + b".a" * (LONG // 2), b"[2022-12-22 03:54:03,390] " * (LONG // 26),
    b"> " * (LONG // 2) + b"torchdynamo hit recompilation cache limit (6",
    b"&#39;" * (LONG // 5) + b" V1122 01:19:56.129000 7476 torch/x.py:1] [0/0] y",
    b"   reasons:  [" + b"['a'], " * (LONG // 7), b"`" * LONG + b"[0/1] [__recompiles] x",
    b"V0627 " + b"torch/a" * (LONG // 7) + b".py:1]", b"W0627 " + b"a.py:" * (LONG // 5),
    b"torch/_inductor/" * (LONG // 16) + b"a.py:1: UserWarning: ",
    b"0: " * (LONG // 3), b"(pid=1) " * (LONG // 8),
])
def test_hostile_pasted_lines_finish(line: bytes) -> None:
    stats = ParseStats()
    list(TextLogParser(stats).parse([line, line]))
    assert stats.lines == 2


@pytest.mark.parametrize(("line", "skips"), [
    # dInfer#38: the skip written after a progress bar, on its line
    ("  0%|          | 0/6 [00:00<?, ?it/s]skipping cudagraphs due to cpu device (arg3_1)", 1),
    ("skipping cudagraphs due to cpu device (arg7_1)", 1),
    # torch 2.0 warned on its compile_fx logger (pytorch#93698's form)
    ("torchinductor.compile_fx: [WARNING] skipping cudagraphs due to complex input striding", 1),
    ("[2023-03-22 10:30:39,786] torch._inductor.compile_fx: [WARNING] skipping cudagraphs due "
     "to multiple devices", 1),
    # prose that mentions a skip is not one
    ("I keep seeing skipping cudagraphs due to mutated inputs in my logs", 0),
    ("see the note: skipping cudagraphs due to cpu device", 0),
])
def test_a_cudagraph_skip_is_read_where_a_paste_puts_it(tmp_path: Path, line: str,
                                                       skips: int) -> None:
    log = tmp_path / "run.log"
    log.write_text(line + "\n")
    try:
        cg = diagnose_logs([log]).cudagraphs
    except InputError:  # a file of prose alone is no torch log
        assert skips == 0
        return
    assert (sum(x.count for x in cg.skips) if cg else 0) == skips


@pytest.mark.parametrize("name", ["pytorch-107865.log", "pytorch-93698-breaks.log",
                                  "pytorch-99091.log", "comfyui-9972.log", "pytorch-138813.log"])
def test_dynamo_and_inductor_progress_records_are_known(name: str) -> None:
    """DEBUG/INFO records that say what dynamo traced or inductor chose, nothing about sizes
    (`restore_graphstate:`, `empty checkpoint`, `incorrect arg count`, `a decomposition
    exists`, `Not enough SMs`, `Using FallbackKernel`): each of these pastes left one to three
    "not understood", and with them the verdict "the log cannot tell"."""
    assert diagnose_logs([PASTED / name]).stats.unread == 0


def test_a_plus_dynamo_log_is_read_to_the_end() -> None:
    """torch 2.15 under TORCH_LOGS=+dynamo (tests/data/make_mode_skip.py): ChromiumEventLogger,
    wrap_to_fake, create_graph_input, `return triggered compile`, COMPILING GRAPH, TRACED GRAPH,
    put_code_state, run_gc_after_compile and TorchDynamo's summaries were 12 records "not
    understood", so every +dynamo log ended in "the log cannot tell"."""
    log = Path(__file__).resolve().parents[1] / "data" / "2.15.0" / "mode_skip" / "under_a_mode.log"
    d = diagnose_logs([log])
    assert d.stats.unread == 0 and d.stats.recognized == d.stats.lines == 145
    r = CliRunner().invoke(app, ["diagnose", str(log)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert r.exit_code == 0 and "Nothing to fix" in r.stdout and "cannot tell" not in r.stdout


def test_a_traceback_after_the_limit_means_the_program_raised(tmp_path: Path) -> None:
    """pyg#8418, pytorch#111329 and #164119 (fullgraph=True each, as their threads show): the
    limit's warning, then a traceback cut off before its exception. Not "now runs eagerly"; a
    traceback before the warning, or in another input, says nothing about the limit."""
    paste = (PASTED / "pytorch-geometric-8418.log").read_text()
    d = diagnose_logs([PASTED / "pytorch-geometric-8418.log"])
    (a,) = [x for x in d.suggestions if x.kind == "recompile-limit"]
    assert d.stopped_after_limit == 9 and "then the program raised" in a.message
    assert "now runs eagerly" not in a.message and d.to_json()["stopped_after_limit"] == 9
    head, _, tail = paste.partition("Traceback (most recent call last):")
    before = tmp_path / "before.log"
    before.write_text("Traceback (most recent call last):" + tail + head)
    d = diagnose_logs([before])
    (a,) = [x for x in d.suggestions if x.kind == "recompile-limit"]
    assert d.stopped_after_limit is None and "now runs eagerly" in a.message
    assert "stopped_after_limit" not in d.to_json()
    limit_only, other = tmp_path / "limit.log", tmp_path / "other.log"
    limit_only.write_text(head)
    other.write_text(head + "Traceback (most recent call last):" + tail)  # its own limit
    assert diagnose_logs([limit_only, other]).stopped_after_limit is None


def test_an_int_attribute_of_a_module_is_not_advised_as_an_argument() -> None:
    """transformers#36484: each decoder layer's layer_idx (one forward for every layer) hit the
    limit, and dyncli said "pass the number as a 0-d tensor", a fix that index cannot take.
    pytorch#127483: L['self'].mode selects a branch; a dynamic list alone does not help."""
    d = diagnose_logs([PASTED / "transformers-36484.log"])
    (a,) = [x for x in d.suggestions if x.kind == "recompile-limit"]
    assert "int attribute of a module" in a.message and "once per module" in a.message
    assert "0-d tensor" not in a.fix and "compile the model that calls them" in a.fix
    assert "neither branches on it nor indexes with it" in a.fix
    d = diagnose_logs([PASTED / "pytorch-127483.log"])
    fixes = [x.fix for x in d.suggestions if x.kind == "scalar-recompile"]
    assert fixes and all("L['self'].mode: the entry makes it a symbol" in f for f in fixes)
    assert all("specializes it again" in f for f in fixes)
    said = " ".join(x.message for x in d.suggestions)
    assert "where it prints one" in said  # no claim that this log holds torch's hint


# torch's docs page of recompilations (compile/programming_model.recompilation) renders the
# record without a prefix, as a notebook's handler may print it (paste hunt 14's variant)
_DOCS_RECOMPILES = """Recompiling function fn in /tmp/ipykernel_967/3647755280.py:1
    triggered by the following guard failure(s):
    - 2/0: c == 0.5
Recompiling function fn in /tmp/ipykernel_967/3647755280.py:1
    triggered by the following guard failure(s):
    - 2/1: tensor 'x' size mismatch at index 0. expected 1, actual 2
    - 2/0: c == 0.5
"""


def test_a_recompile_as_torchs_docs_render_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "docs.log"
    path.write_text(_DOCS_RECOMPILES)
    diag = diagnose_logs([path])
    assert [r.function for r in diag.recompiles] == ["fn", "fn"]
    assert diag.stats.unrecognized == 0
    assert any("size mismatch at index 0" in t for r in diag.recompiles for t in r.reasons)
    # its first line alone is torch's words, not a record: still refused
    path.write_text(_DOCS_RECOMPILES.splitlines()[0] + "\n")
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_logs([path])


def test_inductors_online_softmax_note_is_torchs_and_nothing_to_fix() -> None:
    """pytorch-153241: the UserWarning's head, then its message at the margin."""
    diag = diagnose_logs([PASTED / "pytorch-153241.log"])
    assert diag.stats.unrecognized == 0 and diag.stats.records == 1
    assert not diag.suggestions and not diag.compile_crashes


@pytest.mark.parametrize("cut", [b":", b"]:", b"6]:", b"k6]:", b"nk6]:", b"ank6]:"])
def test_a_first_line_that_lost_its_rank_tag_is_its_pid_s_rank(cut: bytes) -> None:
    """pytorch-139474's rank 6 lines, the paste begun inside the first one's "[rank6]:"
    (":W1101 … 143 …"): its record is rank 6's, as the same pid's other lines say, not a
    process of its own. (Made from the real lines: no public paste showed the cut.)"""
    whole = _lines("pytorch-139474.log")[1:]
    assert whole[0].startswith(b"[rank6]:W1101 ")
    cut_paste = [cut + whole[0][len(b"[rank6]:"):], *whole[1:]]
    seen = []
    for lines in (whole, cut_paste):
        stats = ParseStats()
        events = list(TextLogParser(stats).parse(lines))
        seen.append([(type(e).__name__, e.rank, e.pid, getattr(e, "compile_id", None)) for e in events])
        assert {e.rank for e in events} == {6, 3} and stats.unrecognized == 0
    assert seen[0] == seen[1]
    assert stats.pasted == {"rank tags restored": 1}


def test_a_recompile_whose_first_line_lost_its_rank_tag_is_one_process() -> None:
    """Before: the cut record was a process without a rank (frame 0 twice in the table, one
    recompile "unknown"); now one process, rank 0, its guard failure its own."""
    head = b"V0707 12:00:00.000000 123 torch/_dynamo/guards.py:2772] [0/1] [__recompiles] "
    lines = [b":" + head + b"Recompiling function forward in /home/u/m.py:10",
             b"[rank0]:" + head + b"    triggered by the following guard failure(s):",
             b"[rank0]:" + head + b"    - 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"]
    events = list(TextLogParser().parse(lines))
    (r,) = [e for e in events if type(e).__name__ == "Recompile"]
    assert (r.rank, r.pid, str(r.compile_id)) == (0, 123, "0/1") and len(r.failures) == 1
    assert {e.rank for e in events} == {0}


@pytest.mark.parametrize("line", [
    b":V0707 12:00:00.000000 123 torch/_dynamo/guards.py:2772] [0/1] Recompiling",  # its pid untagged
    b"V0707 12:00:00.000000 123 torch/_dynamo/guards.py:2772] [0/1] Recompiling",
    b": not a prefix at all"])
def test_a_line_without_a_tagged_line_of_its_pid_keeps_no_rank(line: bytes) -> None:
    other = b"[rank1]:V0707 12:00:00.000000 456 torch/_dynamo/guards.py:2772] [0/1] Recompiling x"
    stats = ParseStats()
    list(TextLogParser(stats).parse([line, other]))
    assert "rank tags restored" not in stats.pasted

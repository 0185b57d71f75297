"""diagnose reads logs as users pasted them (issue 33): each real paste of tests/data/pasted
against what its manifest says the log proves.

For every case: no rejection of a real torch log (a paste with no record of torch's log in it is
refused, and its manifest says with what words: ``refused``); the compiles proven per frame (or per
function, where the log has no compile ids) equal the manifest's; the recompile records, limit
warnings, graph breaks and constraint violations are all read; every reason torch named is in
the reading; specializations and the user lines torch blamed are found.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import tomllib
from rich.console import Console

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.diagnose.render import render_terminal
from dyncli.errors import InputError
from dyncli.logparse.guardtext import checked, split_failed

PASTED = Path(__file__).resolve().parents[1] / "data" / "pasted"
CASES: list[dict[str, Any]] = tomllib.loads((PASTED / "manifest.toml").read_text())["case"]


def _read(case: dict[str, Any]) -> Diagnosis:
    return diagnose_logs([PASTED / case["file"]])


def _frame_counts(diag: Diagnosis) -> dict[str, int]:
    """``"F"`` or ``"rN:F"`` -> compiles, for the numbered frames."""
    return {(f"r{f.rank}:" if f.rank is not None else "") + f.frame_id: f.compiles
            for f in diag.frames if f.frame_id != "?"}


def _texts(diag: Diagnosis) -> list[str]:
    """Every reason, limit reason, constraint message and specialization the reading holds."""
    out = [r for rec in diag.recompiles for r in rec.reasons]
    out += [x.last_reason for x in diag.recompile_limits]
    out += [f"{s.message} {' '.join(s.sources)}={s.value}" for s in diag.specializations]
    return out


def _users(diag: Diagnosis) -> list[str]:
    users = [u for u in (*(r.user for r in diag.recompiles), *(s.user for s in diag.specializations))
             if u is not None]
    skips = [x.user for x in diag.cudagraphs.skips if x.user] if diag.cudagraphs else []
    errors = [x.user for x in diag.cudagraphs.errors if x.user] if diag.cudagraphs else []
    return [f"{u.file}:{u.line}" for u in users] + [x.last_reason for x in diag.recompile_limits] \
        + [f"{b.file}:{b.user_line}" for b in diag.graph_breaks if b.file] \
        + [f"{u.file} in {u.function}" for u in skips] \
        + [f"{u.file}:{u.line}" for u in errors] \
        + [f"{x.user.file}:{x.user.line}" for x in diag.data_dependent_errors if x.user] \
        + [f"{x.file}:{x.user_line}" for x in diag.loop_skips if x.file]


def test_corpus_is_the_issue_size_and_covers_every_pattern() -> None:
    assert len(CASES) >= 30
    assert {p for c in CASES for p in c["patterns"]} >= {1, 2, 3, 4, 5, 6, 7, 8}
    assert all(c["source"].startswith("https://github.com/") for c in CASES)
    assert sorted(p.name for p in PASTED.glob("*.log")) == sorted(c["file"] for c in CASES)


# every field a case's expectation may have (the manifest's header): a field the test does not
# read is a claim nobody checks (two cases said "cudagraphs = 4" for years of rounds, unread)
FIELDS = {"frames", "functions", "at_least", "recompiles", "reasons", "kinds", "limits",
          "limit_names", "graph_breaks", "constraints", "specializations", "user_lines",
          "fullgraph_error", "torch_hints", "cudagraph_skips", "cudagraph_trees", "fix",
          "functions_at", "unexplained", "data_dependent_errors", "data_dependent_where",
          "guard_errors", "stopped_after_limit", "causes", "not_converted",
          "no_compiled_frames", "cudagraph_sizes_warned", "guard_self_checks",
          "compile_crashes", "cudagraph_errors", "range_violations", "compile_s",
          "explain_breaks", "notes", "cudagraph_raised", "data_dependent_checks",
          "data_dependent_hints", "raised_breaks", "went_on", "release", "loop_skips",
          "refused", "graph_ran"}


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_pasted_log_reads_what_it_proves(case: dict[str, Any]) -> None:
    expect = case["expect"]
    assert set(expect) <= FIELDS, set(expect) - FIELDS
    if "refused" in expect:
        # a paste with no record of torch's log: refused, in the words the manifest gives, and
        # nothing else expected of it (it is read as nothing)
        assert set(expect) <= {"refused", "fix"}, set(expect)
        with pytest.raises(InputError) as refused:
            _read(case)
        assert expect["refused"] in str(refused.value), str(refused.value)
        return
    diag = _read(case)  # a real torch log is never rejected
    counts = _frame_counts(diag)
    for frame, n in expect.get("frames", {}).items():
        assert counts.get(frame) == n, (frame, counts)
    functions = {f.function: f.compiles for f in diag.frames if f.frame_id == "?"}
    assert functions == expect.get("functions", {})
    at = {f"{f.function}:{f.first_line}": f.compiles for f in diag.frames if f.frame_id == "?"}
    assert expect.get("functions_at", {}).items() <= at.items(), at
    assert all(f.at_least for f in diag.frames if f.frame_id == "?")
    assert len(diag.recompiles) == expect.get("recompiles", 0)
    assert len(diag.recompile_limits) == expect.get("limits", 0)
    assert set(expect.get("limit_names", [])) <= {x.limit_name for x in diag.recompile_limits}
    assert sum(b.count for b in diag.graph_breaks) == expect.get("graph_breaks", 0)
    assert len(diag.not_converted) == expect.get("not_converted", 0)
    # frames torch skipped for a graph break in a loop: they run eagerly, a cause ("Nothing to
    # fix" before round 31)
    assert [x.function for x in diag.loop_skips] == expect.get("loop_skips", [])
    if diag.loop_skips:
        assert any(c.runs_eagerly for c in diag.causes)
    assert len(diag.no_compiled_frames) == expect.get("no_compiled_frames", 0)
    assert len(diag.guard_self_checks) == expect.get("guard_self_checks", 0)
    assert len(diag.compile_crashes) == expect.get("compile_crashes", 0)
    # a refusal the program caught and warned of: it went on uncompiled, never "stopped"
    went_on = [x for x in diag.compile_crashes if x.went_on]
    assert len(went_on) == expect.get("went_on", 0)
    assert not any(a.message.startswith("the program stopped") for a in diag.suggestions
                   if went_on and a.kind is AdviceKind.COMPILE_CRASH)
    # raised as the compiled graph ran (AOTAutograd's run-time wrapper): never "the compile
    # raised", never a compile-only fix
    ran = [x for x in diag.compile_crashes if x.graph_run]
    assert len(ran) == expect.get("graph_ran", 0)
    assert not any("torch's compiler raised" in a.message for a in diag.suggestions
                   if ran and a.kind is AdviceKind.COMPILE_CRASH)
    # a graph break raised as torch's Unsupported stopped the program: a stop, ranked first
    raised_breaks = sum(1 for b in diag.graph_breaks if b.raised)
    assert raised_breaks == expect.get("raised_breaks", 0)
    if raised_breaks:
        assert diag.causes[0].stops, diag.causes[0].title
    cudagraphs = diag.cudagraphs
    assert (cudagraphs.distinct_sizes_warned if cudagraphs else 0) == \
        expect.get("cudagraph_sizes_warned", 0)
    assert (sum(x.count for x in cudagraphs.skips) if cudagraphs else 0) == \
        expect.get("cudagraph_skips", 0)
    assert (cudagraphs.tree_lines if cudagraphs else 0) == expect.get("cudagraph_trees", 0)
    assert ([x.kind for x in cudagraphs.errors] if cudagraphs else []) == \
        expect.get("cudagraph_errors", [])
    # those the paste shows raised stopped the program: their cause is a stop, ranked first
    raised = [x.kind for x in cudagraphs.errors if x.raised] if cudagraphs else []
    assert raised == expect.get("cudagraph_raised", [])
    if raised:
        assert diag.causes[0].stops, diag.causes[0].title
    assert sum(a.ran for a in diag.suggestions if a.kind is AdviceKind.CUDAGRAPH_ERROR) == \
        len(raised)
    # a range given to a size that the code narrows (the compile or the export raised)
    assert [x.dim or x.source for x in diag.range_violations] == \
        expect.get("range_violations", [])
    constraints = [s for s in diag.specializations if s.reason == "constraint_violation"]
    assert len(constraints) == expect.get("constraints", 0)
    # torch's compile-time table at exit: the run's compile seconds, one per table
    assert [x.total_s for x in diag.compile_metrics] == expect.get("compile_s", [])
    # an explain() report's own count of breaks, whatever of its blocks the paste kept
    assert diag.explain_breaks == expect.get("explain_breaks")
    texts = _texts(diag)
    for reason in expect.get("reasons", []):
        assert any(reason in t for t in texts), (reason, texts)
    for spec in expect.get("specializations", []):
        assert any(spec in t for t in texts), (spec, texts)
    for where in expect.get("user_lines", []):
        assert any(where in u for u in _users(diag)), (where, _users(diag))
    # frames whose recompiles the compile ids prove and the log gives no reason for: said so,
    # with the log that gives them (pytorch-111329: "9 recompiles", then "Nothing to fix")
    unexplained = {(f"r{a.rank}:" if a.rank is not None else "") + a.frame
                   for a in diag.suggestions if a.kind is AdviceKind.UNEXPLAINED}
    assert unexplained == set(expect.get("unexplained", [])), unexplained
    # torch's own output that needs no fix (max-autotune's tables, an empty CUDA graph, too few
    # SMs), and recompiles only the backend's compile ids prove: said as notes, never a cause
    notes = sorted(str(a.kind) for a in diag.notes)
    assert notes == sorted(expect.get("notes", [])), notes
    assert not {str(a.kind) for c in diag.causes for a in c.findings} & set(notes) - {
        str(AdviceKind.UNEXPLAINED)}
    # data-dependent errors: the expressions torch could not decide, and where it asked
    assert [x.expr for x in diag.data_dependent_errors] == expect.get("data_dependent_errors", [])
    where = " ".join(f"{x.op} {x.culprit}" for x in diag.data_dependent_errors)
    for w in expect.get("data_dependent_where", []):
        assert w in where, (w, where)
    # torch's own answers in its message: export's torch._check lines, the framework hint; both
    # in dyncli's fix (never worse than torch's own)
    checks = [c for x in diag.data_dependent_errors for c in x.checks]
    assert checks == expect.get("data_dependent_checks", []), checks
    ddfix = " ".join(s.fix for s in diag.suggestions if s.kind is AdviceKind.DATA_DEPENDENT)
    for c in checks:
        assert c in ddfix, (c, ddfix)
    for h in expect.get("data_dependent_hints", []):
        assert any(h in x.hint for x in diag.data_dependent_errors), h
        assert h in ddfix, (h, ddfix)
    # a compile that failed making its guards ("Error while creating guard"): never a clean one
    assert [fn for _, _, fn, _ in diag.guard_errors] == expect.get("guard_errors", [])
    # the torch version the paste states beside its log (collect_env, a package list): the
    # release read, from that line; a paste that states none has it from its records or not
    if "release" in expect:
        assert diag.releases is not None and diag.releases.version == expect["release"], \
            diag.releases
        assert "the input's \"" in diag.releases.sources[0], diag.releases.sources
    else:
        assert diag.releases is None or not diag.releases.version, diag.releases
    # the limit raised (fullgraph=True): read as the error it was, never as "runs eagerly"
    assert bool(diag.limit_raised) == expect.get("fullgraph_error", False)
    # a traceback after the limit's warning: the program raised there, whatever the cut-off
    # exception was (pyg#8418, pytorch#111329): never read as "runs eagerly" either
    assert (diag.stopped_after_limit is not None) == expect.get("stopped_after_limit", False)
    assert diag.recompiles_proven >= sum(1 for r in diag.recompiles if r.compiled)
    # no conclusion the log contradicts: "Nothing to fix" only when every torch record was
    # understood and none showed a recompile, a limit, a graph break or a specialization
    out = io.StringIO()
    render_terminal(diag, console=Console(file=out, width=200, color_system=None))
    if diag.stats.unread or diag.recompiles or diag.recompile_limits or diag.graph_breaks \
            or diag.specializations or diag.recompiles_proven:
        assert "Nothing to fix" not in out.getvalue()
    said = out.getvalue() + " ".join(f"{s.message} {s.fix}" for s in diag.suggestions)
    if diag.limit_raised or diag.stopped_after_limit is not None:
        assert "now runs eagerly" not in said
    if not diag.recompiles:
        assert "the recompile cause above" not in said  # no cause is listed above
    assert not any(c.title.startswith(("recompile:", "finding:", "line:")) for c in diag.causes)
    # every kind of guard torch named is read as that kind (issue 33, pattern 6)
    kinds = {k for r in diag.recompiles for k in (*r.kinds, r.kind)}
    kinds |= {str(checked(split_failed(x.last_reason)[1])) for x in diag.recompile_limits if x.last_reason}
    assert set(expect.get("kinds", [])) <= kinds, (expect.get("kinds"), kinds)
    # and each recompile's coarse cause (a stride is not a size: torchtune-1402)
    causes = {c for r in diag.recompiles for c in (*r.causes, r.cause)}
    assert set(expect.get("causes", [])) <= causes, (expect.get("causes"), causes)
    # torch's own hint in the log is in dyncli's advice (never worse than torch's hint)
    for hint in expect.get("torch_hints", []):
        name = hint.split("=")[0].split(".")[-1].strip()
        assert any(name in s.fix or name in s.message for s in diag.suggestions), hint


def test_a_constraint_violation_without_its_line_says_how_to_find_it() -> None:
    """vllm-ascend-1324: vLLM marked the token dim dynamic, not the user, and torch's error names
    no line: no empty code quote, no mark_dynamic advice aimed at a call the user never made."""
    diag = diagnose_logs([PASTED / "vllm-ascend-1324.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
    assert "``" not in a.message and "does not show which line" in a.message
    assert a.fix.startswith('TORCH_LOGS="+dynamic" prints the line') and "framework" in a.fix


def test_an_int_an_operator_pinned_is_not_a_branch_to_rewrite() -> None:
    """pytorch-141934: select_scatter's dim pinned while torch ran the op (run_node): the user
    line is a call, not a comparison, and no branch rewrite helps."""
    diag = diagnose_logs([PASTED / "pytorch-141934.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.USER_SPECIALIZATION]
    assert a.fix.startswith("no branch to rewrite") and "torch.cond" not in a.fix


def test_a_class_made_in_the_function_is_moved_out_not_passed_the_same() -> None:
    """comfy-aimdo-13: a Holder class defined in get_tensor_from_raw_ptr, a new one per call, at
    the limit. The caller cannot "pass the same object"; the class belongs at module level. The
    evidence cites the warning's own first line with its words, then the last reason."""
    diag = diagnose_logs([PASTED / "comfy-aimdo-13.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "get_tensor_from_raw_ptr.<locals>.Holder" in a.message
    assert a.fix.startswith("define Holder at module level, once, outside get_tensor_from_raw_ptr")
    assert "same object" not in a.fix
    assert a.evidence[0].startswith(
        "line 7: [10/64] torch._dynamo hit config.recompile_limit (64); last reason: 10/63: ")


def test_a_stride_change_is_not_a_size_change() -> None:
    """torchtune-1402: input_pos's strides changed (a slice of a longer tensor), not its size."""
    diag = diagnose_logs([PASTED / "torchtune-1402.log"])
    (r,) = diag.recompiles
    assert (r.cause, r.kind) == ("stride", "stride")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert "will not fix" not in a.message and "input_pos.contiguous()" in a.fix


def test_stacks_pasted_without_a_prefix_are_read_with_their_record() -> None:
    """pytorch-126026 (logging.basicConfig's layout: the stack under "from user code at:" has
    no prefix) and comfyui-6866 (a CUDA-graph skip's "Found from :" stack, pasted bare, without
    line numbers): every line understood. 126026's paste stops before the reason and the
    innermost frame: its last frame shown is on the way, not the break's place."""
    gb = diagnose_logs([PASTED / "pytorch-126026.log"])
    assert gb.stats.unrecognized == 0
    (b,) = gb.graph_breaks
    assert (b.file, b.reason) == ("", "")
    assert b.call_sites == (
        "/data/users/ezyang/b/transformers/src/transformers/models/bert/modeling_bert.py:612 in forward",)
    (a,) = [s for s in gb.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.message.endswith("(its reason is not in the log: torch's record of the break is cut)")
    assert "Graph break in user code" not in a.evidence[0]  # torch never wrote those words here
    skip = diagnose_logs([PASTED / "comfyui-6866.log"])
    assert skip.stats.unrecognized == 0
    (s,) = [s for s in skip.suggestions if s.kind is AdviceKind.CUDAGRAPH_SKIP]
    assert s.message.endswith("cpu device (arg7_1) (comfy\\ops.py in forward_comfy_cast_weights).")


def test_torchs_note_that_it_cannot_trace_a_guard_is_said_with_it() -> None:
    """sglang-7230: torch wrote "(unknown var s1, please file a bug)" on the failed guard: it
    cannot say which code made it. Said in the cause, never read as a user line."""
    diag = diagnose_logs([PASTED / "sglang-7230.log"])
    (r,) = [r for r in diag.recompiles if r.reasons]
    assert (r.unknown_origin, r.user) == ("(unknown var s1, please file a bug)", None)
    assert any("torch cannot say which code made it (unknown var s1, please file a bug)"
               in c.title for c in diag.causes)


def test_torchs_item_warning_is_one_break_with_torchs_setting() -> None:
    """distrifuser-26: torch's default warning at a Tensor.item() ("Graph break from
    `Tensor.item()`, consider setting: … capture_scalar_outputs = True", then its stack) is one
    graph break whose fix is torch's setting, said as every .item()'s (unbacked.item_fix). The
    paste ends on a frame's File line: that frame is on the way, not the break's place."""
    diag = diagnose_logs([PASTED / "distrifuser-26.log"])
    assert diag.stats.malformed == 0
    (b,) = diag.graph_breaks
    assert b.reason.startswith("Tensor.item()") and b.file == ""
    assert b.call_sites[0].endswith("distri_sdxl_unet_pp.py:94 in forward")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith("a tensor's .item(): set torch._dynamo.config.capture_scalar_outputs "
                            "= True (env TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1; torch's hint)"), a.fix


def test_torchs_own_words_without_torch_logs_are_read() -> None:
    """What users see with no TORCH_LOGS set, rejected as "not a torch log" before: torch's
    Python warning at a builtin it cannot trace (its fix: a custom op, or allow_in_graph),
    a graph break's message as an exception prints it, with torch's gb code."""
    for name, builtin in (("sageattention-73", "sageattention._fused.PyCapsule.quant_per_warp_int8_cuda"),
                          ("sageattention-337", "sageattention._fused.pybind11_detail_function_record"
                           "_v1_system_libstdcpp_gxx_abi_1xxx_use_cxx11_abi_1.scale_fuse_quant_cuda")):
        diag = diagnose_logs([PASTED / f"{name}.log"])
        assert len({(b.file, b.reason) for b in diag.graph_breaks}) == 1, name  # one site
        (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
        assert a.fix.startswith(f"wrap {builtin} in a custom operator"), (name, a.fix)
    diag = diagnose_logs([PASTED / "pytorch-174138.log"])
    (b,) = diag.graph_breaks
    assert (b.gb_code, b.reason) == ("GB0059", "Failed to trace builtin operator")
    assert diag.stats.unrecognized == 0


def test_a_limit_the_program_raised_is_not_only_hiding() -> None:
    """intel-xpu-triton-5838: recompile_limit (100), above torch's 8: the program set it (a
    shape sweep under dynamic=False), and raising it to the number of sizes is the fix there:
    "raising the limit only hides the recompiles" was all dyncli said."""
    diag = diagnose_logs([PASTED / "intel-xpu-triton-5838.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "the limit here (100) is above torch's default (8), so the program set it" in a.fix
    # comfy-aimdo-13: 64, raised too, on an identity guard no size sweep explains
    other = diagnose_logs([PASTED / "comfy-aimdo-13.log"])
    (b,) = [s for s in other.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert ("the limit here (64) is above torch's default (8), so the program set "
                          "it; raising torch._dynamo.config.recompile_limit further only hides "
                          "the recompiles") in b.fix


def test_a_break_in_torchs_own_code_is_not_the_users_line_to_move() -> None:
    """pytorch-152185: the break is in torch's FSDP1 wrapper (_flat_param.py:2776)."""
    diag = diagnose_logs([PASTED / "pytorch-152185.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith("the break is in torch's own code (") and "FSDP2" in a.fix
    assert "move the untraceable call" not in a.fix


def test_inputs_marked_dynamic_up_front_are_read_in_each_torchs_words(tmp_path: Path) -> None:
    """vllm-13284 (torch 2.6's builder.py: "automatic dynamic L['input_ids'] marked dynamic", a
    dim marked up front) and torch 2.11's words for a dynamic-sources entry (recorded on 2.11:
    "due to dynamic source allowlist pattern", "via source whitelist"; 2.15 says
    "dynamic-sources entry")."""
    diag = diagnose_logs([PASTED / "vllm-13284.log"])
    assert diag.stats.unrecognized == 0
    assert {d.source for f in diag.frames for d in f.dynamic_inputs} == {"L['input_ids']"}
    log = tmp_path / "211.log"
    log.write_text(
        "V1129 21:50:08.482000 8819 torch/_dynamo/variables/builder.py:3619] [0/0] L['x'] was "
        "marked dynamic due to dynamic source allowlist pattern: L['x']\n"
        "V1129 21:50:08.482000 8819 torch/_dynamo/variables/builder.py:3879] [0/0] L['x'] "
        "marked dynamic via source whitelist\n")
    d = diagnose_logs([log])
    assert d.stats.unrecognized == 0
    assert {(x.source, x.origin) for f in d.frames for x in f.dynamic_inputs} == {
        ("L['x']", "dynamic-sources")}


def test_round_17s_pastes_get_the_threads_fix() -> None:
    """Paste hunts 5 and 6: what each thread did about it is what the finding says."""
    # sglang-23428: a warm-up at batch 1 (merged fix: mark_unbacked); the wrapped comment joined
    diag = diagnose_logs([PASTED / "sglang-23428.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.ZERO_ONE]
    assert "mark_unbacked(input_, 0)" in a.fix
    assert not any(s.kind is AdviceKind.SIZE_BRANCH for s in diag.suggestions)
    # torchtitan-3898: the limit torch raised under fullgraph=True, not a graph break
    diag = diagnose_logs([PASTED / "torchtitan-3898.log"])
    assert not diag.graph_breaks and [x.limit for x in diag.recompile_limits] == ["8"]
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "hit config" not in a.evidence[0]  # that log holds no warning to quote
    # pytorch-188150: torch's warning of 9 sizes, its options as the fix
    diag = diagnose_logs([PASTED / "pytorch-188150.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CUDAGRAPH_SIZES]
    assert "cudagraph_skip_dynamic_graphs" in a.fix
    # pytorch-154536: torch's own builtin, reported (the reporter's workaround named)
    diag = diagnose_logs([PASTED / "pytorch-154536.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert "report it to torch" in a.fix and "TORCHINDUCTOR_FX_GRAPH_CACHE=0" in a.fix
    # pytorch-140011: the export's Dim, export's fix
    diag = diagnose_logs([PASTED / "pytorch-140011.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
    assert "Dim seq_len" in a.message and "Dim.AUTO" in a.fix
    # comfyui-nag-33: the frame torch gave up on, and the break before it
    diag = diagnose_logs([PASTED / "comfyui-nag-33.log"])
    assert [x.function for x in diag.not_converted] == ["torch_dynamo_resume_in_forward_at_209"]
    assert [(b.user_line, b.function) for b in diag.graph_breaks] == [(209, "forward")]
    # pytorch-150702: a guard on how sizes relate, made by a user line: that line, and a fix
    diag = diagnose_logs([PASTED / "pytorch-150702.log"])
    (c,) = diag.causes
    assert c.title.startswith("pe_selection_index_based_on_dim: a guard on sizes made here")
    assert "auraflow_transformer_2d.py:85" in c.title and "each outcome compiles" in c.fix


def test_round_18s_pastes_get_the_threads_fix() -> None:
    """Paste hunt 7: what each thread did about it, or what torch's own release says, is what
    the finding says."""
    # pytorch-107076: the optimizer's float lr at the limit: lr as a tensor, no module's int
    diag = diagnose_logs([PASTED / "pytorch-107076.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "optimizer's float hyperparameter" in a.message and "lr=torch.tensor(0.01)" in a.fix
    assert "module" not in a.message + a.fix
    # pytorch-133898: beta1 cycled by OneCycleLR; a headless record is two compiles
    diag = diagnose_logs([PASTED / "pytorch-133898.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.SCALAR_RECOMPILE]
    assert "cycle_momentum=False" in a.fix and diag.compiles == 2
    # pytorch-93468: torch 2.1's warning: its default was 64, and it printed no reason
    diag = diagnose_logs([PASTED / "pytorch-93468.log"])
    (x,) = diag.recompile_limits
    assert x.before_2_2 and x.reasons_off
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "TORCHDYNAMO_REPORT_GUARD_FAILURES=1" in a.fix and "program set it" not in a.fix
    assert "cut" not in a.message.replace("nothing was cut", "")
    # torchdynamo-1010: the error is in the paste
    diag = diagnose_logs([PASTED / "torchdynamo-1010.log"])
    (n,) = diag.not_converted
    assert n.error.startswith("AssertionError: torch.* op returned non-Tensor bool")
    # seedvr2-427: a compile that raised on its own guard; torch's parameter hint is not the fix
    diag = diagnose_logs([PASTED / "seedvr2-427.log"])
    (g,) = diag.guard_self_checks
    assert g.entry == "51/0" and g.reason.endswith("expected 2560, actual 2720.")
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GUARD_SELF_CHECK]
    assert "force_parameter_static_shapes = False" not in a.fix
    # llm-scaler-333: the break torch's message gives, under the wrapper's words
    diag = diagnose_logs([PASTED / "llm-scaler-333.log"])
    (b,) = diag.graph_breaks
    assert b.gb_type == "Data-dependent branching" and diag.stats.unrecognized == 0
    # torchdynamo-748: "multple devices" is the device skip, with its fix
    diag = diagnose_logs([PASTED / "torchdynamo-748.log"])
    assert diag.cudagraphs is not None and {x.kind for x in diag.cudagraphs.skips} == {"device"}
    # parler-tts-93: a reason the paste cut is not "other"
    diag = diagnose_logs([PASTED / "parler-tts-93.log"])
    assert diag.recompiles_by_cause()["unknown"] == 1 and diag.recompiles_by_cause()["other"] == 0
    # pytorch-107200: the user line the paste wrapped, and a broadcast, not a branch
    diag = diagnose_logs([PASTED / "pytorch-107200.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.USER_SPECIALIZATION]
    assert "modeling_bert.py:235" in a.message and "``" not in a.message
    assert a.fix.startswith("no branch to rewrite: make the other operand follow")
    # pytorch-139202: the stance's error, a refused recompile: one compile, not two
    diag = diagnose_logs([PASTED / "pytorch-139202.log"])
    (r,) = diag.recompiles
    assert not r.compiled and diag.compiles == 1
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert "fail_on_recompile error of this release names no guard" in a.message
    # transformers-37944: torch's item() warning without its backticks
    diag = diagnose_logs([PASTED / "transformers-37944.log"])
    (b,) = diag.graph_breaks
    assert b.reason.startswith("Tensor.item()")


def test_round_19s_pastes_get_the_threads_fix() -> None:
    # keras-22282: a crash in dynamo, never "Nothing to fix"; where it raised, what called it
    diag = diagnose_logs([PASTED / "keras-22282.log"])
    (c,) = diag.compile_crashes
    assert c.error == "AssertionError" and c.cut and c.compile_id == "1/0_1"
    assert c.at is not None and c.at.function == "compute_exception_table" and c.at.line == 990
    assert c.user is not None and c.user.line == 2
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "suppress_errors = True" in a.fix and "paste ends before its message" in a.message
    # depyf-9: the patch that raised is named, not torch
    diag = diagnose_logs([PASTED / "depyf-9.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "patched_lazy_format_graph_code.py:34" in a.fix and "not torch's" in a.fix
    # ezpz-236: torch's message behind a launcher's "[rank0]: " tags: rank 0's break
    diag = diagnose_logs([PASTED / "ezpz-236.log"])
    (b,) = diag.graph_breaks
    assert b.rank == 0 and b.file.endswith("external_utils.py") and b.user_line == 70
    # sageattention-92: a break without Hints (two blank lines) keeps its "from user code:"
    diag = diagnose_logs([PASTED / "sageattention-92.log"])
    (b,) = diag.graph_breaks
    assert b.file.endswith("layers.py") and b.user_line == 235 and b.gb_code == "GB0208"
    # paste hunt 10: the CUDA-graph trees' errors, at the line the thread fixed, and its fix
    diag = diagnose_logs([PASTED / "gpt-fast-232.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CUDAGRAPH_ERROR]
    assert "generate.py:42" in a.message and "clone" in a.fix and "max-autotune" in a.fix
    assert diag.causes[0].line().startswith("[CUDA-graph error]")
    # pytorch-168185: compile_fx's skip names its first frame on its own line
    diag = diagnose_logs([PASTED / "pytorch-168185.log"])
    assert diag.cudagraphs is not None
    (x,) = diag.cudagraphs.skips
    assert x.kind == "incompatible-op" and x.user is not None and x.user.line == 6
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CUDAGRAPH_SKIP]
    assert "graph_partition" in a.fix and "Found from" not in a.message
    # comfyui-14536: one compile per block, and raising the limit is the fix, not hiding
    diag = diagnose_logs([PASTED / "comfyui-14536.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "(block 6)" in a.message and "only hides" not in a.fix
    # cuequivariance-77: torch's own setting in the reason is the fix (every release's break
    # of such an op gets one sentence: test_diagnose_unbacked)
    diag = diagnose_logs([PASTED / "cuequivariance-77.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith("aten.nonzero.default's output size depends on the tensor's data: "
                            "set torch._dynamo.config.capture_dynamic_output_shape_ops = True")
    # 3drs-8: torch 2.6's last reason is the oldest entry's: not all seven to mark-dynamic
    diag = diagnose_logs([PASTED / "3drs-8.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert "names entry 7/0, the frame's first compile" in a.message
    assert a.fix.startswith('TORCH_LOGS="recompiles"') and "removes only the first" in a.fix
    # pytorch-93720: a WON'T CONVERT body whose head the paste cut: the frame, the error
    diag = diagnose_logs([PASTED / "pytorch-93720.log"])
    (n,) = diag.not_converted
    assert n.function == "test_capture" and n.error.endswith("assert with non-string message")
    # pytorch-170217: the partitions outside CUDA graphs are said, with the ops kept out
    diag = diagnose_logs([PASTED / "pytorch-170217.log"])
    assert diag.cudagraphs is not None
    assert diag.cudagraphs.partitions == (("0/1", 4, 2),)
    assert diag.cudagraphs.kept_out == (("cpu ops", "AssertScalar", 6),)
    # hunt 11/12: crashes pasted alone; the machine's errors are not torch's bugs
    diag = diagnose_logs([PASTED / "nnunet-2349.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    assert "below what Triton supports (7.0)" in a.fix and "not a bug to report" in a.fix
    diag = diagnose_logs([PASTED / "sglang-1923.log"])
    (b,) = diag.graph_breaks
    assert b.resumed_in == "torch_dynamo_resume_in_forward_at_57" and b.user_line == 57
    assert diag.causes[0].stops  # the crash first: the program stopped there


def test_ddps_own_forward_is_not_a_call_of_the_users_to_move() -> None:
    """pytorch-141827 and -139440: DDP's buffer broadcast (``_broadcast_coalesced``) when the DDP
    wrapper is compiled. Its fix was a report to torch and TORCHINDUCTOR_FX_GRAPH_CACHE=0 (a
    sentence from pytorch#154536); the settings that remove the break are applied in
    tests/integration/test_ddp_fixes.py. pytorch-121386: a break reached from DDP's forward,
    cut before its reason."""
    for name in ("pytorch-141827", "pytorch-139440"):
        (a,) = [s for s in diagnose_logs([PASTED / f"{name}.log"]).suggestions
                if s.kind is AdviceKind.GRAPH_BREAK]
        assert "broadcast_buffers=False" in a.fix and "DDP(torch.compile(model))" in a.fix, name
        assert "FX_GRAPH_CACHE" not in a.fix
    (a,) = [s for s in diagnose_logs([PASTED / "pytorch-121386.log"]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith("the break is in DDP's own forward")


def test_a_libraries_logger_call_gets_torchs_setting_for_its_method() -> None:
    """trl-3839: transformers' logger.warning_once, in torch's one-line wording of 2.6-2.10,
    which names the setting but no method (applied in tests/integration/test_logger_fix.py)."""
    (a,) = [s for s in diagnose_logs([PASTED / "trl-3839.log"]).suggestions
            if s.kind is AdviceKind.GRAPH_BREAK]
    assert a.fix.startswith(
        "torch._dynamo.config.ignore_logger_methods.add(logging.Logger.warning_once)")


def test_a_range_the_code_narrows_gets_torchs_suggested_dims_or_the_range_it_allows() -> None:
    """Export's "Not all values of X in the specified range … satisfy the generated guard":
    torch's own suggested Dims where the paste has them whole (onnxscript-2539), said to be cut
    where it is not (pytorch-124502), never a suggestion that restates the range given
    (pytorch-124507); without one, the bound the guard sets (ultralytics-20370: batch != 1).
    Before round 20 each read "Nothing to fix" (or was refused). Applied in
    tests/integration/test_range_fixes.py."""
    def fix(name: str) -> str:
        (a,) = [s for s in diagnose_logs([PASTED / f"{name}.log"]).suggestions
                if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
        assert "wider than the code allows" in a.message
        assert ("Dim.AUTO" if "Dim " in a.message else "maybe_mark_dynamic") in a.fix
        return a.fix
    assert fix("onnxscript-2539").startswith(
        "torch's suggested fix: `_W = Dim('_W', min=1, max=2); W = 64*_W`")
    assert "the paste cut torch's suggested fix" in fix("pytorch-124502")
    assert "suggested fix" not in fix("pytorch-124507")
    assert fix("ultralytics-20370").startswith(
        "narrow the range to what the code allows: Dim('batch', min=2); and pass an example of "
        "at least 2")
    assert "mark_dynamic(x, 0, min=4, max=8)" in fix("tensorrt-2794")


def test_an_export_dims_sources_and_torchs_suggestion_are_as_the_paste_has_them() -> None:
    """pytorch-132381: torch renders a default range as "in the specified range are valid",
    which left " in the specified range" in the sources; its paste ends at a bare "Suggested
    fixes:", so the fix does not claim to quote torch's suggestion."""
    diag = diagnose_logs([PASTED / "pytorch-132381.log"])
    assert {s.sources for s in diag.specializations} == {
        ("L['stream_idx'].size()[0]",), ("L['x'].size()[0]",)}
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.CONSTRAINT_VIOLATION]
    assert "Dim.STATIC / streams = 2" in a.fix and "suggested" not in a.fix

def test_a_wont_convert_body_of_frames_alone_is_a_frame_run_eagerly() -> None:
    """Paste hunt 14: a W-level convert_frame record of traceback frames alone can only be
    format_error_msg's WON'T CONVERT (its head and exception cut): never "Nothing to fix"."""
    for name, raised_in in (("chattts-106", "the backend (inductor)"), ("chattts-106-b", ""),
                            ("sglang-5870", ""), ("comfyui-wanvideowrapper-1011", "")):
        diag = diagnose_logs([PASTED / f"{name}.log"])
        (n,) = diag.not_converted
        assert (n.function, n.error, n.raised_in) == ("?", "", raised_in), name
        (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NOT_CONVERTED]
        assert "the error is past the end of the paste" in a.message
        assert "suppress_errors = False" in a.fix
    assert diag.not_converted[0].rank is None
    assert diagnose_logs([PASTED / "sglang-5870.log"]).not_converted[0].rank == 0
    (a,) = [s for s in diagnose_logs([PASTED / "chattts-106.log"]).suggestions
            if s.kind is AdviceKind.NOT_CONVERTED]
    assert "its compile raised in the backend (inductor)" in a.message

def _crash(name: str) -> tuple[Diagnosis, Any]:
    diag = diagnose_logs([PASTED / f"{name}.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.COMPILE_CRASH]
    return diag, a


def test_triton_without_fp8e4nv_is_the_machine_not_torchs_bug() -> None:
    """Paste hunt 14 #2 and #5: Triton has no fp8e4nv (fp8_e4m3fn) below CUDA arch 8.9, in its
    ValueError (inductor's E-level record, WanVideoWrapper#1007) and in its own assert, the
    cause of a chained traceback cut inside dynamo's part (triton-windows#3, refused before)."""
    for name in ("comfyui-wanvideowrapper-1007", "triton-windows-3"):
        diag, a = _crash(name)
        assert diag.suggestions[0] is a, name
        assert "fp8_e5m2" in a.fix and "not a bug to report" in a.fix, name
        assert "report it to PyTorch" not in a.fix, name
    (c,) = diagnose_logs([PASTED / "triton-windows-3.log"]).compile_crashes
    assert c.cause == "AssertionError: fp8e4nv data type is not supported on CUDA arch < 89"
    assert c.cut and c.at is not None and c.at.function == "__call__"  # after_dynamo.py
    diag, a = _crash("comfyui-wanvideowrapper-1007")
    assert a.message.startswith("the program stopped: Triton could not compile "
                                "triton_poi_fused__to_copy_mul_0, a kernel inductor generated")
    assert "Traceback" not in a.evidence[0]  # inductor's record, not a traceback


def test_a_kernel_that_converts_no_dtype_is_not_told_it_is_a_dtype() -> None:
    """ultralytics#21998 (Windows, an RTX 3050): inductor's record of a batch norm's backward
    kernel, its exception past the excerpt (the thread's: triton-windows' OverflowError,
    fixed there). Nothing in its name converts a dtype, where fp8 weights fail on an older GPU
    (the _to_copy kernels of the three above): it asks for the exception and names Triton's
    own fix, never "commonly a dtype this GPU lacks"."""
    diag, a = _crash("ultralytics-21998")
    assert diag.causes[0].stops and diag.suggestions[0] is a
    assert a.message.startswith("the program stopped: Triton could not compile triton_poi_fused_"
                                "_native_batch_norm_legit_functional_add_convolution_backward")
    assert "dtype this GPU lacks" not in a.fix and "fp8_e4m3fn" not in a.fix
    assert "paste it" in a.fix and "no dtype conversion" in a.fix
    assert "triton-windows" in a.fix and "triton-lang/triton#5454" in a.fix
    assert "suppress_errors" not in a.fix


def test_a_kernel_triton_could_not_compile_is_said_before_unexplained_recompiles() -> None:
    """stand-in-10 ("Triton compilation failed: …", cut before its error), WanVideoWrapper#252
    (Triton's CompilationError quoting the kernel, its reason cut) and triton-windows-28 (the
    kernel's source alone): Triton rejected inductor's kernel; its reason is what to paste,
    not a report to PyTorch first."""
    for name in ("stand-in-preprocessor-comfyui-10", "comfyui-wanvideowrapper-252",
                 "triton-windows-28"):
        diag, a = _crash(name)
        assert diag.suggestions[0] is a and diag.causes[0].stops, name
        assert a.fix.startswith("Triton could not compile a kernel inductor generated: its "
                                "reason is the line after the '^'"), name
        assert "fp8_e4m3fn below CUDA arch 8.9" in a.fix, name
    diag, a = _crash("stand-in-preprocessor-comfyui-10")
    assert "triton_poi_fused__to_copy_0" in a.message
    # (its compile ids are on inductor's record only: the unexplained recompiles are a note)
    assert [s.kind for s in diag.notes] == [AdviceKind.UNEXPLAINED]
    _, a = _crash("triton-windows-28")
    assert "(its name is before the paste)" in a.message


def test_comfyuis_classless_torch_runtime_error_is_read_with_its_break() -> None:
    """Paste hunt 14 #3: ComfyUI prints torch's TorchRuntimeError without its class (after
    "!!! Exception during processing !!! ", or bare); refused before. Its fix is the
    TorchRuntimeError one, and the resume name in dynamo's user stack proves a break."""
    for name in ("comfyui-wanvideowrapper-287", "comfyui-wanvideowrapper-1666"):
        diag, a = _crash(name)
        (c,) = diag.compile_crashes
        assert c.error.startswith("Dynamo failed to run FX node with fake tensors:"), name
        assert a.fix.startswith("torch ran an operation of the code on fake tensors"), name
        assert "Traceback" not in a.evidence[0], name
    diag = diagnose_logs([PASTED / "comfyui-wanvideowrapper-1666.log"])
    (b,) = diag.graph_breaks
    assert (b.user_line, b.resumed_in) == (1127, "torch_dynamo_resume_in_forward_at_1127")


def test_rocm_and_mps_toolchain_errors_get_their_fix() -> None:
    """Paste hunt 14 #4: ROCm's ld.lld not found (its own fix: TRITON_HIP_LLD_PATH), inductor's
    "Device mps not supported" (2.3) and torch 2.0's CUDA assert on a Mac: not torch's bug."""
    _, a = _crash("legacy-rocm-build-4499")
    assert a.fix.startswith("Triton's AMD backend cannot find ROCm's linker: set "
                            "TRITON_HIP_LLD_PATH to ROCm's llvm/bin/ld.lld")
    for name in ("pytorch-125254", "pytorch-96976"):
        _, a = _crash(name)
        assert 'backend="aot_eager"' in a.fix and "torch >= 2.8" in a.fix, name
        assert "report it to PyTorch" not in a.fix, name
        assert not a.evidence[0].startswith("line 1: Traceback"), name  # the paste has none


def test_called_from_skips_pythons_own_library() -> None:
    """chattts-ui-18: conda's ``…\\anaconda3\\lib\\contextlib.py`` is Python's, not the
    program's: no "called from" where the paste shows no frame of the program."""
    diag, a = _crash("chattts-ui-18")
    (c,) = diag.compile_crashes
    assert c.user is None and "called from" not in a.message


def test_a_parameters_device_change_is_not_given_torchs_size_flag() -> None:
    """comfy-wavespeed-106: a weight's dispatch keys changed (CPU to CUDA: a partial load), and
    torch's C++ guard appended its parameter hint, which it does to every parameter failure.
    The flag it names makes parameter sizes dynamic, nothing else (applied in
    tests/integration/test_param_change_fix.py)."""
    diag = diagnose_logs([PASTED / "comfy-wavespeed-106.log"])
    assert not [s for s in diag.suggestions if s.kind is AdviceKind.STATIC_PARAMETERS]
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert "dispatch keys changed" in a.message and "on a parameter" in a.message
    assert "load it whole rather than offloading" in a.fix and "does not apply" in a.fix


def test_ranks_cut_copies_of_one_limit_warning_are_one_cause() -> None:
    """paraattention-22: ranks 0, 2 and 3 hit the limit at [2/8] in the same millisecond; the
    paste cut ranks 0's and 3's copies. One cause, rank 2's reading (one code, one guard), not
    three with the cut copies first."""
    from dyncli.diagnose.causes import rank_causes
    diag = diagnose_logs([PASTED / "paraattention-22.log"])
    (cause,) = rank_causes(diag)
    assert set(cause.ranks) == {0, 2, 3}
    assert cause.title.startswith("forward hit torch._dynamo.config.cache_size_limit (8)")
    assert cause.fix.startswith("compile the model that calls the blocks, once")


def test_a_limit_in_matplotlib_is_the_plotting_kept_out_of_compiled_code() -> None:
    """pytorch-lightning-17214: a compiled step that logs an image reached matplotlib's
    draw_text, which hit the limit; its fix was "pass the number as a 0-d tensor". Now the
    plotting kept out of compiled code (applied in tests/integration/test_side_library_fix.py)."""
    from dyncli.diagnose.causes import rank_causes
    from dyncli.diagnose.findings import CauseKind
    diag = diagnose_logs([PASTED / "pytorch-lightning-17214.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert a.fix.startswith("keep the plotting out of the compiled function")
    assert "0-d tensor" not in a.fix
    first = rank_causes(diag)[0]
    assert first.kind is CauseKind.LIBRARY and first.graph_breaks == 1


def test_a_float_gets_the_fix_that_works_on_every_torch_first() -> None:
    """pytorch-149406 (2.5.1, under dynamic=True) and modula-1 (2.3): torch before 2.6 never
    makes a float dynamic, and dynamic=True does so only from 2.8; the first fix is the 0-d
    tensor, which works on every release (applied in tests/integration/test_float_fix.py)."""
    (a,) = [s for s in diagnose_logs([PASTED / "pytorch-149406.log"]).suggestions
            if "float" in s.fix]
    assert a.fix.startswith("pass it as a 0-d tensor to compile once (every torch release")
    assert "torch before 2.6 compiles every value of a float again" in a.fix
    limits = [s for s in diagnose_logs([PASTED / "modula-1.log"]).suggestions
              if s.kind is AdviceKind.RECOMPILE_LIMIT and "float" in s.message]
    assert limits and "torch before 2.6 never makes a float dynamic" in limits[0].message
    assert "dynamic=False, or code that specializes" not in limits[0].message


def test_a_python_builtin_of_no_module_is_named_whole_and_not_wrapped_in_a_custom_op() -> None:
    """torch 2.15 names a builtin type's method "<unknown module>.list.copy" (a compiled step
    reaching matplotlib); the name was cut at the space ("a call of <unknown") and the fix was
    "wrap <unknown in a custom operator"."""
    from dyncli.logparse.textbuiltins import builtin_hint, builtin_name, warned_builtin
    text = ("UserWarning: Dynamo does not know how to trace the builtin `<unknown module>.list."
            "copy.` This function is either a Python builtin (e.g. _warnings.warn) or a …")
    name = builtin_name(text)
    assert name == "<unknown module>.list.copy"
    assert warned_builtin(f"a call of {name}, a builtin or C/C++ function dynamo cannot "
                          "trace") == name
    assert builtin_hint(name).startswith("list.copy is Python's own")
    assert "custom operator" not in builtin_hint(name)

def test_a_guard_on_self_s_class_is_a_class_per_module_and_the_limit_is_a_fix() -> None:
    """torchtune-1232: forward of each FSDP2 layer guarded on ``L['self']``'s class: fully_shard
    made a class per module before torch 2.5 (pytorch#134135), so "pass objects of one class"
    (an input's fix) cannot be done, and raising the limit to the number of layers is a fix
    (applied in tests/integration/test_self_class_fix.py)."""
    diag = diagnose_logs([PASTED / "torchtune-1232.log"])
    limits = [s for s in diag.suggestions if s.kind is AdviceKind.RECOMPILE_LIMIT]
    assert len(limits) == 2
    for a in limits:
        assert "a class of its own" in a.message and "pytorch#134135" in a.message
        assert a.fix.startswith("upgrade to torch >= 2.5")
        assert "raise torch._dynamo.config.cache_size_limit to the number of modules" in a.fix
        assert "pass objects of one class" not in a.fix and "only hides" not in a.fix


def test_the_default_device_guard_is_not_a_value_of_the_code() -> None:
    """deeplink.framework-607: torch 2.1's DEFAULT_DEVICE guard (``utils_device.CURRENT_DEVICE
    == device(…)``) is the default device, set once before the first call (applied in
    tests/integration/test_default_device_fix.py), not a value to move out of the function."""
    diag = diagnose_logs([PASTED / "deeplink.framework-607.log"])
    (a,) = [s for s in diag.suggestions if s.kind is AdviceKind.NON_SHAPE]
    assert a.key == "default_device" and "default device" in a.message
    assert a.fix.startswith("set the default device once, before the first compiled call")
    assert "replaces torch.device" in a.fix and "move it out" not in a.fix

"""Paste hunt 33a (round 33, pytorch/pytorch threads): a glog level and date that the tool a log
was pasted through made a markdown link, and a data-dependent failure torch logged but the log
does not show stop the run.

pytorch#148479: the log came through Workplace, which took glog's ``W0225`` for a work order's
id and linked it, ``# [W0225](https://l.workplace.com/l.php?u=…) 13:16:17.932000 …``; the rest
of the prefix is torch's as it wrote it. dyncli refused the paste as "not a torch log".

pytorch#134421: recording.py logs a ShapeEnv call that raised and re-raises the error to the
code that asked; export caught evaluate_expr(zuf0)'s, trying an operator's overloads, and up to
2.7 or so torch logged it all the same. dyncli read it as a data-dependent error to fix first.
Only where the log shows the error leave torch (a traceback after the record, the error's own
text outside torch's log of it) is it one now; else a note (pytorch#146152's record, a
traceback after it, stays a cause)."""

from __future__ import annotations

from pathlib import Path

from linear_time import assert_linear
from pasted_reading import PASTED, diagnose_text

from dyncli.diagnose.model import Diagnosis
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import textpaste

# pytorch#148479's line, as the thread has it (Workplace's link, then torch's prefix)
_WP_148479 = (
    "# [W0225](https://l.workplace.com/l.php?u=https%3A%2F%2Fwww.internalfb.com%2Fintern%2F"
    "workorder%2F0225&h=AT2t6XcEf6l_vVsx3j6QkHMgmzPh0AuviZbhpkYwGGq3CfsUcLL7qLTVvbPbAOguj_DtDf_dTP0"
    "ugC0skKsAftoeW8YJeUt5xT3HUk6-88963uE_joajh-VGjsnfcYt68RoOE53XU-fvgmmmNYxZJPqOx_nlanUa60_SZg&"
    "__tn__=-UK-R&c[0]=AT2r1u2gOMrie6XSnqmtbhFriQL62sDidA4esMpbwbdwmMsiykZqK_LGHsz7TYyYll9SAZtDFX"
    "DV_7u_vfpnYdfI-x__0S93-6ygASlVii5DbUqgezLBNT1MJ8BUsIGvNP1mkCi6xY6uQLhufShEZSF7p1CxbPFHYSjlgK93"
    "c7NedLS7tmHxKAVEE5LHja9yWTRg) 13:16:17.932000 76863 torch/fx/experimental/symbolic_shapes.py"
    ":6974] runtime_asserts_frozen but then got 24*s0 < 2147483648")
_GLOG = (b"W0225 13:16:17.932000 76863 torch/fx/experimental/symbolic_shapes.py:6974] "
         b"runtime_asserts_frozen but then got 24*s0 < 2147483648")


def test_a_glog_level_made_a_markdown_link_is_torchs_prefix(tmp_path: Path) -> None:
    """The link undone, the prefix is torch's glog line as it wrote it; counted as done."""
    found = textpaste.normalize(_WP_148479.encode())
    assert found is not None
    line, done = found
    assert line.endswith(_GLOG) and done == "glog levels unlinked"
    diag = diagnose_text(tmp_path, _WP_148479 + "\n")  # was refused: "not a torch log"
    assert diag.stats.pasted == {"glog levels unlinked": 1}
    assert diag.stats.records == 1 and not diag.stats.unread
    # 2.7 on, torch logs a runtime assert added after the guards froze and goes on: no cause
    assert not diag.causes


def test_a_linked_level_behind_a_quote_or_a_rank_tag_is_read() -> None:
    link = "[W0225](https://l.workplace.com/l.php?u=x&c[0]=y)"
    for lead, rank in (("> ", b""), ("", b"[rank0]:"), ("- ", b""), ("  ", b"")):
        text = f"{lead}{rank.decode()}{link} " + _GLOG[6:].decode()
        found = textpaste.normalize(text.encode())
        assert found is not None, text
        assert found[0].endswith(rank + _GLOG) and found[1] == "glog levels unlinked", found


def test_a_linked_level_in_prose_or_without_a_clock_after_it_is_not_torchs() -> None:
    """Only where it starts the line (after a quote's, a list's or a comment's marks) and
    glog's clock follows the link: prose that cites a link is no record."""
    tail = _GLOG[6:].decode()
    for text in (f"see [W0225](https://example.com/x) {tail}",
                 "[W0225](https://example.com/x) 13:16 was when it failed",
                 "[W0225](ftp://example.com/x) " + tail):
        assert textpaste.normalize(text.encode()) is None, text


def test_a_hostile_linked_level_costs_linear_time() -> None:
    def make(n: int) -> bytes:
        return b"[W0225](https://" + b"c[0]=" * (n // 5) + b" 13:16:17.9"

    assert_linear(textpaste.normalize, make, 300_000)


# pytorch#146152's description (2.6, non-strict export_for_training of a Faster R-CNN): the same
# two records, then the program's traceback (the store's excerpt cut inside it)
_EXPORT_146152 = (
    "W0203 10:10:46.943000 12336 venv/lib/python3.12/site-packages/torch/fx/experimental/"
    "symbolic_shapes.py:6472] failed during evaluate_expr(Eq(4*u1, 0), hint=None, "
    "size_oblivious=False, forcing_spec=False\n"
    "E0203 10:10:46.944000 12336 venv/lib/python3.12/site-packages/torch/fx/experimental/"
    "recording.py:299] failed while running evaluate_expr(*(Eq(4*u1, 0), None), "
    "**{'fx_node': False})\n"
    "Traceback (most recent call last):\n"
    '  File "faster_rcnn/lower.py", line 11, in <module>\n'
    "    exported_program = torch.export.export_for_training(model, (example_args,), "
    "strict=False)\n"
    '  File "faster_rcnn/venv/lib/python3.12/site-packages/torch/export/__init__.py", line 168, '
    "in export_for_training\n"
    "    return _export_for_training(\n")


def _dde_kinds(diag: Diagnosis) -> tuple[list[str], list[str]]:
    """(the kinds of the causes' findings, the kinds of the notes)."""
    return [str(a.kind) for c in diag.causes for a in c.findings], [str(a.kind) for a in diag.notes]


def test_a_failure_torch_only_logged_is_a_note_not_a_stop() -> None:
    """pytorch#134421's records: torch's log of evaluate_expr(zuf0) that export caught. The
    failed call is read (its expression) but claimed as no stop, and (round 35) as no
    data-dependent error: both records are written for any error of the call; the line its
    paste began at (the record before's last, "For C++ stack trace …") is read as that
    record's, not "not understood"."""
    diag = diagnose_logs([PASTED / "pytorch-134421.log"])
    assert not diag.data_dependent_errors
    causes, notes = _dde_kinds(diag)
    assert causes == [] and notes == ["shape-env-failed"]
    (note,) = diag.notes
    assert "evaluate_expr(zuf0), an error the log does not name" in note.message
    assert "pytorch#134421" in note.message and note.fix.startswith("nothing, where the run went on")
    assert "torch._check" in note.fix  # (the fix, where the run did stop on such an error)
    assert diag.stats.unread == 0 and diag.stats.partial == 1


def test_a_logged_failure_with_a_traceback_after_it_stays_the_error_to_fix(tmp_path: Path) -> None:
    """pytorch#146152: the program's traceback follows torch's log of the failure: it left
    torch and stopped the run (its exception cut from the paste): a cause, the traceback's
    (round 35: the failed call beside it is no data-dependent error without its words)."""
    diag = diagnose_text(tmp_path, _EXPORT_146152)
    assert not diag.data_dependent_errors
    causes, notes = _dde_kinds(diag)
    assert causes == ["compile-crash"] and notes == ["shape-env-failed"]
    # the same records without the traceback: torch's log alone, a note
    alone = diagnose_text(tmp_path, _EXPORT_146152.split("Traceback")[0])
    assert _dde_kinds(alone) == ([], ["shape-env-failed"])
    # the error's own message outside torch's log of it (the program printed the exception)
    printed = diagnose_text(tmp_path, _EXPORT_146152.split("Traceback")[0]
                            + "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: "
                            "Could not guard on data-dependent expression Eq(4*u1, 0) (unhinted: "
                            "Eq(4*u1, 0)).  (Size-like symbols: u1)\n")
    assert _dde_kinds(printed) == (["data-dependent-error"], [])


def test_a_line_of_recordings_record_its_head_cut_is_that_records() -> None:
    """An E line of recording.py that is not a record's head is a line of its traceback (the
    logger writes nothing else at ERROR but the replay's "failed when running event")."""
    from dyncli.logparse import textnotes

    prefix = b"E0826 22:25:29.514000 3573391 torch/fx/experimental/recording.py:298] "
    assert textnotes.in_shape_env_failed(prefix, b"For C++ stack trace, run with X=1")
    assert textnotes.in_shape_env_failed(b"[rank1]:" + prefix.replace(b"/", b"\\"), b"  File")
    assert not textnotes.in_shape_env_failed(prefix, b"failed while running evaluate_expr(*(u0,")
    assert not textnotes.in_shape_env_failed(prefix, b"failed when running event: E")
    assert not textnotes.in_shape_env_failed(prefix.replace(b"E0826", b"V0826"), b"call f")
    assert not textnotes.in_shape_env_failed(prefix.replace(b"recording", b"symbolic_shapes"),
                                             b"For C++ stack trace")


# vllm#27178's comment by eddiechu888 (2026-05-31): flex_attention's warning as the comment has
# it, wrapped by hand at 70 columns and cut by the store ("…instead of generating a fused")
_FLEX_27178 = ("UserWarning: flex_attention called without torch.compile() - this will\n"
               "use an unfused implementation that materializes the full scores matrix\n"
               "instead of generating a fused\n")
# the warning as Python prints it (2.15's flex_attention.py:2621, _warn_once's stacklevel=2: the
# library's own line), after a recompile-limit warning (Wan2GP#653's, as that thread has it)
_LIMIT_653 = (
    "W0810 18:28:53.521000 10244 site-packages\\torch\\_dynamo\\convert_frame.py:964] [2/256] "
    "torch._dynamo hit config.accumulated_recompile_limit (256)\n"
    "W0810 18:28:53.521000 10244 site-packages\\torch\\_dynamo\\convert_frame.py:964] [2/256]    "
    "function: 'check_empty_cuda_cache' (C:\\Users\\mikhail\\.conda\\envs\\Wan2GP\\lib\\"
    "site-packages\\mmgp\\offload.py:2261)\n"
    "W0810 18:28:53.521000 10244 site-packages\\torch\\_dynamo\\convert_frame.py:964] [2/256]    "
    "last reason: 2/255: len(args) == 1\n")
_FLEX_215 = ("/opt/venv/lib/python3.12/site-packages/torch/nn/attention/flex_attention.py:2621: "
             "UserWarning: flex_attention called without torch.compile() - this will use an "
             "unfused implementation that materializes the full scores matrix instead of "
             "generating a fused kernel.\n")


def test_flex_attentions_unfused_warning_is_a_note_that_says_why(tmp_path: Path) -> None:
    """vllm#27178: after its caller's frame hit the recompile limit flex_attention ran its
    unfused implementation; the comment's paste (the warning alone, hand-wrapped) was refused
    as "not a torch log". Now a note: what it costs, the ways a call runs uncompiled (the
    recompile limit among them), and how to compile it; never "Nothing to fix"."""
    diag = diagnose_text(tmp_path, _FLEX_27178)
    (note,) = diag.notes
    assert str(note.kind) == "flex-attention-eager" and not diag.causes
    assert "materializes the whole scores matrix" in note.message
    assert "recompile limit" in note.message and "torch.compile(flex_attention)" in note.fix
    assert "comes before the warning" not in note.message  # (no limit in this paste)
    assert diag.stats.unread == 0
    # with a limit hit before it in the log, the note names that frame
    joined = diagnose_text(tmp_path, _LIMIT_653 + _FLEX_215)
    assert len(joined.recompile_limits) == 1
    (flex,) = [a for a in joined.notes if str(a.kind) == "flex-attention-eager"]
    assert "check_empty_cuda_cache (line 1) comes before the warning" in flex.message
    # the warning before the limit: the limit is no reason for it
    first = diagnose_text(tmp_path, _FLEX_215 + _LIMIT_653)
    (flex,) = [a for a in first.notes if str(a.kind) == "flex-attention-eager"]
    assert "comes before the warning" not in flex.message

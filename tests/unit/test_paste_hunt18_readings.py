"""Paste hunt 18 (round 23): torch's symbolic-shapes output as users paste it, each reading
checked on the corpus's copy (tests/data/pasted/, manifest.toml says what each proves)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.errors import InputError
from dyncli.logparse.textcrash import CrashReader

PASTED = Path(__file__).parent.parent / "data" / "pasted"


def _advice(name: str, kind: AdviceKind) -> list:
    return [a for a in diagnose_logs([PASTED / name]).suggestions if a.kind is kind]


def test_exports_re_raise_after_a_violation_is_not_a_second_failure() -> None:
    # "During handling of the above exception" after the violation's items: export's UserError
    for name in ("pytorch-134137.log", "pytorch-121038.log"):
        diag = diagnose_logs([PASTED / name])
        assert not diag.compile_crashes, name
        assert [a.kind for a in diag.suggestions] == [AdviceKind.CONSTRAINT_VIOLATION], name


def test_a_crash_of_the_compiler_while_it_handled_a_read_exception_is_a_crash(
        tmp_path: Path) -> None:
    # (round 24) a chained traceback after a reader's exception was refused as its re-raise
    # even where dynamo itself raised in its own frames while handling it: that crash was lost
    log = tmp_path / "chained.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/x/site-packages/torch/_dynamo/symbolic_convert.py", line 10, in step\n'
        "    self.dispatch_table[inst.opcode](self, inst)\n"
        "torch._dynamo.exc.Unsupported: call_function BuiltinVariable(open) [ConstantVariable(str)] {}\n"
        "\nDuring handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "/home/u/prog.py", line 5, in <module>\n    f(x)\n'
        '  File "/x/site-packages/torch/_dynamo/convert_frame.py", line 20, in _compile\n'
        "    assert tracer.output.is_empty()\nAssertionError\n")
    diag = diagnose_logs([log])
    (crash,) = diag.compile_crashes
    assert crash.deepest is not None and crash.deepest.function == "_compile"
    assert len(diag.graph_breaks) == 1


def test_a_named_dim_pinned_at_one_is_the_examples_size() -> None:
    (a,) = _advice("pytorch-121038.log", AdviceKind.CONSTRAINT_VIOLATION)
    assert "example input has size 1" in a.message and "batch" in a.message
    assert "example input of size 2 or more" in a.fix and "change the line" not in a.fix
    (b,) = _advice("pytorch-134137.log", AdviceKind.CONSTRAINT_VIOLATION)  # 1792: the model's
    assert "the model specialized it to 1792" in b.message and "(torch's suggested fix)" in b.fix


def test_a_traceback_cut_in_produce_guards_is_the_shape_guards_failing() -> None:
    for name, fn in (("pytorch-176349.log", "produce_guards"), ("pytorch-128385.log", "SHAPE_ENV")):
        (a,) = _advice(name, AdviceKind.COMPILE_CRASH)
        assert f"inside torch's {fn}, making the compile's shape guards" in a.fix, name
        assert "Constraints violated" in a.fix and "a newer torch" not in a.fix, name


def test_a_wrapped_you_marked_item_and_a_quoted_one_are_read() -> None:
    (a,) = _advice("pytorch-157921.log", AdviceKind.CONSTRAINT_VIOLATION)
    assert "L['x'].size()[0]" in a.message and "8192" in a.message
    (b,) = _advice("samsung-tico-248.log", AdviceKind.CONSTRAINT_VIOLATION)
    assert "Dim batch" in b.message  # (the quote no longer hides the Dim's name)


def test_prose_that_quotes_the_items_words_is_not_a_wrapped_item(tmp_path: Path) -> None:
    # (round 24) the wrapped item's line ends inside torch's words ("… specialized it to be a");
    # a sentence that goes on in its own was read as one, so a page of notes was no longer
    # refused as "not a torch log"
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nYou marked the batch as dynamic but your code specialized it, "
                     "so export failed.\n")
    with pytest.raises(InputError, match="not a torch log"):
        diagnose_logs([notes])


def test_a_replacement_is_placed_by_its_guard_or_said_unseen() -> None:
    # the guard after the replacement names torch's own place (an executorch pass)
    (a,) = _advice("pytorch-135429.log", AdviceKind.FRAMEWORK_SPECIALIZATION)
    assert "inside _subclasses/fake_impls.py:715 in conv" in a.message
    assert 'TORCHDYNAMO_EXTENDED_DEBUG_GUARD_ADDED="Eq(2, s1)"' in a.fix
    # no guard in the paste: not "inside framework code", and no CREATE_SYMBOL (where it was made)
    (b,) = _advice("pytorch-121080.log", AdviceKind.FRAMEWORK_SPECIALIZATION)
    assert "the paste does not show" in b.message and "framework code" not in b.message
    assert "line on s9" in b.fix and "CREATE_SYMBOL" not in b.fix


def test_ipython_cell_frames_keep_a_traceback_whole() -> None:
    reader = CrashReader()
    lines = [b"UserError                                 Traceback (most recent call last)",
             b"Cell In[1], line 48", b"---> 48     so_path = f(", b"",
             b"File /opt/conda/lib/python3.10/site-packages/torch/_dynamo/convert_frame.py:9, "
             b"in _compile(code)"]
    for n, raw in enumerate(lines, 1):
        assert reader.observe(raw, n, unread=True) == []
    (crash,) = reader.done()
    assert crash.user is not None and crash.user.file == "Cell In[1]" and crash.user.line == 48


def test_compiled_autograds_input_pinned_against_a_mark_is_said_as_such() -> None:
    # pytorch#133575: L['inputs'][1] is compiled autograd's backward graph input (the user's
    # marked x, saved for the backward); before round 23 only "mark_dynamic or a framework"
    (a,) = _advice("pytorch-133575.log", AdviceKind.CONSTRAINT_VIOLATION)
    assert "compiled autograd's backward graph" in a.message and "pytorch#133575" in a.message
    assert "the log does not say compiled autograd ran" in a.message  # (the name alone)
    assert "under compiled autograd, torch._dynamo.maybe_mark_dynamic on that forward" in a.fix
    # another input's violation keeps the plain reading
    (b,) = _advice("vllm-ascend-1324.log", AdviceKind.CONSTRAINT_VIOLATION)
    assert "compiled autograd" not in b.message + b.fix

"""Paste hunt 20 (round 24): the serving stacks' pastes (vLLM, vllm-ascend, SGLang), each
reading checked on the corpus's copy (tests/data/pasted/, manifest.toml says what each proves)
or on the lines the thread's excerpt has."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from linear_time import assert_linear

from dyncli.diagnose.findings import AdviceKind
from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse.textcrash import quoted_exception
from dyncli.logparse.textlog import parse_lines

PASTED = Path(__file__).parent.parent / "data" / "pasted"


def test_a_workers_tag_with_fields_and_an_empty_stamped_line_are_vllms() -> None:
    # "(VllmWorker rank=3 pid=1564) ERROR … [multiproc_executor.py:546]" with nothing after it
    diag = diagnose_logs([PASTED / "vllm-ascend-2235.log"])
    assert [b.reason for b in diag.graph_breaks] == \
        ["Operator does not support running with fake tensors"]
    # the blank stamped line before "from user code:" joins the stack to the break
    (b,) = diagnose_logs([PASTED / "vllm-ascend-1962.log"]).graph_breaks
    assert (b.file.rsplit("/", 1)[-1], b.user_line) == ("llama.py", 202)


def test_rays_tags_and_its_dedup_suffix_are_not_the_programs() -> None:
    # vllm-ascend#4948: the engine's tag, Ray's worker tag with its ip, " [repeated 23x across
    # cluster]" after each line; its excerpt ends at eval_frame's wrapper (refused: cut there)
    tag = ("(EngineCore_DP0 pid=35189) (RayWorkerWrapper pid=6592, ip=100.119.13.45) ERROR "
           "12-12 05:11:33 [worker_base.py:275] ")
    text = "".join(tag + line + " [repeated 23x across cluster]\n" for line in (
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py", line 1, in f',
        "    x()",
        "torch._dynamo.exc.InternalTorchDynamoError: AttributeError: boom"))
    diag = diagnose_logs_text(text)
    assert len(diag.compile_crashes) == 1
    assert "repeated" not in diag.compile_crashes[0].error


def diagnose_logs_text(text: str):  # type: ignore[no-untyped-def]
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "p.log"
        p.write_text(text)
        return diagnose_logs([p])


def test_vllms_worker_error_quoting_torchs_exception_is_that_exception() -> None:
    diag = diagnose_logs([PASTED / "vllm-19332.log"])
    (crash,) = diag.compile_crashes
    assert "Dynamo failed to run FX node with fake tensors" in crash.error
    # vllm-ascend#2226's line (its traceback is vLLM's and multiprocessing's): 2.1-2.6's
    # Unsupported for an op with no meta kernel, read as torch's break, not refused
    diag = diagnose_logs_text(
        "Traceback (most recent call last):\n"
        '  File "/v/vllm/v1/executor/multiproc_executor.py", line 202, in get_response\n'
        "    raise RuntimeError(\n"
        "RuntimeError: Worker failed with error 'dynamic shape operator: aten.bincount.default; "
        "Operator does not have a meta kernel that supports dynamic output shapes, please "
        "report an issue to PyTorch', please check the stack trace above for the root cause\n")
    (b,) = diag.graph_breaks
    assert b.reason.startswith("dynamic shape operator: aten.bincount.default")
    assert b.reason.endswith("please report an issue to PyTorch")
    assert not [a for a in diag.suggestions if a.kind is AdviceKind.COMPILE_CRASH]


@pytest.mark.parametrize("line", [
    b"RuntimeError: Worker failed with error 'CUDA out of memory', please check the stack "
    b"trace above for the root cause",
    b"RuntimeError: the error 'dynamic shape operator' was mentioned",  # (no quote at its start)
    b"Worker failed with error 'Dynamo failed to run FX node with fake tensors: x'",  # kept
])
def test_only_torchs_own_words_in_a_wrappers_quote_are_unwrapped(line: bytes) -> None:
    got = quoted_exception(line)
    if b"Dynamo failed" in line:
        assert got == (b"torch._dynamo.exc.TorchRuntimeError: Dynamo failed to run FX node "
                       b"with fake tensors: x")
    else:
        assert got is None


def test_a_qualified_unsupported_line_in_a_pastes_indent_is_torchs() -> None:
    (b,) = diagnose_logs([PASTED / "vllm-ascend-1615.log"]).graph_breaks
    assert b.reason.startswith("call_function DelayGraphBreakVariable()")
    assert (b.file.rsplit("/", 1)[-1], b.user_line) == ("utils.py", 330)


def test_the_new_line_patterns_are_linear_on_hostile_lines() -> None:
    hostile: list[tuple[Callable[[int], bytes], int]] = [
        (lambda n: b"(" + b"a=b " * n + b"x", 250_000),
        (lambda n: b"RuntimeError: " + b"w" * 70 + b" error 'dynamic shape operator: "
         + b"'" * n, 1_000_000),
        (lambda n: b"ERROR 01-01 00:00:00 [" + b"a:1" * n, 300_000),
        # (blanks after the quoted head: its first pattern took 31 s on this line)
        (lambda n: b"RuntimeError: Worker failed with error 'Dynamo failed to run FX node with "
         b"fake tensors:" + b" " * n + b"z", 1_000_000)]
    for make, n in hostile:
        assert_linear(quoted_exception, make, n)
        assert_linear(lambda line: list(parse_lines([line + b"\n"])), make, n)


@pytest.mark.parametrize("stamp", [
    b"(VllmWorker rank=3 pid=1564) ERROR 08-06 10:40:29 [multiproc_executor.py:546] ",
    b"(Worker_PP0 pid=116) ERROR 09-20 17:58:00 [v1/executor/multiproc_executor.py:654] ",
    b"(EngineCore_DP0 pid=35189) (RayWorkerWrapper pid=6592, ip=100.119.13.45) ERROR 12-12 "
    b"05:11:33 [worker_base.py:275] ",
    b"(pid=560, ip=10.1.18.11) INFO 02-12 02:11:32 [__init__.py:190] ",  # vllm#13121
    b"(VllmWorkerProcess pid=2782672) ERROR 11-29 18:13:51 multiproc_worker_utils.py:229] ",
    b"(Worker_TP5 pid=7129) ERROR 2025-11-25 15:18:55.343 [multiproc_executor.py:671] ",
])
def test_vllms_stamps_in_each_form_are_taken_off(stamp: bytes) -> None:
    line = b"torch._dynamo.exc.InternalTorchDynamoError: AttributeError: boom"
    events = list(parse_lines([b"Traceback (most recent call last):\n", stamp + line + b"\n"]))
    assert any(type(e).__name__ == "CompileCrash" for e in events), events

"""A program's warning that quotes torch.compile's refusal (``textcrash.refusal_warned``): the
level's word counts only within 160 characters of torch's words. Before round 28 a level word
anywhere before them did, so a line that joined two messages (a paste that lost its line
breaks), or a long warning of the program's own that torch's words end, read as "the program
warned and went on uncompiled"."""

from __future__ import annotations

import pytest

from dyncli.logparse.textcrash import refusal_warned

_REFUSAL = "Windows not yet supported for torch.compile"


@pytest.mark.parametrize("line", [
    # two of SD.Next's lines joined by a paste: the WARNING is the first message's; torch's
    # words are the second's, an ERROR (the program stopped there)
    "22:25:44-120331 WARNING  Compile: torch.compile is set for the UNet and the VAE; the first "
    "generation compiles both, which takes minutes on a laptop GPU and more on a CPU "
    "22:25:45-339909 ERROR    Model compile failed: RuntimeError: " + _REFUSAL,
    # a warning of the program's own, long, that torch's words end far from its level
    "WARNING: loading the weights from the cache took 3.2 s; the scheduler is DPM++ 2M Karras "
    "with 30 steps, the VAE is fp16 and the text encoder is offloaded to CPU between calls, so "
    "expect slow first steps. " + _REFUSAL,
])
def test_a_level_word_far_from_torchs_words_is_another_messages(line: str) -> None:
    assert refusal_warned(line) == ""


def test_the_level_reaches_160_characters() -> None:
    # between the level's word and torch's: SD.Next's second blank, then the message
    for length, read in ((159, True), (160, False)):
        message = ("Model compile not supported: " + "x" * length)[:length - 2] + ": "
        line = "22:25:45-339909 WARNING  " + message + _REFUSAL
        assert (refusal_warned(line) == message + _REFUSAL) is read, length
        assert refusal_warned(line) in ("", message + _REFUSAL)


def test_sdnexts_warning_with_a_long_message_still_reads() -> None:
    # sdnext#2699's words behind a model's name of 100 characters: 129 characters
    name = "sdxl/" + "a" * 95
    line = f"22:25:45-339909 WARNING  Model compile not supported {name}: {_REFUSAL}"
    assert refusal_warned(line) == f"Model compile not supported {name}: {_REFUSAL}"

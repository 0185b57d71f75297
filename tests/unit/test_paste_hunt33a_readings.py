"""Paste hunt 33a (round 33, pytorch/pytorch threads): a glog level and date that the tool a log
was pasted through made a markdown link.

pytorch#148479: the log came through Workplace, which took glog's ``W0225`` for a work order's
id and linked it, ``# [W0225](https://l.workplace.com/l.php?u=…) 13:16:17.932000 …``; the rest
of the prefix is torch's as it wrote it. dyncli refused the paste as "not a torch log"."""

from __future__ import annotations

from pathlib import Path

from linear_time import assert_linear
from pasted_reading import diagnose_text

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

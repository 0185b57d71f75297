"""torch 2.1's nightlies of April-August 2023 (round 24): symbolic_shapes' messages behind the
ShapeEnv's id (``0: create_env``, ShapeEnvLoggerAdapter's ``'%s: %s' % (envid, msg)``), and
``evaluate_expr`` before pytorch#99159 shortened it to ``eval`` (pytorch#98941's paste)."""

from __future__ import annotations

from pathlib import Path

from dyncli.diagnose.read import diagnose_logs
from dyncli.logparse import events as ev
from dyncli.logparse.textlog import parse_lines

PASTED = Path(__file__).parent.parent / "data" / "pasted"


def test_a_shape_envs_id_and_evaluate_expr_are_read() -> None:
    text = (PASTED / "pytorch-98941.log").read_bytes()
    events = list(parse_lines(text.splitlines(keepends=True)))
    guards = [e for e in events if isinstance(e, ev.GuardAdded)]
    assert [(g.expr, g.prefix) for g in guards] == [("s0 < 128", "eval"),
                                                     ("Eq(Mod(s0, 16), 0)", "eval")]
    assert guards[0].user is not None and (guards[0].user.file, guards[0].user.line) == ("w.py", 11)
    (sym,) = [e for e in events if isinstance(e, ev.CreateSymbol)]
    assert (sym.symbol, sym.value, sym.source) == ("s0", "32", "L['x'].size()[0]")
    assert diagnose_logs([PASTED / "pytorch-98941.log"]).stats.unrecognized == 0


def test_an_id_is_read_only_before_symbolic_shapes_messages() -> None:
    # (another logger's message that begins with digits and a colon is not a ShapeEnv's id)
    line = (b"[2023-04-12 08:25:50,154] torch._dynamo.convert_frame: [INFO] 0: eval s0 < 128 "
            b"[guard added] at w.py:11 in forward2 (_dynamo/variables/tensor.py:476 in evaluate_expr)\n")
    assert not [e for e in parse_lines([line]) if isinstance(e, ev.GuardAdded)]
    shapes = line.replace(b"_dynamo.convert_frame", b"fx.experimental.symbolic_shapes")
    assert [e.expr for e in parse_lines([shapes]) if isinstance(e, ev.GuardAdded)] == ["s0 < 128"]
    # the later nightlies' id of a frame's env ("3.0: "), as ShapeEnv(frame_id=3) wrote it
    later = shapes.replace(b"] 0: ", b"] [3/0] ", 0).replace(b" 0: eval", b" 3.0: eval")
    assert [e.expr for e in parse_lines([later]) if isinstance(e, ev.GuardAdded)] == ["s0 < 128"]

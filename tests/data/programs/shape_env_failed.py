"""Two ShapeEnv.evaluate_expr calls that raise, each caught by its caller as export catches
one (pytorch#134421), for recording.py's record of a failed call (tests/data/make_shape_env_failed.py).

1. ``u0 > 5`` over an unbacked int torch knows nothing of: GuardOnDataDependentSymNode.
2. ``u1 < 20`` over an unbacked int in [0, 10], given the hint False: torch decides it True
   and its hint check raises AssertionError (the check pytorch#130456 tripped on an unbacked
   expression): an error that is not data-dependent, on an expression over data. (2.4 checks
   every hint so; 2.15 only under ``backed_size_oblivious``, set here where torch has it.)

The ShapeEnv records its events (``should_record_events=True``, what translation validation
turns on): torch 2.8 on logs a failed recorded call only then; 2.1-2.7 always.
"""

from __future__ import annotations

import sympy
from torch.fx.experimental import _config
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode, ShapeEnv

if hasattr(_config, "backed_size_oblivious"):
    _config.backed_size_oblivious = True

env = ShapeEnv(should_record_events=True)
u0 = env.create_unbacked_symint().node.expr
try:
    env.evaluate_expr(sympy.Gt(u0, 5))
except GuardOnDataDependentSymNode as e:
    print("caught", type(e).__name__)
u1 = env.create_unbacked_symint().node.expr
env.constrain_symbol_range(u1, compiler_min=0, compiler_max=10)
try:
    env.evaluate_expr(sympy.Lt(u1, 20), hint=False)
except AssertionError as e:
    print("caught", type(e).__name__, e)

"""The ``backend`` program of the compatibility corpus (tests/data/<torch version>/compat/).

Its own file: the PGO state recorded from ``compat_program.py`` names that file's hash, and
suggest leaves a frame whose file changed out as stale, so that file stays as it was recorded.
Run by ``tests/data/make_compat.py`` (``--only backend``) under each torch release.

One function compiled by ``torch.compile`` with a new backend callable each call (pytorch#154707,
#168373), under a recompile limit of 2. No guard of a cached entry fails, the backend does not
match: torch 2.3 names ___check_current_backend, 2.4 logs an empty reason (and the limit's last
reason "Unable to find recompilation reasons"), 2.5-2.9 the entry's id with nothing after it,
2.10 on "BACKEND_MATCH failure". Calls 2 and 3 recompile; the fourth call's recompile hits the limit.
"""

from __future__ import annotations

import torch
import torch._dynamo.config as dynamo_config


def shift(x):
    return x.sin() + 1


def main() -> None:
    # the limit's name: cache_size_limit before 2.7, recompile_limit from 2.7
    name = "recompile_limit" if hasattr(dynamo_config, "recompile_limit") else "cache_size_limit"
    setattr(dynamo_config, name, 2)
    x = torch.randn(3)
    for _ in range(4):
        torch.compile(shift, backend=lambda gm, example_inputs: gm.forward)(x)


if __name__ == "__main__":
    main()

"""`python -m dyncli` and the `dyncli` console script: the app, and Ctrl-C during start-up.

See :mod:`dyncli.startup`: before the app is imported, SIGTERM raises ``KeyboardInterrupt``
and an escaping ``KeyboardInterrupt`` prints one line; here a Ctrl-C while the app is
imported is one line and exit 130, as it is once the app runs (``dyncli.cli``).
"""

from __future__ import annotations

import sys

from dyncli import startup

startup.install()


def main() -> None:
    """Run the dyncli app."""
    try:
        from dyncli.cli import main as app_main

        app_main()
    except SystemExit as e:
        if e.code == 130:
            startup.exit_interrupted()
        startup.exit_now(e.code)  # only where a command asked for it
        raise
    except KeyboardInterrupt:
        sys.stderr.write("\nInterrupted\n")
        startup.exit_interrupted()
        raise SystemExit(130) from None  # where the streams could not be flushed


if __name__ == "__main__":
    main()

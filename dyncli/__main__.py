"""`python -m dyncli` and the `dyncli` console script: the app, and Ctrl-C during start-up.

Importing the app (typer, rich) takes a noticeable moment; a Ctrl-C then would print a
traceback from whatever module was being imported. Here it is one line and exit 130, as it
is once the app runs (``dyncli.cli``).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run the dyncli app."""
    try:
        from dyncli.cli import main as app_main

        app_main()
    except KeyboardInterrupt:
        sys.stderr.write("\nInterrupted\n")
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()

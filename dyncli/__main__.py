"""`python -m dyncli` runs the same app as the `dyncli` console script."""

from dyncli.cli import main

if __name__ == "__main__":
    main()

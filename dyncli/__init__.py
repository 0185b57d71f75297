"""dyncli: a command-line toolkit for PyTorch 2 dynamic shapes."""

__version__ = "0.1.0"

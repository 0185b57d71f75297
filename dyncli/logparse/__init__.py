"""Pure parsers of torch logs: lines in, typed events out (no printing, no file IO, no torch).

- ``glog``: the one regex for torch's glog prefix.
- ``events``: frozen dataclasses for every event, shared by all parsers.
- ``textlog``: TORCH_LOGS text (``+dynamic,recompiles,guards,graph_breaks``).
- ``trace``: TORCH_TRACE structured traces.
"""

"""The pipeline's last step: what a Diagnosis concludes, computed once and stored on it.

The readers (``dyncli.diagnose.read.diagnose_logs``, ``read_trace.diagnose_traces``,
``analyzer.analyze``) end here, once every finding is known (the rules' and, for a trace, the
trace's): the root causes (``causes``) and the distinct graph breaks explained by torch's
graph-break registry (``graph_breaks``). The registry comes from the caller: ``api.run``
passes the installed torch's (:func:`~dyncli.diagnose.graph_breaks.installed_registry`), a test
a recorded one; it is asked for only when there is a graph break to explain. So the result
type neither computes its analysis on access nor reads the environment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dyncli.diagnose.causes import rank_causes
from dyncli.diagnose.graph_breaks import Registry, distinct_breaks
from dyncli.diagnose.model import Diagnosis

# How the pipeline gets the graph-break registry: asked at most once, only for graph breaks
RegistryLoader = Callable[[], "Registry | None"]


def no_registry() -> Registry | None:
    """No registry: graph breaks are named and explained by the log's own words."""
    return None


def conclude(diag: Diagnosis, registry: RegistryLoader = no_registry) -> Diagnosis:
    """``diag`` with its causes, distinct graph breaks and registry version set."""
    reg = registry() if diag.graph_breaks else None
    return dataclasses.replace(
        diag, causes=rank_causes(diag), distinct_graph_breaks=distinct_breaks(diag, reg),
        graph_break_registry=reg.version if reg is not None else None)

"""The result of ``dyncli bench --suite``: every model's outcome, and its JSON. No torch.

The suite document is the single-bench schema with every model's runs in ``runs`` plus a
``suite`` object and one ``models[]`` entry per model. :meth:`SuiteResult.from_dict` reads one
back (``--resume``, and anyone reading a suite without torch); runs go through
:meth:`~dyncli.bench.core.result.RunResult.from_dict`, like every bench document.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from dyncli.bench.core import fields as f
from dyncli.bench.core.result import Environment, RunResult
from dyncli.bench.core.status import Status
from dyncli.output import envelope


@dataclass
class ModelOutcome:
    """What one model's child process left: its runs and how it ended."""

    name: str
    model: str
    status: Status
    settings: dict[str, Any]
    runs: list[RunResult] = field(default_factory=list)
    error: str = ""
    exit_code: int | None = None
    wall_s: float = 0.0
    stderr_tail: str = ""
    environment: Environment | None = None
    dims: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The ``models[]`` entry of the suite document (its runs are in ``runs``)."""
        return {"model": self.name, "source": self.model, "status": self.status,
                "error": self.error or None, "exit_code": self.exit_code, "wall_s": self.wall_s,
                "stderr_tail": self.stderr_tail or None, "settings": self.settings,
                "environment": self.environment.to_dict() if self.environment else None,
                "dims": self.dims, "warnings": self.warnings,
                "strategies": [r.label for r in self.runs]}

    @classmethod
    def from_dict(cls, entry: dict[str, Any], runs: list[RunResult]) -> ModelOutcome:
        """Rebuild a finished model from its ``models[]`` entry and its runs.

        The file may have been edited or damaged: ``model`` and ``status`` must be strings
        (else ``ValueError``: the model runs again); other fields of the wrong type read as
        absent.
        """
        model, status = entry.get("model"), entry.get("status")
        if not isinstance(model, str) or not isinstance(status, str):
            raise ValueError("a models[] entry without a model name or status")
        wall = f.num(entry.get("wall_s"), 0.0)
        env = f.opt_obj(entry.get("environment"))
        return cls(model, f.text(entry.get("source"), model), Status.parse(status),
                   f.obj(entry.get("settings")), runs, f.text(entry.get("error")),
                   f.opt_int(entry.get("exit_code")), wall if math.isfinite(wall) else 0.0,
                   f.text(entry.get("stderr_tail")),
                   Environment.from_dict(env) if env is not None else None,
                   f.obj(entry.get("dims")), f.texts(entry.get("warnings")))


@dataclass(frozen=True)
class SuiteInfo:
    """Which suite ran: its name, where it came from, and how many models it has."""

    name: str
    source: str
    description: str
    models: int
    resumed: tuple[str, ...] = ()


@dataclass
class SuiteResult:
    """Every model of a suite run, in suite order."""

    suite: SuiteInfo
    settings: dict[str, Any]
    outcomes: list[ModelOutcome] = field(default_factory=list)
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)  # the suite's own (the command's options)

    @property
    def ran(self) -> bool:
        """Whether any model produced timings."""
        return any(v.timed for o in self.outcomes for r in o.runs for v in r.variations)

    @property
    def failed(self) -> bool:
        """Whether any model did not pass."""
        return self.interrupted or any(o.status != Status.PASS for o in self.outcomes)

    @property
    def environment(self) -> Environment | None:
        """Where the suite ran: the first model's environment that is known."""
        return next((o.environment for o in self.outcomes if o.environment), None)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: the bench schema, every model's runs, plus ``models[]``."""
        env = self.environment
        return envelope("bench", {
            "model": None,
            "suite": {"name": self.suite.name, "source": self.suite.source,
                      "description": self.suite.description, "models": self.suite.models,
                      "resumed": list(self.suite.resumed)},
            "interrupted": self.interrupted,
            "environment": env.to_dict() if env else None,
            "settings": self.settings,
            "dims": {},
            "warnings": self.warnings + [f"{o.name}: {w}" for o in self.outcomes
                                         for w in o.warnings],
            "runs": [r.to_dict() for o in self.outcomes for r in o.runs],
            "models": [o.to_dict() for o in self.outcomes],
        })

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> SuiteResult:
        """Read a suite document back; ``ValueError`` when it is not one.

        A ``models[]`` entry that is damaged is left out (``--resume`` runs that model again).
        """
        meta = doc.get("suite")
        if doc.get("command") != "bench" or not isinstance(doc.get("models"), list) \
                or not isinstance(meta, dict):
            raise ValueError("not a suite result (no suite and models[])")
        runs: list[RunResult] = []
        for raw in f.objs(doc.get("runs")):
            try:
                runs.append(RunResult.from_dict(raw))
            except ValueError:
                continue
        outcomes = []
        for entry in f.objs(doc.get("models")):
            try:
                outcomes.append(ModelOutcome.from_dict(
                    entry, [r for r in runs if r.model == entry.get("model")]))
            except ValueError:
                continue
        info = SuiteInfo(f.text(meta.get("name")), f.text(meta.get("source")),
                         f.text(meta.get("description")), f.integer(meta.get("models")),
                         tuple(f.texts(meta.get("resumed"))))
        return cls(info, f.obj(doc.get("settings")), outcomes, f.flag(doc.get("interrupted")))

"""What `evaluate` returns: one frozen result per metric family, flattened on demand.

Each family's result is a frozen dataclass whose field names are the JSON keys (see
holdbench.metrics.registry); `to_dict()` merges them into one JSON-safe mapping (NaN and infinities
become None), `artifacts()` gathers the tables they carry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from holdbench.metrics.registry import artifacts, json_scalar, scalars, specs_of


@dataclass(frozen=True)
class EvaluationResult:
    """Everything `holdbench.metrics.evaluate` computed for one (T, H, S): one result per family, in order."""

    results: dict[str, Any]
    """family name -> that family's frozen result."""
    holdout_row: bool
    """True when S is H (the holdout reference row)."""
    n_columns: int
    seed: int
    too_small: str | None = None
    """Why T or H is too small for meaningful numbers (holdbench.metrics.evaluate.MIN_MEANINGFUL_ROWS), or None."""
    na: dict[str, str] = field(default_factory=dict)
    """family name -> why it reported n/a (evaluate(on_error="na")): every metric of it is None."""
    na_types: dict[str, type] = field(default_factory=dict, repr=False)
    """family name -> the result type of an n/a family (its metric names)."""
    unavailable: tuple[str, ...] = ()
    """The n/a families that could not run in this environment at all (may heal: see MetricFamily.unavailable)."""

    def __getattr__(self, name: str):
        for res in self.__dict__.get("results", {}).values():
            if name in {f.name for f in dataclasses.fields(res)}:
                return getattr(res, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @property
    def marginals(self) -> pd.DataFrame | None:
        fid = self.results.get("fidelity")
        return None if fid is None else fid.marginals

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-safe mapping of every scalar of every family (no artifact tables)."""
        out: dict[str, Any] = {"holdout_row": self.holdout_row, "n_columns": self.n_columns, "seed": self.seed,
                               "families": ",".join(self.results), "meaningful": self.too_small is None,
                               "not_meaningful_reason": self.too_small}
        for res in self.results.values():
            out.update(scalars(res))
        for name, reason in self.na.items():
            out.update(dict.fromkeys((sp.name for sp in specs_of(self.na_types[name])), None))
            out[na_key(name)] = reason
        return {k: json_scalar(v) for k, v in out.items()}

    def artifacts(self) -> dict[str, pd.DataFrame]:
        """Every artifact table of every family, by field name."""
        out: dict[str, pd.DataFrame] = {}
        for res in self.results.values():
            out.update(artifacts(res))
        return out


#: suffix of the metrics.json key saying why a family is n/a
NA_SUFFIX = "_na_reason"


def na_key(family: str) -> str:
    """The metrics.json key holding why a family is n/a (absent when it is not)."""
    return f"{family}{NA_SUFFIX}"

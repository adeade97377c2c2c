"""What `evaluate` returns: one frozen result per metric family, flattened on demand.

Each family's result is a frozen dataclass whose field names are the JSON keys (see
metrics.registry); `to_dict()` merges them into one JSON-safe mapping (NaN and infinities
become None), `artifacts()` gathers the tables they carry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from metrics.registry import artifacts, json_scalar, scalars


@dataclass(frozen=True)
class EvaluationResult:
    """Everything `metrics.evaluate` computed for one (T, H, S): one result per family, in order."""

    results: dict[str, Any]
    """family name -> that family's frozen result."""
    holdout_row: bool
    """True when S is H (the holdout reference row)."""
    n_columns: int
    seed: int

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
                               "families": ",".join(self.results)}
        for res in self.results.values():
            out.update(scalars(res))
        return {k: json_scalar(v) for k, v in out.items()}

    def artifacts(self) -> dict[str, pd.DataFrame]:
        """Every artifact table of every family, by field name."""
        out: dict[str, pd.DataFrame] = {}
        for res in self.results.values():
            out.update(artifacts(res))
        return out

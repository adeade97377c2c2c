"""The plug-in interface every synthesizer implements.

A synthesizer is built from its Hydra config (`_target_` plus constructor arguments),
fitted once on the training split T and asked for n rows. The harness, not the plug-in,
checks the output against the schema (holdbench.benchmark.cell.checks.check_output).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from holdbench.contracts.schema import Schema


@dataclass(frozen=True)
class FitContext:
    """What a synthesizer may know besides T.

    holdout is given only to synthesizers with `needs_holdout = True` (the reference row).
    """

    schema: Schema
    seed: int
    dataset: str
    holdout: pd.DataFrame | None = None


class Synthesizer(ABC):
    """Fit on T, then sample n rows; every random choice is driven by the seeds given."""

    #: the synthesizer needs H (only the holdout reference row does)
    needs_holdout: ClassVar[bool] = False
    #: evaluate with the holdout rule (S = H: d_H is the 2nd nearest neighbour in H)
    holdout_rule: ClassVar[bool] = False

    @abstractmethod
    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        """Learn from T (canonical dtypes, schema column order)."""

    @abstractmethod
    def sample(self, n: int, seed: int) -> pd.DataFrame:
        """Return n rows with the schema's columns."""

    def info(self) -> dict:
        """JSON-safe facts about the fitted synthesizer, recorded with the cell (library versions,
        per-column encodings, records added by a post-processor, ...). Called after `sample`."""
        return {}

    def versions(self) -> dict[str, str | None]:
        """Versions of what the output depends on beyond the Python packages the harness records
        (an R and its packages, an external tool): recorded in generate.json, status.json, the
        leaderboard's provenance and MLflow. Called after `sample`."""
        return {}

    def artifacts(self) -> dict[str, pd.DataFrame]:
        """Tables the harness writes into the cell as `<name>.csv` (a tuning trace, ...)."""
        return {}


def check_visit_sequence(who: str, sequence: list[str] | None, columns: list[str], dataset: str) -> list[str]:
    """The order in which a sequential synthesizer visits the columns: `sequence` if it names every
    column of the table exactly once, the table's order if it is None; else a ValueError naming the
    columns. A partial sequence is refused: R synthpop returns a column it does not visit as the real
    training values (row for row when k = |T|), a privacy leak dressed as a setting."""
    if sequence is None:
        return list(columns)
    seq = [str(c) for c in sequence]
    unknown = [c for c in seq if c not in columns]
    if unknown:
        raise ValueError(f"{who}: visit_sequence names column(s) {unknown} that dataset {dataset!r} does not have")
    dupes = sorted({c for c in seq if seq.count(c) > 1})
    if dupes:
        raise ValueError(f"{who}: visit_sequence lists column(s) {dupes} more than once")
    missing = [c for c in columns if c not in seq]
    if missing:
        raise ValueError(f"{who}: visit_sequence leaves out column(s) {missing} of dataset {dataset!r}; a column "
                         "left out would be returned as the real training values (synthpop keeps unvisited "
                         "columns as they are), so list every column once, in the order to synthesise them")
    return seq


class SynthesizerUnavailable(RuntimeError):
    """A dependency the synthesizer needs is not installed; the message says how to get it.

    The workflow records such a cell as `skipped`, not as an error.
    """

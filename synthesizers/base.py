"""The plug-in interface every synthesizer implements.

A synthesizer is built from its Hydra config (`_target_` plus constructor arguments),
fitted once on the training split T and asked for n rows. The harness, not the plug-in,
checks the output against the schema (benchmark.checks.check_output).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import pandas as pd

from contracts.schema import Schema


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

    def artifacts(self) -> dict[str, pd.DataFrame]:
        """Tables the harness writes into the cell as `<name>.csv` (a tuning trace, ...)."""
        return {}


class SynthesizerUnavailable(RuntimeError):
    """A dependency the synthesizer needs is not installed; the message says how to get it.

    The workflow records such a cell as `skipped`, not as an error.
    """

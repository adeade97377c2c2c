"""The holdout reference row: S = H, the yardstick every synthesizer is compared with.

H is as close to T as data drawn independently from the same population can be, so
its fidelity and DCR figures are the ideal a synthesizer should reach, not beat.
"""

from __future__ import annotations

import pandas as pd

from holdbench.synthesizers.base import FitContext, Synthesizer


class Holdout(Synthesizer):
    """Returns the holdout split H in full.

    sample(n, seed) ignores n and the seed: the output has |H| rows, and the harness
    checks it with `check_output(..., expected_rows=len(H))` (holdout_rule is set).
    The metrics then use the holdout rule (d_H is the distance to the 2nd nearest
    record of H, docs/definitions/paper.md §4.5).
    """

    needs_holdout = True
    holdout_rule = True

    def __init__(self) -> None:
        self._holdout: pd.DataFrame | None = None

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        if ctx.holdout is None:
            raise ValueError("Holdout: the harness passed no holdout split (FitContext.holdout is None)")
        self._holdout = ctx.holdout.reset_index(drop=True)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._holdout is None:
            raise RuntimeError("Holdout: sample() called before fit()")
        return self._holdout.copy()

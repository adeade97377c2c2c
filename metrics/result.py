"""What `evaluate` returns: frozen dataclasses whose field names are the JSON keys.

Nested by topic so each group documents itself; `to_dict()` flattens them into one
JSON-safe mapping (NaN and infinities become None, numpy scalars plain Python).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import pandas as pd

from metrics.panel import PanelScores


@dataclass(frozen=True)
class FidelityResult:
    """Mean TVD of k-way marginals (SPEC §3). For F*: lower is better; for ratios 1 is ideal."""

    F1: float
    """Mean TVD of univariate marginals T vs S (c = 100 buckets); 0 = identical."""
    F2: float
    """Mean TVD of bivariate marginals T vs S (c = 10)."""
    F3: float
    """Mean TVD of trivariate marginals T vs S (c = 5)."""
    F1_holdout: float
    """F1 of H against T: the sampling-noise floor a perfect synthesizer would reach."""
    F2_holdout: float
    """F2 of H against T."""
    F3_holdout: float
    """F3 of H against T."""
    F1_ratio: float
    """F1 / F1_holdout: 1 is ideal, above = less faithful than fresh real data, below = too close to T."""
    F2_ratio: float
    """F2 / F2_holdout (same reading)."""
    F3_ratio: float
    """F3 / F3_holdout (same reading)."""
    n_combinations_1: int
    """Number of 1-way marginals averaged."""
    n_combinations_2: int
    """Number of 2-way marginals averaged."""
    n_combinations_3: int
    """Number of 3-way marginals averaged."""
    combinations_sampled: bool
    """True when max_combinations made some F_k a seeded sample instead of all combinations."""
    seconds_fidelity: float
    """Wall time of the fidelity part."""


@dataclass(frozen=True)
class PrivacyResult:
    """Distance to closest record on the paper's Hamming distance (SPEC §4)."""

    dcr_share: float
    """P(d_T < d_H) + n_T/(n_T+n_H) P(d_T = d_H) over S: 0.5 is ideal, above = S closer to T than H."""
    dcr_share_ci_low: float
    """Lower end of the 95% Wilson interval of dcr_share."""
    dcr_share_ci_high: float
    """Upper end of the 95% Wilson interval of dcr_share."""
    dcr_share_pvalue: float
    """One-sided p-value of dcr_share > 0.5 (score test); small = evidence S leaks T."""
    dcr_train_mean: float
    """Mean Hamming distance from S to its nearest T record (columns that differ)."""
    dcr_holdout_mean: float
    """Mean Hamming distance from S to its nearest H record; about dcr_train_mean is ideal."""
    n_train: int
    """Rows of T."""
    n_holdout: int
    """Rows of H."""
    n_synthetic: int
    """Rows of S (|H| for the holdout reference row)."""
    n_privacy: int
    """Rows of S whose distances were computed (n_synthetic unless privacy_sample)."""
    privacy_sampled: bool
    """True when privacy used a seeded subsample of S."""
    n_closer_train: int
    """Records of S strictly closer to T than to H."""
    n_closer_holdout: int
    """Records of S strictly closer to H than to T."""
    n_ties: int
    """Records of S equally close to both (weighted n_T/(n_T+n_H) in dcr_share)."""
    seconds_privacy: float
    """Wall time of the DCR part."""


@dataclass(frozen=True)
class EvaluationResult:
    """Everything `metrics.evaluate` computed for one (T, H, S)."""

    fidelity: FidelityResult
    privacy: PrivacyResult
    panel: PanelScores | None
    """None when evaluate(..., extended=False); to_dict() then reports its keys as None."""
    holdout_row: bool
    """True when S is H (the holdout reference row)."""
    n_columns: int
    seed: int
    marginals: pd.DataFrame = field(repr=False, compare=False)
    """One row per marginal: columns ('a | b'), k, tvd_synthetic, tvd_holdout."""

    def __getattr__(self, name: str):
        for part in ("fidelity", "privacy", "panel"):
            obj = self.__dict__.get(part)
            if obj is not None and name in {f.name for f in dataclasses.fields(obj)}:
                return getattr(obj, name)
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def to_dict(self) -> dict[str, float | int | bool | str | None]:
        """Flat JSON-safe mapping of every scalar (no marginals)."""
        out: dict = {"holdout_row": self.holdout_row, "n_columns": self.n_columns, "seed": self.seed,
                     "extended": self.panel is not None}
        out.update(dataclasses.asdict(self.fidelity))
        out.update(dataclasses.asdict(self.privacy))
        if self.panel is not None:
            out.update(dataclasses.asdict(self.panel))
        else:
            out.update({f.name: None for f in dataclasses.fields(PanelScores)})
        return {k: _json_scalar(v) for k, v in out.items()}


def _json_scalar(v):
    if v is None or isinstance(v, str):
        return v
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    v = float(v)
    return v if math.isfinite(v) else None

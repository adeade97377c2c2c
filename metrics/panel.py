"""The privacy panel beyond the paper (docs/definitions/paper.md §7): IMS, NNDR, Bale & Quick, Gower DCR share.

Choices the definitions leave open, fixed here:
- IMS and DCR percentiles use the paper's Hamming distance (§4), so they line up with dcr_share.
- NNDR uses the Gower distance, where distances are continuous and a ratio is meaningful;
  when d_1 = d_k = 0 (the record equals k references) the ratio is taken as 1, its limit
  for k equally near neighbours. With fewer than k references NNDR is undefined (None).
- Gower: numeric |x-y| / range of T per column, capped at 1 (values outside T's range
  cannot count more than a mismatch); a constant T column uses range 1; missing equals
  missing and differs from anything else. Categorical: mismatch. Mean over columns.
- Percentiles are linear-interpolated 5th percentiles.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from holdbench.metrics._discretise import numeric_values
from holdbench.metrics._kernels import gower_smallest, tile_buffer
from holdbench.metrics.privacy import (
    DistanceData,
    dcr_share,
    holdout_to_train,
    n_workers,
    nearest_distance,
    padded,
    privacy,
    privacy_synthetic,
    row_ids,
    shared_distance_data,
)
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric

_MISSING = np.float32(1e30)
_CLIP = 1e6


@dataclass(frozen=True)
class GowerTable:
    """One table in Gower form: scaled numerics, categorical codes, exact row ids."""

    num: np.ndarray
    cat: np.ndarray
    ids: np.ndarray

    def take(self, rows: np.ndarray) -> GowerTable:
        return GowerTable(np.ascontiguousarray(self.num[:, rows]), np.ascontiguousarray(self.cat[:, rows]),
                          self.ids[rows])


def gower_tables(train: pd.DataFrame, frames: list[pd.DataFrame], kinds: Mapping[str, str],
                 codes: list[np.ndarray]) -> list[GowerTable]:
    """Gower form of each frame; numerics scaled by T's range, categoricals from `codes`."""
    num_cols = [j for j, c in enumerate(train.columns) if kinds[c] == "numeric"]
    cat_cols = [j for j, c in enumerate(train.columns) if kinds[c] != "numeric"]
    scale = []
    for j in num_cols:
        x = numeric_values(train.iloc[:, j])
        x = x[~np.isnan(x)]
        lo = float(x.min()) if len(x) else 0.0
        rng = float(x.max()) - lo if len(x) else 0.0
        scale.append((lo, rng if rng > 0 else 1.0))
    nums = []
    for f in frames:
        out = np.empty((len(num_cols), len(f)), dtype=np.float32)
        for row, (j, (lo, rng)) in enumerate(zip(num_cols, scale)):
            x = np.clip((numeric_values(f.iloc[:, j]) - lo) / rng, -_CLIP, _CLIP)
            out[row] = np.where(np.isnan(x), _MISSING, x)
        nums.append(out)
    cats = [np.ascontiguousarray(c[cat_cols]) for c in codes]
    num_ids = [np.empty((len(num_cols), n.shape[1]), dtype=np.int64) for n in nums]
    for row in range(len(num_cols)):
        values, _ = pd.factorize(np.concatenate([n[row] for n in nums]))
        bounds = np.cumsum([0] + [n.shape[1] for n in nums])
        for t, (a, b) in enumerate(pairwise(bounds)):
            num_ids[t][row] = values[a:b]
    ids = row_ids([np.concatenate([ni, c.astype(np.int64)], axis=0) for ni, c in zip(num_ids, cats)])
    return [GowerTable(n, c, i) for n, c, i in zip(nums, cats, ids)]


def gower_smallest_distances(queries: GowerTable, refs: GowerTable, k: int, n_jobs: int = 1) -> np.ndarray:
    """(n_q, k) smallest Gower distances (sum over columns, not yet averaged), with multiplicity.

    Distinct query rows are searched once.
    """
    uniq, first, inverse = np.unique(queries.ids, return_index=True, return_inverse=True)
    q = queries.take(first)
    q_num, r_num = padded(q.num, refs.num, multiple=2)
    q_cat, r_cat = padded(q.cat, refs.cat, multiple=4)
    workers = n_workers(n_jobs)
    count_dtype = np.uint8 if r_cat.shape[0] < 255 else np.int32
    step = max(32, math.ceil(len(uniq) / (workers * 8)))

    def run(a: int) -> np.ndarray:
        b = min(a + step, len(uniq))
        dist = tile_buffer(np.float32)
        bits = gower_smallest(np.ascontiguousarray(q_num[:, a:b]), np.ascontiguousarray(q_cat[:, a:b]),
                              r_num, r_cat, k, tile_buffer(count_dtype), dist, dist.view(np.int32))
        return bits.view(np.float32)

    starts = range(0, len(uniq), step)
    if workers == 1 or len(starts) == 1:
        parts = [run(a) for a in starts]
    else:
        parts = Parallel(n_jobs=workers, backend="threading")(delayed(run)(a) for a in starts)
    out = np.concatenate(parts, axis=0) if parts else np.empty((0, k), np.float32)
    return out[inverse.reshape(-1)]


def nndr(smallest: np.ndarray, k: int) -> np.ndarray:
    """d_1 / d_k per record; 1 when both are 0; NaN when there are fewer than k references."""
    d1, dk = smallest[:, 0].astype(np.float64), smallest[:, k - 1].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(dk == 0, 1.0, d1 / dk)
    return np.where(np.isinf(dk), np.nan, out)


def p05(values: np.ndarray) -> float:
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    return float(np.percentile(values, 5)) if len(values) else math.nan


def _panel_metric(label: str, direction: str, meaning: str, digits: int = 3):
    return metric(label, "privacy", direction=direction, digits=digits, meaning=meaning)


@dataclass(frozen=True)
class PanelScores:
    """Extended privacy panel on the paper's distances; every 'pass' compares S with the holdout H."""

    ims_synthetic: float = _panel_metric(
        "IMS (Hamming)", "lower", "Share of S identical (Hamming 0) to some T record; compare with ims_holdout.")
    dcr_p05_synthetic: float = _panel_metric(
        "DCR 5th pct (Hamming)", "higher", "5th percentile of S's Hamming distance to T; higher is safer.", 2)
    nndr2_p05_synthetic: float = _panel_metric(
        "NNDR d1/d2 5th pct (Gower)", "higher",
        "5th percentile of S's Gower d_1/d_2 to T (ANITA D2.2); higher is safer, 1 = no distinct match.")
    nndr5_p05_synthetic: float = _panel_metric(
        "NNDR d1/d5 5th pct (Gower)", "higher", "5th percentile of S's Gower d_1/d_5 to T; higher is safer.")
    bq_ims_pass: bool | None = _panel_metric(
        "IMS no worse than H (Hamming)", "higher", "Pass when ims_synthetic <= ims_holdout.", 2)
    bq_dcr_pass: bool | None = _panel_metric(
        "DCR no closer than H (Hamming)", "higher", "Pass when dcr_p05_synthetic >= dcr_p05_holdout.", 2)
    bq_nndr_pass: bool | None = _panel_metric(
        "NNDR no smaller than H (Gower)", "higher", "Pass when nndr5_p05_synthetic >= nndr5_p05_holdout.", 2)
    gower_dcr_share: float = metric(
        "DCR share (Gower)", "privacy", direction="ideal", ideal=0.5, digits=3,
        meaning="The DCR share (docs/definitions/paper.md §4.4) on the Gower distance; 0.5 is ideal, above = closer to T.")
    ims_holdout: float = math.nan
    """Share of H identical to some T record: what unseen real data scores."""
    dcr_p05_holdout: float = math.nan
    """5th percentile of H's Hamming distance to T (reference)."""
    nndr2_p05_holdout: float = math.nan
    """Same as nndr2_p05_synthetic for H (reference)."""
    nndr5_p05_holdout: float = math.nan
    """Same as nndr5_p05_synthetic for H (reference)."""
    gower_dcr_train_mean: float = math.nan
    """Mean Gower distance (0..1) from S to its nearest T record."""
    gower_dcr_holdout_mean: float = math.nan
    """Mean Gower distance (0..1) from S to its nearest H record."""
    gower_n_ties: int = 0
    """Records of S equally near (Gower) to T and H."""
    seconds_extended: float = 0.0
    """Wall time of this panel."""
    nndr_distribution: pd.DataFrame | None = artifact(
        "Quantiles (0, 0.01, ..., 1) of the Gower d_1/d_2 ratio to T for S and for H (ANITA D2.2's NNDR "
        "picture): columns quantile, synthetic, holdout.")


def _quantiles(values: np.ndarray, q: np.ndarray) -> np.ndarray:
    values = values[~np.isnan(values)]
    return np.quantile(values, q) if len(values) else np.full(len(q), np.nan)


class PrivacyPanel(MetricFamily):
    """IMS, DCR and NNDR percentiles against the holdout (Hamming / Gower), and the Gower DCR share."""

    name = "panel"
    result_type = PanelScores
    definition = "definitions/paper.md#7-beyond-the-paper-definitions"
    reference = (
        "No library computes this panel: IMS, the DCR and NNDR percentiles and the Gower DCR share "
        "equal answers worked out by hand on hand-sized tables (to 1e-6 relative), and the Gower "
        "kernel equals numpy's brute force to 1e-5: tests/metrics/test_panel.py."
    )

    def __init__(self, privacy_sample: int | None = None):
        """privacy_sample: as the DCR share's option (the same seeded subsample of S is shared)."""
        self.privacy_sample = privacy_sample

    def compute(self, data: EvalData) -> PanelScores:
        s = privacy_synthetic(data, self.privacy_sample)
        codes = shared_distance_data(data, s)
        dcr = data.shared(f"dcr:{id(s)}", lambda: privacy(codes, data.holdout_row, data.n_jobs))
        return panel(data.train, data.holdout, s, data.kinds, codes, dcr.d_train, data.holdout_row,
                     data.n_jobs, holdout_to_train(data, codes, dcr.d_train))


def _ge(a: float, b: float) -> bool | None:
    return None if math.isnan(a) or math.isnan(b) else bool(a >= b)


def panel(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str],
          data: DistanceData, d_train_synthetic: np.ndarray, holdout_row: bool,
          n_jobs: int = 1, d_train_holdout: np.ndarray | None = None) -> PanelScores:
    """The panel, reusing the DCR search's codes and S's Hamming distances to T."""
    start = time.perf_counter()
    n_cols = train.shape[1]
    if holdout_row:
        d_train_holdout = d_train_synthetic
    elif d_train_holdout is None:
        d_train_holdout = nearest_distance(data.holdout, data.train, data.holdout_ids, data.train_ids, n_jobs)
    g_t, g_h, g_s = gower_tables(train, [train, holdout, synthetic], kinds,
                                 [data.train, data.holdout, data.synthetic])
    s_to_t = gower_smallest_distances(g_s, g_t, 5, n_jobs)
    if holdout_row:
        h_to_t = s_to_t
        s_to_h = gower_smallest_distances(g_s, g_h, 2, n_jobs)[:, 1]
    else:
        h_to_t = gower_smallest_distances(g_h, g_t, 5, n_jobs)
        s_to_h = gower_smallest_distances(g_s, g_h, 1, n_jobs)[:, 0]
    gower = dcr_share(s_to_t[:, 0], s_to_h, len(train), len(holdout))
    ims_s = float(np.mean(d_train_synthetic == 0))
    ims_h = float(np.mean(d_train_holdout == 0))
    dcr_s, dcr_h = p05(d_train_synthetic), p05(d_train_holdout)
    n2s, n2h = p05(nndr(s_to_t, 2)), p05(nndr(h_to_t, 2))
    n5s, n5h = p05(nndr(s_to_t, 5)), p05(nndr(h_to_t, 5))
    q = np.linspace(0, 1, 101)
    dist = pd.DataFrame({"quantile": q, "synthetic": _quantiles(nndr(s_to_t, 2), q),
                         "holdout": _quantiles(nndr(h_to_t, 2), q)})
    return PanelScores(
        nndr_distribution=dist,
        ims_synthetic=ims_s, ims_holdout=ims_h, dcr_p05_synthetic=dcr_s, dcr_p05_holdout=dcr_h,
        nndr2_p05_synthetic=n2s, nndr2_p05_holdout=n2h, nndr5_p05_synthetic=n5s, nndr5_p05_holdout=n5h,
        bq_ims_pass=_ge(ims_h, ims_s), bq_dcr_pass=_ge(dcr_s, dcr_h), bq_nndr_pass=_ge(n5s, n5h),
        gower_dcr_share=gower.share,
        gower_dcr_train_mean=float(np.mean(s_to_t[:, 0])) / n_cols,
        gower_dcr_holdout_mean=float(np.mean(s_to_h)) / n_cols,
        gower_n_ties=gower.n_ties,
        seconds_extended=time.perf_counter() - start,
    )

"""`evaluate(T, H, S, kinds)`: input checks, then fidelity, privacy and the extended panel."""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from metrics.fidelity import FidelityModel
from metrics.panel import panel
from metrics.privacy import distance_data, privacy
from metrics.result import EvaluationResult, FidelityResult, PrivacyResult

KINDS = ("categorical", "numeric")


def kinds_from_dtypes(df: pd.DataFrame) -> dict[str, str]:
    """Metric kinds as the paper decided them (SPEC §1): object/string -> categorical, else numeric."""
    out = {}
    for col in df.columns:
        dtype = df[col].dtype
        text = pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype) \
            or isinstance(dtype, pd.CategoricalDtype)
        out[col] = "categorical" if text else "numeric"
    return out


def evaluate(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame | None,
             kinds: Mapping[str, str], *, holdout_row: bool = False, n_jobs: int = 1,
             max_combinations: int | None = None, privacy_sample: int | None = None,
             extended: bool = True, seed: int = 0) -> EvaluationResult:
    """Fidelity (F1-F3 and ratios to H), DCR share, and optionally the SPEC §7 panel.

    holdout_row=True evaluates S = H (pass synthetic=None or the holdout itself): fidelity
    ratios are then exactly 1 and d_H is the distance to the nearest *other* H record.
    max_combinations caps the k-way marginals per k by seeded sampling; privacy_sample
    evaluates privacy on a seeded subsample of S. Raises ValueError on unusable inputs.
    """
    train, holdout, synthetic, kinds = _check_inputs(train, holdout, synthetic, kinds, holdout_row)
    _check_options(n_jobs, max_combinations, privacy_sample, seed)

    start = time.perf_counter()
    model = FidelityModel(train, holdout, kinds, max_combinations=max_combinations, n_jobs=n_jobs, seed=seed)
    scores = model.score(None if holdout_row else synthetic)
    fidelity = FidelityResult(
        F1=scores.F[1], F2=scores.F[2], F3=scores.F[3],
        F1_holdout=scores.F_holdout[1], F2_holdout=scores.F_holdout[2], F3_holdout=scores.F_holdout[3],
        F1_ratio=scores.ratio(1), F2_ratio=scores.ratio(2), F3_ratio=scores.ratio(3),
        n_combinations_1=scores.n_combinations[1], n_combinations_2=scores.n_combinations[2],
        n_combinations_3=scores.n_combinations[3], combinations_sampled=scores.combinations_sampled,
        seconds_fidelity=time.perf_counter() - start,
    )

    start = time.perf_counter()
    priv_s = synthetic
    sampled = privacy_sample is not None and privacy_sample < len(synthetic)
    if sampled:
        rows = np.sort(np.random.default_rng(seed).choice(len(synthetic), privacy_sample, replace=False))
        priv_s = synthetic.iloc[rows].reset_index(drop=True)
    data = distance_data(train, holdout, priv_s, kinds)
    dcr = privacy(data, holdout_row, n_jobs)
    privacy_result = PrivacyResult(
        dcr_share=dcr.share, dcr_share_ci_low=dcr.ci_low, dcr_share_ci_high=dcr.ci_high,
        dcr_share_pvalue=dcr.pvalue,
        dcr_train_mean=float(np.mean(dcr.d_train)), dcr_holdout_mean=float(np.mean(dcr.d_holdout)),
        n_train=len(train), n_holdout=len(holdout), n_synthetic=len(synthetic), n_privacy=len(priv_s),
        privacy_sampled=sampled, n_closer_train=dcr.n_closer_train,
        n_closer_holdout=dcr.n_closer_holdout, n_ties=dcr.n_ties,
        seconds_privacy=time.perf_counter() - start,
    )

    extra = None
    if extended:
        extra = panel(train, holdout, priv_s, kinds, data, dcr.d_train, holdout_row, n_jobs)
    return EvaluationResult(fidelity, privacy_result, extra, holdout_row, train.shape[1], seed,
                            scores.marginals)


def _check_inputs(train, holdout, synthetic, kinds, holdout_row):
    """Validate and return (T, H, S, kinds) with H and S in T's column order."""
    for name, df in (("train", train), ("holdout", holdout)):
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"{name} must be a pandas DataFrame, got {type(df).__name__}")  # noqa: TRY004 (CLI contract)
    if holdout_row:
        if synthetic is not None and synthetic is not holdout and not synthetic.equals(holdout):
            raise ValueError("holdout_row=True evaluates S = H: pass synthetic=None or the holdout table")
        synthetic = holdout
    elif synthetic is None:
        raise ValueError("synthetic is missing (only holdout_row=True evaluates without one)")
    elif not isinstance(synthetic, pd.DataFrame):
        raise ValueError(f"synthetic must be a pandas DataFrame, got {type(synthetic).__name__}")
    if train.shape[1] == 0:
        raise ValueError("train has no columns")
    for name, df in (("train", train), ("holdout", holdout), ("synthetic", synthetic)):
        cols = list(df.columns)
        dupes = sorted({str(c) for c in cols if cols.count(c) > 1})
        if dupes:
            raise ValueError(f"{name} has duplicate column names {dupes}")
        if len(df) == 0:
            raise ValueError(f"{name} has no rows")
    if holdout_row and len(holdout) < 2:
        raise ValueError("the holdout reference row needs at least 2 holdout rows "
                         "(d_H excludes the record itself)")
    order = list(train.columns)
    for name, df in (("holdout", holdout), ("synthetic", synthetic)):
        missing = [str(c) for c in order if c not in set(df.columns)]
        extra = [str(c) for c in df.columns if c not in set(order)]
        if missing or extra:
            raise ValueError(f"{name} columns differ from train: missing {missing}, unexpected {extra}")
    holdout = holdout[order].reset_index(drop=True)
    synthetic = holdout if holdout_row else synthetic[order].reset_index(drop=True)
    train = train.reset_index(drop=True)

    if not isinstance(kinds, Mapping):
        raise ValueError(f"kinds must be a mapping column -> kind, got {type(kinds).__name__}")  # noqa: TRY004
    not_in_train = [str(c) for c in kinds if c not in set(order)]
    not_in_kinds = [str(c) for c in order if c not in kinds]
    if not_in_train or not_in_kinds:
        raise ValueError(f"kinds do not match train's columns: not in train {not_in_train}, "
                         f"no kind given for {not_in_kinds}")
    bad = {str(c): v for c, v in kinds.items() if v not in KINDS}
    if bad:
        raise ValueError(f"kinds must be one of {KINDS}; got {bad}")
    return train, holdout, synthetic, {c: kinds[c] for c in order}


def _check_options(n_jobs, max_combinations, privacy_sample, seed):
    if not isinstance(n_jobs, (int, np.integer)) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (-1 = all cores), got {n_jobs!r}")
    for name, v in (("max_combinations", max_combinations), ("privacy_sample", privacy_sample)):
        if v is not None and (not isinstance(v, (int, np.integer)) or v < 1):
            raise ValueError(f"{name} must be None or a positive integer, got {v!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")

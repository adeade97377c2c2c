"""`evaluate(T, H, S, kinds)`: input checks, then every metric family asked for.

The families' modules are imported by the functions that build them, not here: evaluating
with the families one passes imports nothing of the others (numba, joblib, scikit-learn).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from holdbench.metrics.registry import FAILED_KEY, EvalData, MetricFamily, shard_slice
from holdbench.metrics.result import EvaluationResult

KINDS = ("categorical", "numeric")

#: below this many rows of T or of H the numbers are computed but flagged not meaningful (metrics.json
#: `meaningful: false` with `not_meaningful_reason`): with a handful of records a share, a ratio or an
#: AUC is dominated by chance (a 5-row table split 2/3 gives a pMSE ratio of 264)
MIN_MEANINGFUL_ROWS = 100


def size_warning(n_train: int, n_holdout: int) -> str | None:
    """Why tables of these sizes give numbers that are not meaningful, or None."""
    small = [f"{name} has {n} rows" for name, n in (("T", n_train), ("H", n_holdout)) if n < MIN_MEANINGFUL_ROWS]
    if not small:
        return None
    return (f"{' and '.join(small)}, fewer than the {MIN_MEANINGFUL_ROWS} each needs for meaningful numbers: "
            "they are computed but mostly noise")


def kinds_from_dtypes(df: pd.DataFrame) -> dict[str, str]:
    """Metric kinds as the paper decided them (docs/definitions/paper.md §1): object/string -> categorical, else numeric."""
    out = {}
    for col in df.columns:
        dtype = df[col].dtype
        text = pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype) \
            or isinstance(dtype, pd.CategoricalDtype)
        out[col] = "categorical" if text else "numeric"
    return out


def paper_families() -> list[MetricFamily]:
    """The paper's measures with the paper's settings: F1-F3 and the DCR share."""
    from holdbench.metrics.fidelity import Fidelity
    from holdbench.metrics.privacy import DCRShare

    return [Fidelity(), DCRShare()]


def default_families() -> list[MetricFamily]:
    """What `evaluate` computes when no families are given: the paper's measures and the panel."""
    from holdbench.metrics.panel import PrivacyPanel

    return [*paper_families(), PrivacyPanel()]


def evaluate(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame | None,
             kinds: Mapping[str, str], *, families: Sequence[MetricFamily] | None = None,
             holdout_row: bool = False, n_jobs: int = 1, seed: int = 0, target: str | None = None,
             sensitive: str | None = None, quasi_identifiers: Sequence[str] = (),
             on_error: str = "raise") -> EvaluationResult:
    """Run each metric family on (T, H, S); default: `default_families()`.

    on_error="na": a family that cannot run here (`MetricFamily.unavailable()` says why) or
    raises reports n/a with its reason (EvaluationResult.na) and the others still count;
    "raise" (the default) lets its exception through.

    holdout_row=True evaluates S = H (pass synthetic=None or the holdout itself): fidelity
    ratios are then exactly 1 and d_H is the distance to the nearest *other* H record.
    target, sensitive and quasi_identifiers name columns some families need (utility,
    attribute disclosure). Raises ValueError on unusable inputs, before any family runs.
    """
    families = default_families() if families is None else list(families)
    data = _eval_data(train, holdout, synthetic, kinds, families, holdout_row, n_jobs, seed, target, sensitive,
                      quasi_identifiers)
    _check_on_error(on_error)
    results, na = {}, {}
    for f in families:
        outcome = _run_family(f, lambda f=f: f.compute(data), on_error)
        (na if isinstance(outcome, FamilyNA) else results)[f.name] = outcome
    return EvaluationResult(results, holdout_row, data.train.shape[1], seed,
                            too_small=size_warning(len(data.train), len(data.holdout)),
                            na={k: v.reason for k, v in na.items()},
                            na_types={k: v.result_type for k, v in na.items()},
                            unavailable=tuple(k for k, v in na.items() if v.unavailable))


@dataclass(frozen=True)
class FamilyNA:
    """A family that reported n/a: why, its result type, and whether it could not run here at all."""

    reason: str
    result_type: type
    unavailable: bool = False


def _check_on_error(on_error: str) -> None:
    if on_error not in ("raise", "na"):
        raise ValueError(f"on_error must be 'raise' or 'na', got {on_error!r}")


def _run_family(family: MetricFamily, run, on_error: str):
    """run() (the family's compute or partial), or with on_error="na" a FamilyNA saying why it gave nothing."""
    if on_error == "raise":
        return run()
    why = family.unavailable()
    if why:
        return FamilyNA(f"cannot run here: {why}", family.result_type, unavailable=True)
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - one family never sinks the others (on_error="na")
        text = " ".join(str(exc).split())[:500]
        return FamilyNA(f"{type(exc).__name__}: {text}" if text else type(exc).__name__, family.result_type)


def evaluate_shard(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame | None,
                   kinds: Mapping[str, str], *, families: Sequence[MetricFamily], shard: int, of: int,
                   holdout_row: bool = False, n_jobs: int = 1, seed: int = 0, target: str | None = None,
                   sensitive: str | None = None, quasi_identifiers: Sequence[str] = (),
                   on_error: str = "raise") -> dict[str, dict]:
    """{family name: its partial(data, shard, of)} for every shardable family of `families`, on the
    same inputs (and checks) as `evaluate`. `MetricFamily.merge` of all `of` shards, in order,
    gives what `evaluate` computes, bit for bit (holdbench.metrics.registry.MergedFamily runs it).
    on_error="na": a family that fails gives {FAILED_KEY: reason} instead (its merge then reports n/a)."""
    shard_slice(0, shard, of)  # a bad shard or count fails before any work
    _check_on_error(on_error)
    families = [f for f in families if f.shardable]
    data = _eval_data(train, holdout, synthetic, kinds, families, holdout_row, n_jobs, seed, target, sensitive,
                      quasi_identifiers)
    out = {}
    for f in families:
        part = _run_family(f, lambda f=f: f.partial(data, shard, of), on_error)
        out[f.name] = {FAILED_KEY: np.array(part.reason)} if isinstance(part, FamilyNA) else part
    return out


def _eval_data(train, holdout, synthetic, kinds, families, holdout_row, n_jobs, seed, target, sensitive,
               quasi_identifiers) -> EvalData:
    """The checked inputs every family sees."""
    train, holdout, synthetic, kinds = _check_inputs(train, holdout, synthetic, kinds, holdout_row)
    _check_options(n_jobs, seed)
    names = [f.name for f in families]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"metric families listed more than once: {dupes}")
    for role, col in (("target", target), ("sensitive", sensitive), *(("quasi_identifiers", q)
                                                                     for q in quasi_identifiers)):
        if col is not None and col not in kinds:
            raise ValueError(f"{role} column {col!r} is not a column of train")
    return EvalData(train, holdout, synthetic, kinds, holdout_row=holdout_row, target=target,
                    sensitive=sensitive, quasi_identifiers=tuple(quasi_identifiers), seed=seed, n_jobs=n_jobs)


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


def _check_options(n_jobs, seed):
    if not isinstance(n_jobs, (int, np.integer)) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer (-1 = all cores), got {n_jobs!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")

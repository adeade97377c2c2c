"""Validity checks of one S against T (SDMetrics' diagnostic kind), with H's value beside each as the
yardstick: categories T never has, numbers outside T's range, missing rates, duplicated rows, exact
copies of T's records and column types that changed on reading. Counts, not metrics: no registry entry."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

import numpy as np
import pandas as pd



def _column(col: str, kind: str, train: pd.Series, other: pd.Series) -> dict:
    n = len(other)
    out = {"column": col, "kind": kind, "missing_rate": float(other.isna().mean()) if n else float("nan")}
    if kind == "numeric":
        t = pd.to_numeric(train, errors="coerce")
        x = pd.to_numeric(other, errors="coerce")
        lo, hi = t.min(), t.max()
        out["outside_range"] = int(((x < lo) | (x > hi)).sum())
        out["unseen_categories"] = None
        out["unseen_examples"] = []
    else:
        seen = set(train.dropna().astype(str).unique())
        vals = other.dropna().astype(str)
        unseen = vals[~vals.isin(seen)]
        out["outside_range"] = None
        out["unseen_categories"] = len(unseen)
        out["unseen_examples"] = [str(v) for v in unseen.value_counts().index[:5]]
    return out


#: a text column of T whose distinct values are at least this share of its values looks like an identifier
IDENTIFIER_SHARE = 0.9
#: ... when T has at least this many values in it (a handful of rows are distinct by chance)
IDENTIFIER_MIN_ROWS = 50


def identifier_columns(train: pd.DataFrame, kinds: dict[str, str], dates: Iterable[str] = ()) -> list[dict]:
    """T's columns that look like record identifiers: a categorical column whose distinct values are at least
    IDENTIFIER_SHARE of its non-missing values, or a numeric one of whole numbers all distinct (e.g. 1..n),
    except a column of dates (`dates`: days since 1970-01-01, whole for dates without a time; one date per
    record, e.g. an event's day, is a number a generator models, not a label). Such a column has no
    distribution a generator could learn; every measure of it says nothing and it blurs the distances. Each:
    column, kind, distinct, values (non-missing), in T's column order."""
    out = []
    dates = {str(c) for c in dates}
    for col in train.columns:
        if str(col) in dates:
            continue
        x = train[col].dropna()
        if len(x) < IDENTIFIER_MIN_ROWS:
            continue
        distinct = int(x.nunique())
        if kinds[col] == "numeric":
            v = pd.to_numeric(x, errors="coerce")
            looks = distinct == len(x) and bool(np.all(np.isfinite(v)) and np.all(v == np.round(v)))
        else:
            looks = distinct >= IDENTIFIER_SHARE * len(x)
        if looks:
            out.append({"column": str(col), "kind": kinds[col], "distinct": distinct, "values": len(x)})
    return out


#: how a dataset config leaves an identifier-like column out (identifier_text's `how` for a study's dataset)
DATASET_DROP = "leave it out with `drop: [COLUMN]` in the dataset's config"


def identifier_text(found: list[dict], of: str = "T", how: str | None = None) -> str:
    """The report's sentence on identifier-like columns ('' when there are none); `of` names the table, `how`
    says how to leave such a column out (default: the files' `--drop` option with the columns' names)."""
    if not found:
        return ""
    if how is None:
        how = f"leave it out of T, H and S before judging S (--drop {' '.join(shlex.quote(str(c['column'])) for c in found)})"
    cols = "; ".join(f"{c['column']} ({c['distinct']:,} distinct of {c['values']:,} values)" for c in found)
    return (f"Column(s) of {of} that look like record identifiers: {cols}. A generator cannot learn such a column "
            f"and its measures say nothing; {how}")


def diagnostics(inputs, name: str, ids: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict:
    """Per column (S and H side by side) and per table: the validity counts of S `name`; `ids` are
    holdbench.metrics.privacy.exact_row_ids of (T, H, S), which the exposure view uses too."""
    train, holdout, synthetic = inputs.train, inputs.holdout, inputs.synthetic[name]
    rows = []
    for col in train.columns:
        s = _column(col, inputs.kinds[col], train[col], synthetic[col])
        h = _column(col, inputs.kinds[col], train[col], holdout[col])
        rows.append({"column": col, "kind": inputs.kinds[col],
                     "missing_rate_train": float(train[col].isna().mean()),
                     "missing_rate_holdout": h["missing_rate"], "missing_rate_synthetic": s["missing_rate"],
                     "outside_range_holdout": h["outside_range"], "outside_range_synthetic": s["outside_range"],
                     "unseen_holdout": h["unseen_categories"], "unseen_synthetic": s["unseen_categories"],
                     "unseen_examples_synthetic": s["unseen_examples"]})
    t_ids, h_ids, s_ids = ids
    types = []
    t_types = inputs.raw_dtypes.get("train", {})
    notes = inputs.read_notes.get(name, {})
    for col, dtype in (inputs.raw_dtypes.get(name) or {}).items():
        mixed = (notes.get("mixed_types") or {}).get(col)
        missing = (notes.get("read_as_missing") or {}).get(col)
        if mixed or missing or _family(dtype) != _family(t_types.get(col, dtype)):
            types.append({"column": col, "train_dtype": t_types.get(col), "synthetic_dtype": dtype,
                          "value_types": mixed or {}, "read_as_missing": int(missing or 0)})
    return {
        "columns": rows,
        "n_rows": len(synthetic),
        "duplicated_rows_synthetic": int(pd.Series(s_ids).duplicated().sum()),
        "duplicated_rows_holdout": int(pd.Series(h_ids).duplicated().sum()),
        "copies_of_train_synthetic": int(np.isin(s_ids, t_ids).sum()),
        "copies_of_train_holdout": int(np.isin(h_ids, t_ids).sum()),
        "share_copies_of_train_synthetic": float(np.isin(s_ids, t_ids).mean()),
        "share_copies_of_train_holdout": float(np.isin(h_ids, t_ids).mean()),
        "changed_types": types,
    }


def _family(dtype: str) -> str:
    """A dtype's family: text, number or boolean (int64 and float64 are the same family)."""
    d = str(dtype)
    if d.startswith(("int", "uint", "float", "Int", "UInt", "Float")):
        return "number"
    if d.startswith(("bool", "boolean")):
        return "boolean"
    return "text"

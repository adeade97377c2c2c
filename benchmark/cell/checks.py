"""The harness's gate between a synthesizer and the metrics: check_output.

A plug-in can return anything; the metrics need the schema's columns with canonical
dtypes and the number of rows the study asked for. Every failure is a
SynthesizerOutputError with a one-line message naming the synthesizer and the column,
so a failed cell says what went wrong without a traceback (a pandas or numpy exception
never reaches the user raw).

How the values of numeric and boolean columns are read is the `values` setting:

- ``strict`` (what a synthesizer run here gets): every value must be readable as its
  column's dtype (Schema.coerce: numbers, numeric strings, bools and true/false words in a
  bool column); anything else fails the cell.
- ``pandas`` (the paper's reading, the default for files made elsewhere): every value is
  taken as the paper's metrics take it (docs/definitions/paper.md §3, §4) after pandas' default ``read_csv``:
  booleans are 0/1, numbers and numeric strings are numbers, any other string (including
  the text "True" in a boolean column) and any non-finite number is missing. A column whose
  values then fit its dtype is stored with it; one that does not (a 2 in a boolean column,
  3.5 in an integer one) is stored as float, values as read, so the metrics see exactly
  what the paper's code saw.
- ``lenient`` (NOT the paper's reading): a value is coerced to the column's dtype where
  Schema.coerce can ("True" -> True, "7" -> 7); what it cannot read becomes missing.

In every mode, a date column of the schema (Schema.dates) written as dates (ISO 8601 text, datetime64) is read
as the days since 1970-01-01 that T holds (a value that is no date fails the cell naming it); elsewhere,
datetimes, timedeltas and complex numbers in a numeric column are rejected,
an integer column never silently wraps a huge or infinite value, and a column that ends up
with no value at all (all missing, all ±inf) is rejected. What was read as missing is counted
per column (``out.attrs["unparseable_to_missing"]``) and every column of object dtype that
mixes Python types is reported with its counts (``out.attrs["mixed_types"]``, e.g.
{"Weekend": {"bool": 32768, "str": 17232}}), so the cell's status can say so.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import logging
import re

import numpy as np
import pandas as pd

from holdbench.contracts.dates import dates_to_days, needs_days
from holdbench.contracts.schema import Column, Schema, SchemaError, index_column_hint, near_names_hint

LOG = logging.getLogger("holdbench.synth")

#: key of DataFrame.attrs holding {column: values read as missing}
UNPARSEABLE_ATTR = "unparseable_to_missing"
#: key of DataFrame.attrs holding {column: {python type: count}} for columns mixing types
MIXED_ATTR = "mixed_types"
#: key of DataFrame.attrs holding the `values` mode the output was read with
VALUES_ATTR = "values"
VALUES = ("strict", "pandas", "lenient")
_INT_LIMIT = 2.0**63


class SynthesizerOutputError(ValueError):
    """A synthesizer's output does not fit the schema; the message names synthesizer and column."""


def check_output(
    df: pd.DataFrame,
    schema: Schema,
    expected_rows: int,
    synthesizer: str,
    lenient: bool = False,
    values: str | None = None,
    who: str | None = None,
) -> pd.DataFrame:
    """Return the output in schema column order with canonical dtypes, or raise SynthesizerOutputError.

    Checks: a DataFrame; the schema's columns (any order; missing, unexpected and duplicated
    names reported); exactly `expected_rows` rows; every value read as the module docstring
    says for `values` (default "strict"; `lenient=True` is values="lenient"); no column
    without a single value when there are rows. `who` replaces "synthesizer '<name>'" in messages.
    """
    mode = values or ("lenient" if lenient else "strict")
    if mode not in VALUES:
        raise ValueError(f"values must be one of {VALUES}, got {mode!r}")
    who = who or f"synthesizer {synthesizer!r}"
    if not isinstance(df, pd.DataFrame):
        raise SynthesizerOutputError(f"{who} returned a {type(df).__name__}, not a pandas DataFrame")
    df = _with_schema_columns(df, schema, who)
    if len(df) != expected_rows:
        raise SynthesizerOutputError(f"{who} returned {len(df)} rows, expected {expected_rows}")
    if schema.dates:  # dates written as dates (ISO 8601 text, datetime64) are read as the days T holds
        try:
            df = dates_to_days(df, [c for c in schema.dates if needs_days(df[c])], who)
        except ValueError as exc:
            raise SynthesizerOutputError(str(exc)) from None
    mixed = {c: counts for c in schema.names if len(counts := type_counts(df[c])) > 1}
    unparseable: dict[str, int] = {}
    out = {}
    for col in schema.columns:
        series, n_missing = _column(df[col.name].reset_index(drop=True), col, schema, who, mode)
        out[col.name] = series
        if n_missing:
            unparseable[col.name] = n_missing
    out = pd.DataFrame(out, index=pd.RangeIndex(len(df)))
    empty = [c for c in out.columns if len(out) and out[c].isna().all()]
    if empty:
        kinds = {c.name: c.kind for c in schema.columns}
        unreadable = [f"{c}: none of its {unparseable[c]:,} values reads as {kinds[c]} (e.g. "
                      f"{df[c].dropna().iloc[0]!r}{_comma_hint(df[c].dropna().iloc[0], kinds[c])})"
                      for c in empty if c in unparseable]
        raise SynthesizerOutputError(f"{who}: column(s) {empty} are entirely missing in all {len(out)} rows"
                                     + (f" after reading unreadable values as missing ({'; '.join(unreadable)})"
                                        if unreadable else ""))
    if unparseable:
        LOG.warning("%s: %d value(s) that are not of their column's type read as missing (%s reading): %s",
                    who, sum(unparseable.values()), mode, unparseable)
    if mixed:
        LOG.warning("%s: columns mixing value types: %s", who, mixed)
    out.attrs[UNPARSEABLE_ATTR] = unparseable
    out.attrs[MIXED_ATTR] = mixed
    out.attrs[VALUES_ATTR] = mode
    return out


def type_counts(s: pd.Series) -> dict[str, int]:
    """{python type name: count} of the non-missing values of an object column ({} for typed columns)."""
    if s.dtype != object:
        return {}
    present = s[s.notna()]
    if present.empty:
        return {}
    counts = present.map(lambda v: type(v).__name__).value_counts()
    return {str(k): int(v) for k, v in sorted(counts.items())}


def _with_schema_columns(df: pd.DataFrame, schema: Schema, who: str) -> pd.DataFrame:
    """df with string column names, after checking they are the schema's (any order); the dataset's dropped
    columns (Schema.drop) are left out where df holds them."""
    df = schema.without_dropped(df)
    got = [str(c) for c in df.columns]
    duplicated = sorted({c for c in got if got.count(c) > 1})
    missing = [c for c in schema.names if c not in got]
    unexpected = [c for c in got if c not in schema.names]
    if duplicated or missing or unexpected:
        parts = [
            f"{label} {names}"
            for label, names in (("missing", missing), ("unexpected", unexpected), ("duplicated", duplicated))
            if names
        ]
        raise SynthesizerOutputError(
            f"{who}: columns differ from dataset {schema.name!r}: {'; '.join(parts)}"
            f"{index_column_hint(missing + unexpected)}{near_names_hint(missing, unexpected)}"
        )
    return df.set_axis(got, axis=1)


def _column(s: pd.Series, col: Column, schema: Schema, who: str, mode: str) -> tuple[pd.Series, int]:
    """One column read as `mode` says: (canonical series, number of values read as missing)."""
    where = f"{who}: column {col.name!r} ({col.dtype})"
    if col.dtype == "str":
        return _coerce(s, col, schema, who), 0
    _reject_foreign(s, where)
    if mode == "pandas":
        return _paper_numbers(s, col, where)
    if mode == "lenient":
        bad = _unreadable(s, col, schema)
        s = s.astype(object).mask(bad, None) if bad.any() else s
        n_bad = int(bad.sum())
    else:
        n_bad = 0
    if col.dtype != "bool":
        f = _float_array(s)
        wrong = s.notna().to_numpy() & ~np.isnan(f) & ~np.isfinite(f)
        if col.dtype == "int":
            with np.errstate(invalid="ignore"):
                wrong |= np.isfinite(f) & (np.abs(f) >= _INT_LIMIT)
        wrong = pd.Series(wrong, index=s.index)
        if wrong.any():
            if mode == "strict":
                raise SynthesizerOutputError(
                    f"{where} has {int(wrong.sum())} value(s) that are not finite"
                    f"{' numbers within the int64 range' if col.dtype == 'int' else ' numbers'}, "
                    f"e.g. {_examples(s, wrong)}")
            s = s.astype(object).mask(wrong, None)
            n_bad += int(wrong.sum())
    return _coerce(s, col, schema, who), n_bad


def _coerce(s: pd.Series, col: Column, schema: Schema, who: str) -> pd.Series:
    """Schema.coerce of one column; whatever pandas raises becomes a one-line SynthesizerOutputError."""
    try:
        return Schema(schema.name, (col,)).coerce(pd.DataFrame({col.name: s}), who)[col.name]
    except SchemaError as exc:
        raise SynthesizerOutputError(str(exc)) from exc
    except (TypeError, ValueError, OverflowError, ArithmeticError) as exc:
        raise SynthesizerOutputError(
            f"{who}: column {col.name!r} ({col.dtype}): its values cannot be stored as {col.dtype} "
            f"({type(exc).__name__})") from exc


def _reject_foreign(s: pd.Series, where: str) -> None:
    """Datetimes, timedeltas and complex numbers have no place in a numeric column."""
    kind = getattr(s.dtype, "kind", "O")
    if kind in "mMc" or isinstance(s.dtype, pd.DatetimeTZDtype | pd.PeriodDtype | pd.IntervalDtype):
        raise SynthesizerOutputError(f"{where} holds {s.dtype} values, not numbers")
    if s.dtype == object:
        foreign = s.map(lambda v: isinstance(v, _FOREIGN))
        if foreign.any():
            kinds = sorted({type(v).__name__ for v in s[foreign]})
            raise SynthesizerOutputError(
                f"{where} holds {int(foreign.sum())} value(s) of type {', '.join(kinds)}, not numbers, "
                f"e.g. {_examples(s, foreign)}")


_FOREIGN = (_dt.date, _dt.time, _dt.timedelta, complex, np.complexfloating, np.datetime64, np.timedelta64,
            pd.Timestamp, pd.Timedelta, pd.Period, pd.Interval)


def _float_array(s: pd.Series) -> np.ndarray:
    """Values as float64 (unreadable -> NaN; a Python int beyond float's range -> inf)."""
    try:
        nums = pd.to_numeric(s, errors="coerce") if s.dtype == object else s
        return np.array(pd.Series(nums).to_numpy(dtype=float, na_value=np.nan), dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        return np.array([_to_float(v) for v in s], dtype=np.float64)


def _to_float(v) -> float:
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return np.nan
    try:
        return float(v)
    except OverflowError:
        return np.inf
    except (TypeError, ValueError):
        try:
            return float(str(v).strip())
        except (TypeError, ValueError, OverflowError):
            return np.nan


def _paper_numbers(s: pd.Series, col: Column, where: str) -> tuple[pd.Series, int]:
    """Values as the paper's metrics read them (holdbench.metrics._discretise.numeric_values), stored with the
    column's dtype when they fit it, else as float."""
    if pd.api.types.is_bool_dtype(s) or pd.api.types.is_numeric_dtype(s):
        nums = np.array(s.to_numpy(dtype=float, na_value=np.nan), dtype=np.float64)
    else:
        obj = s.astype(object)
        is_bool = obj.map(lambda v: isinstance(v, bool | np.bool_))
        if is_bool.any():
            obj = obj.where(~is_bool, obj[is_bool].astype(float))
        is_dec = obj.map(lambda v: isinstance(v, decimal.Decimal))
        if is_dec.any():
            obj = obj.where(~is_dec, obj[is_dec].map(float))
        nums = pd.to_numeric(obj, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        nums = np.array(nums, dtype=np.float64)
    nums[~np.isfinite(nums)] = np.nan
    n_bad = int((s.notna().to_numpy() & np.isnan(nums)).sum())
    present = nums[~np.isnan(nums)]
    missing = np.isnan(nums).any()
    if col.dtype == "bool" and np.isin(present, (0.0, 1.0)).all():
        vals = pd.Series(nums).map(lambda v: None if np.isnan(v) else bool(v))
        return vals.astype("boolean" if missing else bool), n_bad
    if col.dtype == "int" and (present == np.round(present)).all() and (np.abs(present) < _INT_LIMIT).all():
        return pd.Series(nums).astype("Int64" if missing else np.int64), n_bad
    if col.dtype != "float":
        LOG.warning("%s: values that do not fit %s are kept as read (stored as float), as the paper's "
                    "metrics read them", where, col.dtype)
    return pd.Series(nums, dtype=float), n_bad


def _unreadable(s: pd.Series, col: Column, schema: Schema) -> pd.Series:
    """Mask of non-missing values of `s` that Schema.coerce would not read as `col`'s dtype."""
    if pd.api.types.is_bool_dtype(s) or (col.dtype != "bool" and pd.api.types.is_numeric_dtype(s)):
        return pd.Series(False, index=s.index)
    if col.dtype != "bool":
        return s.notna() & pd.to_numeric(s, errors="coerce").isna()
    # booleans: ask Schema.coerce about each distinct value (there are few), so the rule stays its own
    probe = Schema(schema.name, (col,))
    rejected = set()
    for value in s.dropna().unique():
        try:
            probe.coerce(pd.DataFrame({col.name: [value]}), "probe")
        except (SchemaError, TypeError, ValueError):
            rejected.add(value)
    return s.isin(rejected) & s.notna()


_DECIMAL_COMMA = re.compile(r"^\s*[-+]?(\d{1,3}(\.\d{3})+|\d+),\d+\s*$")


def _comma_hint(value, kind: str) -> str:
    """'; a decimal comma? ...' when a numeric column's unreadable value is a number written with a decimal
    comma (`1,5`, `-1.234,5`), else ''."""
    if kind != "numeric" or not isinstance(value, str) or not _DECIMAL_COMMA.match(value):
        return ""
    return "; a decimal comma? numbers are read with '.' as the decimal mark: write the file that way"


def _examples(s: pd.Series, mask: pd.Series) -> list[str]:
    return [repr(v)[:40] for v in pd.unique(s[mask].astype(object))[:3]]

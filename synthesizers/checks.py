"""The harness's gate between a synthesizer and the metrics: check_output.

A plug-in can return anything; the metrics need the schema's columns with canonical
dtypes and the number of rows the study asked for. Every failure is a
SynthesizerOutputError with a one-line message naming the synthesizer (and the column),
so a failed cell says what went wrong without a traceback.

Lenient mode exists for files made elsewhere (ExternalFiles, `lenient_output`): the
paper's Gretel outputs hold strings such as '6-149' in numeric columns and a '2' in a
boolean one. Failing those cells would lose the paper's rows, and the paper's metrics
read such a value as missing anyway (SPEC §3, §4). So in lenient mode a value of a
numeric or boolean column that cannot be read as its dtype becomes missing; the counts
per column are logged as a warning (logger `holdbench.synth`) and returned on the frame
as `out.attrs["unparseable_to_missing"]` ({column: count}, empty when none), so the
harness can record them. The return type stays a plain DataFrame in both modes.
"""

from __future__ import annotations

import logging

import pandas as pd

from benchmark.schema import Column, Schema, SchemaError

LOG = logging.getLogger("holdbench.synth")

#: key of DataFrame.attrs holding {column: values turned into missing} (lenient mode)
UNPARSEABLE_ATTR = "unparseable_to_missing"


class SynthesizerOutputError(ValueError):
    """A synthesizer's output does not fit the schema; the message names synthesizer and column."""


def check_output(
    df: pd.DataFrame,
    schema: Schema,
    expected_rows: int,
    synthesizer: str,
    lenient: bool = False,
) -> pd.DataFrame:
    """Return the output in schema column order with canonical dtypes, or raise SynthesizerOutputError.

    Checks: a DataFrame; the schema's columns (any order; missing, unexpected and duplicated
    names reported); exactly `expected_rows` rows; every value readable as its column's
    dtype (Schema.coerce; see the module docstring for `lenient`); no column entirely
    missing when there are rows.
    """
    who = f"synthesizer {synthesizer!r}"
    if not isinstance(df, pd.DataFrame):
        raise SynthesizerOutputError(f"{who} returned a {type(df).__name__}, not a pandas DataFrame")
    df = _with_schema_columns(df, schema, who)
    if len(df) != expected_rows:
        raise SynthesizerOutputError(f"{who} returned {len(df)} rows, expected {expected_rows}")
    unparseable: dict[str, int] = {}
    if lenient:
        df, unparseable = _blank_unparseable(df, schema)
    try:
        out = schema.coerce(df, who)
    except SchemaError as exc:
        raise SynthesizerOutputError(str(exc)) from exc
    empty = [c for c in out.columns if len(out) and out[c].isna().all()]
    if empty:
        raise SynthesizerOutputError(f"{who}: column(s) {empty} are entirely missing in all {len(out)} rows")
    if unparseable:
        LOG.warning(
            "%s: %d value(s) that are not of their column's type read as missing: %s",
            who, sum(unparseable.values()), unparseable,
        )
    out.attrs[UNPARSEABLE_ATTR] = unparseable
    return out


def _with_schema_columns(df: pd.DataFrame, schema: Schema, who: str) -> pd.DataFrame:
    """df with string column names, after checking they are the schema's (any order)."""
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
        )
    return df.set_axis(got, axis=1)


def _blank_unparseable(df: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, dict[str, int]]:
    """Set values that Schema.coerce would reject in numeric and boolean columns to missing."""
    df = df.copy()
    counts: dict[str, int] = {}
    for col in schema.columns:
        if col.dtype == "str":
            continue
        bad = _unparseable(df[col.name], col, schema)
        if bad.any():
            counts[col.name] = int(bad.sum())
            df[col.name] = df[col.name].astype(object).mask(bad, None)
    return df, counts


def _unparseable(s: pd.Series, col: Column, schema: Schema) -> pd.Series:
    """Mask of non-missing values of `s` that are not readable as `col`'s dtype."""
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
        except SchemaError:
            rejected.add(value)
    return s.isin(rejected) & s.notna()

"""Values of sequential event files (and of flat tables' date columns): datetime columns parsed to days since
1970-01-01, and where a file's bytes are not UTF-8. No import of holdbench.benchmark.data.sequential (it
imports this module): a spec is read by its attributes `key`, `datetimes` and `event_columns`.

A datetime column (`kind: datetime` in a sequential dataset's config) is parsed with its `format`
(strftime) or, without one, as ISO 8601; a time zone is converted to UTC. It is held as days since
1970-01-01 00:00 UTC, a float (a time of day is a fraction of a day), so the synthesizers and the
metrics see a numeric column: its marginals are binned on T's quantiles like any numeric column,
and the gap between two events is a difference of days. A value that does not parse is an error
naming the file, the column and an example value; an empty field is a missing value.
"""

from __future__ import annotations

import csv
import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd

EPOCH = pd.Timestamp("1970-01-01")
DAY = pd.Timedelta(days=1)
#: an ISO 8601 date, or date and time (optional seconds, fraction and zone): read as a datetime column
ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?")


def datetime_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of frame that hold dates: datetime64 columns (e.g. from parquet) and text columns whose every
    non-missing value (at least one) is an ISO 8601 date or time."""
    out = []
    for c in frame.columns:
        values = frame[c].dropna()
        if pd.api.types.is_datetime64_any_dtype(values) or (
                values.dtype == object and len(values) and values.astype(str).str.fullmatch(ISO_DATETIME).all()):
            out.append(str(c))
    return out


def dates_text(columns: list[str]) -> str:
    """The sentence saying which columns of flat tables were read as dates (datetime_columns, dates_to_days)."""
    return (f"column(s) {', '.join(columns)}: dates or times in T, read as days since 1970-01-01 in T, H "
            "and S (a time of day is a fraction of a day)")


def dates_to_days(frame: pd.DataFrame, columns: list[str], file: str) -> pd.DataFrame:
    """frame with each of `columns` it has (ISO 8601 text or datetime64) as float days since 1970-01-01; a value
    that does not parse is a ValueError naming the file, the column and the value (to_days)."""
    present = [c for c in columns if c in frame.columns]
    if not present:
        return frame
    out = frame.copy()
    for c in present:
        out[c] = to_days(out[c], None, file, c)
    return out


def to_days(values: pd.Series, fmt: str | None, file: str, column: str) -> pd.Series:
    """Text (or datetime64) values as float days since 1970-01-01; a ValueError names the file, the column
    and the first value that does not parse."""
    if pd.api.types.is_datetime64_any_dtype(values):
        parsed = values
    else:
        text = values.astype(object).where(values.notna())
        text = text.map(lambda v: v if isinstance(v, str) else str(v), na_action="ignore")
        text = text.where(text.str.strip() != "")
        parsed = pd.to_datetime(text, format=fmt or "ISO8601", errors="coerce", utc=True)
        bad = parsed.isna() & text.notna()
        if bad.any():
            example = text[bad].iloc[0]
            raise ValueError(f"{file}: datetime column {column!r}: {int(bad.sum()):,} value(s) do not parse as "
                             f"datetimes ({'format ' + repr(fmt) if fmt else 'ISO 8601, e.g. 2024-03-01 12:30'}), "
                             f"e.g. {example!r} (row {int(np.flatnonzero(bad.to_numpy())[0]) + 1} of the table)")
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    return ((parsed - EPOCH) / DAY).astype(float)


def parse_datetimes(events: pd.DataFrame, spec, file: str, numbers_are_days: bool = False) -> pd.DataFrame:
    """The event table with each datetime column of the spec as days since 1970-01-01. numbers_are_days:
    a numeric column is taken as days already (a synthesizer's output inside holdbench); else numbers are
    parsed as text like any value (a year 1970 is 1970-01-01)."""
    if not spec.datetimes:
        return events
    out = events.copy()
    for column, fmt in spec.datetimes:
        if column not in out.columns:
            continue  # the column checks name it
        values = out[column]
        if numbers_are_days and pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            out[column] = values.astype(float)
        else:
            out[column] = to_days(values, fmt, file, column)
    return out


def days_to_datetimes(days: pd.Series) -> pd.Series:
    """Days since 1970-01-01 back to datetime64 (for writing a table a user reads)."""
    return EPOCH + pd.to_timedelta(days, unit="D")


def not_utf8(path: Path, sep: str, exc: UnicodeDecodeError) -> str:
    """Where the first byte that is not UTF-8 sits in a CSV file: its line and column (by the header)."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as fh:
        header: list[str] = []
        for number, line in enumerate(fh, start=1):
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as bad:
                fields = next(csv.reader([line.decode("utf-8", errors="replace")], delimiter=sep), [])
                at = next((i for i, f in enumerate(fields) if "\ufffd" in f), None)
                column = (f", column {header[at]!r}" if at is not None and at < len(header)
                          else f", field {at + 1}" if at is not None else "")
                return (f"{path}: line {number}{column}: byte {line[bad.start:bad.start + 1]!r} is not UTF-8 text; "
                        "save the file as UTF-8")
            if number == 1:
                header = next(csv.reader([text], delimiter=sep), [])
    return f"{path}: not UTF-8 text ({exc}); save the file as UTF-8"

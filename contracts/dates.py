"""Dates and times in tables, held as days since 1970-01-01 (a float; a time of day is a fraction of a day).

The ground floor's one reading of them, shared by a dataset's schema (`Schema.dates`: a flat table's date
columns), the flat file forms and the sequential event files: a datetime64 column, or text in ISO 8601
(`2024-03-01`, `2024-03-01 12:30`, `2024-03-01T12:30:05Z`) or in a stated strftime format; a time zone is
converted to UTC; an empty field is a missing value; a value that does not parse is a ValueError naming the
file, the column, the value and its row.
"""

from __future__ import annotations

import re

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
                values.dtype == object and len(values) and ISO_DATETIME.fullmatch(str(values.iloc[0]))
                and values.astype(str).str.fullmatch(ISO_DATETIME).all()):
            out.append(str(c))
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


def needs_days(values: pd.Series) -> bool:
    """Whether a date column's values are still dates (datetime64 or text) rather than days (numbers)."""
    return not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)


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


def days_to_datetimes(days: pd.Series) -> pd.Series:
    """Days since 1970-01-01 back to datetime64 (for writing a table a user reads)."""
    return EPOCH + pd.to_timedelta(days, unit="D")


def days_text(days, whole_days: bool) -> list[str]:
    """Days since 1970-01-01 written as the dates they are (`2024-03-01`), with the time of day
    (`2024-03-01 12:30`) unless every value of the column is a whole day (`whole_days`): figure labels."""
    fmt = "%Y-%m-%d" if whole_days else "%Y-%m-%d %H:%M"
    return days_to_datetimes(pd.Series(days, dtype=float)).dt.strftime(fmt).tolist()

"""Values of sequential event files: datetime columns parsed to days since 1970-01-01 (holdbench.contracts.dates,
which flat tables' date columns share; `dates_text` is the sentence naming those), and where a file's bytes are
not UTF-8. No import of holdbench.benchmark.data.sequential (it
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
from pathlib import Path

import pandas as pd

from holdbench.contracts.dates import to_days


def dates_text(columns: list[str]) -> str:
    """The sentence saying which columns of flat tables were read as dates (holdbench.contracts.dates)."""
    return (f"column(s) {', '.join(columns)}: dates or times in T, read as days since 1970-01-01 in T, H "
            "and S (a time of day is a fraction of a day)")


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


def not_utf8(path: Path, sep: str, exc: UnicodeDecodeError) -> str:
    """Where the first byte that is not UTF-8 sits in a CSV file: its line and column (by the header)."""
    from holdbench.contracts.io import open_bytes

    with open_bytes(path) as fh:
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

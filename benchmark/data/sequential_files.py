"""Sequential data from a user's files (`holdbench evaluate`, `check` and `report`): T, H and S each as
a subject file and an event file, or as one event file without subject attributes.

A no-context form needs no dataset config: `events_spec` builds one from T's event file, a key and an
order (`row` or columns), the kinds read from T's dtypes (holdbench.contracts.schema.Schema.infer) and
text columns whose every value is an ISO 8601 date or time read as datetimes (or named with
`datetimes`). T and H are checked as a dataset's own files are (from_frames: key, order columns, ties,
datetimes; each error names the file and the column), S as a synthetic pair (check_synthetic_pair:
T's columns, its row order kept as it is).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd

from holdbench.benchmark.data.sequential import (
    ROW_ORDER,
    SequentialData,
    SequentialSpec,
    check_synthetic_pair,
    from_frames,
)
from holdbench.contracts.dates import datetime_columns
from holdbench.contracts.schema import Column, Schema, SchemaError



def _read(file: str | Path, what: str) -> pd.DataFrame:
    from holdbench.contracts.io import read_table

    if not Path(file).is_file():
        raise FileNotFoundError(f"{what} {file} does not exist")
    return read_table(str(file))


def events_spec(events_file: str | Path, key: str, order: list[str], n_events_privacy: int = 3,
                datetimes: dict[str, str | None] | None = None, time: str | None = None) -> SequentialSpec:
    """The spec of a no-context event file (T's): its key, its order (["row"] or columns) and its other
    columns as event columns, kinds from T's dtypes; `datetimes` {column: format or None} adds to the
    columns read as datetimes by their values."""
    frame = _read(events_file, "training events file")
    from holdbench.benchmark.config import did_you_mean

    names = [str(c) for c in frame.columns]
    if key not in frame.columns:
        raise ValueError(f"{events_file}: the key column {key!r} (--key) is missing{did_you_mean([key], names)} "
                         f"(it has {names})")
    if not order:
        raise ValueError("--order needs `row` (each key's events in file row order) or the column(s) ordering them")
    by_row = list(order) == [ROW_ORDER]
    if ROW_ORDER in order and not by_row:
        raise ValueError(f"--order {' '.join(order)}: `row` stands alone (it is the file's row order)")
    missing = [c for c in ([] if by_row else order) if c not in frame.columns]
    if missing:
        raise ValueError(f"{events_file}: order column(s) {missing} (--order) are missing"
                         f"{did_you_mean(missing, names)} (it has {names})")
    datetimes = dict(datetimes or {})
    unknown = [c for c in datetimes if c not in frame.columns]
    if unknown:
        raise ValueError(f"{events_file}: datetime column(s) {unknown} (--datetime) are missing")
    cols = frame.drop(columns=[key])
    if cols.shape[1] == 0:
        raise ValueError(f"{events_file}: no event column besides the key {key!r}")
    for c in datetime_columns(cols):
        datetimes.setdefault(c, None)
    rest = cols.drop(columns=list(datetimes))
    try:
        inferred = Schema.infer(f"{Path(events_file).name}:events", rest).columns if rest.shape[1] else ()
    except SchemaError as exc:
        raise ValueError(f"{events_file}: {exc}") from None
    by_name = {c.name: c for c in inferred}
    columns = tuple(by_name.get(str(c)) or Column(str(c), "numeric", "float", "numeric") for c in cols.columns)
    if time is not None and next(c for c in columns if c.name == time).kind != "numeric":
        raise ValueError(f"{events_file}: the time column {time!r} (--time) is neither numeric nor a datetime")
    if time is not None and time not in cols.columns:
        raise ValueError(f"{events_file}: the time column {time!r} (--time) is missing (it has "
                         f"{[str(c) for c in frame.columns]})")
    if time is None and not by_row and order[0] in datetimes:
        time = order[0]
    return SequentialSpec(Path(events_file).name, key, None, str(events_file), None,
                          Schema(f"{Path(events_file).name}:events", columns), () if by_row else tuple(order),
                          n_events_privacy, datetimes=tuple(datetimes.items()), time=time)


def read_pair(spec: SequentialSpec, subjects_file: str | Path | None, events_file: str | Path) -> SequentialData:
    """A real pair (T or H) from its files (.csv, .tsv, compressed or not, .parquet; no subject file without subject
    attributes), checked as the dataset's own files are (from_frames: every error names the file and
    the column)."""
    if spec.has_subjects and subjects_file is None:
        raise ValueError(f"dataset {spec.name!r} has subject attributes: give its subject file too")
    if not spec.has_subjects and subjects_file is not None:
        raise ValueError(f"dataset {spec.name!r} has no subject attributes: give its event file only")
    subjects = _read(subjects_file, "subject file") if subjects_file is not None else None
    events = _read(events_file, "event file")
    return from_frames(replace(spec, subjects_file=str(subjects_file) if subjects_file else None,
                               events_file=str(events_file)), subjects, events)


def read_synthetic_pair(spec: SequentialSpec, subjects_file: str | Path | None, events_file: str | Path
                        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A synthetic pair from its files, checked (check_synthetic_pair); without subject attributes the
    subject table is S's keys in order of first appearance. S's row order is kept as it is."""
    events = _read(events_file, "synthetic event file")
    if spec.has_subjects:
        subjects = _read(subjects_file, "synthetic subject file")
        source = f"synthetic data {subjects_file} + {events_file}"
    else:
        if spec.key not in events.columns:
            raise ValueError(f"synthetic data {events_file}: the key column {spec.key!r} is missing (it has "
                             f"{[str(c) for c in events.columns]})")
        if events[spec.key].isna().any():
            raise ValueError(f"synthetic data {events_file}: column {spec.key!r} (the key) has "
                             f"{int(events[spec.key].isna().sum())} missing value(s)")
        subjects = events[[spec.key]].drop_duplicates().reset_index(drop=True)
        source = f"synthetic data {events_file}"
    return check_synthetic_pair(spec, subjects, events, source)

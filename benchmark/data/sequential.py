"""Sequential (subject + event) datasets: their config, loading, validation and split by subject.

A sequential dataset is a pair of tables joined by a key: one row per subject (its attributes) and
any number of event rows per subject, ordered by one or more order columns. Its config is a dataset
YAML (conf/dataset/<name>.yaml) with `source: sequential` and a `sequential:` block::

    sequential:
      key: playerID                 # the column joining the two tables
      n_events_privacy: 3           # m: the first m events enter the per-subject privacy vector
      subjects: {file: baseball/People.csv.gz, columns: {birthYear: {kind: numeric, dtype: int}, ...}}
      events: {file: baseball/Batting.csv.gz, order: [yearID, stint], columns: {...}}

Files are relative to HOLDBENCH_DATA_DIR (or absolute). The subject and the event file may be the
same file (a panel with constant subject columns, e.g. nlswork): the subject table is then one row per
key, and a subject column that varies within a key is an error. Columns of a file not named in the
config are dropped (names, dates, places). A subject with no event row has zero events and stays in.

Everything is checked before any work, each problem a ValueError naming the file and the column:
a file that is not UTF-8 text (the line and column of the first bad byte), a missing column, a
missing or non-unique key in the subject table, events whose key has no subject, ties in the order,
an event table without rows, and (the dataset itself) fewer than MIN_SUBJECTS subjects.
`check_synthetic` refuses S whose tables have other columns than T's.

Keys are identifiers: a CSV's key column is read as text (`NA` or `null` is a key like any other, only
an empty field is missing); the keys of both tables are integers when every one of them is written as
an integer (7, not 007), else text in both (so `007` and `7` are two keys, and a table whose keys are
numbers matches one whose keys are the same digits as text).
"""

from __future__ import annotations

import csv
import gzip
import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.config import group_config
from holdbench.benchmark.data.tables import data_dir
from holdbench.contracts.schema import Schema, SchemaError

_BLOCK_KEYS = {"key", "n_events_privacy", "subjects", "events"}
#: a sequential dataset's fewest subjects: the 50/50 split over subjects leaves T and H two each (as the
#: flat datasets' `min_rows` default)
MIN_SUBJECTS = 4
_TABLE_KEYS = {"subjects": {"file", "columns", "sep"}, "events": {"file", "columns", "order", "sep"}}


@dataclass(frozen=True)
class SequentialSpec:
    """What a sequential dataset's config declares (no data)."""

    name: str
    key: str
    subjects_file: str
    events_file: str
    subject_schema: Schema
    event_schema: Schema
    order: tuple[str, ...]
    n_events_privacy: int
    subjects_sep: str | None = None
    events_sep: str | None = None

    @property
    def subject_columns(self) -> list[str]:
        return self.subject_schema.names

    @property
    def event_columns(self) -> list[str]:
        return self.event_schema.names


@dataclass(frozen=True)
class SequentialData:
    """A validated subject table (key first, then the attributes, one row per subject) and event table
    (key first, then the event columns; sorted by key then the order columns, no ties)."""

    spec: SequentialSpec
    subjects: pd.DataFrame
    events: pd.DataFrame

    @property
    def n_subjects(self) -> int:
        return len(self.subjects)

    @property
    def n_events(self) -> int:
        return len(self.events)


def parse_spec(name: str, cfg: dict) -> SequentialSpec:
    """The `sequential:` block of a dataset config, checked: a ValueError names the key at fault."""
    where = f"dataset {name!r}"
    if cfg.get("source") != "sequential":
        raise ValueError(f"{where}: a sequential dataset needs `source: sequential`, got {cfg.get('source')!r}")
    block = cfg.get("sequential")
    if not isinstance(block, dict):
        raise ValueError(f"{where}: the `sequential` block is missing or not a mapping")  # noqa: TRY004 (config contract)
    unknown = sorted(set(block) - _BLOCK_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown} in `sequential` (known: {sorted(_BLOCK_KEYS)})")
    for k in sorted(_BLOCK_KEYS):
        if k not in block:
            raise ValueError(f"{where}: `sequential.{k}` is missing")
    key, m = block["key"], block["n_events_privacy"]
    if not isinstance(key, str) or not key:
        raise ValueError(f"{where}: `sequential.key` must be a column name, got {key!r}")
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"{where}: `sequential.n_events_privacy` must be a positive integer, got {m!r}")
    tables = {}
    for part in ("subjects", "events"):
        t = block[part]
        if not isinstance(t, dict):
            raise ValueError(f"{where}: `sequential.{part}` must be a mapping")  # noqa: TRY004 (config contract)
        unknown = sorted(set(t) - _TABLE_KEYS[part])
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown} in `sequential.{part}`")
        if not isinstance(t.get("file"), str) or not t["file"]:
            raise ValueError(f"{where}: `sequential.{part}.file` must be a file name")
        cols = t.get("columns")
        if not isinstance(cols, dict) or not cols:
            raise ValueError(f"{where}: `sequential.{part}.columns` must map at least one column to its kind")
        if key in cols:
            raise ValueError(f"{where}: `sequential.{part}.columns` lists the key {key!r}; it is declared once, "
                             "as `sequential.key`")
        try:
            tables[part] = Schema.from_mapping(f"{name}:{part}", {str(c): v for c, v in cols.items()})
        except SchemaError as exc:
            raise ValueError(f"{where}: `sequential.{part}.columns`: {exc}") from exc
    order = block["events"].get("order")
    if not isinstance(order, list) or not order or not all(isinstance(c, str) for c in order):
        raise ValueError(f"{where}: `sequential.events.order` must be a non-empty list of column names")
    bad = [c for c in order if c not in tables["events"].names]
    if bad:
        raise ValueError(f"{where}: `sequential.events.order` names {bad}, which `sequential.events.columns` "
                         "does not declare")
    both = sorted(set(tables["subjects"].names) & set(tables["events"].names))
    if both:
        raise ValueError(f"{where}: column(s) {both} are declared both as subject and as event columns")
    return SequentialSpec(name, key, block["subjects"]["file"], block["events"]["file"], tables["subjects"],
                          tables["events"], tuple(order), m, block["subjects"].get("sep"), block["events"].get("sep"))


def sequential_spec(name: str) -> SequentialSpec:
    """The spec of conf/dataset/<name>.yaml (which must be a sequential dataset)."""
    return parse_spec(name, group_config("dataset", name))


def resolve(file: str) -> Path:
    """A config's file name: absolute, or relative to HOLDBENCH_DATA_DIR."""
    p = Path(os.path.expanduser(file))
    return p if p.is_absolute() else data_dir() / p


def load_sequential(name: str) -> SequentialData:
    """The validated subject and event tables of a sequential dataset (at least MIN_SUBJECTS subjects)."""
    spec = sequential_spec(name)
    data = from_frames(spec, *load_tables(spec))
    if data.n_subjects < MIN_SUBJECTS:
        raise ValueError(f"dataset {name!r}: {spec.subjects_file} has {data.n_subjects} subject(s); the 50/50 split "
                         f"over subjects needs at least {MIN_SUBJECTS}")
    return data


def load_tables(spec: SequentialSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The raw subject and event tables of a spec's files (one read when both are the same file); the key
    column as text, as written (only an empty field is missing)."""
    raw = {}
    for file, sep in ((spec.subjects_file, spec.subjects_sep), (spec.events_file, spec.events_sep)):
        if file not in raw:
            path = resolve(file)
            if not path.exists():
                raise FileNotFoundError(f"dataset {spec.name!r}: {path} does not exist (set HOLDBENCH_DATA_DIR)")
            try:
                frame = pd.read_csv(path, sep=sep or ",", low_memory=False)
                if spec.key in frame.columns:
                    keys = pd.read_csv(path, sep=sep or ",", usecols=[spec.key], dtype=str, keep_default_na=False)
                    frame[spec.key] = keys[spec.key].mask(keys[spec.key] == "")
            except UnicodeDecodeError as exc:
                raise ValueError(_not_utf8(path, sep or ",", exc)) from None
            raw[file] = frame
    return raw[spec.subjects_file], raw[spec.events_file]


def _not_utf8(path: Path, sep: str, exc: UnicodeDecodeError) -> str:
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


def _unify_keys(subjects: pd.Series, events: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Both tables' keys as one type: int64 when every key of both is written as an integer, else text."""
    texts = [_key_text(subjects), _key_text(events)]
    integral = all(t.dropna().str.fullmatch(r"-?(0|[1-9][0-9]{0,17})").all() for t in texts)
    if integral:
        if all(pd.api.types.is_integer_dtype(k) for k in (subjects, events)):
            return subjects, events  # already integers in both: as they are
        return tuple(t.astype("Int64") if t.isna().any() else t.astype("int64") for t in texts)
    return texts[0], texts[1]


def _key_text(keys: pd.Series) -> pd.Series:
    """A key column as text: integers (and integral floats) as their digits, anything else as str()."""
    if pd.api.types.is_bool_dtype(keys):
        return keys.astype(str)
    if pd.api.types.is_integer_dtype(keys):
        return keys.astype("Int64").astype("string").astype(object).where(keys.notna())
    if pd.api.types.is_float_dtype(keys):
        whole = keys.notna() & (keys == keys.round())
        out = keys.astype(object).where(keys.notna())
        out[whole] = keys[whole].astype("int64").astype(str)
        out[keys.notna() & ~whole] = keys[keys.notna() & ~whole].map(repr)
        return out
    return keys.map(lambda v: v if isinstance(v, str) else str(v), na_action="ignore")


def from_frames(spec: SequentialSpec, subjects: pd.DataFrame, events: pd.DataFrame) -> SequentialData:
    """Validate raw subject and event tables against the spec and return them canonical: declared
    columns only (key first), declared dtypes, events sorted by key then order. When both come from
    the same file, the subject table is the first row of each key (its columns must be constant)."""
    sfile, efile, key = spec.subjects_file, spec.events_file, spec.key
    _require(subjects, [key, *spec.subject_columns], sfile)
    _require(events, [key, *spec.event_columns], efile)
    for frame, file in ((subjects, sfile), (events, efile)):
        if frame[key].isna().any():
            raise ValueError(f"{file}: column {key!r} (the key) has {int(frame[key].isna().sum())} missing value(s)")
    if len(events) == 0:
        raise ValueError(f"{efile}: the event table has no rows; a sequential dataset needs events")
    s_keys, e_keys = _unify_keys(subjects[key], events[key])
    subjects, events = subjects.assign(**{key: s_keys}), events.assign(**{key: e_keys})
    if sfile == efile:
        subjects = _subjects_from_panel(subjects, key, spec.subject_columns, sfile)
    dup = subjects[key].duplicated(keep=False)
    if dup.any():
        raise ValueError(f"{sfile}: column {key!r} (the key) is not unique in the subject table: "
                         f"{int(subjects.loc[dup, key].nunique())} key(s) repeat, e.g. "
                         f"{subjects.loc[dup, key].astype(str).unique()[:3].tolist()}")
    orphans = ~events[key].isin(subjects[key])
    if orphans.any():
        raise ValueError(f"{efile}: column {key!r}: {int(orphans.sum())} event row(s) have a key with no subject "
                         f"in {sfile}, e.g. {events.loc[orphans, key].astype(str).unique()[:3].tolist()}")
    order = list(spec.order)
    for c in order:
        if events[c].isna().any():
            raise ValueError(f"{efile}: order column {c!r} has {int(events[c].isna().sum())} missing value(s)")
    ties = events.duplicated([key, *order], keep=False)
    if ties.any():
        ex = events.loc[ties, [key, *order]].head(2).to_dict("records")
        raise ValueError(f"{efile}: ties in the order: {int(ties.sum())} event rows share their key {key!r} and "
                         f"order column(s) {order} with another row, e.g. {ex}")
    subject_attrs = spec.subject_schema.coerce(subjects[spec.subject_columns], sfile)
    event_cols = spec.event_schema.coerce(events[spec.event_columns], efile)
    subj = pd.concat([subjects[[key]].reset_index(drop=True), subject_attrs], axis=1)
    ev = pd.concat([events[[key]].reset_index(drop=True), event_cols], axis=1)
    ev = ev.sort_values([key, *order], kind="mergesort").reset_index(drop=True)
    return SequentialData(spec, subj, ev)


def _require(frame: pd.DataFrame, columns: list[str], file: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{file}: column(s) {missing} are missing (it has {[str(c) for c in frame.columns]})")


def _subjects_from_panel(frame: pd.DataFrame, key: str, columns: list[str], file: str) -> pd.DataFrame:
    """One row per key from a panel file whose subject columns are constant within a key."""
    sub = frame[[key, *columns]]
    for c in columns:
        varies = sub.groupby(key, sort=False)[c].nunique(dropna=False) > 1
        if varies.any():
            raise ValueError(f"{file}: subject column {c!r} varies within {int(varies.sum())} key(s) of {key!r}, "
                             f"e.g. {varies[varies].index.astype(str)[:3].tolist()}; a subject attribute must be "
                             "constant per subject")
    return sub.drop_duplicates(key, keep="first").reset_index(drop=True)


def split_by_subject(data: SequentialData, seed: int) -> tuple[SequentialData, SequentialData]:
    """Seeded 50/50 split over subjects (|T| = round-half-even(n/2), subjects in shuffled order, as
    holdbench.benchmark.data.split.random_split); every event follows its subject, in its original order."""
    n = data.n_subjects
    perm = np.random.default_rng(seed).permutation(n)
    n_train = round(n / 2)
    parts = []
    for rows in (perm[:n_train], perm[n_train:]):
        subjects = data.subjects.iloc[rows].reset_index(drop=True)
        events = data.events[data.events[data.spec.key].isin(subjects[data.spec.key])].reset_index(drop=True)
        parts.append(replace(data, subjects=subjects, events=events))
    return parts[0], parts[1]


def check_synthetic(spec: SequentialSpec, subjects: pd.DataFrame, events: pd.DataFrame,
                    source: str = "synthetic data") -> None:
    """Refuse S whose subject or event table has other columns than T's (named), or events whose key has
    no synthetic subject, or a non-unique subject key."""
    for part, frame, expected in (("subjects", subjects, [spec.key, *spec.subject_columns]),
                                  ("events", events, [spec.key, *spec.event_columns])):
        got = [str(c) for c in frame.columns]
        missing = [c for c in expected if c not in got]
        extra = [c for c in got if c not in expected]
        if missing or extra:
            raise ValueError(f"{source} ({part} table): columns differ from dataset {spec.name!r}: "
                             f"missing {missing}, unexpected {extra}")
    if subjects[spec.key].duplicated().any():
        raise ValueError(f"{source} (subjects table): column {spec.key!r} (the key) is not unique")
    orphans = ~events[spec.key].isin(subjects[spec.key])
    if orphans.any():
        raise ValueError(f"{source} (events table): column {spec.key!r}: {int(orphans.sum())} event row(s) have "
                         "a key with no subject")


def spec_to_dict(spec: SequentialSpec) -> dict:
    """The spec as JSON (the `sequential` entry of a split's schema.json)."""
    return {"name": spec.name, "key": spec.key, "order": list(spec.order), "n_events_privacy": spec.n_events_privacy,
            "subjects": {"file": spec.subjects_file, "sep": spec.subjects_sep, "schema": spec.subject_schema.to_dict()},
            "events": {"file": spec.events_file, "sep": spec.events_sep, "schema": spec.event_schema.to_dict()}}


def spec_from_dict(d: dict) -> SequentialSpec:
    """The spec spec_to_dict wrote."""
    return SequentialSpec(d["name"], d["key"], d["subjects"]["file"], d["events"]["file"],
                          Schema.from_dict(d["subjects"]["schema"]), Schema.from_dict(d["events"]["schema"]),
                          tuple(d["order"]), int(d["n_events_privacy"]), d["subjects"]["sep"], d["events"]["sep"])


def metric_layout(spec: SequentialSpec):
    """The metrics' view of a dataset (holdbench.metrics.sequential.SequentialLayout)."""
    from holdbench.metrics.sequential import SequentialLayout

    return SequentialLayout(spec.key, spec.subject_schema.kinds, spec.event_schema.kinds, spec.n_events_privacy)


def synthesizer_context(spec: SequentialSpec, seed: int, holdout: tuple[pd.DataFrame, pd.DataFrame] | None = None):
    """What a sequential synthesizer is fitted with (holdbench.synthesizers.sequential.SequentialContext)."""
    from holdbench.synthesizers.sequential import SequentialContext

    return SequentialContext(spec.key, spec.subject_schema, spec.event_schema, seed, spec.name, holdout,
                             order=tuple(spec.order))


def read_pair(spec: SequentialSpec, subjects_file: str | Path, events_file: str | Path) -> SequentialData:
    """A real pair (T or H) from two files (.csv, .csv.gz, .parquet), checked as the dataset's own files
    are (from_frames: every error names the file and the column)."""
    from holdbench.contracts.io import read_table

    frames = []
    for file in (subjects_file, events_file):
        if not Path(file).is_file():
            raise FileNotFoundError(f"{file} does not exist")
        frames.append(read_table(str(file)))
    return from_frames(replace(spec, subjects_file=str(subjects_file), events_file=str(events_file)), *frames)


def check_synthetic_pair(spec: SequentialSpec, subjects: pd.DataFrame, events: pd.DataFrame, source: str,
                         n_subjects: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """S as the metrics read it: check_synthetic's checks (columns, unique key, no orphan events),
    then the declared dtypes (a value that is not of its column's type names the column). The event
    order is S's row order (its order columns are values like any other; ties are allowed). With
    n_subjects, S must have exactly that many subjects."""
    check_synthetic(spec, subjects, events, source)
    if n_subjects is not None and len(subjects) != n_subjects:
        raise ValueError(f"{source} (subjects table): {len(subjects):,} subjects, expected {n_subjects:,}")
    try:
        subj = pd.concat([subjects[[spec.key]].reset_index(drop=True),
                          spec.subject_schema.coerce(subjects[spec.subject_columns], f"{source} (subjects table)")],
                         axis=1)
        ev = pd.concat([events[[spec.key]].reset_index(drop=True),
                        spec.event_schema.coerce(events[spec.event_columns], f"{source} (events table)")], axis=1)
    except SchemaError as exc:
        raise ValueError(str(exc)) from None
    return subj, ev


def read_synthetic_pair(spec: SequentialSpec, subjects_file: str | Path, events_file: str | Path
                        ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A synthetic pair from two files, checked (check_synthetic_pair)."""
    from holdbench.contracts.io import read_table

    for file in (subjects_file, events_file):
        if not Path(file).is_file():
            raise FileNotFoundError(f"{file} does not exist")
    return check_synthetic_pair(spec, read_table(str(subjects_file)), read_table(str(events_file)),
                                f"synthetic data {subjects_file} + {events_file}")

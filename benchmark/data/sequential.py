"""Sequential (subject + event) datasets: their config, loading, validation and split by subject.

A sequential dataset is a pair of tables joined by a key: one row per subject (its attributes) and
any number of event rows per subject, ordered by one or more order columns or by their row order in
the file. Its config is a dataset YAML (conf/dataset/<name>.yaml) with `source: sequential` and a
`sequential:` block::

    sequential:
      key: playerID                 # the column joining the two tables
      n_events_privacy: 3           # m: the first m events enter the per-subject privacy vector
      subjects: {file: baseball/People.csv.gz, columns: {birthYear: {kind: numeric, dtype: int}, ...}}
      events: {file: baseball/Batting.csv.gz, order: [yearID, stint], columns: {...}}

Without a `subjects:` block the dataset is sequences without subject attributes (no context): the
subject table is the key column alone, one row per key of the event file (in order of first
appearance), and no column stands in for attributes. `order: row` orders each key's events by their
row order in the file (stable through the split, the synthesizers and the metrics: a key's events
are always read in row order). An event column of `kind: datetime` (optional `format:`, else ISO
8601) is parsed (holdbench.benchmark.data.sequential_files) and held as days since 1970-01-01 (a
float: numeric for the synthesizers and the metrics); `time: COLUMN` names the column whose
inter-event gaps are measured (default: the first order column when it is a datetime).

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

import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.config import group_config
from holdbench.benchmark.data.tables import data_dir
from holdbench.contracts.io import unique_columns
from holdbench.contracts.schema import Schema, SchemaError

_BLOCK_KEYS = {"key", "n_events_privacy", "subjects", "events"}
_REQUIRED_KEYS = {"key", "n_events_privacy", "events"}
#: `order: row`: each key's events in their file row order
ROW_ORDER = "row"
#: a sequential dataset's fewest subjects: the 50/50 split over subjects leaves T and H two each (as the
#: flat datasets' `min_rows` default)
MIN_SUBJECTS = 4
_TABLE_KEYS = {"subjects": {"file", "columns", "sep"}, "events": {"file", "columns", "order", "sep", "time"}}


@dataclass(frozen=True)
class SequentialSpec:
    """What a sequential dataset's config declares (no data)."""

    name: str
    key: str
    subjects_file: str | None
    events_file: str
    #: None: sequences without subject attributes (the subject table is the key alone)
    subject_schema: Schema | None
    event_schema: Schema
    #: the order columns; () = `order: row` (each key's events in file row order)
    order: tuple[str, ...]
    n_events_privacy: int
    subjects_sep: str | None = None
    events_sep: str | None = None
    #: datetime event columns and their format (None: ISO 8601), held as days since 1970-01-01
    datetimes: tuple[tuple[str, str | None], ...] = ()
    #: the column whose inter-event gaps are measured and whose order S must keep (None: no time column)
    time: str | None = None

    @property
    def has_subjects(self) -> bool:
        return self.subject_schema is not None

    @property
    def order_by_row(self) -> bool:
        return not self.order

    @property
    def order_label(self) -> str:
        return ROW_ORDER if self.order_by_row else str(list(self.order))

    @property
    def subject_columns(self) -> list[str]:
        return self.subject_schema.names if self.subject_schema is not None else []

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
    for k in sorted(_REQUIRED_KEYS):
        if k not in block:
            raise ValueError(f"{where}: `sequential.{k}` is missing")
    key, m = block["key"], block["n_events_privacy"]
    if not isinstance(key, str) or not key:
        raise ValueError(f"{where}: `sequential.key` must be a column name, got {key!r}")
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"{where}: `sequential.n_events_privacy` must be a positive integer, got {m!r}")
    tables: dict = {"subjects": None}
    datetimes: list[tuple[str, str | None]] = []
    parts = ("subjects", "events") if block.get("subjects") is not None else ("events",)
    for part in parts:
        t = block[part]
        if not isinstance(t, dict):
            raise ValueError(f"{where}: `sequential.{part}` must be a mapping"  # noqa: TRY004 (config contract)
                             + (" (leave it out for sequences without subject attributes)" if part == "subjects" else ""))
        unknown = sorted(set(t) - _TABLE_KEYS[part])
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown} in `sequential.{part}`")
        if not isinstance(t.get("file"), str) or not t["file"]:
            raise ValueError(f"{where}: `sequential.{part}.file` must be a file name")
        cols = t.get("columns")
        if not isinstance(cols, dict) or not cols:
            raise ValueError(f"{where}: `sequential.{part}.columns` must map at least one column to its kind"
                             + (" (sequences without subject attributes: leave the `subjects` block out)"
                                if part == "subjects" else ""))
        if key in cols:
            raise ValueError(f"{where}: `sequential.{part}.columns` lists the key {key!r}; it is declared once, "
                             "as `sequential.key`")
        mapping = {}
        for c, v in cols.items():
            if isinstance(v, dict) and v.get("kind") == "datetime":
                if part != "events":
                    raise ValueError(f"{where}: `sequential.subjects.columns.{c}`: datetime columns are event columns")
                extra = sorted(set(v) - {"kind", "format"})
                if extra:
                    raise ValueError(f"{where}: `sequential.events.columns.{c}`: unknown key(s) {extra} "
                                     "(a datetime column takes `kind: datetime` and an optional `format`)")
                fmt = v.get("format")
                if fmt is not None and (not isinstance(fmt, str) or not fmt):
                    raise ValueError(f"{where}: `sequential.events.columns.{c}.format` must be a strftime format")
                datetimes.append((str(c), fmt))
                v = {"kind": "numeric", "dtype": "float"}  # held as days since 1970-01-01
            elif isinstance(v, dict) and "format" in v:
                raise ValueError(f"{where}: `sequential.{part}.columns.{c}.format` applies to `kind: datetime` only")
            mapping[str(c)] = v
        try:
            tables[part] = Schema.from_mapping(f"{name}:{part}", mapping)
        except SchemaError as exc:
            raise ValueError(f"{where}: `sequential.{part}.columns`: {exc}") from exc
    order = block["events"].get("order")
    if order == ROW_ORDER:
        order = []
    elif not isinstance(order, list) or not order or not all(isinstance(c, str) for c in order):
        raise ValueError(f"{where}: `sequential.events.order` must be `row` (each key's events in file row order) "
                         f"or a non-empty list of column names, got {order!r}")
    bad = [c for c in order if c not in tables["events"].names]
    if bad:
        raise ValueError(f"{where}: `sequential.events.order` names {bad}, which `sequential.events.columns` "
                         "does not declare")
    subject_names = tables["subjects"].names if tables["subjects"] is not None else []
    both = sorted(set(subject_names) & set(tables["events"].names))
    if both:
        raise ValueError(f"{where}: column(s) {both} are declared both as subject and as event columns")
    dt_names = [c for c, _ in datetimes]
    time = block["events"].get("time")
    if time is not None and (not isinstance(time, str) or time not in tables["events"].names):
        raise ValueError(f"{where}: `sequential.events.time` must name a declared event column, got {time!r}")
    if time is None and order and order[0] in dt_names:
        time = order[0]
    subjects = block.get("subjects") or {}
    return SequentialSpec(name, key, subjects.get("file"), block["events"]["file"], tables["subjects"],
                          tables["events"], tuple(order), m, subjects.get("sep"), block["events"].get("sep"),
                          tuple(datetimes), time)


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


def load_tables(spec: SequentialSpec) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """The raw subject and event tables of a spec's files (one read when both are the same file; no
    subject table without a `subjects` block); the key column as text, as written (only an empty field
    is missing)."""
    raw = {}
    files = ((spec.subjects_file, spec.subjects_sep),) if spec.has_subjects else ()
    for file, sep in (*files, (spec.events_file, spec.events_sep)):
        if file not in raw:
            path = resolve(file)
            if not path.exists():
                raise FileNotFoundError(f"dataset {spec.name!r}: {path} does not exist (set HOLDBENCH_DATA_DIR)")
            try:
                frame = pd.read_csv(path, sep=sep or ",", low_memory=False)
                unique_columns(path, sep=sep or ",")
                if spec.key in frame.columns:
                    keys = pd.read_csv(path, sep=sep or ",", usecols=[spec.key], dtype=str, keep_default_na=False)
                    frame[spec.key] = keys[spec.key].mask(keys[spec.key] == "")
            except UnicodeDecodeError as exc:
                from holdbench.benchmark.data.sequential_values import not_utf8

                raise ValueError(not_utf8(path, sep or ",", exc)) from None
            raw[file] = frame
    return (raw[spec.subjects_file] if spec.has_subjects else None), raw[spec.events_file]


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


def from_frames(spec: SequentialSpec, subjects: pd.DataFrame | None, events: pd.DataFrame) -> SequentialData:
    """Validate raw subject and event tables against the spec and return them canonical: declared
    columns only (key first), declared dtypes (datetime columns parsed to days since 1970-01-01),
    events sorted by key then order (`order: row`: by key only, stable, so each key's events keep their
    file row order). When both come from the same file, the subject table is the first row of each key
    (its columns must be constant); without subject attributes it is each key once, in order of first
    appearance."""
    from holdbench.benchmark.data.sequential_values import parse_datetimes

    efile, key = spec.events_file, spec.key
    sfile = spec.subjects_file if spec.has_subjects else efile
    if not spec.has_subjects:
        subjects = events
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
    events = parse_datetimes(events, spec, efile)
    order = list(spec.order)
    for c in order:
        if events[c].isna().any():
            raise ValueError(f"{efile}: order column {c!r} has {int(events[c].isna().sum())} missing value(s)")
    ties = events.duplicated([key, *order], keep=False) if order else pd.Series(False, index=events.index)
    if ties.any():
        ex = events.loc[ties, [key, *order]].head(2).to_dict("records")
        raise ValueError(f"{efile}: ties in the order: {int(ties.sum())} event rows share their key {key!r} and "
                         f"order column(s) {order} with another row, e.g. {ex}; order by more columns, or by "
                         "the file's row order when it is the events' order (`--order row` on the command line, "
                         "`order: row` in a dataset config)")
    parts = [subjects[[key]].reset_index(drop=True)]
    if spec.has_subjects:
        parts.append(spec.subject_schema.coerce(subjects[spec.subject_columns], sfile))
    subj = pd.concat(parts, axis=1)
    event_cols = spec.event_schema.coerce(events[spec.event_columns], efile)
    ev = pd.concat([events[[key]].reset_index(drop=True), event_cols.reset_index(drop=True)], axis=1)
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
            from holdbench.contracts.schema import columns_differ

            raise ValueError(f"{source} ({part} table): columns differ from dataset {spec.name!r}: "
                             f"{columns_differ(missing, extra)}")
    if subjects[spec.key].duplicated().any():
        raise ValueError(f"{source} (subjects table): column {spec.key!r} (the key) is not unique")
    orphans = ~events[spec.key].isin(subjects[spec.key])
    if orphans.any():
        raise ValueError(f"{source} (events table): column {spec.key!r}: {int(orphans.sum())} event row(s) have "
                         "a key with no subject")


def spec_to_dict(spec: SequentialSpec) -> dict:
    """The spec as JSON (the `sequential` entry of a split's schema.json)."""
    return {"name": spec.name, "key": spec.key, "order": list(spec.order) if spec.order else ROW_ORDER,
            "n_events_privacy": spec.n_events_privacy,
            "subjects": (None if not spec.has_subjects else
                         {"file": spec.subjects_file, "sep": spec.subjects_sep, "schema": spec.subject_schema.to_dict()}),
            "events": {"file": spec.events_file, "sep": spec.events_sep, "schema": spec.event_schema.to_dict(),
                       "datetimes": [list(d) for d in spec.datetimes], "time": spec.time}}


def spec_from_dict(d: dict) -> SequentialSpec:
    """The spec spec_to_dict wrote."""
    subjects, events = d.get("subjects"), d["events"]
    order = () if d["order"] == ROW_ORDER else tuple(d["order"])
    return SequentialSpec(d["name"], d["key"], subjects["file"] if subjects else None, events["file"],
                          Schema.from_dict(subjects["schema"]) if subjects else None, Schema.from_dict(events["schema"]),
                          order, int(d["n_events_privacy"]), subjects["sep"] if subjects else None, events["sep"],
                          tuple((c, f) for c, f in events.get("datetimes", [])), events.get("time"))


def metric_layout(spec: SequentialSpec):
    """The metrics' view of a dataset (holdbench.metrics.sequential.SequentialLayout)."""
    from holdbench.metrics.sequential import SequentialLayout

    return SequentialLayout(spec.key, spec.subject_schema.kinds if spec.has_subjects else {}, spec.event_schema.kinds,
                            spec.n_events_privacy, order=tuple(spec.order), time=spec.time,
                            datetimes=tuple(c for c, _ in spec.datetimes))


def synthesizer_context(spec: SequentialSpec, seed: int, holdout: tuple[pd.DataFrame, pd.DataFrame] | None = None):
    """What a sequential synthesizer is fitted with (holdbench.synthesizers.sequential.SequentialContext)."""
    from holdbench.synthesizers.sequential import SequentialContext

    return SequentialContext(spec.key, spec.subject_schema, spec.event_schema, seed, spec.name, holdout,
                             order=tuple(spec.order))


def check_synthetic_pair(spec: SequentialSpec, subjects: pd.DataFrame, events: pd.DataFrame, source: str,
                         n_subjects: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """S as the metrics read it: check_synthetic's checks (columns, unique key, no orphan events),
    then the declared dtypes (a value that is not of its column's type names the column; a datetime
    column's text parsed, its numbers read as days since 1970-01-01). The event order is S's row order,
    never re-sorted (its order columns are values like any other; ties are allowed, and events out of
    order are reported by the metrics). With n_subjects, S must have exactly that many subjects."""
    from holdbench.benchmark.data.sequential_values import parse_datetimes

    check_synthetic(spec, subjects, events, source)
    if n_subjects is not None and len(subjects) != n_subjects:
        raise ValueError(f"{source} (subjects table): {len(subjects):,} subjects, expected {n_subjects:,}")
    try:
        parts = [subjects[[spec.key]].reset_index(drop=True)]
        if spec.has_subjects:
            parts.append(spec.subject_schema.coerce(subjects[spec.subject_columns], f"{source} (subjects table)"))
        subj = pd.concat(parts, axis=1)
        events = parse_datetimes(events, spec, f"{source} (events table)", numbers_are_days=True)
        ev = pd.concat([events[[spec.key]].reset_index(drop=True),
                        spec.event_schema.coerce(events[spec.event_columns], f"{source} (events table)")
                        .reset_index(drop=True)], axis=1)
    except SchemaError as exc:
        raise ValueError(str(exc)) from None
    return subj, ev

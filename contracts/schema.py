"""Column schema of a dataset: the contract between loaders, synthesizers and metrics.

`kind` is what the metrics see (docs/definitions/paper.md §1: pandas' read_csv dtype of T decides, so
bools and integer codes are numeric); `model_kind` is what a synthesizer should model
a column as (the paper gave SDV credit-default's SEX/EDUCATION/MARRIAGE as categorical).
`dtype` is the canonical pandas storage: int, float, bool or str.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from holdbench.contracts.dates import dates_to_days, datetime_columns, needs_days

_INDEX_NAME = re.compile(r"Unnamed: \d+|index|level_\d+|__index_level_\d+__")
"""Names pandas gives a row index it writes as a column (to_csv without index=False, reset_index, to_parquet)."""


def index_column_hint(names: Iterable[str]) -> str:
    """A clause for a 'columns differ' message when one of the missing or unexpected column names looks like
    a row index pandas wrote, else ''."""
    names = [str(c) for c in names if _INDEX_NAME.fullmatch(str(c))]
    if not names:
        return ""
    return (f" ({names[0]!r} looks like a row index that pandas wrote as a column: write the file with "
            "index=False, or drop that column)")


def near_names_hint(missing: Iterable[str], extra: Iterable[str]) -> str:
    """A clause for a 'columns differ' message naming each unexpected column that differs from a missing one
    only in letter case or surrounding spaces (`'Age '` for `'age'`), else ''."""
    def key(name: str) -> str:
        return name.strip().casefold()

    wanted = {key(str(m)): str(m) for m in missing}
    pairs = [f"{str(e)!r} for {wanted[key(str(e))]!r}" for e in extra if key(str(e)) in wanted]
    if not pairs:
        return ""
    return f" (differing only in letter case or spaces: {', '.join(pairs)}; names must match T's exactly)"


def columns_differ(missing: list, extra: list) -> str:
    """What a 'columns differ' message says after its colon: the missing and the unexpected names (a side
    without names left out), then the hints of index_column_hint and near_names_hint."""
    sides = "; ".join(f"{word} {[str(c) for c in names]}" for word, names in (("missing", missing),
                                                                             ("unexpected", extra)) if names)
    return f"{sides}{index_column_hint([*missing, *extra])}{near_names_hint(missing, extra)}"


Kind = Literal["categorical", "numeric"]
KINDS = ("categorical", "numeric")
DTYPES = ("int", "float", "bool", "str")


class SchemaError(ValueError):
    """A table does not match the schema it is declared to have."""


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    dtype: str
    model_kind: Kind
    levels: tuple | None = None
    """The levels of a categorical column, declared public (known without looking at T): a DP generator
    then spends no budget on them (synthesizers/plugins/dp/domain.py)."""
    bounds: tuple[float, float] | None = None
    """[lower, upper] of a numeric column, declared public: a DP generator clips to them instead of
    estimating a range under DP."""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise SchemaError(f"column {self.name!r}: kind must be one of {KINDS}, got {self.kind!r}")
        if self.model_kind not in KINDS:
            raise SchemaError(
                f"column {self.name!r}: model_kind must be one of {KINDS}, got {self.model_kind!r}"
            )
        if self.dtype not in DTYPES:
            raise SchemaError(f"column {self.name!r}: dtype must be one of {DTYPES}, got {self.dtype!r}")
        if self.kind == "categorical" and self.dtype != "str":
            raise SchemaError(f"column {self.name!r}: a categorical column must have dtype str")
        if self.levels is not None:
            levels = list(self.levels)
            if self.model_kind != "categorical":
                raise SchemaError(f"column {self.name!r}: levels are declared for categorical columns only "
                                  f"(model_kind {self.model_kind!r}); a numeric column declares bounds")
            if not levels or any(not isinstance(v, (str, int)) or isinstance(v, bool) for v in levels):
                raise SchemaError(f"column {self.name!r}: levels must be a non-empty list of strings or integers, "
                                  f"got {self.levels!r}")
            if len({str(v) for v in levels}) != len(levels):
                raise SchemaError(f"column {self.name!r}: levels {levels!r} repeat a value")
        if self.bounds is not None:
            b = list(self.bounds) if isinstance(self.bounds, (list, tuple)) else None
            if (self.model_kind != "numeric" or self.dtype == "bool" or b is None or len(b) != 2
                    or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in b)
                    or not all(np.isfinite(b)) or not b[0] < b[1]):
                raise SchemaError(f"column {self.name!r}: bounds must be [lower, upper] with finite lower < upper "
                                  f"on a numeric, non-bool column, got {self.bounds!r}")


@dataclass(frozen=True)
class Schema:
    """Ordered columns with kinds, plus the roles some columns play (each may be absent)."""

    name: str
    columns: tuple[Column, ...]
    target: str | None = None
    """The prediction target (utility metrics)."""
    n_rows: int | None = field(default=None, compare=False)
    sensitive: str | None = None
    """A binary sensitive attribute (attribute disclosure, docs/definitions/bale-quick.md §8)."""
    quasi_identifiers: tuple[str, ...] = ()
    """Columns an attacker is assumed to know about a target (attribute disclosure)."""
    dates: tuple[str, ...] = ()
    """Numeric (float) columns that hold dates or times as days since 1970-01-01 (holdbench.contracts.dates):
    `coerce` reads ISO 8601 text or datetime64 values in them as such days."""
    drop: tuple[str, ...] = ()
    """Columns of the dataset's files left out of every table (a file dataset's `drop`, e.g. a record number):
    `coerce` removes them wherever a file holds them (the dataset's own file, a provided split's T and H), and so
    does the harness's check of a synthetic table; a file without them is read as it is."""

    def __post_init__(self) -> None:
        names = [c.name for c in self.columns]
        if not names:
            raise SchemaError(f"dataset {self.name!r}: the schema has no columns")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise SchemaError(f"dataset {self.name!r}: duplicate column names {dupes}")
        for role, col in (("target", self.target), ("sensitive", self.sensitive),
                          *(("quasi_identifiers", q) for q in self.quasi_identifiers)):
            if col is not None and col not in names:
                raise SchemaError(f"dataset {self.name!r}: {role} {col!r} is not a column")
        for col in self.dates:
            kind = next((c for c in self.columns if c.name == col), None)
            if kind is None:
                raise SchemaError(f"dataset {self.name!r}: date column {col!r} is not a column")
            if kind.kind != "numeric" or kind.dtype != "float":
                raise SchemaError(f"dataset {self.name!r}: date column {col!r} must be numeric with dtype float "
                                  f"(days since 1970-01-01), not {kind.kind} ({kind.dtype})")
        kept = sorted(set(self.drop) & set(names))
        if kept:
            raise SchemaError(f"dataset {self.name!r}: column(s) {kept} are both dropped and columns of the table")
        if self.sensitive is not None and self.sensitive in self.quasi_identifiers:
            raise SchemaError(f"dataset {self.name!r}: the sensitive attribute {self.sensitive!r} "
                              "cannot also be a quasi-identifier")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def kinds(self) -> dict[str, Kind]:
        """Metric kinds, name -> 'categorical' | 'numeric'."""
        return {c.name: c.kind for c in self.columns}

    @property
    def model_kinds(self) -> dict[str, Kind]:
        """Kinds a synthesizer should model the columns as."""
        return {c.name: c.model_kind for c in self.columns}

    @property
    def dtypes(self) -> dict[str, str]:
        return {c.name: c.dtype for c in self.columns}

    @classmethod
    def from_mapping(
        cls,
        name: str,
        columns: Mapping[str, Mapping[str, str]],
        target: str | None = None,
        n_rows: int | None = None,
        sensitive: str | None = None,
        quasi_identifiers: tuple[str, ...] | list[str] = (),
        dates: tuple[str, ...] | list[str] = (),
        drop: tuple[str, ...] | list[str] = (),
    ) -> Schema:
        """Build from a config mapping {column: {kind, dtype?, model_kind?, levels?, bounds?}}; `dates` names the
        columns held as days since 1970-01-01 (Schema.dates), `drop` the files' columns left out (Schema.drop)."""
        cols = []
        for col, spec in columns.items():
            spec = dict(spec or {})
            unknown = set(spec) - {"kind", "dtype", "model_kind", "levels", "bounds"}
            if unknown:
                raise SchemaError(f"dataset {name!r}, column {col!r}: unknown keys {sorted(unknown)}")
            if "kind" not in spec:
                raise SchemaError(f"dataset {name!r}, column {col!r}: 'kind' is missing")
            kind = spec["kind"]
            dtype = spec.get("dtype", "str" if kind == "categorical" else "float")
            levels, bounds = spec.get("levels"), spec.get("bounds")
            cols.append(Column(str(col), kind, dtype, spec.get("model_kind", kind),
                               None if levels is None else tuple(levels) if isinstance(levels, (list, tuple)) else levels,
                               None if bounds is None else tuple(bounds) if isinstance(bounds, (list, tuple)) else bounds))
        return cls(name, tuple(cols), target, n_rows, sensitive, tuple(quasi_identifiers or ()), tuple(dates or ()),
                   tuple(str(c) for c in drop or ()))

    @classmethod
    def infer(cls, name: str, df: pd.DataFrame, target: str | None = None,
              overrides: Mapping[str, Mapping[str, str]] | None = None, sensitive: str | None = None,
              quasi_identifiers: tuple[str, ...] | list[str] = (), drop: tuple[str, ...] | list[str] = ()) -> Schema:
        """Kinds as the paper decided them (docs/definitions/paper.md §1): object -> categorical, else numeric;
        a column of dates (datetime64, or text whose every value is ISO 8601: holdbench.contracts.dates) is
        numeric, days since 1970-01-01 (Schema.dates), unless an override makes it categorical. `drop` names
        columns already left out of df (Schema.drop)."""
        kept_text = {str(c) for c, o in (overrides or {}).items() if dict(o or {}).get("kind") == "categorical"}
        dates = [c for c in datetime_columns(df) if c not in kept_text]
        spec: dict[str, dict[str, str]] = {}
        for col in df.columns:
            s = df[col]
            if str(col) in dates:
                spec[str(col)] = {"kind": "numeric", "dtype": "float"}
            elif pd.api.types.is_bool_dtype(s):
                spec[str(col)] = {"kind": "numeric", "dtype": "bool"}
            elif pd.api.types.is_integer_dtype(s):
                spec[str(col)] = {"kind": "numeric", "dtype": "int"}
            elif pd.api.types.is_numeric_dtype(s):
                spec[str(col)] = {"kind": "numeric", "dtype": "float"}
            elif pd.api.types.is_datetime64_any_dtype(s):
                raise SchemaError(
                    f"dataset {name!r}, column {col!r}: a datetime column cannot be a category; "
                    "leave out its override to read it as days since 1970-01-01"
                )
            else:
                spec[str(col)] = {"kind": "categorical", "dtype": "str"}
        for col, over in (overrides or {}).items():
            if col not in spec:
                raise SchemaError(f"dataset {name!r}: override for unknown column {col!r}")
            over = dict(over)
            if over.get("kind") == "categorical":
                over.setdefault("dtype", "str")
            spec[col] = {**spec[col], **over}
            if col in dates and spec[col] != {"kind": "numeric", "dtype": "float"}:
                raise SchemaError(f"dataset {name!r}: column {col!r} holds dates, read as days since 1970-01-01 "
                                  f"(numeric, float); its override {over} can only make it categorical")
        return cls.from_mapping(name, spec, target, len(df), sensitive, quasi_identifiers, dates, drop)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "target": self.target,
            "sensitive": self.sensitive,
            "quasi_identifiers": list(self.quasi_identifiers),
            # only when there are some: a schema without dates is recorded as it always was
            **({"dates": list(self.dates)} if self.dates else {}),
            **({"drop": list(self.drop)} if self.drop else {}),
            # a list, not a mapping: JSON writers may sort keys, the column order must survive
            "columns": [
                {"name": c.name, "kind": c.kind, "dtype": c.dtype, "model_kind": c.model_kind}
                | ({} if c.levels is None else {"levels": list(c.levels)})
                | ({} if c.bounds is None else {"bounds": list(c.bounds)})
                for c in self.columns
            ],
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Schema:
        cols = {c["name"]: {k: v for k, v in c.items() if k != "name"} for c in d["columns"]}
        return cls.from_mapping(d["name"], cols, d.get("target"), None, d.get("sensitive"),
                                d.get("quasi_identifiers") or (), d.get("dates") or (), d.get("drop") or ())

    def without_dropped(self, df: pd.DataFrame) -> pd.DataFrame:
        """df without the columns of `drop` it holds (Schema.drop)."""
        present = [c for c in df.columns if str(c) in self.drop]
        return df.drop(columns=present) if present else df

    def check_columns(self, df: pd.DataFrame, source: str) -> None:
        """Raise SchemaError naming `source` when df's columns differ from the schema."""
        got = [str(c) for c in df.columns]
        dupes = sorted({c for c in got if got.count(c) > 1})
        if dupes:
            raise SchemaError(f"{source}: duplicate column names {dupes}")
        missing = [c for c in self.names if c not in got]
        extra = [c for c in got if c not in self.names]
        if missing or extra:
            raise SchemaError(f"{source}: columns differ from dataset {self.name!r}: {columns_differ(missing, extra)}")

    def coerce(self, df: pd.DataFrame, source: str) -> pd.DataFrame:
        """Return df in schema order with canonical dtypes; SchemaError names the bad column.

        Missing values are kept (nullable Int64/boolean where needed). A value that cannot
        be read as its column's dtype is an error, not a silent NaN. The columns of `drop` are left out where
        df holds them.
        """
        df = self.without_dropped(df)
        self.check_columns(df, source)
        if self.dates:
            try:
                df = dates_to_days(df, [c for c in self.dates if needs_days(df[c])], source)
            except ValueError as exc:
                raise SchemaError(str(exc)) from None
        out = {}
        for col in self.columns:
            out[col.name] = _coerce_series(df[col.name], col, source)
        return pd.DataFrame(out, index=pd.RangeIndex(len(df)))


_TRUE = {"true", "t", "1", "yes", "1.0"}
_FALSE = {"false", "f", "0", "no", "0.0"}


def _coerce_series(s: pd.Series, col: Column, source: str) -> pd.Series:
    s = s.reset_index(drop=True)
    missing = s.isna()
    if col.dtype == "str":
        values = s.astype(object).map(lambda v: v if isinstance(v, str) else _to_str(v))
        return values.where(~missing, np.nan)
    if col.dtype == "bool":
        if pd.api.types.is_bool_dtype(s):
            return s.astype("boolean") if missing.any() else s.astype(bool)
        text = s.astype(object).where(~missing, None).map(lambda v: None if v is None else str(v).strip().lower())
        bad = ~missing & ~text.isin(_TRUE | _FALSE)
        if bad.any():
            _raise_bad(s, bad, col, source, "a boolean")
        vals = text.map(lambda v: None if v is None else v in _TRUE)
        return vals.astype("boolean") if missing.any() else vals.astype(bool)
    nums = pd.to_numeric(s, errors="coerce") if not pd.api.types.is_numeric_dtype(s) else s
    if pd.api.types.is_bool_dtype(nums):
        nums = nums.astype(float)
    bad = ~missing & pd.isna(nums)
    if bad.any():
        _raise_bad(s, bad, col, source, "a number")
    nums = nums.astype("Float64" if missing.any() else float)
    if col.dtype == "float":
        return nums.astype(float)
    rounded = nums.round()
    if missing.any():
        return rounded.astype("Int64")
    return rounded.astype(np.int64)


def _to_str(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _raise_bad(s: pd.Series, bad: pd.Series, col: Column, source: str, what: str) -> None:
    examples = s[bad].astype(str).unique()[:3].tolist()
    raise SchemaError(
        f"{source}: column {col.name!r} ({col.dtype}) has {int(bad.sum())} value(s) that are not "
        f"{what}, e.g. {examples}"
    )

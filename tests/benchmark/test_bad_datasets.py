"""Odd user tables: each gets a clear error before work starts, or is handled correctly.

Rejected: a missing file, duplicate or empty column names, an override or target naming no
column, an empty table, a single row, an all-missing column, a datetime64 column made a category.
(Date columns are read as days: tests/benchmark/test_dataset_dates.py.)
Handled: a constant column, a high-cardinality categorical, unicode categories, a column
mixing numbers and strings (read as text, so categorical, as the paper's rule says).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.data.tables import DataUnavailable, dataset_schema, load_dataset
from holdbench.benchmark.data.split import random_split
from holdbench.contracts.schema import SchemaError
from holdbench.metrics import evaluate, paper_families
from holdbench.synthesizers.base import FitContext
from holdbench.synthesizers.flip import Flip
from tests.workflow.helpers import make_conf


@pytest.fixture()
def file_dataset(tmp_path, monkeypatch):
    """Write a table and a file-dataset config for it; return a loader."""
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))

    def make(df: pd.DataFrame | str, suffix: str = ".csv", extra: str = "") -> str:
        path = tmp_path / f"table{suffix}"
        if isinstance(df, str):
            path.write_text(df, encoding="utf-8")
        elif suffix == ".parquet":
            df.to_parquet(path)
        else:
            df.to_csv(path, index=False)
        conf = make_conf(tmp_path)
        (conf / "dataset" / "mine.yaml").write_text(f"name: mine\nsource: file\npath: {path}\n{extra}")
        monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
        return "mine"

    return make


def _table(n=200, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.normal(size=n), "k": rng.integers(0, 5, n), "c": rng.choice(list("abc"), n)})


def test_missing_file(file_dataset, tmp_path):
    name = file_dataset(_table())
    (tmp_path / "table.csv").unlink()
    with pytest.raises(DataUnavailable, match="table.csv does not exist"):
        load_dataset(name)


@pytest.mark.parametrize("header", ["x,x,c", "x,,c"])
def test_duplicate_or_empty_column_names(file_dataset, header):
    name = file_dataset(header + "\n1,2,a\n3,4,b\n5,6,c\n7,8,d\n")
    with pytest.raises(SchemaError, match="duplicate or empty column names"):
        load_dataset(name)


def test_override_or_target_naming_no_column(file_dataset):
    name = file_dataset(_table(), extra="overrides:\n  zz: {kind: categorical}\n")
    with pytest.raises(SchemaError, match="'zz'"):
        load_dataset(name)
    name = file_dataset(_table(), extra="target: outcome\n")
    with pytest.raises(SchemaError, match="target 'outcome'"):
        load_dataset(name)


def test_empty_table(file_dataset):
    name = file_dataset("x,k,c\n")
    with pytest.raises(SchemaError, match="no rows"):
        load_dataset(name)


def test_single_row(file_dataset):
    name = file_dataset("x,k,c\n1,2,a\n")
    with pytest.raises(SchemaError, match="1 row"):
        load_dataset(name)


def test_all_missing_column(file_dataset):
    df = _table()
    df["empty"] = np.nan
    name = file_dataset(df)
    with pytest.raises(SchemaError, match=r"\['empty'\] hold no values"):
        load_dataset(name)


def test_datetime_column_cannot_be_made_a_category(file_dataset):
    df = _table()
    df["when"] = pd.date_range("2020-01-01", periods=len(df), freq="D")
    name = file_dataset(df, ".parquet", "overrides:\n  when: {kind: categorical}\n")
    with pytest.raises(SchemaError, match="'when': a datetime column cannot be a category"):
        load_dataset(name)


def _evaluate_flip(name: str) -> dict:
    df = load_dataset(name)
    schema = dataset_schema(name)
    t, h = random_split(df, 0)
    flip = Flip(p=0.5)
    flip.fit(t, FitContext(schema=schema, seed=0, dataset=name))
    s = schema.coerce(flip.sample(len(t), seed=0), "flip")
    return evaluate(t, h, s, schema.kinds, families=paper_families()).to_dict()


def test_constant_column_is_handled(file_dataset):
    df = _table()
    df["const"] = 7
    df["const_cat"] = "same"
    m = _evaluate_flip(file_dataset(df))
    assert 0 <= m["dcr_share"] <= 1 and m["F1"] >= 0


def test_high_cardinality_unicode_and_mixed_columns_are_handled(file_dataset):
    n = 20_000
    rng = np.random.default_rng(1)
    df = pd.DataFrame({
        "id": [f"ID{i:06d}" for i in range(n)],
        "city": rng.choice(["Zürich", "København", "東京", "São Paulo"], n),
        "mixed": np.where(rng.random(n) < 0.5, rng.integers(0, 9, n).astype(str), "unknown"),
        "v": rng.exponential(size=n),
    })
    name = file_dataset(df)
    schema = dataset_schema(name)
    assert schema.kinds == {"id": "categorical", "city": "categorical", "mixed": "categorical", "v": "numeric"}
    loaded = load_dataset(name)
    assert set(loaded["city"]) == {"Zürich", "København", "東京", "São Paulo"}
    m = _evaluate_flip(name)
    assert 0 <= m["dcr_share"] <= 1 and m["F2"] > 0

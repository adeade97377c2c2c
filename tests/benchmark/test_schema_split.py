"""Schema coercion and errors; split determinism and sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.data.split import provided_split, random_split
from holdbench.contracts.schema import Schema, SchemaError
from tests.conftest import PAPER, needs_shared


@pytest.fixture()
def schema():
    return Schema.from_mapping("t", {
        "n": {"kind": "numeric", "dtype": "int"},
        "x": {"kind": "numeric", "dtype": "float"},
        "b": {"kind": "numeric", "dtype": "bool"},
        "c": {"kind": "categorical"},
    }, target="c")


def test_coerce_canonical_dtypes(schema):
    df = pd.DataFrame({"c": ["a", None, 3], "b": ["TRUE", "FALSE", "true"], "x": ["1.5", 2, None],
                       "n": [1.0, 2.0, 3.0]})
    out = schema.coerce(df, "t.csv")
    assert list(out.columns) == ["n", "x", "b", "c"]
    assert out["n"].dtype == np.int64 and out["b"].dtype == bool
    assert out["c"].tolist()[0] == "a" and pd.isna(out["c"][1]) and out["c"][2] == "3"
    assert np.isnan(out["x"][2])


def test_coerce_names_bad_column(schema):
    df = pd.DataFrame({"n": [1, "abc"], "x": [1.0, 2.0], "b": [True, False], "c": ["a", "b"]})
    with pytest.raises(SchemaError, match=r"t\.csv: column 'n'.*abc"):
        schema.coerce(df, "t.csv")
    with pytest.raises(SchemaError, match=r"missing \['c'\]; unexpected \['zz'\]"):
        schema.coerce(df.rename(columns={"c": "zz"}), "t.csv")


def test_schema_rejects_bad_specs():
    with pytest.raises(SchemaError, match="kind"):
        Schema.from_mapping("d", {"a": {"kind": "ordinal"}})
    with pytest.raises(SchemaError, match="target"):
        Schema.from_mapping("d", {"a": {"kind": "numeric"}}, target="b")
    with pytest.raises(SchemaError, match="unknown keys"):
        Schema.from_mapping("d", {"a": {"kind": "numeric", "knd": 1}})


def test_infer_follows_read_csv_dtypes():
    df = pd.DataFrame({"i": [1, 2], "f": [0.5, 1.0], "b": [True, False], "s": ["x", "y"]})
    s = Schema.infer("d", df, overrides={"i": {"kind": "categorical"}})
    assert s.kinds == {"i": "categorical", "f": "numeric", "b": "numeric", "s": "categorical"}
    dated = Schema.infer("d", pd.DataFrame({"t": pd.to_datetime(["2020-01-01"]), "u": ["2020-01-01"]}))
    assert dated.kinds == {"t": "numeric", "u": "numeric"} and dated.dates == ("t", "u")
    with pytest.raises(SchemaError, match="'t': a datetime column cannot be a category"):
        Schema.infer("d", pd.DataFrame({"t": pd.to_datetime(["2020-01-01"])}), overrides={"t": {"kind": "categorical"}})


@pytest.mark.parametrize("n", [1, 2, 7, 10, 11, 12330])
def test_split_sizes_round_half_even(n):
    df = pd.DataFrame({"a": np.arange(n)})
    t, h = random_split(df, seed=3)
    assert len(t) == round(n / 2) and len(t) + len(h) == n
    assert sorted(pd.concat([t, h])["a"]) == list(range(n))


def test_split_is_seeded():
    df = pd.DataFrame({"a": np.arange(1000)})
    t1, _ = random_split(df, 0)
    t2, _ = random_split(df, 0)
    t3, _ = random_split(df, 1)
    assert t1.equals(t2) and not t1.equals(t3)
    assert not t1["a"].is_monotonic_increasing, "shuffled order (flip takes the first rows)"


@needs_shared
def test_provided_split_reads_paper_files():
    from holdbench.benchmark.data.tables import dataset_schema

    schema = dataset_schema("online-shoppers")
    t, h = provided_split(schema, PAPER / "online-shoppers_trn.csv.gz", PAPER / "online-shoppers_val.csv.gz")
    assert len(t) == 6165 and len(h) == 6165 and t["Weekend"].dtype == bool


def test_schema_json_round_trip_keeps_column_order(schema, tmp_path):
    from holdbench.contracts.io import write_json

    write_json(tmp_path / "s.json", schema.to_dict())
    back = Schema.from_dict(__import__("json").loads((tmp_path / "s.json").read_text()))
    assert back == schema and back.names == ["n", "x", "b", "c"]

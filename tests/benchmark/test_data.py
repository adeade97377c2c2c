"""Loaders: raw UCI files -> canonical tables equal to the paper's T ∪ H; validation errors."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from holdbench.benchmark.data.demo import make_demo
from holdbench.benchmark.data.tables import DataUnavailable, dataset_schema, load_dataset
from holdbench.contracts.schema import SchemaError

from tests.conftest import PAPER, PAPER_DATASETS

EXPECTED_SHAPES = {
    "adult": (48842, 15),
    "bank-marketing": (45211, 17),
    "credit-default": (30000, 24),
    "online-shoppers": (12330, 18),
}


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns)).reset_index(drop=True)


@pytest.mark.parametrize("name", PAPER_DATASETS)
def test_raw_loader_equals_paper_train_and_holdout(shared_data, name):
    df = load_dataset(name)
    assert df.shape == EXPECTED_SHAPES[name]
    schema = dataset_schema(name)
    assert list(df.columns) == schema.names
    paper = pd.concat([pd.read_csv(PAPER / f"{name}_trn.csv.gz"), pd.read_csv(PAPER / f"{name}_val.csv.gz")])
    assert list(paper.columns) == schema.names
    paper = schema.coerce(paper, "paper T+H")
    pd.testing.assert_frame_equal(_sorted(df), _sorted(paper))


def test_kinds_reproduce_the_papers_read_csv_dtypes(shared_data):
    for name in PAPER_DATASETS:
        t = pd.read_csv(PAPER / f"{name}_trn.csv.gz", nrows=200)
        paper_kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
        assert dataset_schema(name).kinds == paper_kinds, name
    credit = dataset_schema("credit-default").model_kinds
    assert [c for c, k in credit.items() if k == "categorical"] == ["SEX", "EDUCATION", "MARRIAGE"]


def test_adult_details(shared_data):
    df = load_dataset("adult")
    assert set(df["income"]) == {"<=50K", ">50K"}
    assert (df["workclass"] == "?").sum() > 0, "'?' must stay an ordinary category"
    assert not df.isna().any().any()
    assert not df["workclass"].str.startswith(" ").any()


def test_online_shoppers_bools(shared_data):
    df = load_dataset("online-shoppers")
    assert df["Weekend"].dtype == bool and df["Revenue"].dtype == bool
    assert 0 < df["Revenue"].mean() < 0.5


def test_cache_is_used_and_not_in_data_dir(shared_data, tmp_path):
    load_dataset("online-shoppers")
    cached = list((tmp_path / "cache").glob("online-shoppers-*.parquet"))
    assert len(cached) == 1
    t0 = time.perf_counter()
    again = load_dataset("online-shoppers")
    assert time.perf_counter() - t0 < 5
    pd.testing.assert_frame_equal(again, pd.read_parquet(cached[0]))
    assert not list(shared_data.glob("*.parquet"))


def test_missing_raw_files_without_network_names_dir_and_files(monkeypatch, tmp_path):
    monkeypatch.setenv("HOLDBENCH_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))

    def offline(uci_id):
        raise ConnectionError("no network")

    monkeypatch.setattr("holdbench.benchmark.data._uci.fetch", offline)
    with pytest.raises(DataUnavailable) as err:
        load_dataset("adult")
    msg = str(err.value)
    assert str(tmp_path / "empty") in msg and "adult.data" in msg and "adult.test" in msg


def test_download_is_mapped_and_saved_for_offline_use(monkeypatch, tmp_path):
    """The ucimlrepo path: a recorded-shape frame is mapped, saved, and reused offline."""
    monkeypatch.setenv("HOLDBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    names = dataset_schema("online-shoppers").names
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({c: rng.integers(0, 5, 12330) for c in names})
    frame["Month"] = "Feb"
    frame["VisitorType"] = "New_Visitor"
    frame["Weekend"] = rng.random(12330) < 0.3
    frame["Revenue"] = rng.random(12330) < 0.2
    calls = []

    def fake_fetch(uci_id):
        calls.append(uci_id)
        return frame

    monkeypatch.setattr("holdbench.benchmark.data._uci.fetch", fake_fetch)
    df = load_dataset("online-shoppers", use_cache=False)
    assert calls == [468] and df.shape == (12330, 18)
    assert (tmp_path / "data" / "online-shoppers.ucimlrepo.csv.gz").exists()
    monkeypatch.setattr("holdbench.benchmark.data._uci.fetch", lambda i: (_ for _ in ()).throw(AssertionError("network")))
    again = load_dataset("online-shoppers", use_cache=False)
    pd.testing.assert_frame_equal(df, again)


def test_validation_names_row_count(monkeypatch, tmp_path, shared_data):
    monkeypatch.setattr("holdbench.benchmark.data._uci_parsers.PARSERS", {
        **__import__("holdbench.benchmark.data._uci_parsers", fromlist=["PARSERS"]).PARSERS,
        "online": lambda paths, cols: pd.read_csv(paths[0]).head(100),
    })
    with pytest.raises(SchemaError, match=r"online-shoppers.*100 rows.*12330"):
        load_dataset("online-shoppers", use_cache=False)


def test_demo_is_seeded_and_mixed():
    a, b = make_demo(4000, 0), make_demo(4000, 0)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(make_demo(4000, 1))
    assert (a["income"] == 0).mean() > 0.05, "zero-inflated"
    assert a["income"].skew() > 1, "skewed"
    assert a["occupation"].isna().any() and a["debt"].isna().any()
    assert pd.crosstab(a["education"], a["occupation"]).eq(0).any().any(), "correlated categoricals"


def test_demo_dataset_loads_through_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path))
    df = load_dataset("demo")
    assert df.shape == (4000, 11)
    assert dataset_schema("demo").coerce(df, "demo").equals(df)


def _code_book(path) -> dict[str, list[str]]:
    """adult.names' attribute lines (`name: level, level, ... .`), read here independently of the configs."""
    out = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        name, sep, rest = line.partition(": ")
        if sep and not line.startswith("|") and "continuous" not in rest and " " not in name:
            out[name] = [v.strip() for v in rest.rstrip(".").split(",")]
    return out


def test_adult_declares_its_code_books_levels(shared_data):
    """The public levels of adult's config are adult.names' (plus `?`, its unknown, where the table has it),
    and the whole table holds no value outside them."""
    from tests.conftest import DATASETS

    book = _code_book(DATASETS / "adult.names")
    schema = {c.name: c for c in dataset_schema("adult").columns}
    df = load_dataset("adult")
    categorical = [n for n, c in schema.items() if c.kind == "categorical" and n != "income"]
    assert sorted(book) == sorted(categorical)
    for name in categorical:
        unknown = ["?"] if (df[name] == "?").any() else []
        assert list(schema[name].levels) == book[name] + unknown, name
    assert sorted(schema["income"].levels) == ["<=50K", ">50K"]
    for name, col in schema.items():
        if col.levels is not None:
            assert set(df[name]) <= set(col.levels), name


def test_online_shoppers_declares_months_and_visitor_types(shared_data):
    schema = {c.name: c for c in dataset_schema("online-shoppers").columns}
    df = load_dataset("online-shoppers")
    assert len(schema["Month"].levels) == 12
    assert set(df["Month"]) <= set(schema["Month"].levels)
    assert set(df["VisitorType"]) == set(schema["VisitorType"].levels)


@pytest.mark.parametrize("spec, key", [
    ("{kind: categorical, dtype: str, levels: []}", "columns.c.levels"),
    ("{kind: numeric, dtype: float, bounds: [0]}", "columns.c.bounds"),
    ("{kind: numeric, dtype: float, bounds: [0, high]}", "columns.c.bounds.1"),
])
def test_a_malformed_public_domain_is_a_config_error_naming_the_key(tmp_path, monkeypatch, spec, key):
    from holdbench.benchmark.config import ConfigError

    from tests.workflow.helpers import make_conf

    conf = make_conf(tmp_path)
    (conf / "dataset" / "mine.yaml").write_text(f"name: mine\nsource: demo\nn_rows: 10\ncolumns:\n  c: {spec}\n")
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    with pytest.raises(ConfigError, match=rf"mine.yaml: `{key}`"):
        dataset_schema("mine")

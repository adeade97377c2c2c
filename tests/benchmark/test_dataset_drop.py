"""A file dataset's `drop` leaves columns of the file out of the table; `holdbench load` and a run's preparation
warn about columns that look like record identifiers (diagnostics.identifier_columns), naming `drop`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cli import main
from holdbench.benchmark.config import ConfigError
from holdbench.benchmark.data.tables import dataset_schema, load_dataset
from holdbench.contracts.schema import SchemaError
from tests.workflow.helpers import make_conf


@pytest.fixture()
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    conf = make_conf(tmp_path)
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    rng = np.random.default_rng(0)
    n = 400
    frame = pd.DataFrame({"customer_id": [f"C{i:05d}" for i in rng.permutation(n)], "row": np.arange(1, n + 1),
                          "age": rng.integers(18, 80, n), "city": rng.choice(["a", "b", "c"], n)})
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)

    def make(name: str, extra: str = "") -> str:
        (conf / "dataset" / f"{name}.yaml").write_text(f"source: file\npath: {path}\n{extra}")
        return name

    return make


def test_drop_leaves_the_columns_out(dataset):
    name = dataset("dropped", "drop: [customer_id, row]\n")
    assert list(load_dataset(name).columns) == ["age", "city"]
    assert dataset_schema(name).names == ["age", "city"]


def test_drop_naming_no_column_is_refused(dataset):
    name = dataset("typo", "drop: [custmer_id]\n")
    with pytest.raises(SchemaError, match=r"drop names \['custmer_id'\], which .*t\.csv has not"):
        load_dataset(name)


def test_drop_must_be_a_list_of_names(dataset):
    name = dataset("scalar", "drop: customer_id\n")
    with pytest.raises(ConfigError, match=r"scalar\.yaml: `drop`: 'customer_id' is not of type 'array'"):
        load_dataset(name)


def test_load_warns_about_identifier_like_columns_until_they_are_dropped(dataset, capsys):
    assert main(["load", dataset("raw")]) == 0
    out = capsys.readouterr().out
    assert ("raw: WARNING Column(s) of the table that look like record identifiers: customer_id (400 distinct of "
            "400 values); row (400 distinct of 400 values)") in out
    assert "leave it out with `drop: [COLUMN]` in the dataset's config" in out
    assert main(["load", dataset("clean", "drop: [customer_id, row]\n")]) == 0
    assert "WARNING" not in capsys.readouterr().out


def test_a_run_warns_before_its_jobs(dataset, capsys):
    from holdbench.benchmark.workflow.prepare import _warn_identifiers

    _warn_identifiers("raw", load_dataset(dataset("raw")))
    assert capsys.readouterr().out.startswith("[holdbench] WARNING dataset raw: Column(s) of the table that look "
                                              "like record identifiers: customer_id")
    _warn_identifiers("clean", load_dataset(dataset("clean", "drop: [customer_id, row]\n")))
    assert capsys.readouterr().out == ""

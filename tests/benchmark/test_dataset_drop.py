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


def test_table_and_schema_together_read_a_cold_file_once(dataset, monkeypatch):
    """load_dataset_and_schema: the table load_dataset gives and the schema dataset_schema gives; a file dataset
    whose cache is cold is read once (the schema from the file it loads), a warm one once for its schema."""
    import holdbench.benchmark.data.tables as tables

    reads = []
    real = tables._read_user_file
    monkeypatch.setattr(tables, "_read_user_file", lambda cfg: reads.append(cfg["name"]) or real(cfg))
    name = dataset("both", "drop: [customer_id]\n")
    table, schema = tables.load_dataset_and_schema(name)
    assert len(reads) == 1
    table2, schema2 = tables.load_dataset_and_schema(name)  # the cache is warm now
    assert len(reads) == 2
    pd.testing.assert_frame_equal(table, load_dataset(name))
    pd.testing.assert_frame_equal(table2, table)
    assert schema.to_dict() == schema2.to_dict() == dataset_schema(name).to_dict()


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

    _warn_identifiers("raw", load_dataset(dataset("raw")), dataset_schema("raw"))
    assert capsys.readouterr().out.startswith("[holdbench] WARNING dataset raw: Column(s) of the table that look "
                                              "like record identifiers: customer_id")
    _warn_identifiers("clean", load_dataset(dataset("clean", "drop: [customer_id, row]\n")), dataset_schema("clean"))
    assert capsys.readouterr().out == ""


# ---- `drop` applies to every table of the dataset: its file, a provided split's T and H, any S ----

def test_the_schema_records_drop_only_when_there_is_some(dataset):
    schema = dataset_schema(dataset("dropped", "drop: [customer_id, row]\n"))
    assert schema.drop == ("customer_id", "row")
    record = schema.to_dict()
    assert record["drop"] == ["customer_id", "row"]
    from holdbench.contracts.schema import Schema

    assert Schema.from_dict(record) == schema
    assert "drop" not in dataset_schema(dataset("raw")).to_dict()
    with pytest.raises(SchemaError, match=r"column\(s\) \['age'\] are both dropped and columns of the table"):
        Schema.from_dict({**record, "drop": ["age"]})


def _files(tmp_path, with_id: dict[str, bool]) -> dict[str, str]:
    """T, H and S as CSV files, each with or without the record number `customer_id` (in front, as a file
    would hold it)."""
    rng = np.random.default_rng(1)
    paths = {}
    for role, n in (("T", 300), ("H", 300), ("S", 300)):
        frame = pd.DataFrame({"age": rng.integers(18, 80, n), "city": rng.choice(["a", "b", "c"], n)})
        if with_id[role]:
            frame.insert(0, "customer_id", [f"{role}{i:05d}" for i in range(n)])
        paths[role] = str(tmp_path / f"{role}{'_id' if with_id[role] else ''}.csv")
        frame.to_csv(paths[role], index=False)
    return paths


def test_provided_split_files_and_a_synthetic_table_may_hold_the_dropped_column(dataset, tmp_path):
    from holdbench.benchmark.cell.checks import check_output
    from holdbench.benchmark.data.split import provided_split

    schema = dataset_schema(dataset("dropped", "drop: [customer_id, row]\n"))
    held = _files(tmp_path, {"T": True, "H": False, "S": True})
    bare = _files(tmp_path, {"T": False, "H": False, "S": False})
    for got, want in zip(provided_split(schema, held["T"], held["H"]), provided_split(schema, bare["T"], bare["H"])):
        pd.testing.assert_frame_equal(got, want)
        assert list(got.columns) == ["age", "city"]
    s_held, s_bare = (check_output(pd.read_csv(p["S"]), schema, 300, "external") for p in (held, bare))
    pd.testing.assert_frame_equal(s_held, s_bare)
    # without the dataset's drop the same files are refused, naming the column
    import dataclasses

    with pytest.raises(SchemaError, match=r"unexpected \['customer_id'\]"):
        provided_split(dataclasses.replace(schema, drop=()), held["T"], held["H"])


def test_evaluate_check_and_report_with_dataset_leave_its_dropped_columns_out(dataset, tmp_path, capsys):
    """On files holding the record number, `--dataset` (whose config drops it) gives the numbers of the same
    files without it; without `--dataset` the column is refused as a difference between T and S."""
    import json

    from holdbench.benchmark.outputs.filereport.inputs import read_flat

    name = dataset("dropped", "drop: [customer_id, row]\n")
    held = _files(tmp_path, {"T": True, "H": True, "S": False})
    bare = _files(tmp_path, {"T": False, "H": False, "S": False})
    metrics = []
    for files in (held, bare):
        out = tmp_path / f"m{len(metrics)}.json"
        assert main(["evaluate", "--train", files["T"], "--holdout", files["H"], "--synthetic", files["S"],
                     "--dataset", name, "--metrics", "demo", "--out", str(out)]) == 0
        doc = json.loads(out.read_text())
        metrics.append({k: v for k, v in doc.items() if isinstance(v, (int, float)) and not k.startswith("seconds_")})
    assert metrics[0] == metrics[1] and len(metrics[0]) > 3
    verdicts = []
    for files in (held, bare):
        out = tmp_path / f"v{len(verdicts)}.csv"
        main(["check", "--train", files["T"], "--holdout", files["H"], "--synthetic", files["S"],
              "--dataset", name, "--metrics", "demo", "--out", str(out)])
        verdicts.append(pd.read_csv(out).drop(columns=["cell_id"]))
    pd.testing.assert_frame_equal(*verdicts)
    got = read_flat(held["T"], held["H"], {"s": held["S"]}, dataset=name, target=None)
    want = read_flat(bare["T"], bare["H"], {"s": bare["S"]}, dataset=name, target=None)
    pd.testing.assert_frame_equal(got.train, want.train)
    pd.testing.assert_frame_equal(got.synthetic["s"], want.synthetic["s"])
    capsys.readouterr()
    assert main(["evaluate", "--train", held["T"], "--holdout", held["H"], "--synthetic", held["S"],
                 "--metrics", "demo"]) == 2
    assert "customer_id" in capsys.readouterr().err


def test_a_column_of_distinct_dates_is_no_identifier(tmp_path, monkeypatch, capsys):
    """One date per record (whole days since 1970-01-01, all distinct) is a number a generator models: `load`,
    a run's preparation and the file report do not call it an identifier; the record number beside it is."""
    from holdbench.benchmark.outputs.filereport.inputs import read_flat
    from holdbench.benchmark.workflow.prepare import _warn_identifiers

    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    conf = make_conf(tmp_path)
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
    rng = np.random.default_rng(3)
    n = 200
    frame = pd.DataFrame({"row": np.arange(n), "signup": pd.date_range("2020-01-01", periods=n).astype(str),
                          "age": rng.integers(18, 80, n)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    (conf / "dataset" / "dated.yaml").write_text(f"source: file\npath: {tmp_path / 't.csv'}\n")
    assert dataset_schema("dated").dates == ("signup",)
    assert main(["load", "dated"]) == 0
    out = capsys.readouterr().out
    assert "record identifiers: row (200 distinct of 200 values)." in out and "signup (" not in out
    _warn_identifiers("dated", load_dataset("dated"), dataset_schema("dated"))
    assert "signup (" not in capsys.readouterr().out
    half = {"T": frame.iloc[:100], "H": frame.iloc[100:]}
    for name, part in half.items():
        part.to_csv(tmp_path / f"{name}.csv", index=False)
    got = read_flat(str(tmp_path / "T.csv"), str(tmp_path / "H.csv"), {"S": str(tmp_path / "H.csv")},
                    dataset=None, target=None)
    assert got.datetimes == ["signup"] and [c["column"] for c in got.identifiers] == ["row"]


def test_check_on_files_takes_drop_as_evaluate_and_report_do(tmp_path, capsys):
    """`holdbench check --drop COLUMN` on files holding a record number gives the verdicts of the same files
    without it; a name T has not, and --drop outside file mode, are usage errors naming what is wrong."""
    held = _files(tmp_path, {"T": True, "H": True, "S": True})
    bare = _files(tmp_path, {"T": False, "H": False, "S": False})
    verdicts = []
    for files, extra in ((held, ["--drop", "customer_id"]), (bare, [])):
        out = tmp_path / f"c{len(verdicts)}.csv"
        main(["check", "--train", files["T"], "--holdout", files["H"], "--synthetic", files["S"], "--metrics", "demo",
              "--out", str(out), *extra])
        verdicts.append(pd.read_csv(out).drop(columns=["cell_id", "synthesizer"]))  # S is named by its file
    pd.testing.assert_frame_equal(*verdicts)
    assert len(verdicts[0]) >= 4
    capsys.readouterr()
    assert main(["check", "--train", held["T"], "--holdout", held["H"], "--synthetic", held["S"], "--metrics", "demo",
                 "--drop", "custmer_id"]) == 2
    assert "--drop ['custmer_id']: not a column of T" in capsys.readouterr().err
    assert main(["check", "demo", "--drop", "customer_id"]) == 2
    assert "--drop applies to flat files" in capsys.readouterr().err

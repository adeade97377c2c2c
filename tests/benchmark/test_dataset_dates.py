"""A file dataset's date columns (datetime64 in parquet, ISO 8601 text in CSV) are numbers of days since
1970-01-01 in the canonical table, named in the schema (Schema.dates), and read the same way from provided T/H
files and from a synthesizer's output (an external S writes dates as text). The expected days are written
out: 2020-01-01 is day 18,262 (50 years, 12 of them leap years: 50 * 365 + 12)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from holdbench.benchmark.cell.checks import SynthesizerOutputError, check_output
from holdbench.benchmark.data.split import provided_split
from holdbench.benchmark.data.tables import dataset_schema, load_dataset
from holdbench.contracts.schema import Schema, SchemaError
from tests.workflow.helpers import make_conf

DAY_2020_01_01 = 50 * 365 + 12  # 18262

TEXT = ["2020-01-01", "2020-01-02 12:00", "2020-01-03T06:00:00Z", "2019-12-31", ""] * 4


@pytest.fixture()
def dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    conf = make_conf(tmp_path)
    monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))

    def make(name: str, frame: pd.DataFrame, suffix: str, extra: str = "") -> str:
        path = tmp_path / f"{name}{suffix}"
        frame.to_parquet(path, index=False) if suffix == ".parquet" else frame.to_csv(path, index=False)
        (conf / "dataset" / f"{name}.yaml").write_text(f"source: file\npath: {path}\n{extra}")
        return name

    return make


def _frame(dates) -> pd.DataFrame:
    n = len(dates)
    return pd.DataFrame({"when": dates, "x": [float(i % 7) for i in range(n)], "c": list("ab" * n)[:n]})


EXPECTED = [DAY_2020_01_01, DAY_2020_01_01 + 1.5, DAY_2020_01_01 + 2.25, DAY_2020_01_01 - 1, None] * 4


def test_iso_text_and_datetime64_columns_load_as_the_same_days(dataset):
    csv = dataset("dcsv", _frame(TEXT), ".csv")
    stamps = pd.to_datetime(pd.Series(TEXT).replace("", None), format="ISO8601", utc=True).dt.tz_localize(None)
    pq = dataset("dpq", _frame(stamps), ".parquet")
    for name in (csv, pq):
        table = load_dataset(name)
        assert table["when"].dtype == float
        assert table["when"].tolist()[:4] == EXPECTED[:4] and table["when"].isna().sum() == 4
        schema = dataset_schema(name)
        assert schema.dates == ("when",) and schema.kinds["when"] == "numeric" and schema.dtypes["when"] == "float"
        assert Schema.from_dict(schema.to_dict()).dates == ("when",)
    assert load_dataset(csv).equals(load_dataset(pq))


def test_a_schema_without_dates_is_recorded_as_before(dataset):
    schema = dataset_schema(dataset("plain", _frame(["x", "y", "z", "w"]), ".csv"))
    assert schema.dates == () and "dates" not in schema.to_dict()


def test_an_override_keeps_dates_as_text_or_is_refused(dataset):
    kept = dataset("kept", _frame(TEXT), ".csv", "overrides:\n  when: {kind: categorical}\n")
    assert dataset_schema(kept).dates == () and load_dataset(kept)["when"].iloc[0] == "2020-01-01"
    wrong = dataset("wrong", _frame(TEXT), ".csv", "overrides:\n  when: {kind: numeric, dtype: int}\n")
    with pytest.raises(SchemaError, match="column 'when' holds dates.*can only make it categorical"):
        dataset_schema(wrong)


def test_a_date_role_must_name_a_float_column():
    with pytest.raises(SchemaError, match="date column 'c' must be numeric with dtype float"):
        Schema.from_mapping("t", {"c": {"kind": "categorical"}}, dates=["c"])
    with pytest.raises(SchemaError, match="date column 'nope' is not a column"):
        Schema.from_mapping("t", {"c": {"kind": "numeric"}}, dates=["nope"])


def test_provided_files_and_synthetic_output_read_dates_as_days(dataset, tmp_path):
    schema = dataset_schema(dataset("dcsv", _frame(TEXT), ".csv"))
    _frame(TEXT).to_csv(tmp_path / "T.csv", index=False)
    _frame(TEXT[::-1]).to_csv(tmp_path / "H.csv", index=False)
    train, holdout = provided_split(schema, tmp_path / "T.csv", tmp_path / "H.csv")
    assert train["when"].tolist()[:4] == EXPECTED[:4]
    assert holdout["when"].iloc[-1] == DAY_2020_01_01
    as_text = check_output(_frame(TEXT), schema, len(TEXT), "external")
    as_days = check_output(_frame(EXPECTED), schema, len(TEXT), "mine")
    pd.testing.assert_frame_equal(as_text, as_days)
    with pytest.raises(SynthesizerOutputError, match=r"synthesizer 'external': datetime column 'when': 1 value\(s\) "
                                                     r"do not parse .*'soon' \(row 3 of the table\)"):
        check_output(_frame(TEXT[:2] + ["soon"] + TEXT[3:]), schema, len(TEXT), "external")


def test_check_on_three_files_reads_dates_as_days(tmp_path, capsys):
    """`holdbench check` on files with ISO dates gives the verdicts of the same files holding the days."""
    from holdbench.benchmark.cli import main

    def files(dates: list, tag: str) -> list[str]:
        (tmp_path / tag).mkdir()
        paths = []
        for role, order in (("T", slice(None)), ("H", slice(None, None, -1)), ("S", slice(2, None))):
            frame = _frame(dates * 30)[order].reset_index(drop=True)
            frame["x"] = frame["x"] + (frame.index % 3 if role != "T" else 0)
            frame.to_csv(tmp_path / tag / f"{role}.csv", index=False)
            paths += [f"--{ {'T': 'train', 'H': 'holdout', 'S': 'synthetic'}[role]}", str(tmp_path / tag / f"{role}.csv")]
        return paths

    verdicts = []
    for dates, tag in ((TEXT, "text"), (EXPECTED, "days")):
        out = tmp_path / f"{tag}.csv"
        main(["check", *files(dates, tag), "--metrics", "demo", "--out", str(out)])
        capsys.readouterr()
        verdicts.append(pd.read_csv(out).drop(columns=["cell_id"]))
    pd.testing.assert_frame_equal(*verdicts)
    assert len(verdicts[0]) > 3


def test_a_table_cached_by_the_former_reading_is_read_again(dataset, tmp_path):
    """Before dates were days, a file dataset's cache held them as text under the same config and file: such a
    cache file (named as the former key named it) is not taken for the table."""
    import hashlib
    import json
    import os

    from holdbench.benchmark.data.tables import cache_dir, dataset_config

    name = dataset("dcsv", _frame(TEXT), ".csv")
    cfg = dataset_config(name)
    st = Path(cfg["path"]).stat()
    parts = [json.dumps(cfg, sort_keys=True, default=str), f"{Path(cfg['path']).resolve()}:{st.st_size}:{st.st_mtime_ns}"]
    former = cache_dir() / f"{name}-{hashlib.sha256('|'.join(parts).encode()).hexdigest()[:12]}.parquet"
    former.parent.mkdir(parents=True, exist_ok=True)
    _frame(TEXT).to_parquet(former, index=False)  # the text, as the former reading cached it
    assert os.path.exists(former)
    assert load_dataset(name)["when"].tolist()[:4] == EXPECTED[:4]

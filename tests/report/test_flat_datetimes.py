"""Flat tables: a text column of T holding only ISO 8601 dates or times is read as days since 1970-01-01 in
T, H and every S (as the sequential path reads datetime event columns), not as categories of text."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cli import main
from holdbench.contracts.dates import dates_to_days, datetime_columns
from tests.report.conftest import FAST


def test_which_columns_are_dates_and_their_days():
    frame = pd.DataFrame({"day": ["1970-01-02", None, "1969-12-31"],
                          "stamp": ["1970-01-01 12:00", "1970-01-01T06:00:00", "1970-01-01T00:00+01:00"],
                          "text": ["1970-01-02", "soon", None], "number": [1, 2, 3], "empty": [None, None, None]})
    assert datetime_columns(frame) == ["day", "stamp"]
    assert datetime_columns(frame.assign(when=pd.to_datetime(frame["day"]))) == ["day", "stamp", "when"]
    days = dates_to_days(frame, ["day", "stamp", "not_there"], "f.csv")
    assert days["day"].tolist()[0] == 1.0 and np.isnan(days["day"][1]) and days["day"][2] == -1.0
    assert days["stamp"].tolist() == [0.5, 0.25, -1 / 24]  # a zone is converted to UTC
    assert days["text"].tolist() == frame["text"].tolist()  # columns not named are left as they are
    with pytest.raises(ValueError, match=r"f\.csv: datetime column 'text': 1 value\(s\) do not parse .*'soon'"):
        dates_to_days(frame, ["text"], "f.csv")


def _with_dates(files, d, bad_s: bool = False):
    d.mkdir()
    rng = np.random.default_rng(5)
    paths = {}
    for role in ("train", "holdout", "fresh"):
        frame = pd.read_csv(files[role])
        seconds = rng.integers(0, 3 * 365 * 86400, len(frame))
        frame["signup"] = (pd.Timestamp("2020-01-01") + pd.to_timedelta(seconds, unit="s")).strftime("%Y-%m-%d %H:%M:%S")
        frame["birthday"] = (pd.Timestamp("1950-01-01") + pd.to_timedelta(seconds // 20, unit="s")).strftime("%Y-%m-%d")
        if bad_s and role == "fresh":
            frame.loc[7, "signup"] = "last Tuesday"
        paths[role] = d / f"{role}.csv"
        frame.to_csv(paths[role], index=False)
    return paths


def test_the_report_reads_a_date_column_as_days_and_says_so(files, tmp_path, capsys):
    paths = _with_dates(files, tmp_path / "in")
    out = tmp_path / "out"
    main(["report", "--train", str(paths["train"]), "--holdout", str(paths["holdout"]), "--synthetic",
          str(paths["fresh"]), "--metrics", "demo", "--out", str(out)] + [x for o in FAST for x in ("--set", o)])
    words = "column(s) signup, birthday: dates or times in T, read as days since 1970-01-01 in T, H and S"
    assert words in capsys.readouterr().err
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert rep["kinds"]["signup"] == rep["kinds"]["birthday"] == "numeric"
    assert rep["datetime_columns"] == ["signup", "birthday"]
    # the buckets are named by the dates (and, where T has times of day, times) they span
    buckets = rep["synthetic"]["fresh"]["views"]["column_buckets"]
    assert re.fullmatch(r"2020-01-\d\d \d\d:\d\d\.\.20\d\d-\d\d-\d\d \d\d:\d\d", buckets["signup"]["labels"][0])
    assert re.fullmatch(r"1950-01-\d\d\.\.19\d\d-\d\d-\d\d", buckets["birthday"]["labels"][0])
    assert rep["identifier_columns"] == []  # near-unique times, but a quantity: not an identifier
    assert rep["synthetic"]["fresh"]["views"]["diagnostics"]["changed_types"] == []
    shapes = {c["columns"]: c for c in rep["synthetic"]["fresh"]["views"]["columns"]}
    # T and H drawn alike, binned on T's quantiles: well below 1, the TVD of 400 + 400 distinct texts
    assert shapes["signup"]["tvd_holdout"] < 0.5
    assert f'<p id="datetime-columns">{words}' in (out / "report.html").read_text(encoding="utf-8")


def test_evaluate_says_so_and_an_s_value_that_is_no_date_is_refused_naming_it(files, tmp_path, capsys):
    paths = _with_dates(files, tmp_path / "in", bad_s=True)
    code = main(["evaluate", "--train", str(paths["train"]), "--holdout", str(paths["holdout"]), "--synthetic",
                 str(paths["fresh"]), "--metrics", "demo", "--skip", "attacks"])
    err = capsys.readouterr().err
    assert code == 2
    assert (f"synthetic {paths['fresh']}: datetime column 'signup': 1 value(s) do not parse as datetimes" in err
            and "'last Tuesday' (row 8 of the table)" in err)
    good = _with_dates(files, tmp_path / "good")
    main(["evaluate", "--train", str(good["train"]), "--holdout", str(good["holdout"]), "--synthetic",
          str(good["fresh"]), "--metrics", "demo", "--skip", "attacks"])
    assert "column(s) signup, birthday: dates or times in T, read as days since 1970-01-01" in capsys.readouterr().out


def test_datetime64_columns_of_parquet_files_are_read_as_days_as_their_iso_text_is(files, tmp_path):
    paths = _with_dates(files, tmp_path / "in")
    parquet = {}
    for role, path in paths.items():
        frame = pd.read_csv(path)
        frame["signup"] = pd.to_datetime(frame["signup"])  # a datetime64 column in the parquet file
        parquet[role] = path.with_suffix(".parquet")
        frame.to_parquet(parquet[role])
    reps = {}
    for form, p in (("csv", paths), ("parquet", parquet)):
        out = tmp_path / form
        main(["report", "--train", str(p["train"]), "--holdout", str(p["holdout"]), "--synthetic",
              f"fresh={p['fresh']}", "--metrics", "demo", "--out", str(out)] + [x for o in FAST for x in ("--set", o)])
        reps[form] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert reps["parquet"]["datetime_columns"] == ["signup", "birthday"]
    assert reps["parquet"]["kinds"]["signup"] == "numeric"
    shapes = {f: {c["columns"]: c for c in r["synthetic"]["fresh"]["views"]["columns"]} for f, r in reps.items()}
    assert shapes["parquet"]["signup"] == shapes["csv"]["signup"]

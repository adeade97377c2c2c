"""Bad input to `holdbench report`: a clear error before any work (exit 2, nothing written), or a report
that says what it could not compute and why."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from holdbench.benchmark.cli import main
from tests.report.conftest import FAST


def _run(files, out, *synthetic, extra=()):
    argv = ["report", "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
            *map(str, synthetic), "--out", str(out), "--metrics", "demo", *extra]
    return main(argv + [x for o in FAST for x in ("--set", o)])


@pytest.mark.parametrize(("content", "says"), [
    (None, "columns differ from T"),
    ("", "cannot be read as a table"),
    ("age,hours,education,job,income\n", "a header but no rows"),
    (b"age,hours,education,job,income\n30,40,\xff\xfe caf\xe9,job1,<=50K\n",
     "cannot be read as a table: it is not UTF-8 text (byte 0xff cannot be decoded); save it as UTF-8"),
    ("age,hours,education,job,job\n30,40,Bachelors,job1,job2\n",
     "a column name appears more than once in the header ('job' in columns 4, 5)"),
])
def test_refused_before_any_work(files, tmp_path, capsys, content, says):
    bad = tmp_path / "bad.csv"
    if content is None:  # columns differ: one missing, one extra, both named; one only by case and a space
        pd.read_csv(files["fresh"]).rename(columns={"job": "occupation", "age": "Age "}).to_csv(bad, index=False)
    elif isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    out = tmp_path / "out"
    assert _run(files, out, bad) == 2
    err = capsys.readouterr().err
    assert says in err and str(bad) in err
    if content is None:
        assert "missing ['age', 'job']" in err and "unexpected ['Age ', 'occupation']" in err
        assert "(differing only in letter case or spaces: 'Age ' for 'age'; names must match T's exactly)" in err
    assert not out.exists(), "the refused report created its --out directory"


def test_a_file_named_parquet_that_is_not_one_is_refused_naming_it(files, tmp_path, capsys):
    bad = tmp_path / "bad.parquet"
    bad.write_text("age,hours\n30,40\n")
    out = tmp_path / "out"
    assert _run(files, out, bad) == 2
    err = capsys.readouterr().err
    assert "cannot be read as a table" in err and str(bad) in err
    assert not out.exists(), "the refused report created its --out directory"


@pytest.mark.parametrize(("extra", "says"), [
    (("--skip", "fidelty"), ["--skip: no metric family ['fidelty'] in metrics config 'demo' (did you mean 'fidelity'?)"]),
    (("--target", "incme"), ["--target 'incme' is not a column of T", "(did you mean 'income'?)"]),
    (("--set", "fidelity.max_combinations=10"),
     ["--set fidelity.max_combinations=10: 'fidelity' is a metric family of metrics config 'demo'",
      "write --set families.fidelity.max_combinations=10"]),
])
def test_a_misspelt_option_is_answered_with_what_it_meant(files, tmp_path, capsys, extra, says):
    out = tmp_path / "out"
    assert _run(files, out, files["fresh"], extra=extra) == 2
    err = capsys.readouterr().err
    for text in says:
        assert text in err
    assert not out.exists()


def test_missing_target_and_too_many_rows(files, tmp_path, capsys):
    assert _run(files, tmp_path / "o", files["fresh"], extra=("--target", "salary")) == 2
    assert "--target 'salary' is not a column of T" in capsys.readouterr().err
    # an S above --max-rows (default 2,000,000: a 10-million-row S) is refused from a row count, unread
    big = tmp_path / "big.csv.gz"
    with gzip.open(big, "wt") as fh:
        fh.write(pd.read_csv(files["fresh"]).to_csv(index=False))
    assert _run(files, tmp_path / "o", big, extra=("--max-rows", "399")) == 2
    err = capsys.readouterr().err
    assert "about 400 rows, more than --max-rows 399" in err and str(big) in err


def test_types_formulas_and_markup_are_reported_and_escaped(files, tmp_path):
    s = pd.read_csv(files["fresh"])
    s["age"] = s["age"].astype(object)
    s.loc[:9, "age"] = "unknown"  # text in a numeric column: read as missing, counted
    s.loc[0, "job"] = "=cmd|' /C calc'!A0"
    s.loc[1, "job"] = "<script>alert(1)</script>"
    bad = tmp_path / "typed.csv"
    s.to_csv(bad, index=False)
    out = tmp_path / "out"
    assert _run(files, out, bad) in (0, 1)
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    changed = rep["synthetic"]["typed"]["views"]["diagnostics"]["changed_types"]
    assert [c["column"] for c in changed] == ["age"] and changed[0]["read_as_missing"] == 10
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "=cmd|" not in html.replace("&#x27;=cmd|", "")  # a formula only with its neutralising quote
    assert "&#x27;=cmd|" in html


def test_a_single_synthetic_row_gives_a_report_saying_what_is_missing(files, tmp_path):
    one = tmp_path / "one.csv"
    pd.read_csv(files["fresh"]).head(1).to_csv(one, index=False)
    out = tmp_path / "out"
    cheap = ("--skip", "attacks", "--skip", "legal", "--skip", "utility")  # the gates read privacy and panel
    # one record's marginals are far from T's: the accuracy gate fails; the distribution tests cannot be judged
    # on one record: n/a (FAIL with --strict); the interval targets are, and one record's intervals are wide
    # (the fresh record is no copy of T's: the exact-copy excess's interval reaches below 0)
    assert _run(files, out, one, extra=cheap) == 1
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {r["gate"]: r for r in rep["synthetic"]["one"]["verdict"]["rows"]}
    assert rows["accuracy"]["verdict"] == "FAIL"
    assert {r["verdict"] for g, r in rows.items()
            if g not in ("accuracy", "dcr_share_interval", "exact_copies")} == {"n/a"}
    assert rows["exact_copies"]["verdict"] == "pass"
    rows = list(rows.values())
    assert any("fewer than 2 records" in r["why"] for r in rows)
    assert "Not computed, and why" in (out / "report.html").read_text(encoding="utf-8")
    assert _run(files, tmp_path / "strict", one, extra=("--strict", *cheap)) == 1


def test_skipping_the_family_a_gate_reads_leaves_that_gate_not_judged_and_says_so(files, tmp_path, capsys):
    """`--skip privacy` with the default gates: the report is written, the privacy gates are n/a naming the skipped
    family (a failure with --strict), and the verdict lines say which gates were not judged."""
    out = tmp_path / "out"
    skip = ("--skip", "privacy", "--skip", "attacks", "--skip", "legal", "--skip", "utility")
    assert _run(files, out, files["fresh"], extra=skip) == 0
    printed = capsys.readouterr().out
    assert ("S fresh: pass (not judged, n/a: dcr_distribution, nndr_distribution, dcr_share_interval, "
            "exact_copies)") in printed
    rep = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {r["gate"]: r for r in rep["synthetic"]["fresh"]["verdict"]["rows"]}
    assert rows["accuracy"]["verdict"] == "pass"
    assert {g for g, r in rows.items() if r["verdict"] == "n/a"} == {
        "dcr_distribution", "nndr_distribution", "dcr_share_interval", "exact_copies"}
    assert "written by the metric family 'privacy', which this evaluation skipped" in rows["exact_copies"]["why"]
    assert "not judged (n/a): dcr_distribution" in (out / "summary.md").read_text(encoding="utf-8")
    assert _run(files, tmp_path / "strict", files["fresh"], extra=("--strict", *skip)) == 1


def test_a_row_index_written_as_a_column_is_named_as_such(files, tmp_path, capsys):
    bad = tmp_path / "with_index.csv"
    pd.read_csv(files["fresh"]).to_csv(bad)  # pandas' default: the row index becomes a column 'Unnamed: 0'
    out = tmp_path / "out"
    assert _run(files, out, bad) == 2
    err = capsys.readouterr().err
    assert "unexpected ['Unnamed: 0']" in err and str(bad) in err
    assert "'Unnamed: 0' looks like a row index that pandas wrote as a column: write the file with index=False" in err
    assert not (out / "report.html").exists()


def test_a_numeric_column_of_which_no_value_reads_as_a_number_is_named_with_an_example(files, tmp_path, capsys):
    s = pd.read_csv(files["fresh"])
    s["age"] = s["age"].astype(str) + " years"
    bad = tmp_path / "age_text.csv"
    s.to_csv(bad, index=False)
    out = tmp_path / "out"
    assert _run(files, out, bad) == 2
    err = capsys.readouterr().err
    assert "column(s) ['age'] are entirely missing in all 400 rows after reading unreadable values as missing" in err
    assert f"age: none of its 400 values reads as numeric (e.g. '{s['age'][0]}')" in err
    assert not (out / "report.html").exists()


def test_numbers_written_with_a_decimal_comma_are_named_as_such(files, tmp_path, capsys):
    s = pd.read_csv(files["fresh"])
    s["hours"] = [f"{v:.1f}".replace(".", ",") for v in s["hours"].astype(float)]
    bad = tmp_path / "decimal_comma.csv"
    s.to_csv(bad, index=False, sep=";")
    out = tmp_path / "out"
    assert _run(files, out, bad) == 2
    err = capsys.readouterr().err
    assert f"hours: none of its 400 values reads as numeric (e.g. '{s['hours'][0]}'; a decimal comma? numbers are " \
           "read with '.' as the decimal mark: write the file that way)" in err
    # text that is no number gets no such hint
    other = _hint_of(files, tmp_path, capsys)
    assert "hours: none of its 400 values reads as numeric (e.g. 'n/a yet')" in other and "decimal" not in other


def _hint_of(files, tmp_path, capsys) -> str:
    s = pd.read_csv(files["fresh"])
    s["hours"] = "n/a yet"
    bad = tmp_path / "text.csv"
    s.to_csv(bad, index=False)
    assert _run(files, tmp_path / "out2", bad) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("command", ["report", "evaluate", "check"])
def test_a_holdout_that_is_the_training_file_is_refused(files, tmp_path, capsys, command):
    """T given twice (or a copy of T as H): every ratio against H would be undefined and every privacy test
    against H would pass, so the commands on files refuse it before any work."""
    copy = tmp_path / "copy_of_train.csv"
    copy.write_bytes(files["train"].read_bytes())
    out = tmp_path / "out"
    for holdout in (files["train"], copy):
        argv = [command, "--train", str(files["train"]), "--holdout", str(holdout), "--synthetic", str(files["fresh"])]
        argv += {"report": ["--out", str(out)], "evaluate": ["--out", str(out / "m.json")], "check": []}[command]
        assert main(argv + ["--metrics", "demo"]) == 2
        err = capsys.readouterr().err
        assert f"holdout (H) {holdout}: the same table as train (T) {files['train']}; H must hold real records" in err
    assert not out.exists(), "a refused command wrote something (its --out directory included)"


@pytest.mark.skipif(not __import__("os").path.isdir("/proc/self"), reason="needs Linux's /proc (a place nobody may write)")
@pytest.mark.parametrize(("command", "out", "says"), [
    ("evaluate", "/proc/holdbench-no/m.json", "--out /proc/holdbench-no/m.json: directory /proc is not writable"),
    ("report", "/proc/holdbench-no", "--out /proc/holdbench-no: cannot create the directory"),
])
def test_an_out_that_cannot_be_written_is_refused_before_any_work(files, capsys, command, out, says):
    """Even for root, whom os.access always answers yes: the place is tried before the evaluation, whose work
    the final write would otherwise lose."""
    argv = [command, "--train", str(files["train"]), "--holdout", str(files["holdout"]), "--synthetic",
            str(files["fresh"]), "--out", out, "--metrics", "demo"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert says in captured.err
    assert "fidelity ..." not in captured.out + captured.err, "the evaluation ran before the refusal"

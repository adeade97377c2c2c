"""scripts/reference/bq_fresh_sets.py appends one row per fit to --out: a file of other columns is refused
before any fit runs, so rows of two layouts never share one table."""

from __future__ import annotations

import csv
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "reference" / "bq_fresh_sets.py"


def test_an_out_file_of_other_columns_is_refused_before_fitting(tmp_path):
    ns = runpy.run_path(str(SCRIPT))
    old = tmp_path / "old.csv"
    old.write_text("table,synthesizer,fit seed\nadult,bq_mnl,0\n")
    with pytest.raises(SystemExit, match="write to a new file"):
        ns["main"](["--datasets", "no-such-dataset", "--synths", "bq_mnl", "--out", str(old)])
    same = tmp_path / "same.csv"
    with same.open("w", newline="") as fh:
        csv.writer(fh).writerow(ns["FIELDS"])
    ns["check_out"](same)              # this script's own header: appending is fine
    ns["check_out"](tmp_path / "new.csv")  # a new file: fine
    assert "C grid" in ns["FIELDS"]

"""scripts/bench/frontier_dp_table.py --merge: a run of one dataset's DP cells replaces the committed rows it
holds, keeps every other committed row, and orders the table by dataset, generator (MST, AIM, PrivBayes) and ε."""

from __future__ import annotations

import csv
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench" / "frontier_dp_table.py"
COLUMNS = ["dataset", "generator", "ε", "F3 ratio"]


def _write(path: Path, rows: list[tuple]) -> None:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows(rows)


def _rows(rows: list[tuple]) -> list[dict]:
    return [dict(zip(COLUMNS, r)) for r in rows]


def test_merge_replaces_the_run_s_rows_and_keeps_the_others(tmp_path):
    merged = runpy.run_path(str(SCRIPT))["merged"]
    committed = tmp_path / "dp_epsilon.csv"
    _write(committed, [("online-shoppers", "mst", "0.1", "31.796"), ("online-shoppers", "privbayes", "10.0", "2.383"),
                       ("adult", "mst", "1.0", "99.000")])
    new = _rows([("adult", "privbayes", "0.1", "30.000"), ("adult", "mst", "1.0", "17.000"),
                 ("adult", "aim", "10.0", "4.000")])
    rows, kept = merged(new, committed)
    assert [(r["dataset"], r["generator"], r["ε"], r["F3 ratio"]) for r in rows] == [
        ("adult", "mst", "1.0", "17.000"),            # the run's value, not the committed 99.000
        ("adult", "aim", "10.0", "4.000"),
        ("adult", "privbayes", "0.1", "30.000"),
        ("online-shoppers", "mst", "0.1", "31.796"),  # kept
        ("online-shoppers", "privbayes", "10.0", "2.383")]
    assert [(r["dataset"], r["generator"]) for r in kept] == [("online-shoppers", "mst"), ("online-shoppers", "privbayes")]


def test_merge_refuses_a_table_of_other_columns_or_none(tmp_path):
    merged = runpy.run_path(str(SCRIPT))["merged"]
    new = _rows([("adult", "mst", "1.0", "17.000")])
    with pytest.raises(SystemExit, match="does not exist"):
        merged(new, tmp_path / "missing.csv")
    other = tmp_path / "other.csv"
    other.write_text("dataset,generator,ε,DCR share\nadult,mst,1.0,0.5\n")
    with pytest.raises(SystemExit, match="regenerate the whole table"):
        merged(new, other)

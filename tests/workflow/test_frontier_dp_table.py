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


def _summary_row(dataset: str, synth: str, f3: float) -> dict:
    return {"dataset": dataset, "synthesizer": synth, "n_ok": 3, "n_seeds": 3, "interval": "t95",
            "F3_ratio_mean": f3, "F3_ratio_ci_low": f3 - 0.5, "F3_ratio_ci_high": f3 + 0.5,
            "mia_auc_max_mean": 0.5, "dcr_share_mean": 0.5, "fit_seconds_mean": 1.0, "setting_epsilon": 1.0}


def test_references_hold_the_other_cells_in_the_study_s_line_up_order(tmp_path):
    import pandas as pd

    ns = runpy.run_path(str(SCRIPT))
    summary = pd.DataFrame([_summary_row("online-shoppers", "holdout", 1.0), _summary_row("adult", "flip10", 1.8),
                            _summary_row("adult", "mst_eps1", 10.8), _summary_row("adult", "cart", 1.3),
                            _summary_row("adult", "my_new_generator", 2.0)])
    refs = ns["table"](summary, tmp_path, references=True)
    assert [(r["dataset"], r["synthesizer"]) for r in refs] == [
        ("adult", "cart"), ("adult", "flip10"), ("adult", "my_new_generator"), ("online-shoppers", "holdout")]
    assert refs[0]["F3 ratio"] == "1.300" and refs[0]["F3 ratio 95%"] == "[0.800, 1.800]"
    assert "ε" not in refs[0] and "ε domain" not in refs[0]   # no budget on a non-DP row
    dp = ns["table"](summary, tmp_path)
    assert [(r["generator"], r["ε"]) for r in dp] == [("mst", "1.0")]

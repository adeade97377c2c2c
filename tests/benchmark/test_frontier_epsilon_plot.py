"""The frontier page's F3-against-ε figure (benchmark/outputs/plots/frontier_epsilon.py and
scripts/bench/frontier_epsilon_figure.py): drawn from the committed tables' text, points in order of ε
whatever the table's order, intervals read back as numbers, one dataset's rows never drawn on another's
figure, a malformed interval refused with its text, and no figure for a dataset without a DP row."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest

from holdbench.benchmark.outputs.plots.frontier_epsilon import draw_epsilon, interval, series

ROOT = Path(__file__).resolve().parents[2]
HEADER = ["dataset", "generator", "ε", "seeds ok", "interval", "F3 ratio", "F3 ratio 95%"]
DP_ROWS = [  # listed out of ε order on purpose
    ["adult", "mst", "10.0", "3/3", "t95", "11.436", "[9.648, 13.225]"],
    ["adult", "mst", "0.1", "3/3", "t95", "18.547", "[13.775, 23.320]"],
    ["adult", "mst", "1.0", "3/3", "t95", "10.841", "[10.168, 11.514]"],
    ["adult", "privbayes", "1.0", "2/3", "t95", "19.057", ""],
    ["adult", "aim", "0.3", "3/3", "t95", "", ""],
    ["online-shoppers", "mst", "1.0", "3/3", "t95", "8.948", "[6.108, 11.788]"],
]
REF_ROWS = pd.DataFrame({"dataset": ["adult", "adult", "online-shoppers"], "synthesizer": ["holdout", "cart", "cart"],
                         "F3 ratio": ["1.000", "1.408", "0.819"]})


def _dp() -> pd.DataFrame:
    return pd.DataFrame(DP_ROWS, columns=HEADER)


def test_interval_text_is_read_back_and_a_malformed_one_is_named():
    assert interval("[13.775, 23.320]") == (13.775, 23.32)
    assert all(math.isnan(v) for v in interval(""))  # empty: NaN, NaN
    with pytest.raises(ValueError, match=r"13\.775; 23"):
        interval("[13.775; 23.320]")


def test_series_orders_by_epsilon_and_keeps_datasets_apart():
    lines = series(_dp(), "adult")
    assert list(lines) == ["mst", "privbayes"]  # aim's only row has no F3 ratio: no line
    mst = lines["mst"]
    assert mst["eps"].tolist() == [0.1, 1.0, 10.0]
    assert mst["f3"].tolist() == [18.547, 10.841, 11.436]
    assert mst["low"].tolist() == [13.775, 10.168, 9.648]
    assert mst["high"].tolist() == [23.32, 11.514, 13.225]
    assert lines["privbayes"]["low"].isna().all()  # no interval (two seeds ok of three would give one; here none)
    other = series(_dp(), "online-shoppers")
    assert list(other) == ["mst"] and other["mst"]["f3"].tolist() == [8.948]


def test_draws_a_figure_per_dataset_and_none_without_dp_rows(tmp_path):
    path = draw_epsilon(_dp(), REF_ROWS, "adult", tmp_path / "a.png")
    assert path is not None and path.stat().st_size > 10_000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert draw_epsilon(_dp(), REF_ROWS, "census", tmp_path / "c.png") is None
    assert not (tmp_path / "c.png").exists()
    again = draw_epsilon(_dp(), REF_ROWS, "adult", tmp_path / "b.png")
    assert again.read_bytes() == path.read_bytes()  # same tables, same bytes


def test_script_draws_every_dataset_of_the_table(tmp_path):
    tables = tmp_path / "tables"
    tables.mkdir()
    _dp().to_csv(tables / "dp_epsilon.csv", index=False)
    REF_ROWS.to_csv(tables / "references.csv", index=False)
    spec = importlib.util.spec_from_file_location("frontier_epsilon_figure",
                                                  ROOT / "scripts" / "bench" / "frontier_epsilon_figure.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([str(tables), str(tmp_path / "img")]) == 0
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == [
        "frontier_epsilon_adult.png", "frontier_epsilon_online-shoppers.png"]
    assert mod.main([str(tmp_path / "nowhere"), str(tmp_path / "img")]) == 2

"""Plots are valid PNGs where (and only where) their inputs exist; the report is one self-contained
page with sortable tables, a drill-down per cell, timings and gate verdicts, and escapes user data."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.outputs.leaderboard import aggregate
from holdbench.benchmark.outputs.plots import bucket_labels, make_plots, plot_fidelity, plot_group, plot_tradeoff
from holdbench.benchmark.outputs.plots.drilldown import _bins, _frequencies
from holdbench.benchmark.outputs.report import render_report, write_report
from holdbench.benchmark.outputs.results import load_results
from holdbench.metrics import default_families
from holdbench.metrics.registry import specs_of
from tests.benchmark.conftest import DISCLOSURE_CELL, MIA_CELL, NO_DISTANCE_CELL, TUNING_CELL

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PAPER_SPECS = [sp for f in default_families() for sp in specs_of(f.result_type)]
STUDY_PLOTS = ["fidelity_alpha.png", "fidelity_beta.png", "privacy_alpha.png", "privacy_beta.png", "tradeoff.png",
               "drilldown_alpha_job.png", "drilldown_alpha_hours.png",  # study.json drilldown
               "drilldown_beta_age.png", "drilldown_beta_job.png"]      # fallback: T's first two columns


def _is_png(path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_SIGNATURE)


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.fixture(scope="module")
def plotted(study):
    return study, make_plots(load_results(study.path))


def test_study_plots_exist_and_are_png(plotted):
    study, written = plotted
    plot_dir = study.path / "plots"
    for name in STUDY_PLOTS:
        assert _is_png(plot_dir / name), name
        assert plot_dir / name in written
        width, height = _png_size(plot_dir / name)
        assert 300 <= width <= 1500 and height <= 1600, (name, width, height)  # reads on a laptop screen
    # no utility / attack / disclosure metrics in this study: those figures are not drawn
    assert sorted(p.name for p in plot_dir.iterdir()) == sorted(STUDY_PLOTS)


def test_cell_figures_exactly_where_their_artifact_is(plotted):
    study, written = plotted
    optional = {"mia_roc": MIA_CELL, "disclosure_curve": DISCLOSURE_CELL, "tuning_trace": TUNING_CELL}
    for key in study.keys:
        cell = study.cell_dir(*key)
        pngs = {p.name for p in cell.glob("*.png")}
        if not study.is_ok(key):
            assert pngs == set(), key
            continue
        expected = {"marginals.png"}
        if key != NO_DISTANCE_CELL:
            expected |= {"dcr_histogram.png", "nndr_distribution.png"}
        expected |= {f"{name}.png" for name, owner in optional.items() if owner == key}
        assert pngs == expected, key
        assert all(_is_png(cell / name) and cell / name in written for name in expected)


def test_plots_are_deterministic(study, tmp_path):
    cells = load_results(study.path).table
    summary = aggregate(cells, PAPER_SPECS)
    for fn in (plot_fidelity, plot_tradeoff):  # the trade-off places its labels by search
        a = fn(cells, summary, tmp_path / "a.png").read_bytes()
        b = fn(cells, summary, tmp_path / "b.png").read_bytes()
        assert a == b, fn.__name__


def test_group_figure_only_with_values(study, tmp_path):
    from holdbench.metrics.registry import MetricSpec

    cells = load_results(study.path).table.copy()
    spec = MetricSpec("pmse_ratio", "pMSE ratio", "utility", "ideal", 1.0, 3, "m", headline=True)
    summary = aggregate(cells, PAPER_SPECS)
    assert plot_group(cells, summary, [spec], "utility", tmp_path / "u.png") is None  # no such column
    cells["pmse_ratio"] = np.where(cells["status"] == "ok", 1.5, np.nan)
    summary = aggregate(cells, [*PAPER_SPECS, spec])
    assert _is_png(plot_group(cells, summary, [spec], "utility", tmp_path / "u.png"))


def test_drilldown_buckets_say_what_they_hold():
    assert bucket_labels(np.array([18.0, 25.0, 40.0, 90.0]), integral=True) == ["[18, 25]", "(25, 40]", "(40, 90]"]
    assert bucket_labels(np.array([0.5, 1.25, 2.0]), integral=False) == ["[0.5, 1.25]", "(1.25, 2]"]
    train = pd.Series(np.arange(1, 101, dtype=float))  # deciles 1, 10.9, ..., 100
    how = _bins(train)
    freq = _frequencies(pd.Series([1.0, 1.0, 100.0, 500.0, np.nan]), how)
    labels = list(freq.index)
    assert labels[0].startswith("[1,") and labels[1].startswith("(")
    # the minimum of T lands in the first bucket (its left edge is included), 500 is outside T's range
    assert freq.iloc[0] == pytest.approx(2 / 5) and freq.iloc[9] == pytest.approx(1 / 5)
    assert freq["other"] == pytest.approx(1 / 5) and freq["(missing)"] == pytest.approx(1 / 5)


def test_drilldown_buckets_of_a_date_column_are_dates():
    # 2020-01-01 is day 18,262; February 2020 has 29 days
    jan1, feb1, mar1 = 18262.0, 18262.0 + 31, 18262.0 + 31 + 29
    assert bucket_labels(np.array([jan1, feb1, mar1]), integral=True, dates=True) == [
        "[2020-01-01, 2020-02-01]", "(2020-02-01, 2020-03-01]"]
    assert bucket_labels(np.array([jan1, jan1 + 0.5]), integral=False, dates=True) == [
        "[2020-01-01 00:00, 2020-01-01 12:00]"]
    train = pd.Series(jan1 + np.arange(100, dtype=float))
    assert _frequencies(train, _bins(train, dates=True)).index[0] == "[2020-01-01, 2020-01-10]"
    assert _frequencies(train, _bins(train)).index[0] == "[18,262, 18,272]"  # the decile 18,271.9, rounded


def test_report_is_self_contained_sortable_with_drilldown(plotted):
    study, _ = plotted
    page = write_report(load_results(study.path)).read_text()
    assert page.startswith("<!doctype html>")
    assert 'src="http' not in page and "<link" not in page and "@import" not in page
    assert page.count("<script") == 1 and 'class=sortable' in page  # one inline script: column sorting
    rows = re.findall(r"<tr class=\"(\w*)\">", page)
    n_failed = sum(not study.is_ok(k) for k in study.keys)
    assert rows.count("fail") >= n_failed
    assert html.escape(study.error_reason) in page and "<b>bold</b>" not in page
    assert html.escape(study.skipped_reason) in page
    assert "0.5 is ideal" in page and "1 is ideal" in page
    for header in ("fit s", "sample s", "evaluate s", "peak MB fit+sample", "peak MB evaluate"):
        assert f"<th>{header}</th>" in page
    # one drill-down per cell, each ok cell with its own figures embedded
    assert page.count('<details class="cell"') == len(study.keys)
    n_ok = sum(study.is_ok(k) for k in study.keys)
    n_cell_figs = sum(len(list(study.cell_dir(*k).glob("*.png"))) for k in study.keys)
    assert page.count('<img src="data:image/png;base64,') == len(STUDY_PLOTS) + n_cell_figs
    assert n_cell_figs >= 3 * n_ok - 2
    assert 'alt="dcr_histogram.png"' in page and 'alt="nndr_distribution.png"' in page
    # sortable numbers carry their full value
    assert re.search(r'<td data-v="[0-9.e+-]+">', page)


def test_report_shows_gate_verdicts(plotted):
    study, _ = plotted
    results = load_results(study.path)
    page = render_report(results)
    assert "<h2>Quality gates</h2>" in page and "conf/gates/default.yaml" in page
    # ctgan's S sits at small distances to T: its DCR test fails and is listed with its cell
    assert re.search(r'>alpha/seed0/ctgan</a></td><td class="text">[^<]*dcr_distribution', page)
    custom = pd.DataFrame([{"cell_id": results.cells[0].cell_id, "dataset": "alpha", "synthesizer": "holdout",
                            "seed": 0, "reference": False, "target": "my_gate", "value": 9.0, "threshold": "<= 1",
                            "pvalue": np.nan, "verdict": "FAIL", "detail": "x"}])
    page = render_report(results, custom, "my.yaml")
    assert "my_gate" in page and "my.yaml" in page


def test_report_escapes_hostile_names(study_factory):
    evil = "<script>alert(1)"
    s = study_factory(name="evil", synthesizers=["holdout", evil, "ctgan"],
                      error_reason="boom </script><script>alert(2)</script>")
    page = write_report(load_results(s.path)).read_text()
    assert page.lower().count("<script") == 1  # only the report's own sorting script
    assert html.escape(evil) in page
    assert "&lt;/script&gt;&lt;script&gt;alert(2)" in page
    assert not (s.path / "plots").exists()  # the report embeds what make_plots drew; it draws nothing


def test_missing_figures_are_left_out_of_the_report(study_factory):
    s = study_factory(name="bare")
    results = load_results(s.path)
    page = render_report(replace(results))
    assert "No figures found." in page and "<img" not in page

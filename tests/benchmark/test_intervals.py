"""Intervals that mean something with few seeds, named under every table (issue 24): two seeds show
their range, not a t interval with one degree of freedom; one seed its own interval; three a t interval."""

from __future__ import annotations

import html
import math

import pandas as pd
import pytest

from holdbench.benchmark.outputs.leaderboard import aggregate, interval_notes, render_markdown
from holdbench.benchmark.outputs.report import render_report
from holdbench.benchmark.outputs.results import load_results
from holdbench.metrics import default_families
from holdbench.metrics.registry import specs_of

SPECS = [sp for f in default_families() for sp in specs_of(f.result_type)]


def _cells(shares: list[float]) -> pd.DataFrame:
    n = len(shares)
    return pd.DataFrame({"dataset": ["d"] * n, "synthesizer": ["tvae"] * n, "seed": list(range(n)),
                         "status": ["ok"] * n, "dcr_share": shares,
                         "dcr_share_ci_low": [v - 0.02 for v in shares],
                         "dcr_share_ci_high": [v + 0.02 for v in shares]})


def test_two_seeds_of_the_issue_show_their_range():
    # the issue's tvae: 0.547 [0.131, 0.964] was mean +- 12.71 * sd / sqrt(2) of these two seeds
    row = aggregate(_cells([0.51475, 0.5795]), SPECS).iloc[0]
    assert row["dcr_share_mean"] == pytest.approx(0.547125)
    assert (row["dcr_share_ci_low"], row["dcr_share_ci_high"]) == (0.51475, 0.5795)
    assert row["interval"] == "range"


def test_one_seed_shows_its_own_interval_and_three_a_t_interval():
    one = aggregate(_cells([0.6]), SPECS).iloc[0]
    assert (one["interval"], one["dcr_share_ci_low"], one["dcr_share_ci_high"]) == ("cell95", 0.58, 0.62)
    three = aggregate(_cells([0.50, 0.52, 0.54]), SPECS).iloc[0]
    half = 4.302652729749464 * 0.02 / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    assert three["interval"] == "t95"
    assert three["dcr_share_ci_low"] == pytest.approx(0.52 - half)


def test_a_metric_missing_in_one_seed_gets_no_mislabelled_interval():
    cells = _cells([0.50, 0.52, 0.54])
    cells.loc[2, "F2"] = 1.0
    cells.loc[0, "F2"], cells.loc[1, "F2"] = 2.0, math.nan
    row = aggregate(cells, SPECS).iloc[0]
    assert row["interval"] == "t95" and math.isnan(row["F2_ci_low"])  # 2 values: a range, not t95


def test_markdown_and_report_name_the_interval_shown(study):
    results = load_results(study.path)
    summary = aggregate(results.table, results.specs)
    kinds = set(summary["interval"])
    assert {"range", "cell95"} <= kinds  # the fixture: 2 ok seeds, and 1 ok seed
    md, page = render_markdown(results, summary), html.unescape(render_report(results))
    for note in interval_notes(summary):
        assert note.split(":")[1].strip()[:40] in md.replace("\\", "")
        assert note.split(":")[1].strip()[:40] in page
    assert "lowest and highest of the 2 seeds" in page
    gauss = summary[(summary["dataset"] == "alpha") & (summary["synthesizer"] == "gauss")].iloc[0]
    low, high = f"{gauss['dcr_share_ci_low']:.3f}", f"{gauss['dcr_share_ci_high']:.3f}"
    assert f"({low}–{high})" in page and f"({low}–{high})" in md
    assert "95% t interval" not in page  # no row has three seeds

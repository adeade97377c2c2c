"""Leaderboard: every cell is a row (failures too), means and t-intervals over seeds."""

from __future__ import annotations

import json
import math
import statistics

import pandas as pd
import pytest

from holdbench.benchmark.outputs.leaderboard import aggregate, leaderboard_columns, write_leaderboard
from holdbench.benchmark.outputs.results import TIMINGS, load_results

T975 = {1: 12.706204736174698, 2: 4.302652729749464}  # t quantile 0.975 by degrees of freedom
from holdbench.metrics import default_families
from holdbench.metrics.registry import specs_of

PAPER_SPECS = [sp for f in default_families() for sp in specs_of(f.result_type)]


def _row(cells: pd.DataFrame, dataset: str, synth: str, seed: int) -> pd.Series:
    hit = cells[(cells["dataset"] == dataset) & (cells["synthesizer"] == synth) & (cells["seed"] == seed)]
    assert len(hit) == 1
    return hit.iloc[0]


def test_collect_lists_every_cell_in_study_order(study):
    cells = load_results(study.path).table
    assert list(zip(cells["dataset"], cells["synthesizer"], cells["seed"])) == study.keys
    assert cells["cell_id"].iloc[0] == f"{study.name}/alpha/seed0/holdout"


def test_collect_statuses_and_reasons(study):
    cells = load_results(study.path).table
    err = _row(cells, *study.error_cell)
    assert (err["status"], err["stage"], err["reason"]) == ("error", "generate", study.error_reason)
    assert math.isnan(err["F1"])
    skipped = _row(cells, *study.skipped_cell)
    assert (skipped["status"], skipped["reason"]) == ("skipped", study.skipped_reason)
    corrupt = _row(cells, *study.corrupt_cell)
    assert corrupt["status"] == "error" and "status.json" in corrupt["reason"]
    ok = [k for k in study.keys if study.is_ok(k)]
    assert sorted(cells.loc[cells["status"] == "ok", "cell_id"]) == sorted(
        f"{study.name}/{d}/seed{k}/{s}" for d, s, k in ok)


def test_collect_values_come_from_the_files(study):
    cells = load_results(study.path).table
    for key in study.keys:
        if study.is_ok(key):
            row, written = _row(cells, *key), study.metrics[key]
            for metric in ("F1", "F2", "F3", "F2_ratio", "dcr_share", "dcr_train_mean"):
                assert row[metric] == pytest.approx(written[metric])
            assert row["fit_seconds"] == study.status[key]["fit_seconds"]
            assert row["bq_ims_pass"] == written["bq_ims_pass"]


def test_collect_never_crashes_on_odd_directories(study_factory):
    s = study_factory(name="odd")
    (s.cell_dir("alpha", "gauss", 0) / "status.json").unlink()
    (s.cell_dir("alpha", "holdout", 1) / "metrics.json").write_text("[1, 2")
    (s.path / "alpha" / "seed0" / ".tmpdir").mkdir()
    (s.path / "alpha" / "notes").mkdir()
    (s.path / "beta" / "seed1" / "stray.txt").write_text("x")
    (s.path / "study.json").write_text("{broken")
    cells = load_results(s.path).table
    assert len(cells) == len(s.keys)
    missing = _row(cells, "alpha", "gauss", 0)
    assert missing["status"] == "error" and "status.json missing" in missing["reason"]
    no_metrics = _row(cells, "alpha", "holdout", 1)
    assert no_metrics["status"] == "error" and "metrics.json" in no_metrics["reason"]
    assert set(cells["dataset"]) == {"alpha", "beta"}


def test_aggregate_two_seeds_show_their_range_not_a_t1_interval(study):
    summary = aggregate(load_results(study.path).table, PAPER_SPECS)
    row = summary[(summary["dataset"] == "alpha") & (summary["synthesizer"] == "gauss")].iloc[0]
    assert (row["n_seeds"], row["n_ok"], row["interval"]) == (2, 2, "range")
    for metric in ("F2", "dcr_share", "F3_ratio"):
        values = [study.metrics[("alpha", "gauss", seed)][metric] for seed in study.seeds]
        mean = statistics.mean(values)
        half = T975[1] * statistics.stdev(values) / math.sqrt(2)
        assert row[f"{metric}_mean"] == pytest.approx(mean)
        assert (row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]) == (min(values), max(values))
        assert row[f"{metric}_ci_low"] != pytest.approx(mean - half)  # not the t(1) interval


def test_aggregate_single_ok_seed_uses_wilson_for_dcr_share_only(study):
    summary = aggregate(load_results(study.path).table, PAPER_SPECS)
    row = summary[(summary["dataset"] == "alpha") & (summary["synthesizer"] == "ctgan")].iloc[0]
    assert (row["n_seeds"], row["n_ok"]) == (2, 1)
    only = study.metrics[("alpha", "ctgan", 0)]
    assert row["F1_mean"] == pytest.approx(only["F1"])
    assert math.isnan(row["F1_ci_low"]) and math.isnan(row["F1_ci_high"])
    assert row["dcr_share_ci_low"] == pytest.approx(only["dcr_share_ci_low"])
    assert row["dcr_share_ci_high"] == pytest.approx(only["dcr_share_ci_high"])
    beta = summary[summary["dataset"] == "beta"].set_index("synthesizer")
    assert beta.loc["gauss", "n_ok"] == 1 and beta.loc["ctgan", "n_ok"] == 1
    assert beta.loc["gauss", "F2_mean"] == pytest.approx(study.metrics[("beta", "gauss", 1)]["F2"])


def test_aggregate_three_seeds_by_hand():
    cells = pd.DataFrame({
        "dataset": ["d"] * 4, "synthesizer": ["s"] * 4, "seed": [0, 1, 2, 3],
        "status": ["ok", "ok", "ok", "timeout"], "F2": [1.0, 2.0, 3.0, 100.0],
    })
    row = aggregate(cells, PAPER_SPECS).iloc[0]
    assert (row["n_seeds"], row["n_ok"], row["F2_mean"]) == (4, 3, 2.0)
    assert row["F2_ci_high"] == pytest.approx(2.0 + T975[2] / math.sqrt(3))
    assert row["interval"] == "t95"
    assert "timeout" in row["statuses"]


def test_write_leaderboard_files(study):
    paths = write_leaderboard(load_results(study.path))
    assert set(paths) == {"csv", "summary", "md"}
    table = pd.read_csv(paths["csv"], keep_default_na=False)
    declared = leaderboard_columns(load_results(study.path).specs)
    timings = [c for c in declared if c in TIMINGS]
    registry = [c for c in declared if c not in TIMINGS]
    # identity and registry metrics first, timings last, every other scalar of metrics.json between
    assert list(table.columns[:len(registry)]) == registry
    assert list(table.columns[-len(timings):]) == timings
    scalars = {k for m in study.metrics.values() for k, v in m.items() if not isinstance(v, (dict, list))}
    assert scalars - set(table.columns) == set()
    assert not {"cell_id", "path", "config_digest"} & set(table.columns)
    assert len(table) == len(study.keys)
    assert list(zip(table["dataset"], table["synthesizer"], table["seed"])) == study.keys
    err = table[(table["synthesizer"] == study.error_cell[1]) & (table["seed"] == study.error_cell[2])
                & (table["dataset"] == study.error_cell[0])].iloc[0]
    assert (err["status"], err["reason"]) == ("error", study.error_reason)
    summary = pd.read_csv(paths["summary"])
    assert len(summary) == len(study.datasets) * len(study.synthesizers)
    assert not [p for p in study.path.iterdir() if p.name.endswith(".tmp")]


def test_markdown_shows_failed_cells_with_reason_and_legend(study):
    md = write_leaderboard(load_results(study.path))["md"].read_text()
    assert "## alpha" in md and "## beta" in md
    d, syn, k = study.error_cell
    assert f"{d}/seed{k}/{syn}: **error** at generate" in md  # the canonical cell name
    assert "generator diverged \\| loss=nan \\<b\\>bold\\</b\\>" in md and "&lt;" not in md
    assert "<b>bold</b>" not in md
    d, syn, k = study.skipped_cell
    assert f"{d}/seed{k}/{syn}: **skipped** — {study.skipped_reason}" in md
    assert "1 is ideal" in md and "0.5 is ideal" in md
    gauss_alpha = next(line for line in md.splitlines() if line.startswith("| gauss | ok |"))
    mean_f2 = statistics.mean(study.metrics[("alpha", "gauss", k)]["F2_ratio"] for k in study.seeds)
    assert f"{mean_f2:.3f}" in gauss_alpha


def test_study_json_order_wins_over_alphabetical(study_factory):
    s = study_factory(name="order", synthesizers=["zeta", "alpha_synth", "holdout"])
    meta = json.loads((s.path / "study.json").read_text())
    cells = load_results(s.path).table
    assert list(dict.fromkeys(cells["synthesizer"])) == meta["synthesizers"]


def test_cells_outside_the_declared_study_are_ignored(study_factory):
    s = study_factory(name="stale")
    (s.path / "alpha" / "seed0" / "dropped_synth").mkdir()
    (s.path / "alpha" / "seed7" / "gauss").mkdir(parents=True)
    (s.path / "logs" / "seed0" / "x").mkdir(parents=True)
    cells = load_results(s.path).table
    assert list(zip(cells["dataset"], cells["synthesizer"], cells["seed"])) == s.keys

"""Settings are read from what a cell recorded it ran with (status.json `config.synthesizer`), never from its
name (issue 36, item 1): the cells table and the leaderboard carry the recorded ε, a variant whose name states
another ε or p than its run used is flagged there, and a study that would run one is refused at load time."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from holdbench.benchmark.config import ConfigError
from holdbench.benchmark.outputs.leaderboard import aggregate, write_leaderboard
from holdbench.benchmark.outputs.results import load_results
from holdbench.benchmark.workflow.study import load_study

MST = "holdbench.synthesizers.dp.MST"
FLIP = "holdbench.synthesizers.flip.Flip"


def _record(study, synth: str, settings: dict) -> None:
    """Rewrite every status.json of `synth` to record that its cells ran with `settings`."""
    for dataset in study.datasets:
        for seed in study.seeds:
            path = study.cell_dir(dataset, synth, seed) / "status.json"
            try:
                st = json.loads(path.read_text())
            except ValueError:
                continue  # the fixture's corrupt cell
            st["config"] = {"synthesizer": settings, "n_synthetic": 120, "split": {}}
            path.write_text(json.dumps(st))


@pytest.fixture()
def overridden(study_factory):
    study = study_factory(synthesizers=["holdout", "mst_eps3", "flip10"])
    _record(study, "mst_eps3", {"_target_": MST, "epsilon": 1e-300, "delta": 1e-9})
    _record(study, "flip10", {"_target_": FLIP, "p": 0.1})
    return study


def test_cells_table_carries_the_recorded_settings_and_flags_a_misleading_name(overridden):
    table = load_results(overridden.path).table
    mst = table[table["synthesizer"] == "mst_eps3"]
    assert (mst["setting_epsilon"] == 1e-300).all() and (mst["generator"] == MST).all()
    assert set(mst["name_conflict"]) == {"its name states epsilon 3 but it ran at epsilon 1e-300"}
    flip = table[table["synthesizer"] == "flip10"]
    assert (flip["setting_p"] == 0.1).all() and flip["name_conflict"].isna().all()
    hold = table[table["synthesizer"] == "holdout"]
    assert hold["setting_epsilon"].map(math.isnan).all()   # its fixture config records no synthesizer settings


def test_leaderboard_shows_the_epsilon_a_cell_ran_at(overridden):
    results = load_results(overridden.path)
    summary = aggregate(results.table, results.specs)
    row = summary[(summary["synthesizer"] == "mst_eps3") & (summary["dataset"] == "alpha")].iloc[0]
    assert row["setting_epsilon"] == 1e-300
    assert "setting_epsilon_mean" not in summary          # a setting, not a metric to average
    md = write_leaderboard(results)["md"].read_text()
    assert r"| mst\_eps3 (ε 1e-300, WARNING: its name states epsilon 3 but it ran at epsilon 1e-300) |" in md
    assert "| flip10 |" in md                            # agrees with its name, no ε: nothing added
    assert "setting_epsilon" in pd.read_csv(results.layout.leaderboard_summary).columns


@pytest.mark.parametrize(("overrides", "message"), [
    (["synthesizers=[flip10,mst_eps3]", "params={mst_eps3: {epsilon: 1.0e-300}}"],
     r"'mst_eps3': its name states epsilon 3 but it ran at epsilon 1e-300"),
    (["synthesizers=[flip10,flip50]", "params={flip50: {p: 0.55}}"], r"'flip50': its name states p 0.5"),
])
def test_a_study_that_runs_a_variant_against_its_name_is_refused(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_study("demo", overrides)


def test_an_override_that_agrees_with_the_name_or_that_the_name_does_not_state_is_fine():
    study = load_study("demo", ["synthesizers=[flip10,mst_eps3]", "params={mst_eps3: {epsilon: 3, bins: 12}}"])
    assert study.synth_configs["mst_eps3"]["bins"] == 12


# --- item 8: a DP budget that cannot run is refused when the study is loaded (holdbench validate) --------

@pytest.mark.parametrize(("param", "message"), [
    ("{epsilon: 0}", r"`epsilon` must be a positive finite number, got 0"),
    ("{epsilon: -1}", r"`epsilon` must be a positive finite number, got -1"),
    ("{epsilon: 1.0e+308}", r"`epsilon` 1e\+308 is above 709.78 = log\(largest 64-bit float\)"),
    ("{delta: 0}", r"`delta` must be a number in \(0, 1\), got 0"),
])
def test_an_epsilon_no_dp_library_can_run_is_refused_at_load(param, message):
    with pytest.raises(ConfigError, match=f"synthesizer 'mst_eps1': {message}"):
        load_study("demo", ["synthesizers=[mst_eps1]", f"params={{mst_eps1: {param}}}"])


def test_privbayes_epsilon_is_checked_too_and_a_sound_one_passes():
    with pytest.raises(ConfigError, match="'privbayes_eps1': `epsilon` must be a positive finite number"):
        load_study("demo", ["synthesizers=[privbayes_eps1]", "params={privbayes_eps1: {epsilon: 0.0}}"])
    assert load_study("demo", ["synthesizers=[mst_eps10]"]).synth_configs["mst_eps10"]["epsilon"] == 10.0


@pytest.mark.parametrize("eps", [float("inf"), float("nan"), True, "1"])
def test_an_epsilon_that_is_no_finite_number_is_refused(eps):
    from holdbench.benchmark.workflow.study import _check_privacy_budget

    with pytest.raises(ConfigError, match="`epsilon` must be a positive finite number"):
        _check_privacy_budget("mst_x", {"epsilon": eps})

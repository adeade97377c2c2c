"""The budget a DP cell spent (generate.json `synthesizer_info.privacy`, synthesizers/plugins/dp) reaches the
cells table and is shown beside the ε the cell ran at in the leaderboard."""

from __future__ import annotations

import json

from holdbench.benchmark.outputs.leaderboard import write_leaderboard
from holdbench.benchmark.outputs.results import load_results

MST = "holdbench.synthesizers.plugins.dp.MST"


def test_the_spent_budget_per_part_is_carried_and_shown(study_factory):
    study = study_factory(synthesizers=["holdout", "mst_eps3"])
    for dataset in study.datasets:
        for seed in study.seeds:
            cell = study.cell_dir(dataset, "mst_eps3", seed)
            status = cell / "status.json"
            try:
                st = json.loads(status.read_text())
            except ValueError:
                continue  # the fixture's corrupt cell
            st["config"] = {"synthesizer": {"_target_": MST, "epsilon": 3.0}, "n_synthetic": 120, "split": {}}
            status.write_text(json.dumps(st))
            (cell / "generate.json").write_text(json.dumps({"synthesizer_info": {"privacy": {
                "epsilon": 3.0, "delta": 1e-9, "epsilon_domain": 0.9, "epsilon_fit": 2.1}}}))
    results = load_results(study.path)
    mst = results.table[results.table["synthesizer"] == "mst_eps3"]
    assert (mst["setting_spent_epsilon_domain"] == 0.9).all() and (mst["setting_spent_epsilon_fit"] == 2.1).all()
    hold = results.table[results.table["synthesizer"] == "holdout"]
    assert "setting_spent_epsilon" not in hold or hold["setting_spent_epsilon"].isna().all()
    md = write_leaderboard(results)["md"].read_text()
    assert r"| mst\_eps3 (ε 3 = domain 0.9 + fit 2.1) |" in md

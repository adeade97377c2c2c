"""The demo study end to end through Snakemake: results, caching, resume, determinism."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import pandas as pd
import pytest

from tests.workflow.helpers import cells, env_for, jobs_run, run_study, snakemake_cmd

pytestmark = pytest.mark.slow
DEMO_SYNTHS = ["gaussian_copula", "ctgan", "tvae", "copulagan", "cart", "flip10", "flip50", "flip90", "holdout"]
SEEDS = (0, 1)
CELLS = sorted(f"demo/seed{k}/{s}" for k in SEEDS for s in DEMO_SYNTHS)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("demo")
    env = env_for(tmp)
    proc = run_study(tmp, "demo", env=env, track=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return tmp, env, proc


def test_every_cell_ok_with_results(demo):
    tmp, _, proc = demo
    got = cells(tmp, "demo")
    assert sorted(got) == CELLS
    assert {k: v["status"] for k, v in got.items()} == {k: "ok" for k in got}, got
    root = tmp / "results" / "demo"
    board = pd.read_csv(root / "leaderboard.csv")
    assert sorted(board["synthesizer"]) == sorted(DEMO_SYNTHS * len(SEEDS))
    for name in ("leaderboard.md", "report.html", "mlflow.json", "plots/fidelity_demo.png", "plots/privacy_demo.png",
                 "plots/tradeoff.png"):
        assert (root / name).stat().st_size > 0, name
    assert len(list((root / "benchmarks").rglob("*.generate.tsv"))) == len(CELLS)
    assert "[holdbench] demo/seed0/cart: ok" in proc.stdout


def test_metrics_make_sense(demo):
    tmp = demo[0]
    m = {s: json.loads((tmp / f"results/demo/demo/seed0/{s}/metrics.json").read_text()) for s in DEMO_SYNTHS}
    assert m["holdout"]["F1_ratio"] == pytest.approx(1.0) and m["holdout"]["F3_ratio"] == pytest.approx(1.0)
    assert m["flip10"]["dcr_share"] > m["flip50"]["dcr_share"] > m["flip90"]["dcr_share"]
    assert m["flip90"]["F3_ratio"] > m["flip10"]["F3_ratio"]
    assert 0.3 < m["holdout"]["dcr_share"] < 0.7
    for s in DEMO_SYNTHS:
        assert m[s]["n_synthetic"] == (2000 if s != "holdout" else m[s]["n_holdout"])


def test_rerun_does_nothing(demo):
    tmp, env, _ = demo
    proc = run_study(tmp, "demo", env=env, track=True)
    assert proc.returncode == 0
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_added_synthesizer_runs_only_its_cells(demo):
    tmp, env, _ = demo
    before = {k: v["wall_seconds"] for k, v in cells(tmp, "demo").items()}
    synths = ",".join(DEMO_SYNTHS + ["flip30"])
    proc = run_study(tmp, "demo", env=env, config={"study_overrides": f"synthesizers=[{synths}]"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert jobs_run(proc, "generate") == 2 and jobs_run(proc, "evaluate") == 2 and jobs_run(proc, "split") == 0
    after = cells(tmp, "demo")
    assert after["demo/seed0/flip30"]["status"] == "ok" and after["demo/seed1/flip30"]["status"] == "ok"
    assert {k: after[k]["wall_seconds"] for k in before} == before


def test_changed_config_recomputes_only_that_synthesizer(demo):
    tmp, env, _ = demo
    # (an override of flip50's p is refused: its name states p 0.5, issue 36; cart's names no setting)
    proc = run_study(tmp, "demo", env=env, config={"study_overrides": "params={cart: {min_samples_leaf: 6}}"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert jobs_run(proc, "generate") == 2 and jobs_run(proc, "evaluate") == 2
    assert cells(tmp, "demo")["demo/seed0/cart"]["config"]["synthesizer"]["min_samples_leaf"] == 6
    # and back: the original config is recomputed (and gives the original numbers)
    proc = run_study(tmp, "demo", env=env)
    assert jobs_run(proc, "generate") == 2


def test_kill_then_rerun_equals_uninterrupted_run(demo, tmp_path):
    """kill -9 in the middle, rerun: completes, and metrics/synthetic data equal run A's (determinism).

    On seed 0's nine cells (every kind of synthesizer once): a study narrowed to one seed must also give
    its cells the bytes they have in the two-seed run, since a cell is computed from its own config alone."""
    ref = demo[0]
    env = env_for(tmp_path)
    narrowed = {"study_overrides": "seeds=[0]"}
    proc = subprocess.Popen(snakemake_cmd("demo", track=False, config=narrowed), cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(cells(tmp_path, "demo")) < 2:
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    seed0 = [c for c in CELLS if c.startswith("demo/seed0/")]
    assert len(cells(tmp_path, "demo")) < len(seed0), "the kill came too late to test anything"
    rerun = run_study(tmp_path, "demo", env=env, config=narrowed)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    got = cells(tmp_path, "demo")
    assert sorted(got) == seed0 and all(c["status"] == "ok" for c in got.values())
    for cell in seed0:
        a = (ref / "results/demo" / cell / "metrics.json").read_bytes()
        b = (tmp_path / "results/demo" / cell / "metrics.json").read_bytes()
        assert a == b, f"metrics.json of {cell} differs between runs"
        pd.testing.assert_frame_equal(pd.read_parquet(ref / "results/demo" / cell / "synthetic.parquet"),
                                      pd.read_parquet(tmp_path / "results/demo" / cell / "synthetic.parquet"))
    assert not list((tmp_path / "results").rglob("*.tmp")), "half-written temporary files left behind"

"""Issue 23 through the real workflow: shards that can be trusted, n/a values that heal, one
metric family never sinks a cell."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from tests.workflow.helpers import cells, env_for, jobs_run, make_conf, run_study

pytestmark = pytest.mark.slow

CELL = "demo/seed0/flip10"
BASE = "synthesizers=[flip10],seeds=[0],n_synthetic=400,metrics=paper"


def test_damaged_duplicated_and_truncated_shards_are_recomputed_before_the_merge(tmp_path):
    """A duplicated shard (0, 0, 2) and a truncated one: the rerun recomputes both, no BadZipFile,
    no silent wrong merge: metrics.json is byte-identical to the clean run's."""
    env = env_for(tmp_path)
    root = tmp_path / "results" / "demo"
    target = [f"results/demo/{CELL}/metrics.json"]
    cfg = {"study_overrides": f"{BASE},evaluate_shards=3"}
    first = run_study(tmp_path, "demo", *target, env=env, config=cfg)
    assert first.returncode == 0, first.stderr[-3000:]
    clean = (root / CELL / "metrics.json").read_bytes()
    # the shard files of the cell, as its evaluate_shard jobs write them (they are temporary)
    for i in range(3):
        subprocess.run([sys.executable, "-m", "holdbench.benchmark.workflow.runner", "evaluate_shard", "--study-dir", str(root),
                        "--dataset", "demo", "--seed", "0", "--synthesizer", "flip10", "--shard", str(i),
                        "--shards", "3"], cwd=tmp_path, env=env, check=True, capture_output=True)
    shards = root / CELL / "shards"
    shutil.copy(shards / "0-of-3.npz", shards / "1-of-3.npz")  # [0, 0, 2]
    whole = (shards / "2-of-3.npz").read_bytes()
    (shards / "2-of-3.npz").write_bytes(whole[: len(whole) // 2])  # truncated
    (root / CELL / "status.json").unlink()  # as if the evaluate job had been killed after its shards
    rerun = run_study(tmp_path, "demo", *target, env=env, config=cfg)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    log = (root / "logs" / "demo" / "seed0" / "flip10.evaluate.log").read_text()
    assert "evaluate shard 1 of 3: 1-of-3.npz holds shard 0, this shard is shard 1; recomputing it" in log
    assert "evaluate shard 2 of 3: 2-of-3.npz is unreadable" in log
    assert cells(tmp_path, "demo")[CELL]["status"] == "ok"
    assert (root / CELL / "metrics.json").read_bytes() == clean


def _metrics_conf(conf):
    (conf / "metrics" / "flaky.yaml").write_text(
        "n_jobs: 1\nseed: 0\nfamilies:\n  fidelity: {_target_: holdbench.metrics.fidelity.Fidelity}\n"
        "  toggle: {_target_: tests.workflow.faulty_metrics.Toggle}\n"
        "  broken: {_target_: tests.workflow.faulty_metrics.Broken}\n")


def test_a_family_that_fails_or_cannot_run_is_na_and_heals_when_it_can(tmp_path):
    conf = make_conf(tmp_path)
    _metrics_conf(conf)
    env = env_for(tmp_path, conf)
    cfg = {"study_overrides": "synthesizers=[flip10],seeds=[0],n_synthetic=400,metrics=flaky"}
    root = tmp_path / "results" / "demo"

    missing = run_study(tmp_path, "demo", env={**env, "HOLDBENCH_TEST_TOGGLE_MISSING": "1"}, config=cfg)
    assert missing.returncode == 0, missing.stderr[-3000:]
    st = cells(tmp_path, "demo")[CELL]
    assert st["status"] == "ok"  # one family never sinks the cell
    assert st["unavailable"] == ["toggle"]
    assert st["na"]["broken"] == "ValueError: broken option n_cols=3 exceeds the table's columns (test)"
    assert "not installed" in st["na"]["toggle"]
    m = json.loads((root / CELL / "metrics.json").read_text())
    assert m["F1"] is not None and m["toggle_rows"] is None and m["broken_value"] is None
    board = (root / "leaderboard.md").read_text()
    assert "toggle is n/a" in board and "broken is n/a" in board

    healed = run_study(tmp_path, "demo", env=env, config=cfg)  # the family can run now
    assert healed.returncode == 0, healed.stderr[-3000:]
    assert "Nothing to be done" not in healed.stdout + healed.stderr
    assert jobs_run(healed, "evaluate") == 1 and jobs_run(healed, "generate") == 0
    assert "metric family toggle can run now" in healed.stdout + healed.stderr
    st = cells(tmp_path, "demo")[CELL]
    assert st["unavailable"] == [] and "toggle" not in st["na"]
    assert json.loads((root / CELL / "metrics.json").read_text())["toggle_rows"] == 400.0
    assert "toggle is n/a" not in (root / "leaderboard.md").read_text()

    again = run_study(tmp_path, "demo", env=env, config=cfg)  # a deterministic failure is not retried forever
    assert again.returncode == 0 and jobs_run(again, "evaluate") == 0



def test_tiny_table_is_flagged_and_r_versions_reach_status_leaderboard_and_mlflow(tmp_path):
    """A 5-row table (T = 2 rows) is scored but flagged not meaningful; an R synthesizer's R, synthpop,
    rpart and rpy2 versions are in status.json, leaderboard.md's provenance and MLflow."""
    import sqlite3

    import pandas as pd

    from tests.workflow.fake_r import FAKE_VERSIONS

    conf = make_conf(tmp_path, {"tiny": "name: tiny\ndatasets: [tiny]\nsynthesizers: [fake_r, flip10]\nseeds: [0]\n"
                                        "n_synthetic: 3\ntimeout_seconds: 300\nmemory_gb: 3\nmetrics: paper\n"},
                     {"fake_r": "_target_: tests.workflow.fake_r.FakeR\np: 0.2\npresets:\n  smoke: {}\n"})
    table = tmp_path / "tiny.csv"
    pd.DataFrame({"a": [1, 2, 3, 4, 5], "b": ["x", "y", "x", "y", "z"]}).to_csv(table, index=False)
    (conf / "dataset" / "tiny.yaml").write_text(f"name: tiny\nsource: file\npath: {table}\n")
    env = env_for(tmp_path, conf)
    store = tmp_path / "mlflow.db"
    proc = run_study(tmp_path, "tiny", env=env, track=True, config={"mlflow_uri": f"sqlite:///{store}"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    root = tmp_path / "results" / "tiny"
    st = cells(tmp_path, "tiny")
    for c in ("tiny/seed0/fake_r", "tiny/seed0/flip10"):
        assert st[c]["status"] == "ok"
        assert st[c]["not_meaningful"].startswith("T has 2 rows and H has 3 rows, fewer than the 100")
        assert json.loads((root / c / "metrics.json").read_text())["meaningful"] is False
    board = (root / "leaderboard.md").read_text()
    assert board.count("**not meaningful**, T has 2 rows") == 2
    assert "WARNING tiny/seed0: T has 2 rows" in (root / "logs" / "tiny" / "seed0" / "split.log").read_text()
    versions = st["tiny/seed0/fake_r"]["versions"]
    assert {k: versions[k] for k in FAKE_VERSIONS} == FAKE_VERSIONS
    assert "R" not in st["tiny/seed0/flip10"]["versions"]
    assert ("- fake\\_r: R R version 9.9.9 (test), rpart 4.1-test, rpy2 3.5-test, synthpop 1.9-test"
            in board)
    with sqlite3.connect(store) as db:
        params = dict(db.execute(
            "SELECT p.key, p.value FROM params p JOIN tags t ON p.run_uuid = t.run_uuid "
            "WHERE t.key = 'holdbench.cell_id' AND t.value LIKE '%fake_r%'").fetchall())
    assert {k: params.get(f"version.{k}") for k in FAKE_VERSIONS} == FAKE_VERSIONS


def test_a_killed_study_reruns_while_another_study_runs_from_the_same_checkout(tmp_path):
    """kill -9 of one study's Snakemake while another study runs in the same directory: the rerun is
    not refused ("Directory cannot be locked"), and the other study is not disturbed."""
    import os
    import signal
    import time

    from tests.workflow.helpers import faulty, snakemake_cmd

    def study(name, synth, timeout):
        return (f"name: {name}\ndatasets: [demo]\nsynthesizers: [{synth}, flip10]\nseeds: [0]\n"
                f"n_synthetic: 300\ntimeout_seconds: {timeout}\nmemory_gb: 3\nmetrics: paper\n")

    # mine's cell hangs until its timeout; the other study's stays busy until the test releases it
    conf = make_conf(tmp_path, {"other": study("other", "faulty_busy", 600), "mine": study("mine", "faulty_hang", 30)},
                     {"faulty_hang": faulty("hang"), "faulty_busy": faulty("until_released")})
    release = tmp_path / "release"
    env = {**env_for(tmp_path, conf), "HOLDBENCH_TEST_RELEASE": str(release)}

    def start(name, synth):
        log = open(tmp_path / f"{name}.log", "w")  # noqa: SIM115 - closed when the run ends
        run = subprocess.Popen(snakemake_cmd(name), cwd=tmp_path, env=env, stdout=log, stderr=log)
        cell = tmp_path / "results" / name / "demo" / "seed0" / synth
        deadline = time.monotonic() + 300
        while not list(cell.glob(".attempt-*")) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert run.poll() is None, (tmp_path / f"{name}.log").read_text()[-3000:]
        return run

    other = start("other", "faulty_busy")
    try:
        mine = start("mine", "faulty_hang")
        os.kill(mine.pid, signal.SIGKILL)
        mine.wait()
        assert other.poll() is None
        rerun = run_study(tmp_path, "mine", env=env)
        out = rerun.stdout + rerun.stderr
        assert rerun.returncode == 0, out[-3000:]
        assert "cannot be locked" not in out
        assert other.poll() is None, "the other study's run was disturbed"
        got = cells(tmp_path, "mine")
        assert got["demo/seed0/faulty_hang"]["status"] == "timeout" and got["demo/seed0/flip10"]["status"] == "ok"
        release.touch()
        assert other.wait(timeout=600) == 0, (tmp_path / "other.log").read_text()[-3000:]
        assert {c["status"] for c in cells(tmp_path, "other").values()} == {"ok"}
    finally:
        if other.poll() is None:
            other.send_signal(signal.SIGTERM)
            other.wait(timeout=200)

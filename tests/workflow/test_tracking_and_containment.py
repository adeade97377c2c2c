"""Tracking failures keep every result and are retried idempotently; names stay inside results/."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.workflow.helpers import REPO, WORKFLOW_METRICS, cells, env_for, jobs_run, make_conf, run_study

pytestmark = pytest.mark.slow

QUICK = ("name: quick\ndatasets: [demo]\nsynthesizers: [flip10, flip90, holdout]\nseeds: [0]\n"
         f"n_synthetic: 500\nmetrics: {WORKFLOW_METRICS}\ntimeout_seconds: 120\nmemory_gb: 4\n")


def _runs(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        return con.execute("select name, lifecycle_stage from runs").fetchall()


def test_unwritable_store_keeps_results_then_logging_later_is_idempotent(tmp_path):
    conf = make_conf(tmp_path, {"quick": QUICK})
    env = env_for(tmp_path, conf)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's directory should be")
    bad_uri = f"sqlite:///{blocked}/mlflow.db"
    proc = run_study(tmp_path, "quick", env=env, track=True, config={"mlflow_uri": bad_uri})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, "a tracking failure must not pass silently"
    assert "MLflow logging FAILED" in out and str(blocked) in out
    assert {c["status"] for c in cells(tmp_path, "quick").values()} == {"ok"}
    assert (tmp_path / "results/quick/leaderboard.csv").exists()
    assert not (tmp_path / "results/quick/mlflow.json").exists()

    good = tmp_path / "store" / "mlflow.db"
    good.parent.mkdir()
    proc = run_study(tmp_path, "quick", env=env, track=True, config={"mlflow_uri": f"sqlite:///{good}"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert jobs_run(proc, "generate") == 0 and jobs_run(proc, "track") == 1
    first = _runs(good)
    assert sorted(n for n, stage in first if stage == "active") == sorted(
        ["demo/seed0/flip10", "demo/seed0/flip90", "demo/seed0/holdout", "study"])

    proc = run_study(tmp_path, "quick", "--forcerun", "track", env=env, track=True,
                     config={"mlflow_uri": f"sqlite:///{good}"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _runs(good) == first, "logging again must update the same runs, not add new ones"
    info = json.loads((tmp_path / "results/quick/mlflow.json").read_text())
    assert len(info["runs"]) == 3


def test_no_pickle_is_ever_loaded():
    """Nothing in the packages deserialises pickles (a results dir can come from anywhere)."""
    pattern = re.compile(r"pickle\.load|joblib\.load|read_pickle|torch\.load|cloudpickle\.load")
    hits = [f"{p.relative_to(REPO)}:{i}" for pkg in ("benchmark", "metrics", "synthesizers")
            for p in (REPO / pkg).rglob("*.py") for i, line in enumerate(p.read_text().splitlines(), 1)
            if pattern.search(line)]
    # one exception: the plug-in worker reads back the model its own fit stage pickled, in a private
    # directory the synthesizer made with tempfile.mkdtemp (mode 0700) -- never a file of a results dir
    worker = [h for h in hits if h.startswith("synthesizers/plugins/holdbench_worker.py:")]
    assert [h for h in hits if h not in worker] == []
    assert len(worker) <= 1
    isolated = (REPO / "synthesizers" / "_isolated.py").read_text()
    assert "self._dir = Path(tempfile.mkdtemp(" in isolated
    assert '"model": str(self._dir / "model.pkl")' in isolated


def test_documented_mlflow_server_binds_loopback():
    from tests.docs_blocks import pages

    commands = [(page.name, line) for page in pages() for line in page.read_text().splitlines()
                if line.strip().removeprefix("$ ").startswith("mlflow ")]
    assert any(name == "mlflow.md" for name, _ in commands), "the MLflow guide documents no mlflow command"
    for name, cmd in commands:
        assert "--host 127.0.0.1" in cmd, (name, cmd)


def test_bad_dataset_stops_the_run_before_any_job(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("a,a,b\n1,2,x\n3,4,y\n5,6,z\n7,8,w\n")
    study = "name: bad\ndatasets: [mine]\nsynthesizers: [flip10]\nseeds: [0]\nn_synthetic: 10\n"
    conf = make_conf(tmp_path, {"bad": study})
    (conf / "dataset" / "mine.yaml").write_text(f"name: mine\nsource: file\npath: {table}\n")
    proc = run_study(tmp_path, "bad", env=env_for(tmp_path, conf))
    assert proc.returncode != 0
    assert "duplicate or empty column names ['a']" in proc.stdout + proc.stderr
    assert not (tmp_path / "results/bad/mine").exists()

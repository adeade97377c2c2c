"""`holdbench track` prints where to look; MLflow runs carry dataset, synthesizer, seed, status and the
gate verdicts as tags, and the cell's wall time as the run's Duration (issue 24)."""

from __future__ import annotations

import re

import pytest

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient

from holdbench.benchmark.outputs.results import load_results


@pytest.fixture(scope="module")
def tracked(study_factory, tmp_path_factory):
    from holdbench.benchmark.workflow.runner import do_track

    s = study_factory(name="nwc")
    uri = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"
    return s, uri, do_track


def test_track_prints_the_ui_command_and_address(tracked, capsys):
    s, uri, do_track = tracked
    assert do_track(s.path, uri, s.path / "mlflow.json") == 0
    out = capsys.readouterr().out
    assert f"mlflow ui --backend-store-uri {uri}" in out
    eid = MlflowClient(tracking_uri=uri).get_experiment_by_name("nwc").experiment_id
    assert f"http://127.0.0.1:5000/#/experiments/{eid}/runs?" in out


def test_runs_carry_identity_status_gates_and_wall_time(tracked):
    from holdbench.benchmark.outputs.gates import load_gates, verdicts

    s, uri, do_track = tracked
    if not (s.path / "mlflow.json").exists():
        do_track(s.path, uri, s.path / "mlflow.json")
    client = MlflowClient(tracking_uri=uri)
    eid = client.get_experiment_by_name("nwc").experiment_id
    runs = {r.data.tags["holdbench.cell_id"]: r for r in client.search_runs([eid], max_results=1000)}
    results = load_results(s.path)
    table = verdicts(results, load_gates("default"))
    for cell in results.cells:
        run = runs[cell.cell_id]
        tags = run.data.tags
        assert (tags["dataset"], tags["synthesizer"], tags["seed"]) == (cell.dataset, cell.synthesizer,
                                                                        str(cell.seed))
        assert tags["status"] == cell.status["status"]
        rows = table[table["cell_id"] == cell.cell_id]
        for _, row in rows.iterrows():
            assert tags[f"gate.{row['target']}"] == row["verdict"]
        overall = "FAIL" if (rows["verdict"] == "FAIL").any() else "pass" if (rows["verdict"] == "pass").any() else "n/a"
        assert tags["gates"] == overall
        wall = cell.status.get("wall_seconds")
        if isinstance(wall, (int, float)):
            assert run.info.end_time - run.info.start_time == pytest.approx(wall * 1000, abs=2)
            assert run.data.metrics["wall_seconds"] == pytest.approx(wall)
    assert any(re.fullmatch(r"FAIL|pass|n/a", r.data.tags.get("gates", "")) for r in runs.values())

"""MLflow tracking into a temporary sqlite store: content, idempotency, failure messages.

One store per module: MLflow's sqlite initialisation (schema migrations) takes seconds.
"""

from __future__ import annotations

import json

import pytest

mlflow = pytest.importorskip("mlflow")
from mlflow.tracking import MlflowClient

from holdbench.benchmark.outputs.leaderboard import write_leaderboard
from holdbench.benchmark.outputs.plots import plot_cell_marginals
from holdbench.benchmark.outputs.results import load_results, read_cells
from holdbench.benchmark.outputs.tracking import CELL_TAG, TrackingError, log_study, resolve_uri


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture(scope="module")
def logged(study_factory, store):
    s = study_factory(name="trk")
    first_ok = next(c for c in read_cells(s.path) if c.ok)
    plot_cell_marginals(first_ok)
    write_leaderboard(load_results(s.path))  # the collect job's output, which track logs as found
    result = log_study(s.path, store)
    return s, result, first_ok


def _active_runs(client, experiment_id):
    return client.search_runs([experiment_id], max_results=1000)


def _artifacts(client, run_id, path=None):
    return {a.path for a in client.list_artifacts(run_id, path)}


def test_one_run_per_cell_plus_study_run(logged, store):
    s, result, _ = logged
    client = MlflowClient(tracking_uri=store)
    assert client.get_experiment(result["experiment_id"]).name == "trk"
    expected_ids = {f"trk/{d}/seed{k}/{syn}" for d, syn, k in s.keys}
    assert set(result["runs"]) == expected_ids
    runs = _active_runs(client, result["experiment_id"])
    names = sorted(r.info.run_name for r in runs)
    assert names == sorted([f"{d}/seed{k}/{syn}" for d, syn, k in s.keys] + ["study"])  # the canonical name
    assert {r.data.tags[CELL_TAG] for r in runs} == expected_ids | {"trk"}


def test_ok_cell_run_content(logged, store):
    s, result, first_ok = logged
    client = MlflowClient(tracking_uri=store)
    key = (first_ok.dataset, first_ok.synthesizer, first_ok.seed)
    run = client.get_run(result["runs"][first_ok.cell_id])
    status, written = s.status[key], s.metrics[key]
    params = run.data.params
    assert params["dataset"] == key[0] and params["synthesizer"] == key[1] and params["seed"] == str(key[2])
    assert params["config.epochs"] == str(status["config"]["epochs"])
    assert params["config.model.lr"] == "0.01" and params["config.model.layers"] == "[8, 8]"
    assert params["version.sdv"] == "1.20.0" and params["git_commit"] == "abc123"
    assert params["n_synthetic"] == "120"
    metrics = run.data.metrics
    for name in ("F1", "F2", "F3", "F2_ratio", "dcr_share", "dcr_share_pvalue", "n_ties", "ims_synthetic"):
        assert metrics[name] == pytest.approx(written[name])
    assert "gower_dcr_share" not in metrics  # null in metrics.json
    assert metrics["fit_seconds"] == status["fit_seconds"] and metrics["peak_rss_mb"] == status["peak_rss_mb"]
    tags = run.data.tags
    assert tags["status"] == "ok" and tags["reason"] == "" and tags["cell_id"] == first_ok.cell_id
    assert tags["metric.bq_ims_pass"] == str(written["bq_ims_pass"])
    assert run.info.status == "FINISHED"
    expected = {"metrics.json", "status.json", "marginals.csv", "marginals.png"}
    assert _artifacts(client, run.info.run_id) >= expected


def _cell_id(key) -> str:
    dataset, synth, seed = key
    return f"trk/{dataset}/seed{seed}/{synth}"


def test_failed_cells_are_runs_with_status(logged, store):
    s, result, _ = logged
    client = MlflowClient(tracking_uri=store)
    err = client.get_run(result["runs"][_cell_id(s.error_cell)])
    assert err.data.tags["status"] == "error" and err.data.tags["reason"] == s.error_reason
    assert err.info.status == "FAILED" and "F1" not in err.data.metrics
    skipped = client.get_run(result["runs"][_cell_id(s.skipped_cell)])
    # MLflow's runs table draws FAILED and KILLED alike (red cross); SCHEDULED shows a clock
    assert skipped.data.tags["status"] == "skipped" and skipped.info.status == "SCHEDULED"
    corrupt = client.get_run(result["runs"][_cell_id(s.corrupt_cell)])
    assert corrupt.data.tags["status"] == "error" and "status.json" in corrupt.data.tags["reason"]


def test_experiment_opens_on_runs_table_with_headline_metrics(logged, store):
    _, result, _ = logged
    client = MlflowClient(tracking_uri=store)
    exp = client.get_experiment(result["experiment_id"])
    assert result["ui_path"] == (f"/#/experiments/{result['experiment_id']}/runs"
                                 "?workflowType=machine_learning&viewStateShareKey=holdbench")
    view = json.loads(exp.tags["mlflow.sharedViewState.holdbench"])
    columns = view["selectedColumns"]
    for metric in ("dcr_share", "F1_ratio", "F2_ratio", "F3_ratio"):  # the registry's headline metrics
        assert f"metrics.`{metric}`" in columns
    assert "tags.`status`" in columns and "params.`synthesizer`" in columns
    assert "metrics.`F1`" not in columns  # not a headline metric
    assert view["orderByKey"] == "tags.`mlflow.runName`" and view["runsHiddenMode"] == "SHOW_ALL"
    assert result["ui_path"] in exp.tags["mlflow.note.content"]
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"


def test_study_run(logged, store):
    s, result, _ = logged
    client = MlflowClient(tracking_uri=store)
    run = client.get_run(result["study_run"])
    assert run.info.run_name == "study"
    n_ok = sum(s.is_ok(k) for k in s.keys)
    assert run.data.metrics["n_cells"] == len(s.keys) and run.data.metrics["n_ok"] == n_ok
    assert _artifacts(client, run.info.run_id) >= {"leaderboard.csv", "leaderboard.md",
                                                   "leaderboard_summary.csv", "study.json"}


def test_second_log_updates_without_duplicates(logged, store):
    s, result, _ = logged
    client = MlflowClient(tracking_uri=store)
    n_runs = len(_active_runs(client, result["experiment_id"]))
    metric_key, param_key = ("alpha", "gauss", 0), ("beta", "holdout", 1)
    metric_cell = _cell_id(metric_key)
    param_cell = _cell_id(param_key)
    metrics_path = s.cell_dir(*metric_key) / "metrics.json"
    changed = {**s.metrics[metric_key], "F2": 0.987}
    metrics_path.write_text(json.dumps(changed))
    status_path = s.cell_dir(*param_key) / "status.json"
    status = json.loads(status_path.read_text())
    status["config"]["epochs"] = 999
    status_path.write_text(json.dumps(status))

    again = log_study(s.path, store)
    assert again["experiment_id"] == result["experiment_id"]
    assert len(_active_runs(client, result["experiment_id"])) == n_runs
    assert again["runs"][metric_cell] == result["runs"][metric_cell]
    assert client.get_run(again["runs"][metric_cell]).data.metrics["F2"] == pytest.approx(0.987)
    assert again["runs"][param_cell] != result["runs"][param_cell]
    assert client.get_run(again["runs"][param_cell]).data.params["config.epochs"] == "999"
    assert client.get_run(result["runs"][param_cell]).info.lifecycle_stage == "deleted"
    assert again["study_run"] == result["study_run"]
    unchanged = "trk/alpha/seed1/holdout"
    assert again["runs"][unchanged] == result["runs"][unchanged]


def test_stray_duplicate_run_is_removed(logged, store):
    s, result, _ = logged
    client = MlflowClient(tracking_uri=store)
    cell_id = "trk/alpha/seed0/holdout"
    client.create_run(result["experiment_id"], tags={CELL_TAG: cell_id}, run_name="alpha/holdout/seed0")
    log_study(s.path, store)
    same = client.search_runs([result["experiment_id"]], filter_string=f"tags.`{CELL_TAG}` = '{cell_id}'")
    assert len(same) == 1


@pytest.mark.parametrize("make_uri", [
    lambda tmp: "bogus-scheme://nowhere",
    lambda tmp: f"sqlite:///{tmp / 'a_file' / 'mlflow.db'}",
])
def test_unusable_store_raises_tracking_error(study, tmp_path, make_uri):
    (tmp_path / "a_file").write_text("not a directory")
    uri = make_uri(tmp_path)
    with pytest.raises(TrackingError) as info:
        log_study(study.path, uri)
    message = str(info.value)
    assert uri in message and "\n" not in message


def test_relative_sqlite_uri_resolves_against_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert resolve_uri("sqlite:///results/mlflow.db") == f"sqlite:///{tmp_path}/results/mlflow.db"
    assert (tmp_path / "results").is_dir()
    assert resolve_uri("http://localhost:5000") == "http://localhost:5000"

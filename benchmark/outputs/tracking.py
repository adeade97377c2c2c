"""Mirror a finished study into MLflow: one experiment per study, one run per cell.

Results on disk are the record; MLflow is a view of them. So `log_study` can be rerun at
any time and converges to the same runs instead of piling up duplicates: runs are found
by their `holdbench.cell_id` tag. A run is updated in place (a changed metric gets a new
value at step 0, tags and artifacts are overwritten, unchanged values are left alone) while
its params, status and set of metric names are unchanged.
Otherwise the old run is deleted (MLflow's soft delete, recoverable from its trash) and a
fresh run is created: params are immutable in MLflow, and a cell that went from ok to
error would otherwise keep showing the metrics and plots of the earlier attempt.

Any failure of the store (bad URI, unwritable or locked database, unreachable server)
becomes a one-line `TrackingError` naming the URI, so the caller can report it and keep
the results on disk. The client is always an explicit `MlflowClient(tracking_uri=...)`:
nothing here touches MLflow's fluent global run state.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from holdbench.benchmark.layout import GENERATE_JSON, METRICS_JSON, STATUS_JSON, run_name
from holdbench.benchmark.outputs.results import Cell, StudyResults, load_results

DEFAULT_URI = "sqlite:///results/mlflow.db"
CELL_TAG = "holdbench.cell_id"
#: the tag holding a cell's overall verdict on the default gates (conf/gates/default.yaml): pass, FAIL or
#: n/a; each target's verdict is the tag `gate.<target>`
GATES_TAG = "gates"
#: the metric counting the gate targets a cell fails (0: it passes; absent: n/a, e.g. the holdout row).
#: MLflow's runs table shows the metric columns in ASCII order before every param and tag column, and at
#: 1600 px only the first five or so are on screen: a capital C sorts it before F1_ratio, so the verdict
#: is the first number a user sees (the run name, DATASET/seedK/SYNTHESIZER, and the status icon before it)
FAILED_METRIC = "Checks_failed"
#: MLflow's runs table draws FAILED and KILLED with the same red cross; SCHEDULED gets a clock, so a
#: skipped cell (never run: a dependency is missing) is not mistaken for a failure. ok: FINISHED.
RUN_STATUS = {"ok": "FINISHED", "skipped": "SCHEDULED"}  # everything else: FAILED
#: the key of the experiment's shared view (tag mlflow.sharedViewState.<key>) that the UI URL opens
VIEW_KEY = "holdbench"
#: the path (after the server's address) of a study's runs table with the headline metric columns
UI_PATH = "/#/experiments/{experiment_id}/runs?workflowType=machine_learning&viewStateShareKey=" + VIEW_KEY
TIMING_METRICS = ("fit_seconds", "sample_seconds", "evaluate_seconds", "wall_seconds", "overhead_seconds",
                  "peak_rss_mb", "evaluate_peak_rss_mb")
#: a cell's JSON records; its artifact tables (*.csv) and figures (*.png) are logged as found
CELL_FILES = (METRICS_JSON, STATUS_JSON, GENERATE_JSON)
MAX_PARAM_VALUE, MAX_TAG_VALUE, MAX_KEY, REASON_CHARS, BATCH = 6000, 8000, 250, 500, 100
#: exceptions raised from these packages (or any OSError) mean the store is unusable
_STORE_ERROR_MODULES = ("mlflow", "sqlalchemy", "sqlite3", "alembic", "requests", "urllib3")
_QUIET_LOGGERS = ("mlflow", "alembic", "sqlalchemy")
#: defaults unless the user set them: few HTTP retries (a dead server fails in seconds, not
#: minutes) and no usage telemetry from a benchmark harness
_ENV_DEFAULTS = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1", "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
                 "MLFLOW_DISABLE_TELEMETRY": "true"}


class TrackingError(RuntimeError):
    """The MLflow store could not be used; the message is one line and names the URI."""


def resolve_uri(tracking_uri: str) -> str:
    """Absolute form of a sqlite URI (relative paths are relative to cwd), parent dir created."""
    prefix = "sqlite:///"
    if not tracking_uri.startswith(prefix) or tracking_uri in (prefix, "sqlite://"):
        return tracking_uri
    path_part, sep, query = tracking_uri[len(prefix):].partition("?")
    if path_part in ("", ":memory:"):
        return tracking_uri
    path = Path(path_part).expanduser().resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise TrackingError(f"MLflow store {tracking_uri}: cannot create {path.parent}: "
                            f"{exc.strerror or exc}") from exc
    return f"sqlite:///{path}{sep}{query}"


def _key(name: str) -> str:
    """A valid MLflow param/metric/tag key (MLflow allows word chars, / . - : and space)."""
    key = re.sub(r"[^/\w.\- :]", "_", str(name))
    key = re.sub(r"/+", "/", key).strip("/").replace("..", "_")
    return key[:MAX_KEY] or "_"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def _flatten(obj: Any, prefix: str) -> dict[str, str]:
    """{"config": {"model": {"lr": 1}}} -> {"config.model.lr": "1"}; lists stay JSON."""
    if isinstance(obj, dict):
        out: dict[str, str] = {}
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {_key(prefix): _text(obj)[:MAX_PARAM_VALUE]}


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def cell_payload(cell: Cell) -> tuple[dict[str, str], dict[str, float], dict[str, str]]:
    """(params, metrics, tags) for one cell, all keys already valid for MLflow."""
    st = cell.status
    params = {"dataset": cell.dataset, "synthesizer": cell.synthesizer, "seed": str(cell.seed),
              "holdout_rule": _text(st.get("holdout_rule")),
              "n_synthetic": _text(st.get("n_synthetic")), "git_commit": _text(st.get("git_commit"))}
    params.update(_flatten(st.get("config") or {}, "config"))
    params.update(_flatten(st.get("versions") or {}, "version"))
    params = {_key(k): v[:MAX_PARAM_VALUE] for k, v in params.items()}
    metrics: dict[str, float] = {}
    tags = {"status": st["status"], "reason": st["reason"][:REASON_CHARS], "cell_id": cell.cell_id,
            CELL_TAG: cell.cell_id, "stage": _text(st.get("stage") or ""),
            # also as tags, like status: the runs table's filter and column picker read them alike
            "dataset": cell.dataset, "synthesizer": cell.synthesizer, "seed": str(cell.seed)}
    for key, value in cell.metrics.items():
        number = _finite(value)
        if number is not None:
            metrics[_key(key)] = number
        elif isinstance(value, (bool, str)):
            tags[_key(f"metric.{key}")] = _text(value)[:MAX_TAG_VALUE]
    for key in TIMING_METRICS:
        if (number := _finite(st.get(key))) is not None:
            metrics[key] = number
    return params, metrics, tags


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence MLflow/alembic chatter and warnings while logging (see _ENV_DEFAULTS too).

    mlflow is imported here, before the log levels are lowered, because importing it
    configures its own loggers.
    """
    added = {k: v for k, v in _ENV_DEFAULTS.items() if k not in os.environ}
    os.environ.update(added)
    levels: dict[str, int] = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import mlflow  # noqa: F401

            for name in _QUIET_LOGGERS:
                levels[name] = logging.getLogger(name).level
                logging.getLogger(name).setLevel(logging.ERROR)
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        for k in added:
            os.environ.pop(k, None)


def _artifact_root(uri: str, name: str) -> str | None:
    """For a sqlite store, artifacts go next to the database (not into ./mlruns of the cwd)."""
    if not uri.startswith("sqlite:///"):
        return None
    db = Path(uri[len("sqlite:///"):].partition("?")[0])
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "study"
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return (db.parent / "mlartifacts" / f"{safe}-{digest}").as_uri()


#: marks the experiment as classic ML for MLflow versions that read it. MLflow 3.17's UI ignores it:
#: its GenAI/"Model training" switch (URL parameter `workflowType`, else the browser's local storage,
#: default GenAI) decides, so UI_PATH carries workflowType=machine_learning.
_EXPERIMENT_KIND = {"mlflow.experimentKind": "custom_model_development"}


def ui_url(experiment_id: str, server: str = "http://127.0.0.1:5000") -> str:
    """The address that opens a study's runs table with its headline metrics (see view_state)."""
    return server.rstrip("/") + UI_PATH.format(experiment_id=experiment_id)


def where_to_look(uri: str, experiment_id: str) -> list[str]:
    """The lines telling a user how to open a study's runs table: the address itself for an MLflow
    server, else the `mlflow ui` command serving the store and the address it will answer on.
    One worker: each of MLflow's default four imports mlflow before the server answers (24 s on 2 cores
    against 10 s with one, measured 2026-11-25), and one user needs one."""
    if uri.startswith(("http://", "https://")):
        return [f"open {ui_url(experiment_id, uri)}"]
    return [f"start the UI:  mlflow ui --backend-store-uri {uri} --host 127.0.0.1 --port 5000 --workers 1",
            f"then open:     {ui_url(experiment_id)}"]


def view_state(specs: list) -> dict[str, Any]:
    """The runs-table view the UI opens through `viewStateShareKey` (MLflow's shared-view format:
    search facets plus UI state). Columns: the number of failed gate targets (first: see FAILED_METRIC), the
    registry's headline metrics (DCR share, F ratios, pMSE and TSTR ratios, best attack AUC...), then the
    tags status and gates and the params dataset, synthesizer and seed (MLflow puts params and tags after
    every metric; the run name already reads DATASET/seedK/SYNTHESIZER); rows sorted by run name, so the
    cells of a dataset stand together."""
    metrics = [FAILED_METRIC] + [sp.name for sp in specs if sp.headline]
    columns = [f"metrics.`{_key(m)}`" for m in metrics]
    columns += ["tags.`status`", f"tags.`{GATES_TAG}`", "params.`dataset`", "params.`synthesizer`", "params.`seed`"]
    return {"searchFilter": "", "orderByKey": "tags.`mlflow.runName`", "orderByAsc": True, "startTime": "ALL",
            "lifecycleFilter": "Active", "datasetsFilter": [], "modelVersionFilter": "All Runs",
            "selectedColumns": columns, "runsHiddenMode": "SHOW_ALL", "viewMaximized": False}


def _experiment(client: Any, name: str, uri: str, specs: list) -> str:
    exp = client.get_experiment_by_name(name)
    if exp is None:
        experiment_id = client.create_experiment(name, artifact_location=_artifact_root(uri, name),
                                                 tags=_EXPERIMENT_KIND)
        tags: dict[str, str] = {}
    else:
        experiment_id = exp.experiment_id
        if exp.lifecycle_stage == "deleted":
            client.restore_experiment(experiment_id)
        tags = dict(exp.tags)
    wanted = {
        f"mlflow.sharedViewState.{VIEW_KEY}": json.dumps(view_state(specs), sort_keys=True),
        "mlflow.note.content": (f"holdbench study `{name}`: one run per cell (`<dataset>/seed<k>/<synthesizer>`) "
                                f"and the run `study` (leaderboard, report, plots). Runs table with the headline "
                                f"metrics: `{UI_PATH.format(experiment_id=experiment_id)}` after the server's "
                                f"address. Status column: ok, error, timeout, oom or skipped (skipped runs show "
                                f"MLflow's clock icon, failed ones its red cross)."),
        **_EXPERIMENT_KIND,
    }
    for key, value in wanted.items():
        if tags.get(key) != value:
            client.set_experiment_tag(experiment_id, key, value)
    return experiment_id


def _existing_runs(client: Any, experiment_id: str) -> dict[str, Any]:
    """Active runs by cell id; when a cell has several (an interrupted earlier log), the newest
    wins and the others are deleted."""
    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs([experiment_id], filter_string=f"tags.`{CELL_TAG}` LIKE '%'",
                                  max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            break
    by_id: dict[str, Any] = {}
    for run in sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id), reverse=True):
        cell_id = run.data.tags[CELL_TAG]
        if cell_id in by_id:
            client.delete_run(run.info.run_id)
        else:
            by_id[cell_id] = run
    return by_id


def _batches(items: list[Any], size: int = BATCH) -> Iterator[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _sync_run(client: Any, experiment_id: str, existing: Any, run_name: str, params: dict[str, str],
              metrics: dict[str, float], tags: dict[str, str], artifacts: list[tuple[Path, str | None]],
              run_status: str, wall_seconds: float | None = None) -> str:
    """Create or update one run so that it shows exactly this payload; returns its run id.
    A new run of a cell starts `wall_seconds` before it ends, so MLflow's Duration column shows the
    cell's own wall time (generate + evaluate), not the time it took to log it."""
    from mlflow.entities import Metric, Param, RunTag

    reusable = (existing is not None and existing.data.params == params
                and existing.data.tags.get("status") == tags.get("status")
                and set(existing.data.metrics) <= set(metrics))
    if existing is not None and not reusable:
        client.delete_run(existing.info.run_id)
    if reusable:
        run_id = existing.info.run_id
    else:
        created = int(time.time() * 1000)
        start = created - round(wall_seconds * 1000) if wall_seconds is not None else None
        run = client.create_run(experiment_id, start_time=start, tags={CELL_TAG: tags[CELL_TAG]},
                                run_name=run_name)
        run_id = run.info.run_id
        for chunk in _batches([Param(k, v) for k, v in sorted(params.items())]):
            client.log_batch(run_id, params=chunk, synchronous=True)
    old_metrics = existing.data.metrics if reusable else {}
    old_tags = existing.data.tags if reusable else {}
    now = int(time.time() * 1000)
    new_metrics = [Metric(k, v, now, 0) for k, v in sorted(metrics.items()) if old_metrics.get(k) != v]
    for chunk in _batches(new_metrics, 1000):
        client.log_batch(run_id, metrics=chunk, synchronous=True)
    # the name as a tag too: a reused run takes the current spelling of its name
    tags = {k: v[:MAX_TAG_VALUE] for k, v in {**tags, "mlflow.runName": run_name}.items()}
    for chunk in _batches([RunTag(k, v) for k, v in sorted(tags.items()) if old_tags.get(k) != v]):
        client.log_batch(run_id, tags=chunk, synchronous=True)
    for path, artifact_path in artifacts:
        if path.is_file():
            client.log_artifact(run_id, str(path), artifact_path)
    # a reused run keeps its start and end time: its Duration stays the cell's wall time when first logged
    end_time = existing.info.end_time if reusable and existing.info.end_time else None
    if end_time is None and not reusable and wall_seconds is not None:
        end_time = created
    client.set_terminated(run_id, run_status, end_time=end_time)
    return run_id


def _study_payload(study: dict[str, Any], cells: list[Cell]) -> tuple[dict, dict, dict]:
    params = _flatten({k: v for k, v in study.items() if v is not None}, "")
    n_ok = sum(c.ok for c in cells)
    metrics = {"n_cells": float(len(cells)), "n_ok": float(n_ok), "n_not_ok": float(len(cells) - n_ok)}
    name = str(study["name"])
    tags = {CELL_TAG: name, "holdbench.kind": "study", "status": "ok", "cell_id": name}
    return params, metrics, tags


def gate_tags(results: StudyResults) -> dict[str, dict[str, str]]:
    """{cell_id: tags} of each cell's verdicts on conf/gates/default.yaml (as the report shows them and
    `holdbench check <study>` prints them): GATES_TAG the cell's overall verdict, `gate.<target>` each
    target's; none when those gates do not apply to the study (the report says why)."""
    from holdbench.benchmark.outputs.gates import cell_verdicts
    from holdbench.benchmark.outputs.report import default_verdicts

    table, _ = default_verdicts(results)
    if table is None:
        return {}
    out: dict[str, dict[str, str]] = {}
    for _, row in table.iterrows():
        out.setdefault(row["cell_id"], {})[_key(f"gate.{row['target']}")] = str(row["verdict"])
    for _, row in cell_verdicts(table).iterrows():
        out.setdefault(row["cell_id"], {})[GATES_TAG] = str(row["verdict"])
        out[row["cell_id"]]["gates.why"] = str(row["why"])
    return out


def failed_targets(tags: dict[str, str]) -> float | None:
    """FAILED_METRIC of a cell from its gate tags: how many targets fail, None when the cell was not judged."""
    if tags.get(GATES_TAG) not in ("pass", "FAIL"):
        return None
    return float(sum(v == "FAIL" for k, v in tags.items() if k.startswith("gate.")))


def _log_all(client: Any, uri: str, results: StudyResults) -> dict[str, Any]:
    study, cells, lay = results.study, results.cells, results.layout
    verdict_tags = gate_tags(results)
    experiment_id = _experiment(client, str(study["name"]), uri, results.specs)
    existing = _existing_runs(client, experiment_id)
    runs: dict[str, str] = {}
    for cell in cells:
        params, metrics, tags = cell_payload(cell)
        tags.update(verdict_tags.get(cell.cell_id, {}))
        if (failed := failed_targets(tags)) is not None:
            metrics[FAILED_METRIC] = failed
        files = [cell.path / name for name in CELL_FILES]
        files += sorted(cell.path.glob("*.csv")) + sorted(cell.path.glob("*.png"))
        runs[cell.cell_id] = _sync_run(
            client, experiment_id, existing.get(cell.cell_id), run_name(cell.dataset, cell.seed, cell.synthesizer),
            params, metrics, tags, [(f, None) for f in files], RUN_STATUS.get(cell.status["status"], "FAILED"),
            wall_seconds=_finite(cell.status.get("wall_seconds")))
    params, metrics, tags = _study_payload(study, cells)
    files = [lay.leaderboard_csv, lay.leaderboard_summary, lay.leaderboard_md, lay.report, lay.study_json]
    artifacts = [(f, None) for f in files] + [(p, "plots") for p in sorted(lay.plots_dir.glob("*.png"))]
    study_run = _sync_run(client, experiment_id, existing.get(tags[CELL_TAG]), "study",
                          params, metrics, tags, artifacts, "FINISHED")
    return {"experiment_id": experiment_id, "runs": runs, "study_run": study_run,
            "ui_path": UI_PATH.format(experiment_id=experiment_id)}


@contextmanager
def _store_lock(uri: str) -> Iterator[None]:
    """An exclusive flock on `<database>.lock` beside a sqlite store while one study is logged into it.

    Two studies of one checkout may run (and track) at once: MLflow creates a fresh store's tables on
    first use without guarding against a second process doing the same (one fails: "table ... already
    exists"), and sqlite serialises writers anyway. Other stores (a tracking server) need no lock."""
    if not uri.startswith("sqlite:///"):
        yield
        return
    import fcntl

    lock = Path(uri[len("sqlite:///"):].partition("?")[0] + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise TrackingError(f"MLflow store {uri}: cannot create its lock file {lock}: {exc.strerror or exc}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits while another study logs into the same store
        yield
    finally:
        os.close(fd)  # releases the lock


def log_study(study_dir: str | Path, tracking_uri: str = DEFAULT_URI) -> dict[str, Any]:
    """Log every cell of a study and one `study` run; idempotent (see module docstring).

    Returns {"experiment_id": str, "runs": {cell_id: run_id}, "study_run": run_id, "ui_path": str}, where
    ui_path, after the UI server's address, opens the runs table with the headline metrics.
    Raises TrackingError when the store at `tracking_uri` cannot be used.
    Study-level artifacts (leaderboard, report, plots) are logged as found.
    """
    study_dir = Path(study_dir)
    if not study_dir.is_dir():
        raise FileNotFoundError(f"{study_dir}: no such study directory")
    results = load_results(study_dir)
    uri = resolve_uri(tracking_uri)
    with _quiet(), _store_lock(uri):
        try:
            from mlflow.tracking import MlflowClient

            return _log_all(MlflowClient(tracking_uri=uri), uri, results)
        except Exception as exc:
            if not (isinstance(exc, OSError) or type(exc).__module__.startswith(_STORE_ERROR_MODULES)):
                raise
            detail = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
            raise TrackingError(f"MLflow store {tracking_uri}: {type(exc).__name__}: {detail[:300]}") from exc

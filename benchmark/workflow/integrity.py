"""Find the outputs of a study that must not be trusted, before Snakemake plans the run.

Every job records what it wrote (size and sha256) and what it ran with (config digest,
limits). An output that no longer matches — truncated, emptied, deleted, made under another
config, or a timeout/oom made under a smaller limit than the study now grants — is
reported as a Repair: the job to recompute and the files that say why. Removing only the bad
file is not enough: Snakemake does not recompute a missing output whose consumers are up to
date, so `Repair.remove` lists the job's outputs, those of every job after it in the cell, and
the study's collected outputs (see `downstream`). Outputs written before checksums existed are
validated on read instead (JSON parses, metrics are not empty, parquet footers are whole).
The caller deletes the files only while it holds the study lock, and never on a dry run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from holdbench.benchmark.layout import (
    GENERATE_JSON,
    MARGINALS,
    METRICS_JSON,
    STATUS_JSON,
    SYNTHETIC,
    SYNTHETIC_PAIR,
    StudyLayout,
    synthetic_files,
)
from holdbench.benchmark.workflow.cellconfig import cell_config, digest, file_problem, is_sequential_split
from holdbench.contracts.io import clean_line

STATUSES = ("ok", "error", "timeout", "oom", "skipped")


@dataclass(frozen=True)
class Repair:
    """Recompute `job` of (dataset, seed[, synthesizer]) by removing `paths`; `reason` says why."""

    job: str
    dataset: str
    seed: int
    synthesizer: str | None
    paths: tuple[Path, ...]
    reason: str

    def remove(self, lay: StudyLayout, synths: list[str]) -> list[Path]:
        """Files to delete so Snakemake recomputes this job and everything after it."""
        return list(self.paths) + downstream(lay, self.job, self.dataset, self.seed,
                                             [self.synthesizer] if self.synthesizer else synths)

    @property
    def where(self) -> str:
        return f"{self.dataset}/seed{self.seed}" + (f"/{self.synthesizer}" if self.synthesizer else "")


def downstream(lay: StudyLayout, job: str, dataset: str, seed: int, synths: list[str]) -> list[Path]:
    """Outputs of the jobs that follow `job` for (dataset, seed, synths), and of the collect job."""
    names = {"split": (GENERATE_JSON, SYNTHETIC, *SYNTHETIC_PAIR, STATUS_JSON, METRICS_JSON),
             "generate": (STATUS_JSON, METRICS_JSON), "evaluate": ()}[job]
    cells = [lay.cell_file(dataset, seed, s, n) for s in synths for n in names]
    return cells + [lay.collect_marker]  # the collect job runs again; its old outputs stay until replaced


def _json(path: Path) -> tuple[dict | None, str]:
    try:
        obj = json.loads(path.read_text())
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError) as exc:
        return None, f"{path.name} is unreadable ({type(exc).__name__})"
    if not isinstance(obj, dict):
        return None, f"{path.name} is not a JSON object"
    return obj, ""


def _parquet_problem(path: Path) -> str | None:
    """Read-validation of a parquet file written before checksums existed."""
    if not path.is_file():
        return f"{path.name} is missing"
    try:
        import pyarrow.parquet as pq

        pq.read_metadata(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a damaged file
        return f"{path.name} is damaged ({type(exc).__name__})"
    return None


def scan_split(lay: StudyLayout, dataset: str, seed: int, sequential: bool = False) -> Repair | None:
    files = tuple(lay.split_outputs(dataset, seed, sequential).values())  # the tables, then schema.json
    if not any(f.exists() for f in files):
        return None
    missing = [f.name for f in files if not f.exists()]
    if missing:
        return Repair("split", dataset, seed, None, files, f"{', '.join(missing)} missing")
    schema, problem = _json(files[-1])
    if schema is None and problem != "missing":
        return Repair("split", dataset, seed, None, files, problem)
    if sequential != ("sequential" in (schema or {})):
        return Repair("split", dataset, seed, None, files, "it was split as another kind of dataset")
    records = (schema or {}).get("files") or {}
    for f in files[:-1]:
        bad = file_problem(f, records.get(f.name)) if f.name in records else _parquet_problem(f)
        if bad and f.exists():
            return Repair("split", dataset, seed, None, files, bad)
    return None


def scan_cell(lay: StudyLayout, dataset: str, seed: int, synth: str, split: dict, synth_snap: dict,
              metrics: dict, limits: dict, old_limits: dict | None) -> Repair | None:
    """The one repair a cell needs (generation first: redoing it redoes the evaluation too), or None."""
    cdir = lay.cell_dir(dataset, seed, synth)
    gen_path, status_path = cdir / GENERATE_JSON, cdir / STATUS_JSON
    gen, problem = _json(gen_path)
    names = synthetic_files(is_sequential_split(split))
    redo_gen = (GENERATE_JSON, *names)

    def repair(job: str, names: tuple[str, ...], reason: str) -> Repair:
        return Repair(job, dataset, seed, synth, tuple(cdir / n for n in names), reason)

    if gen is None:
        if problem == "missing":
            return repair("generate", redo_gen, f"{GENERATE_JSON} is missing") if status_path.exists() else None
        return repair("generate", redo_gen, problem)
    if gen.get("status") not in STATUSES:
        return repair("generate", redo_gen, f"{GENERATE_JSON} holds no valid status")
    want = digest(cell_config(split, synth_snap))
    if gen.get("generate_digest") not in (None, want):
        return repair("generate", redo_gen, "it was generated under another config")
    if gen["status"] == "ok":
        for name in names:
            record = (gen.get("outputs") or {}).get(name)
            bad = file_problem(cdir / name, record) if record else _parquet_problem(cdir / name)
            if bad:
                return repair("generate", redo_gen, bad)
    retry = _retry(gen, limits, old_limits) or generator_can_run_now(gen, synth_snap.get("config"))
    if retry:
        return repair("generate", redo_gen, retry)
    status, problem = _json(status_path)
    redo_eval = (STATUS_JSON, METRICS_JSON)
    if status is None:
        return repair("evaluate", redo_eval, f"{STATUS_JSON} is missing" if problem == "missing" else problem)
    if status.get("status") not in STATUSES:
        return repair("evaluate", redo_eval, f"{STATUS_JSON} holds no valid status")
    full = digest(cell_config(split, synth_snap, metrics))
    if status.get("config_digest") not in (None, full):
        return repair("evaluate", redo_eval, "it was evaluated under another config")
    for name in names:
        made_from = (status.get("outputs") or {}).get(name)
        if made_from and made_from != (gen.get("outputs") or {}).get(name):
            return repair("evaluate", redo_eval, "it was evaluated on another synthetic table")
    bad = _evaluation_problem(cdir, status)
    if bad:
        return repair("evaluate", redo_eval, bad)
    if status.get("stage") == "evaluate":
        retry = _retry(status, limits, old_limits)
        if retry:
            return repair("evaluate", redo_eval, retry)
    retry = status.get("retry") or _legacy_shard_failure(status)
    if retry:
        return repair("evaluate", redo_eval, f"its evaluation failed in a way a rerun may fix: {retry}")
    healed = available_now(status.get("unavailable"), metrics)
    if healed:
        return repair("evaluate", redo_eval, f"metric famil{'ies' if len(healed) > 1 else 'y'} "
                      f"{', '.join(healed)} can run now (n/a when it was evaluated)")
    return None


def _legacy_shard_failure(status: dict) -> str | None:
    """A shard merge failure recorded before status.json had `retry` (its reason names the shard)."""
    reason = status.get("reason")
    if "retry" not in status and status.get("status") == "error" and isinstance(reason, str) \
            and reason.startswith("evaluate shard "):
        return reason
    return None


_FAMILIES: dict[str, dict] = {}


def available_now(unavailable, metrics: dict) -> list[str]:
    """Of the families a cell recorded as unable to run, those that can run now (built once per config)."""
    if not isinstance(unavailable, list) or not unavailable:
        return []
    key = digest(metrics)
    if key not in _FAMILIES:
        from holdbench.benchmark.config import build_metric_families

        _FAMILIES[key] = {f.name: f for f in build_metric_families(metrics)}
    families = _FAMILIES[key]
    return [n for n in unavailable if n in families and not families[n].unavailable()]


def generator_plugin(config: Any):
    """The plug-in environment (holdbench.contracts.plugin_env.PluginEnv) a generator config runs in, or None
    (a generator of the harness's own venv, or a config that does not resolve). Imports the generator's
    module only (no library of its own: those live in the plug-in's venv)."""
    target = config.get("_target_") if isinstance(config, dict) else None
    if not isinstance(target, str) or "." not in target:
        return None
    import importlib

    module, _, name = target.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module), name)
        if getattr(cls, "environment", None) is not None:  # a plug-in generator names its own environment
            from holdbench.benchmark.config import build_synthesizer

            return build_synthesizer(config).environment
    except Exception:  # noqa: BLE001 - a config that cannot be resolved here is the generate job's to report
        return None
    return None


def environment_state(env) -> dict:
    """What a plug-in's availability depends on, to see later whether it changed: its interpreter and the
    modification times (ns) of the interpreter link, the venv's requirements stamp and its site-packages
    (an install command rewrites them). Recorded in generate.json when a plug-in generator did not succeed."""
    from holdbench.contracts.plugin_env import STAMP

    python = Path(env.python())
    root = python.parent.parent
    files = [python, root / STAMP, *sorted(root.glob("lib/python*/site-packages"))]
    state = {}
    for f in files:
        try:
            state[str(f)] = f.lstat().st_mtime_ns
        except OSError:
            state[str(f)] = None
    return {"plugin": env.name, "python": str(python), "files": state}


def generator_can_run_now(gen: dict, config: Any) -> str | None:
    """Why a generation that was `skipped` (its plug-in venv missing or out of date) or ended `error` (e.g. a
    broken interpreter) should run again now, or None: its plug-in can run here now and its environment
    changed since that attempt (the user ran the install command its reason gave). The generator twin of
    `available_now`; an attempt that recorded the same environment as now is not repeated."""
    if gen.get("status") not in ("skipped", "error"):
        return None
    env = generator_plugin(config)
    if env is None:
        return None
    try:
        if env.unavailable():
            return None  # still not installed: the cell stays skipped with the install command
        now = environment_state(env)
    except Exception:  # noqa: BLE001 - an unreadable plug-in: nothing has healed
        return None
    then = gen.get("plugin_environment")
    if then == now:
        return None
    reason = str(gen.get("reason") or "")
    if then is None and gen["status"] == "error" and now["python"] not in reason:
        return None  # an error recorded before environments were: only one that names the interpreter
    was = "skipped" if gen["status"] == "skipped" else "error"
    return (f"the {env.name} plug-in can run now and its environment changed since this cell ended {was} "
            f"({clean_line(reason, 160) or 'no reason recorded'})")


def _evaluation_problem(cdir: Path, status: dict) -> str | None:
    records = status.get("outputs") or {}
    for name, record in records.items():
        if name not in (SYNTHETIC, *SYNTHETIC_PAIR):
            bad = file_problem(cdir / name, record)
            if bad:
                return bad
    metrics, problem = _json(cdir / METRICS_JSON)
    if metrics is None:
        return f"{METRICS_JSON} is {problem}" if problem == "missing" else problem
    if status.get("status") == "ok" and not metrics:
        return f"{METRICS_JSON} holds no metrics for an ok cell"
    if status.get("status") == "ok" and not (cdir / MARGINALS).is_file():
        return f"{MARGINALS} is missing"
    return None


def _retry(record: dict, limits: dict, old_limits: dict | None) -> str | None:
    """Why a timeout/oom record should be retried now (a limit grew since), or None."""
    made = record.get("limits") or old_limits or {}
    for status, key, unit in (("timeout", "timeout_seconds", "s"), ("oom", "memory_gb", "GB")):
        if record.get("status") != status:
            continue
        before, now = _num(made.get(key)), _num(limits.get(key))
        if before is not None and now is not None and now > before:
            return f"it ended {status} under {key} {before:g} {unit}; the study now allows {now:g} {unit}"
    return None


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

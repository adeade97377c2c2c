"""Parse-time side of the Snakemake workflow: load and check the study, then (only when this
invocation will execute jobs, and only while it holds the study lock) write the snapshots
and remove what must be recomputed.

Each job reads only the snapshot it depends on, and a snapshot is rewritten only when its
content changes; Snakemake's mtime check then recomputes exactly what changed: a
synthesizer's config -> its cells; the metrics options -> every evaluation; a new
synthesizer -> only its cells; nothing changed -> nothing runs. Outputs that do not match
what their job recorded (holdbench.benchmark.workflow.integrity) are removed, so Snakemake recomputes
them too. A dry run writes and removes nothing: it routes the affected jobs' inputs through
`.config/pending/` (files no real run ever creates) so that its plan shows what a real run
would recompute.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from holdbench.benchmark.config import CONFIG_PATH_ENV, DEFAULT_COST, split_overrides, synthesizer_cost
from holdbench.benchmark.data.tables import dataset_config, dataset_schema, load_dataset_and_schema
from holdbench.benchmark.cell.isolation import STUDY_ENV, sweep
from holdbench.benchmark.layout import STATUS_JSON, StudyLayout
from holdbench.benchmark.data.sequential import load_sequential
from holdbench.benchmark.workflow.study import Study, load_study
from holdbench.benchmark.layout import results_root
from holdbench.benchmark.workflow.cellconfig import run_snapshot, split_snapshot, synth_snapshot
from holdbench.benchmark.workflow.integrity import Repair, scan_cell, scan_split
from holdbench.benchmark.workflow.locks import clear_stale_locks, invocation_mode, lock_study, study_locks_only
from holdbench.contracts.io import write_text

PENDING = "pending"
#: Snakemake priority of a cell's generate job by the synthesizer's `cost` (holdbench.benchmark.config.synthesizer_cost):
#: with free cores the scheduler starts cheap cells first, so first results appear within minutes
GENERATE_PRIORITY = {"cheap": 20, "moderate": 10, "expensive": 0}
#: splits and evaluations go before any fit: they unblock cells and finish what has started
FINISH_PRIORITY = 30


@dataclass
class Plan:
    """The study, where it lives, and (dry run only) what a real run would rewrite or recompute."""

    study: Study
    root: Path
    mode: str
    pending: set[Path] = field(default_factory=set)
    redo: dict[tuple, str] = field(default_factory=dict)
    costs: dict[str, str] = field(default_factory=dict)
    """synthesizer -> its cost (cheap, moderate, expensive)"""

    def priority(self, synth: str) -> int:
        """The Snakemake priority of a generate job of `synth`."""
        return GENERATE_PRIORITY[self.costs.get(synth, DEFAULT_COST)]

    @property
    def layout(self) -> StudyLayout:
        return StudyLayout(self.root)

    def snapshot(self, path: Path) -> str:
        """The input path of a snapshot: itself, or (dry run) a pending stand-in when it would change."""
        return str(self.pending_path(path.name) if path in self.pending else path)

    def redo_inputs(self, job: str, dataset: str, seed, synth: str | None = None) -> list[str]:
        """(dry run) A pending stand-in input for a job a real run would recompute first."""
        key = (job, dataset, int(seed), synth)
        return [str(self.pending_path(f"redo-{job}-{dataset}-seed{seed}-{synth or ''}"))] if key in self.redo else []

    def pending_path(self, name: str) -> Path:
        return self.layout.config_dir / PENDING / name


def _warn_identifiers(dataset: str, table, schema) -> None:
    """Say on the terminal which columns of a dataset's table (with its schema) look like record identifiers (a
    warning: the run goes on; the dataset config's `drop` leaves them out)."""
    from holdbench.benchmark.outputs.filereport.diagnostics import DATASET_DROP, identifier_columns, identifier_text

    text = identifier_text(identifier_columns(table, schema.kinds, schema.dates), "the table", DATASET_DROP)
    if text:
        print(f"[holdbench] WARNING dataset {dataset}: {text}")


def _text(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n"


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def snapshots(study: Study, lay: StudyLayout) -> dict[Path, object]:
    """Every snapshot file of the study and its content."""
    files: dict[Path, object] = {}
    for d in study.datasets:
        files[lay.split_config(d)] = split_snapshot(dataset_config(d), study.split, study.split_files)
    for s in study.synthesizers:
        files[lay.synth_config(s)] = synth_snapshot(study.synth_configs[s], study.n_synthetic)
    files[lay.metrics_config] = study.metrics
    files[lay.run_config] = run_snapshot(study.name, study.timeout_seconds, study.memory_gb)
    files[lay.study_json] = study.summary()
    return files


def repairs(study: Study, lay: StudyLayout, files: dict[Path, object], old_run: dict | None) -> list[Repair]:
    """What of the study's outputs on disk must be recomputed (read-only)."""
    limits = {"timeout_seconds": study.timeout_seconds, "memory_gb": study.memory_gb}
    out = [r for d in study.datasets for k in study.seeds if (r := scan_split(lay, d, k, study.sequential))]
    for c in study.cells():
        r = scan_cell(lay, c.dataset, c.seed, c.synthesizer, files[lay.split_config(c.dataset)],
                      files[lay.synth_config(c.synthesizer)], study.metrics, limits, old_run)
        if r:
            out.append(r)
    return out


def prepare(config: dict, workflow=None) -> Plan:
    """Load the study named in the Snakemake config; lock, snapshot and repair as the module says."""
    mode = invocation_mode(workflow)
    if config.get("config_path"):  # the config search path of this run; every job inherits it
        os.environ[CONFIG_PATH_ENV] = str(config["config_path"])
    overrides = config.get("study_overrides") or []
    if isinstance(overrides, str):
        overrides = split_overrides(overrides)
    study = load_study(str(config.get("study", "paper")), overrides)
    root = results_root(config) / study.name
    lay = StudyLayout(root)
    if mode == "run":
        lock_study(root)
        study_locks_only()  # the study lock guards the run; Snakemake's per-checkout lock is off
        clear_stale_locks(study_root=root)  # what killed runs of this study (or older versions) left
        left = sweep({STUDY_ENV: str(root.resolve())})
        if left:
            print(f"[holdbench] killed {len(left)} process(es) left by an interrupted run of {study.name}")
    os.environ[STUDY_ENV] = str(root.resolve())
    costs = {s: synthesizer_cost(s) for s in study.synthesizers}
    if mode == "job":
        return Plan(study, root, mode, costs=costs)
    for d in study.datasets:
        # load (and cache) every dataset now: a bad table stops the run before any job starts
        if study.sequential:
            load_sequential(d)  # every check of the subject and event files (file and column named)
        else:
            if study.split == "random":
                _warn_identifiers(d, *load_dataset_and_schema(d))
            else:
                dataset_schema(d)
    files = snapshots(study, lay)
    old_run = _old_run(lay.run_config)
    todo = repairs(study, lay, files, old_run)
    changed = {p for p, obj in files.items() if _read_text(p) != _text(obj)}
    lost = _collect_lost(study, lay)
    if mode == "run":
        for p in sorted(changed):
            write_text(p, _text(files[p]))
        for r in todo:
            for f in r.remove(lay, list(study.synthesizers)):
                f.unlink(missing_ok=True)
            print(f"[holdbench] {r.where}: recomputing {r.job}: {r.reason}")
        if lost:  # Snakemake would call the collect job up to date and not look at its inputs
            lay.collect_marker.unlink(missing_ok=True)
            print(f"[holdbench] {lost}: collecting again")
        return Plan(study, root, mode, costs=costs)
    print("[holdbench] dry run: nothing is written; the plan below shows what a real run would do")
    for p in sorted(changed & {f for f in files if f.parent == lay.config_dir}):
        print(f"[holdbench] a real run would first update {p} (config changed)")
    for r in todo:
        print(f"[holdbench] {r.where}: a real run would recompute {r.job}: {r.reason}")
    redo = {(r.job, r.dataset, r.seed, r.synthesizer): r.reason for r in todo}
    if lost:
        print(f"[holdbench] {lost}: a real run would collect again")
        redo[("collect", "", 0, None)] = "missing outputs"
    return Plan(study, root, mode, changed, redo, costs)


def _collect_lost(study: Study, lay: StudyLayout) -> str:
    """Why the collect job must run although its marker is there ('' if it need not): a collected
    file or a cell's status.json is missing (removed by hand, or a cell interrupted in a rerun).
    Snakemake alone would call the job up to date: its output is newer than the inputs it finds."""
    if not lay.collect_marker.exists():
        return ""
    gone = [p.name for p in (lay.leaderboard_csv, lay.leaderboard_md, lay.report) if not p.exists()]
    cells = [c for c in study.cells() if not lay.cell_file(c.dataset, c.seed, c.synthesizer, STATUS_JSON).exists()]
    why = [f"{', '.join(gone)} missing"] if gone else []
    if cells:
        why.append(f"{len(cells)} cell(s) without {STATUS_JSON}")
    return "; ".join(why)


def _old_run(path: Path) -> dict | None:
    try:
        obj = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None

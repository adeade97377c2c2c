"""Parse-time side of the Snakemake workflow: load and check the study, write snapshots.

Each job reads only the snapshot it depends on, and a snapshot is rewritten only when
its content changes; Snakemake's mtime check then recomputes exactly what changed:
a synthesizer's config -> its cells; the metrics options -> every evaluation; a new
synthesizer -> only its cells; nothing changed -> nothing runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmark.config import split_overrides
from benchmark.data import dataset_config, dataset_schema, load_dataset
from benchmark.study import Study, load_study, write_if_changed


def results_root(config: dict) -> Path:
    return Path(config.get("results_dir") or os.environ.get("HOLDBENCH_RESULTS_DIR", "results"))


def prepare(config: dict) -> tuple[Study, Path]:
    """Load the study named in the Snakemake config and write its snapshots under results/<study>/."""
    overrides = config.get("study_overrides") or []
    if isinstance(overrides, str):
        overrides = split_overrides(overrides)
    study = load_study(str(config.get("study", "paper")), overrides)
    root = results_root(config) / study.name
    snap = root / ".config"
    for d in study.datasets:
        # load (and cache) every dataset now: a bad table stops the run before any job starts
        load_dataset(d) if study.split == "random" else dataset_schema(d)
        write_if_changed(snap / f"split-{d}.json", {
            "dataset": dataset_config(d), "split": study.split, "split_files": study.split_files,
        })
    for s in study.synthesizers:
        write_if_changed(snap / f"synth-{s}.json", {"config": study.synth_configs[s],
                                                     "n_synthetic": study.n_synthetic})
    write_if_changed(snap / "metrics.json", study.metrics)
    write_if_changed(snap / "run.json", {"name": study.name, "timeout_seconds": study.timeout_seconds,
                                          "memory_gb": study.memory_gb})
    write_if_changed(root / "study.json", study.summary())
    return study, root

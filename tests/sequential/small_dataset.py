"""A reduced copy of the baseball dataset for workflow and CLI tests: a seeded sample of subjects
written as a subject file and an event file, and a one-YAML dataset config naming them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from holdbench.benchmark.config import REPO_ROOT


def write_small_baseball(data, out: Path, n_subjects: int, name: str = "baseball_small", seed: int = 0) -> dict:
    """Write `n_subjects` seeded subjects of `data` (the loaded baseball SequentialData) with all their events
    to out/<name>_subjects.csv and out/<name>_events.csv; return the dataset config (a dict) naming them."""
    key = data.spec.key
    rows = np.sort(np.random.default_rng(seed).choice(data.n_subjects, n_subjects, replace=False))
    subjects = data.subjects.iloc[rows].reset_index(drop=True)
    events = data.events[data.events[key].isin(subjects[key])].reset_index(drop=True)
    out.mkdir(parents=True, exist_ok=True)
    files = {"subjects": out / f"{name}_subjects.csv", "events": out / f"{name}_events.csv"}
    subjects.to_csv(files["subjects"], index=False)
    events.to_csv(files["events"], index=False)
    cfg = yaml.safe_load((REPO_ROOT / "conf" / "dataset" / "baseball.yaml").read_text())
    cfg["name"] = name
    cfg["description"] = f"{n_subjects} subjects of baseball (tests)"
    for part in ("subjects", "events"):
        cfg["sequential"][part]["file"] = str(files[part])
    return cfg

"""What a cell ran with, and how to recognise an output file again (standard library only).

A cell's resolved config is its synthesizer config, the number of records, the dataset and
split config and (once evaluated) the metrics config; the seed is not part of it, so every
seed of a (dataset, synthesizer) shares one digest. The jobs record it in generate.json and
status.json; the workflow compares it with the study's before every run, and the leaderboard
refuses to average cells whose digests differ.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def split_snapshot(dataset_config: dict, split: str, split_files: dict | None) -> dict:
    """Content of .config/split-<dataset>.json."""
    return {"dataset": dataset_config, "split": split, "split_files": split_files}


def is_sequential_split(split: dict) -> bool:
    """True when a split snapshot's dataset is sequential (subject + event tables)."""
    return (split.get("dataset") or {}).get("source") == "sequential"


def synth_snapshot(config: dict, n_synthetic: int) -> dict:
    """Content of .config/synth-<synth>.json."""
    return {"config": config, "n_synthetic": n_synthetic}


def run_snapshot(name: str, timeout_seconds: float, memory_gb: float) -> dict:
    """Content of .config/run.json: the limits every job of the run reads."""
    return {"name": name, "timeout_seconds": timeout_seconds, "memory_gb": memory_gb}


def cell_config(split: dict, synth: dict, metrics: dict | None = None) -> dict:
    """The resolved config of a cell (all seeds alike); without metrics: what generation used."""
    out = {"synthesizer": synth["config"], "n_synthetic": synth["n_synthetic"], "split": split}
    if metrics is not None:
        out["metrics"] = metrics
    return out


def digest(obj: Any) -> str:
    """A short sha256 of the canonical JSON of `obj` (as it reads back from a snapshot file)."""
    canon = json.loads(json.dumps(obj, default=str))
    text = json.dumps(canon, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def file_record(path: Path) -> dict:
    """{"sha256", "bytes"} of a file, to recognise it again."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return {"sha256": h.hexdigest(), "bytes": path.stat().st_size}


def file_problem(path: Path, record: Any) -> str | None:
    """Why `path` is not the file `record` describes (None if it is)."""
    if not path.is_file():
        return f"{path.name} is missing"
    if not isinstance(record, dict) or "sha256" not in record:
        return None
    size = path.stat().st_size
    if record.get("bytes") is not None and size != record["bytes"]:
        return f"{path.name} has {size} bytes, {record['bytes']} were written"
    if file_record(path)["sha256"] != record["sha256"]:
        return f"{path.name} differs from what was written (checksum)"
    return None

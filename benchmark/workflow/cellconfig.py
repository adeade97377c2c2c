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
import math
import re
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


#: settings a synthesizer's name may state, by naming convention: `<generator>_eps<ε>` (mst_eps0.3) and
#: `flip<100 p>` (flip10). A name only states them: what a cell ran with is its recorded config (status.json
#: `config.synthesizer`), and every figure, table and gate reads it from there (see `settings_of`).
_STATED = ((re.compile(r"_eps(?P<v>[0-9]+(?:\.[0-9]+)?)$"), "epsilon", lambda m: float(m["v"])),
           (re.compile(r"^flip(?P<v>[0-9]+)$"), "p", lambda m: int(m["v"]) / 100))


def stated_settings(name: str) -> dict[str, float]:
    """The settings a synthesizer's name states (`mst_eps3` -> {"epsilon": 3.0}, `flip10` -> {"p": 0.1})."""
    out = {}
    for pattern, key, value in _STATED:
        m = pattern.search(str(name))
        if m:
            out[key] = value(m)
    return out


def name_conflicts(name: str, config: dict | None) -> list[str]:
    """Where a synthesizer's name states a setting its config does not use (`mst_eps3` run at ε 1e-300):
    one phrase per setting, empty when the name states nothing or the config agrees. A setting the
    config does not have (a class without ε) is no conflict: the name then states nothing about it."""
    config = config if isinstance(config, dict) else {}
    out = []
    for key, stated in stated_settings(name).items():
        if key not in config:
            continue
        ran = config[key]
        number = isinstance(ran, int | float) and not isinstance(ran, bool)
        if not (number and math.isclose(float(ran), stated, rel_tol=1e-9, abs_tol=0.0)):
            out.append(f"its name states {key} {stated:g} but it ran at {key} {ran!r}")
    return out


def settings_of(status: dict) -> dict:
    """The synthesizer settings a cell ran with, from its status.json (`config.synthesizer`), or {}."""
    config = status.get("config") if isinstance(status, dict) else None
    synth = config.get("synthesizer") if isinstance(config, dict) else None
    return synth if isinstance(synth, dict) else {}

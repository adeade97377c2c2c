"""Following a docs/extending recipe as a new user would: its files written where their blocks' first
lines say (`# ~/...`, with HOME a scratch folder), its shell blocks run through bash with the page's
`export` lines, in an environment holding none of the developer's holdbench settings."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path


def write(home: Path, *texts: str) -> dict[str, Path]:
    """Each block saved at the path its first line names (`# ~/holdbench-conf/...`); that path (without
    `~/`) -> the file."""
    out = {}
    for text in texts:
        where = text.split("\n", 1)[0].removeprefix("# ").strip()
        assert where.startswith("~/"), where
        path = home / where[2:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out[where[2:]] = path
    return out


def env(home: Path) -> dict:
    """The environment of a user whose HOME is `home` (results, caches and MLflow inside it)."""
    out = {k: v for k, v in os.environ.items()
           if k not in ("HOLDBENCH_CONF_DIR", "HOLDBENCH_CONFIG_PATH", "HOLDBENCH_RESULTS_DIR", "PYTHONPATH")}
    out.update(HOME=str(home), HOLDBENCH_RESULTS_DIR=str(home / "results"), HOLDBENCH_CACHE_DIR=str(home / "cache"),
               OMP_NUM_THREADS="1", MLFLOW_TRACKING_URI=f"sqlite:///{home / 'mlflow.db'}")
    return out


def bash(script: str, home: Path, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=home, env=env(home), capture_output=True,
                          text=True, timeout=timeout, check=False)


def cells(home: Path, study: str) -> dict[str, dict]:
    """status.json of every cell of a study run by `holdbench run`, keyed by '<dataset>/seed<k>/<synth>'."""
    root = home / "results" / study
    return {str(p.parent.relative_to(root)): json.loads(p.read_text())
            for p in sorted(root.glob("*/seed*/*/status.json"))}

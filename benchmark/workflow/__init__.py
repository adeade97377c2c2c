"""The Snakemake workflow's Python side.

`prepare` (benchmark.workflow.prepare) runs when Snakemake parses the Snakefile: it loads and
checks the study and, only in an invocation that will execute jobs and only once it holds the
study's lock, writes the config snapshots the jobs depend on and removes outputs that must be
recomputed. This package's __init__ stays light: the job supervisor (benchmark.runner)
imports benchmark.workflow.cellconfig and must start fast.
"""

from __future__ import annotations

import os
from pathlib import Path


def results_root(config: dict) -> Path:
    return Path(config.get("results_dir") or os.environ.get("HOLDBENCH_RESULTS_DIR", "results"))


def __getattr__(name: str):
    if name == "prepare":
        from benchmark.workflow.prepare import prepare

        return prepare
    raise AttributeError(name)

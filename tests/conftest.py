"""Shared test settings: where ../shared is, and a tiny isolated results dir per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HOLDBENCH_SHARED_DIR", REPO.parent / "shared")).resolve()
DATASETS = SHARED / "datasets"
PAPER = DATASETS / "paper_study"
PAPER_DATASETS = ("adult", "bank-marketing", "credit-default", "online-shoppers")

needs_shared = pytest.mark.skipif(not DATASETS.is_dir(), reason=f"shared datasets not found at {DATASETS}")


@pytest.fixture()
def shared_data(monkeypatch, tmp_path):
    """HOLDBENCH_DATA_DIR -> ../shared/datasets, caches into a temp results dir."""
    if not DATASETS.is_dir():
        pytest.skip(f"shared datasets not found at {DATASETS}")
    monkeypatch.setenv("HOLDBENCH_DATA_DIR", str(DATASETS))
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))
    return DATASETS


@pytest.fixture(autouse=True)
def _keep_library_path():
    """Importing rpy2 in a test rewrites LD_LIBRARY_PATH, which breaks Python subprocesses."""
    saved = os.environ.get("LD_LIBRARY_PATH")
    yield
    if saved is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = saved


# Test files that take half a minute or more on a 2-core machine (summed from a junit report), longest first. They
# are scheduled before every other file, which keeps its collection order after them: with
# `--dist loadfile --no-loadscope-reorder` (.ci/test.sh) the workers take the long files first and the
# short ones even out the end, instead of one worker running a long file alone at the end (xdist's
# own order puts the files with the most tests first, and these have few). A file missing here only
# runs later; a stale entry costs time, never a result.
LONGEST_FIRST = (
    "tests/workflow/test_demo_study.py",
    "tests/workflow/test_no_silent_mixing.py",
    "tests/synthesizers/test_synthpop.py",
    "tests/workflow/test_slurm_live.py",
    "tests/workflow/test_shards_and_healing.py",
    "tests/docs/test_guides_blocks.py",
    "tests/synthesizers/test_plugin_generators.py",
    "tests/workflow/test_paper_published.py",
    "tests/docs/test_extending_recipes.py",
    "tests/workflow/test_faults.py",
    "tests/workflow/test_stop_signals.py",
    "tests/workflow/test_extending_metric.py",
    "tests/benchmark/test_study_config.py",
    "tests/sequential/test_sequential_workflow.py",
    "tests/workflow/test_extending_synthesizer.py",
    "tests/workflow/test_tracking_and_containment.py",
    "tests/workflow/test_extending_dataset.py",
    "tests/workflow/test_thread_invariance.py",
    "tests/workflow/test_progress_run.py",
    "tests/benchmark/test_evaluate_cli.py",
    "tests/workflow/test_sharded_workflow.py",
    "tests/metrics/test_anonymeter_reference.py",
    "tests/benchmark/test_mlflow_ui.py",
    "tests/workflow/test_synthesizer_artifacts.py",
)


def pytest_collection_modifyitems(items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))

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

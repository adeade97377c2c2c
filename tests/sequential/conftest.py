"""Seeded samples of the two real sequential datasets, split by subject (module-scoped: loaded once)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.conftest import DATASETS

N_SUBJECTS = 600


def sample_subjects(data, n: int, seed: int = 0):
    """n subjects drawn without replacement (seeded), each with all its events."""
    key = data.spec.key
    rows = np.sort(np.random.default_rng(seed).choice(data.n_subjects, n, replace=False))
    keep = data.subjects[key].iloc[rows]
    return replace(data, subjects=data.subjects.iloc[rows].reset_index(drop=True),
                   events=data.events[data.events[key].isin(keep)].reset_index(drop=True))


@pytest.fixture(scope="session")
def loaded():
    """{name: SequentialData} of baseball and nlswork, read from the shared datasets."""
    if not DATASETS.is_dir():
        pytest.skip(f"shared datasets not found at {DATASETS}")
    from holdbench.benchmark.data.sequential import load_sequential

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOLDBENCH_DATA_DIR", str(DATASETS))
        return {name: load_sequential(name) for name in ("baseball", "nlswork")}


@pytest.fixture(scope="session")
def cells(loaded):
    """{name: (spec, T, H)} for a seeded sample of N_SUBJECTS subjects of each dataset."""
    from holdbench.benchmark.data.sequential import split_by_subject

    out = {}
    for name, data in loaded.items():
        t, h = split_by_subject(sample_subjects(data, N_SUBJECTS), 0)
        out[name] = (data.spec, t, h)
    return out

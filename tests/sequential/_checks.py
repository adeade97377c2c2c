"""Shared by the tests of the model-based sequential synthesizers (PAR, MOSTLY AI two-stage): a small
training split with a known share of zero-event subjects, and the checks every synthetic pair must pass."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from holdbench.benchmark.data.sequential import check_synthetic, split_by_subject
from holdbench.synthesizers.sequential import SequentialContext
from tests.sequential.conftest import sample_subjects


def small_train(data, n_subjects: int, zero_share: float, seed: int = 0):
    """T of a seeded sample of n_subjects subjects, with the events of a seeded `zero_share` of T's
    subjects removed (so T surely holds zero-event subjects), and its SequentialContext."""
    t, _ = split_by_subject(sample_subjects(data, n_subjects, seed), seed)
    key = t.spec.key
    rng = np.random.default_rng(seed + 1)
    emptied = t.subjects[key].to_numpy()[rng.random(t.n_subjects) < zero_share]
    t = replace(t, events=t.events[~t.events[key].isin(emptied)].reset_index(drop=True))
    spec = t.spec
    ctx = SequentialContext(spec.key, spec.subject_schema, spec.event_schema, 0, spec.name, order=spec.order)
    return t, ctx


def zero_event_subjects(subjects: pd.DataFrame, events: pd.DataFrame, key: str) -> int:
    return int((~subjects[key].isin(events[key])).sum())


def _kind(dtype) -> str:
    """numpy kind of a dtype, nullable extension dtypes read as their numpy counterpart (Int64 -> 'i')."""
    return np.dtype(getattr(dtype, "numpy_dtype", dtype)).kind


def check_pair(train, subjects: pd.DataFrame, events: pd.DataFrame, n: int) -> None:
    """S has T's columns (order included) and dtypes (nullable where S has missing values), n subjects with
    keys 0..n-1, and every event belongs to a subject, each subject's events contiguous in key order."""
    spec, key = train.spec, train.spec.key
    check_synthetic(spec, subjects, events)
    assert list(subjects.columns) == list(train.subjects.columns)
    assert list(events.columns) == list(train.events.columns)
    for frame, real in ((subjects, train.subjects), (events, train.events)):
        for col in real.columns:
            if col != key:
                assert _kind(frame[col].dtype) == _kind(real[col].dtype), (col, frame[col].dtype, real[col].dtype)
    assert len(subjects) == n
    assert subjects[key].tolist() == list(range(n))
    owners = events[key].to_numpy()
    assert np.all(np.diff(owners) >= 0), "a subject's events are not contiguous"
    assert set(owners) <= set(range(n))

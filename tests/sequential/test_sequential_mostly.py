"""MOSTLY AI's engine in two stages (holdbench.synthesizers.sequential_mostly). Without the engine (the main
environment, CI) the synthesizer must refuse to fit with the install command, as the flat bridge does;
the tests that train skip when mostlyai-engine is not importable (run them in the engine's venv, see the
README's "Installing the MOSTLY AI engine")."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from holdbench.contracts.schema import Schema
from holdbench.synthesizers.base import SynthesizerUnavailable
from holdbench.synthesizers.mostly import INSTALL_HINT
from holdbench.synthesizers.sequential import SequentialContext
from holdbench.synthesizers.sequential_mostly import MostlySequential
from tests.sequential._checks import check_pair, small_train, zero_event_subjects


def _engine_installed() -> bool:
    try:
        return importlib.util.find_spec("mostlyai.engine") is not None
    except ModuleNotFoundError:
        return False


ENGINE = _engine_installed()
needs_engine = pytest.mark.skipif(not ENGINE, reason="mostlyai-engine is not installed (optional extra: "
                                                     "pip install 'holdbench[mostly]'; see the README)")

#: the `smoke` preset of the config: one epoch per stage of the small model, the time cap far away (epochs decide)
SMOKE = {"max_epochs": 1, "max_training_time": 10.0, "model": "MOSTLY_AI/Small"}
ZERO_SHARE = 0.25


def _tiny():
    subjects = pd.DataFrame({"id": ["a", "b", "c"], "age": [30, 41, 52]})
    events = pd.DataFrame({"id": ["a", "a", "c"], "t": [1, 2, 1], "v": ["x", "y", "x"]})
    ctx = SequentialContext("id", Schema.from_mapping("s", {"age": {"kind": "numeric", "dtype": "int"}}),
                            Schema.from_mapping("e", {"t": {"kind": "numeric", "dtype": "int"},
                                                      "v": {"kind": "categorical"}}), 0, "tiny", order=("t",))
    return subjects, events, ctx


@pytest.mark.skipif(ENGINE, reason="the engine is installed here; this checks the path without it")
def test_without_the_engine_fit_says_how_to_install():
    subjects, events, ctx = _tiny()
    with pytest.raises(SynthesizerUnavailable, match="mostlyai-engine is not installed") as err:
        MostlySequential().fit(subjects, events, ctx)
    assert INSTALL_HINT in str(err.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"max_training_time": 0}, "max_training_time must be positive"),
    ({"max_epochs": -1}, "max_epochs must be positive"),
    ({"model": "MOSTLY_AI/Huge"}, "model must be one of"),
    ({"trn_val_split": 1.0}, "trn_val_split must be in"),
    ({"numeric_encoding": "TABULAR_CATEGORICAL"}, "numeric_encoding must be one of"),
])
def test_bad_settings_are_refused_before_the_engine_is_needed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MostlySequential(**kwargs)


def test_sample_before_fit_is_refused():
    with pytest.raises(RuntimeError, match="before fit"):
        MostlySequential().sample(5, 0)


@pytest.fixture(scope="module")
def baseball_fit(loaded):
    """Both stages fitted (seed 0) on T of 120 baseball subjects, a quarter of them emptied of events."""
    if not ENGINE:
        pytest.skip("mostlyai-engine is not installed")
    t, ctx = small_train(loaded["baseball"], 120, ZERO_SHARE)
    synth = MostlySequential(**SMOKE)
    synth.fit(t.subjects, t.events, ctx)
    return t, ctx, synth


@needs_engine
@pytest.mark.slow
def test_tables_have_ts_columns_and_keys(baseball_fit):
    t, ctx, synth = baseball_fit
    n = t.n_subjects + 9
    subjects, events = synth.sample(n, 1)
    check_pair(t, subjects, events, n)
    assert len(events) > 0
    record = synth.info()
    assert record["engine_version"]
    assert set(record["fit"]["events"]["encodings"]) == set(ctx.event_schema.names)
    assert set(record["fit"]["subjects"]["encodings"]) == set(ctx.subject_schema.names)


@needs_engine
@pytest.mark.slow
def test_same_seed_same_tables_whatever_came_before(baseball_fit):
    _, _, synth = baseball_fit
    first = synth.sample(50, 5)
    synth.sample(20, 6)
    again = synth.sample(50, 5)
    other = synth.sample(50, 7)
    for a, b in zip(first, again, strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert not (first[0].equals(other[0]) and first[1].equals(other[1]))


@needs_engine
@pytest.mark.slow
def test_same_fit_seed_same_model(loaded):
    t, ctx = small_train(loaded["nlswork"], 60, 0.0)
    out = []
    for _ in range(2):
        synth = MostlySequential(**SMOKE)
        synth.fit(t.subjects, t.events, ctx)
        out.append(synth.sample(25, 3))
    for a, b in zip(*out, strict=True):
        pd.testing.assert_frame_equal(a, b)


@needs_engine
@pytest.mark.slow
def test_zero_event_subjects_are_lengths_the_engine_samples(baseball_fit):
    t, ctx, synth = baseball_fit
    zero_t = zero_event_subjects(t.subjects, t.events, ctx.key)
    assert synth.fit_record["events"]["zero_event_subjects_in_T"] == zero_t > 0
    n = 200
    subjects, events = synth.sample(n, 11)
    zero_s = zero_event_subjects(subjects, events, ctx.key)
    assert zero_s == synth.sample_record["events"]["zero_event_subjects"]
    assert zero_s > 0  # T's quarter of empty sequences reappears as length 0
    lengths = np.bincount(events[ctx.key].to_numpy(), minlength=n)
    assert (lengths == 0).sum() == zero_s

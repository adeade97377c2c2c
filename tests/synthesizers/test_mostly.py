"""MOSTLY AI engine wrapper: the 'not installed' path always, a real smoke fit when importable."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from benchmark.config import build_synthesizer, synthesizer_config
from synthesizers import mostly
from synthesizers.base import SynthesizerUnavailable
from synthesizers.checks import check_output
from synthesizers.mostly import MostlyAI, encoding_type


def _engine_or_skip():
    try:
        import mostlyai.engine  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - not installed, or installed against another torch build
        pytest.skip(f"mostlyai-engine is not importable here: {type(exc).__name__}: {exc}")


def test_unavailable_engine_says_how_to_install(monkeypatch, train, fit_ctx):
    monkeypatch.setitem(sys.modules, "mostlyai.engine", None)
    synth = build_synthesizer(synthesizer_config("mostly_ai", preset="smoke"))
    with pytest.raises(SynthesizerUnavailable, match=r"mostlyai-engine is not installed: pip install 'holdbench\[mostly\]'"):
        synth.fit(train, fit_ctx())


def test_broken_engine_install_is_reported_as_such(monkeypatch, train, fit_ctx):
    def broken(name):
        raise RuntimeError("operator torchvision::nms does not exist")

    monkeypatch.setattr(mostly.importlib, "import_module", broken)
    with pytest.raises(SynthesizerUnavailable, match="installed but cannot be imported: RuntimeError: operator"):
        MostlyAI().fit(train, fit_ctx())


def test_encoding_types_follow_the_schema(schema):
    assert {c.name: encoding_type(c) for c in schema.columns} == {
        "age": "TABULAR_NUMERIC_AUTO",
        "income": "TABULAR_NUMERIC_AUTO",
        "member": "TABULAR_CATEGORICAL",
        "color": "TABULAR_CATEGORICAL",
        "city": "TABULAR_CATEGORICAL",
        "grade": "TABULAR_CATEGORICAL",
    }


def test_config_budget_and_validation():
    assert synthesizer_config("mostly_ai")["max_training_time"] == 60.0
    assert synthesizer_config("mostly_ai", preset="smoke")["max_epochs"] == 1
    with pytest.raises(ValueError, match="max_training_time"):
        MostlyAI(max_training_time=0)


def test_sample_before_fit_is_an_error():
    with pytest.raises(RuntimeError, match="before fit"):
        MostlyAI().sample(5, seed=0)


@pytest.mark.slow
def test_smoke_fit_sample_is_reproducible(train, schema, fit_ctx):
    _engine_or_skip()
    outs = []
    for _ in range(2):
        synth = build_synthesizer(synthesizer_config("mostly_ai", preset="smoke"))
        synth.fit(train, fit_ctx(seed=4))
        outs.append(synth.sample(150, seed=1))
    out = check_output(outs[0], schema, 150, "mostly_ai")
    assert len(out) == 150
    pd.testing.assert_frame_equal(outs[0], outs[1])
    assert not synth.sample(150, seed=2).equals(outs[1])

"""MOSTLY AI engine bridge: config -> engine arguments, encodings, dtypes, caches; a real fit when importable.

Everything but the last test runs without the engine: a fake engine module records the
calls and writes what the real one writes (stats.json, progress file, parquet output with
the engine's dtypes), so the flow through fit and sample is checked everywhere.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cell.checks import check_output
from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.synthesizers import mostly
from holdbench.synthesizers.base import SynthesizerUnavailable
from holdbench.synthesizers.mostly import (
    MostlyAI,
    cache_env,
    digits_for_binned,
    encoding_types,
    redirected_caches,
    restore_dtypes,
    used_encodings,
)

AUTO, DIGIT, CAT = "TABULAR_NUMERIC_AUTO", "TABULAR_NUMERIC_DIGIT", "TABULAR_CATEGORICAL"


def _engine_or_skip():
    try:
        import mostlyai.engine  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - not installed, or installed against another torch build
        pytest.skip(f"mostlyai-engine is not importable here: {type(exc).__name__}: {exc}")


# --- availability -----------------------------------------------------------------------------

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


# --- encodings --------------------------------------------------------------------------------

def test_encoding_types_follow_the_schema(schema):
    assert encoding_types(schema.columns) == {
        "age": AUTO, "income": AUTO, "member": CAT, "color": CAT, "city": CAT, "grade": CAT,
    }


def test_numeric_encoding_and_per_column_overrides(schema):
    got = encoding_types(schema.columns, numeric_encoding=DIGIT,
                         overrides={"income": "TABULAR_NUMERIC_BINNED", "grade": "TABULAR_NUMERIC_DISCRETE"})
    assert got == {"age": DIGIT, "income": "TABULAR_NUMERIC_BINNED", "member": CAT, "color": CAT, "city": CAT,
                   "grade": "TABULAR_NUMERIC_DISCRETE"}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"overrides": {"height": DIGIT}}, "column_encodings names column 'height'"),
    ({"overrides": {"color": DIGIT}}, "column 'color' has dtype str"),
    ({"overrides": {"member": DIGIT}}, "column 'member' has dtype bool"),
    ({"overrides": {"age": "TABULAR_DATETIME"}}, r"column_encodings\['age'\] must be one of"),
    ({"numeric_encoding": "DIGIT"}, "numeric_encoding must be one of"),
])
def test_bad_encodings_are_named(schema, kwargs, message):
    with pytest.raises(ValueError, match=message):
        encoding_types(schema.columns, **kwargs)


def test_used_encodings_are_read_from_the_engine_analysis(tmp_path):
    stats = tmp_path / "ModelStore" / "tgt-stats"
    stats.mkdir(parents=True)
    (stats / "stats.json").write_text(json.dumps({"columns": {
        "a": {"encoding_type": "TABULAR_NUMERIC_BINNED", "bins": [0, 1]},
        "b": {"encoding_type": CAT}}, "no_of_training_records": 9}))
    assert used_encodings(tmp_path) == {"a": "TABULAR_NUMERIC_BINNED", "b": CAT}
    with pytest.raises(RuntimeError, match="cannot read the engine's column encodings"):
        used_encodings(tmp_path / "elsewhere")


def test_digits_replace_only_what_auto_binned_around_an_interior_point_mass():
    requested = {"a": AUTO, "b": AUTO, "c": AUTO, "d": "TABULAR_NUMERIC_BINNED", "e": CAT, "f": AUTO, "m": AUTO}
    binned = "TABULAR_NUMERIC_BINNED"
    used = {"a": binned, "b": "TABULAR_NUMERIC_DISCRETE", "c": DIGIT, "d": binned, "e": CAT, "f": binned, "m": binned}
    # 200 rows: in a, 5.05 (between min and max) holds 2 rows = 1 %; f has 200 distinct values;
    # in m, half the rows hold the minimum 0, which BINNED keeps exactly
    distinct = np.arange(1, 199) / 7
    train = pd.DataFrame({"a": [5.05, 5.05, *distinct], "f": np.arange(200) / 3, "m": [0.0] * 100 + list(distinct[:100]),
                          **{c: np.zeros(200) for c in "bcde"}})
    assert digits_for_binned(requested, used, train, point_mass=0.01) == {
        "a": DIGIT, "b": AUTO, "c": AUTO, "d": binned, "e": CAT, "f": AUTO, "m": AUTO}
    assert digits_for_binned(requested, used, train, point_mass=0.011)["a"] == AUTO
    everything = digits_for_binned(requested, used, train, point_mass=0)
    assert (everything["f"], everything["m"], everything["d"]) == (DIGIT, DIGIT, binned)


# --- config -> engine arguments --------------------------------------------------------------

def test_default_config_maps_to_the_engines_defaults():
    synth = build_synthesizer(synthesizer_config("mostly_ai"))
    assert synth.analyze_kwargs() == {"value_protection": True}
    assert synth.train_kwargs() == {"model": "MOSTLY_AI/Medium", "max_training_time": 60.0, "max_epochs": 100.0,
                                    "batch_size": None, "enable_flexible_generation": True, "device": "cpu"}
    assert synth.generate_kwargs(7) == {"sample_size": 7, "sampling_temperature": 1.0, "sampling_top_p": 1.0,
                                        "rare_category_replacement_method": "CONSTANT", "device": "cpu"}
    assert (synth.numeric_encoding, synth.categorical_encoding, synth.column_encodings) == (AUTO, CAT, {})


def test_every_knob_reaches_the_engine():
    synth = MostlyAI(max_training_time=5, max_epochs=12, model="MOSTLY_AI/Large", batch_size=256,
                     value_protection=False, rare_category_replacement="SAMPLE", enable_flexible_generation=False,
                     sampling_temperature=0.8, sampling_top_p=0.9)
    assert synth.analyze_kwargs() == {"value_protection": False}
    assert synth.train_kwargs() == {"model": "MOSTLY_AI/Large", "max_training_time": 5, "max_epochs": 12,
                                    "batch_size": 256, "enable_flexible_generation": False, "device": "cpu"}
    assert synth.generate_kwargs(3) == {"sample_size": 3, "sampling_temperature": 0.8, "sampling_top_p": 0.9,
                                        "rare_category_replacement_method": "SAMPLE", "device": "cpu"}


def test_paper_preset_is_the_measured_choice():
    """AUTO with digits where AUTO would bin; everything else (value protection on) as the engine's default."""
    default, paper = synthesizer_config("mostly_ai"), synthesizer_config("mostly_ai", preset="paper")
    assert {k: v for k, v in paper.items() if default[k] != v} == {"binned_to_digit": True}
    assert paper["value_protection"] is True and paper["numeric_encoding"] == AUTO
    assert build_synthesizer(paper).analyze_kwargs() == {"value_protection": True}


@pytest.mark.parametrize(("kwargs", "setting"), [
    ({"max_training_time": 0}, "max_training_time"), ({"max_epochs": -1}, "max_epochs"),
    ({"model": "MOSTLY_AI/Huge"}, "model"), ({"batch_size": 0}, "batch_size"),
    ({"rare_category_replacement": "DROP"}, "rare_category_replacement"), ({"trn_val_split": 1.0}, "trn_val_split"),
    ({"numeric_encoding": CAT}, "numeric_encoding"), ({"column_encodings": {"x": "BINNED"}}, "column_encodings"),
    ({"sampling_top_p": 0}, "sampling_top_p"), ({"point_mass": 1.5}, "point_mass"),
])
def test_bad_settings_are_named(kwargs, setting):
    with pytest.raises(ValueError, match=setting):
        MostlyAI(**kwargs)


def test_sample_before_fit_is_an_error():
    with pytest.raises(RuntimeError, match="before fit"):
        MostlyAI().sample(5, seed=0)


# --- dtypes -----------------------------------------------------------------------------------

def _engine_like(values: dict) -> pd.DataFrame:
    """A frame with the engine's output dtypes: Int64, Float64 and string for everything else."""
    return pd.DataFrame({
        "i": pd.array(values["i"], dtype="Int64"),
        "f": pd.array(values["f"], dtype="Float64"),
        "b": pd.array(values["b"], dtype="string"),
        "s": pd.array(values["s"], dtype="string"),
        "code": pd.array(values["code"], dtype="string"),
    })


T_DTYPES = {"i": np.dtype("int64"), "f": np.dtype("float64"), "b": np.dtype("bool"), "s": np.dtype("O"),
            "code": np.dtype("int64")}


def test_engine_output_gets_ts_dtypes():
    raw = _engine_like({"i": [3, 1], "f": [0.5, 2.25], "b": ["True", "False"], "s": ["x", "y"], "code": ["2", "1"]})
    out, rare = restore_dtypes(raw[["s", "code", "b", "f", "i"]], T_DTYPES)
    expected = pd.DataFrame({"i": np.array([3, 1], dtype="int64"), "f": [0.5, 2.25], "b": [True, False],
                             "s": np.array(["x", "y"], dtype=object), "code": np.array([2, 1], dtype="int64")})
    pd.testing.assert_frame_equal(out, expected)
    assert rare == {}


def test_missing_values_and_rare_tokens():
    raw = _engine_like({"i": [3, None], "f": [None, 2.0], "b": ["True", None], "s": [None, "_RARE_"],
                        "code": ["_RARE_", "4"]})
    out, rare = restore_dtypes(raw, T_DTYPES)
    assert out["i"].dtype == "Int64" and out["i"].isna().tolist() == [False, True]
    assert out["f"].dtype == np.float64 and np.isnan(out["f"].iloc[0])
    assert out["b"].dtype == "boolean" and out["b"].iloc[0] is np.True_ and out["b"].isna().iloc[1]
    assert out["s"].dtype == object and out["s"].iloc[1] == "_RARE_"
    assert isinstance(out["s"].iloc[0], float) and np.isnan(out["s"].iloc[0])
    assert out["code"].dtype == "Int64" and out["code"].isna().tolist() == [True, False] and out["code"].iloc[1] == 4
    assert rare == {"code": 1}


@pytest.mark.parametrize(("column", "value", "message"), [
    ("b", "maybe", "column 'b' should be boolean"),
    ("code", "abc", "column 'code' should be numeric"),
    ("i", 2.5, "column 'i' should hold integers"),
])
def test_values_not_of_ts_dtype_are_named(column, value, message):
    base = {"i": [1, 2], "f": [0.0, 1.0], "b": ["True", "False"], "s": ["x", "y"], "code": ["1", "2"]}
    raw = _engine_like(base)
    raw[column] = pd.Series([value, base[column][1]], dtype=object)
    with pytest.raises(ValueError, match=message):
        restore_dtypes(raw, T_DTYPES)


def test_a_missing_output_column_is_named():
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['i'\]"):
        restore_dtypes(pd.DataFrame({"f": [1.0]}), {"i": "int64", "f": "float64"})


# --- caches -----------------------------------------------------------------------------------

def test_cache_env_points_into_the_scratch_dir(tmp_path):
    env = cache_env(tmp_path)
    assert env == {"HF_HOME": str(tmp_path / "hf-cache"), "HF_DATASETS_CACHE": str(tmp_path / "hf-cache" / "datasets"),
                   "HF_MODULES_CACHE": str(tmp_path / "hf-cache" / "modules"), "HF_HUB_OFFLINE": "1"}


def test_redirected_caches_set_and_restore_env_and_datasets_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HOME", "/somewhere/else")
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    fake_config = types.SimpleNamespace(HF_DATASETS_CACHE=Path("/home/u/.cache/huggingface/datasets"),
                                        HF_MODULES_CACHE=Path("/home/u/.cache/huggingface/modules"))
    monkeypatch.setitem(sys.modules, "datasets.config", fake_config)
    with redirected_caches(tmp_path):
        assert os.environ["HF_DATASETS_CACHE"] == str(tmp_path / "hf-cache" / "datasets")
        assert os.environ["HF_HOME"] == str(tmp_path / "hf-cache")
        assert fake_config.HF_DATASETS_CACHE == tmp_path / "hf-cache" / "datasets"
    assert os.environ["HF_HOME"] == "/somewhere/else"
    assert "HF_DATASETS_CACHE" not in os.environ
    assert fake_config.HF_DATASETS_CACHE == Path("/home/u/.cache/huggingface/datasets")


# --- the flow through fit and sample, with a fake engine ----------------------------------------

class FakeEngine:
    """Records the calls; writes the files the real engine writes, in the engine's dtypes."""

    def __init__(self, train: pd.DataFrame):
        self.table, self.calls, self.seeds, self.splits = train, {}, [], []

    def set_random_state(self, seed):
        self.seeds.append(seed)

    def split(self, tgt_data, tgt_encoding_types, workspace_dir, **kw):
        self.calls["split"] = {"encodings": dict(tgt_encoding_types), **kw}
        self.splits.append(dict(tgt_encoding_types))
        stats = Path(workspace_dir) / "ModelStore" / "tgt-stats"
        stats.mkdir(parents=True, exist_ok=True)
        # like the engine's AUTO: floats with many digits are binned, small integers get digits
        auto = {c: "TABULAR_NUMERIC_BINNED" if self.table[c].dtype == float else DIGIT for c in self.table.columns}
        resolved = {c: (auto[c] if e == AUTO else e) for c, e in tgt_encoding_types.items()}
        (stats / "stats.json").write_text(json.dumps({"columns": {c: {"encoding_type": e} for c, e in resolved.items()}}))

    def analyze(self, workspace_dir, **kw):
        self.calls["analyze"] = kw

    def encode(self, workspace_dir):
        self.calls["encode"] = True

    def train(self, workspace_dir, update_progress=None, **kw):
        self.calls["train"] = {**kw, "HF_DATASETS_CACHE": os.environ.get("HF_DATASETS_CACHE")}
        model = Path(workspace_dir) / "ModelStore" / "model-data"
        model.mkdir(parents=True)
        (model / "progress-messages.csv").write_text("epoch,total_time,val_loss\n1.0,2.5,30.0\n2.0,5.0,29.5\n")

    def generate(self, workspace_dir, sample_size, **kw):
        self.calls["generate"] = {"sample_size": sample_size, **kw}
        t = self.table.head(sample_size)
        out = pd.DataFrame({
            c: pd.array(t[c].astype(str).where(t[c].notna(), None), dtype="string")
            if t[c].dtype == bool or t[c].dtype == object else pd.array(t[c], dtype="Float64" if t[c].dtype == float else "Int64")
            for c in t.columns})
        syn = Path(workspace_dir) / "SyntheticData"
        syn.mkdir(exist_ok=True)
        out.to_parquet(syn / "part.000000.000000.parquet")


def test_fit_and_sample_through_a_fake_engine(monkeypatch, tmp_path, train, schema, fit_ctx):
    fake = FakeEngine(train)
    monkeypatch.setattr(mostly, "_engine", lambda: fake)
    monkeypatch.delenv("HF_DATASETS_CACHE", raising=False)
    synth = MostlyAI(numeric_encoding=DIGIT, value_protection=False, max_epochs=7, workspace_dir=str(tmp_path),
                     column_encodings={"income": "TABULAR_NUMERIC_BINNED"})
    synth.fit(train, fit_ctx(seed=4))
    assert fake.calls["split"]["encodings"] == {"age": DIGIT, "income": "TABULAR_NUMERIC_BINNED", "member": CAT,
                                                "color": CAT, "city": CAT, "grade": CAT}
    assert fake.calls["split"]["model_type"] == "TABULAR" and fake.calls["split"]["trn_val_split"] == 0.8
    assert fake.calls["analyze"] == {"value_protection": False}
    assert fake.calls["train"]["max_epochs"] == 7
    assert fake.calls["train"]["HF_DATASETS_CACHE"] == str(tmp_path / "hf-cache" / "datasets")
    assert "HF_DATASETS_CACHE" not in os.environ
    assert len(fake.splits) == 1
    assert synth.fit_record["encodings"] == {"age": DIGIT, "income": "TABULAR_NUMERIC_BINNED", "member": CAT,
                                             "color": CAT, "city": CAT, "grade": CAT}
    assert synth.fit_record["epochs"] == 2.0 and synth.fit_record["best_val_loss"] == 29.5

    out = synth.sample(40, seed=9)
    assert fake.seeds == [4, 9]
    assert synth.sample_record == {"rare_to_missing": {}}
    assert {c: str(t) for c, t in out.dtypes.items()} == {c: str(t) for c, t in train.dtypes.items()}
    pd.testing.assert_frame_equal(out, train.head(40))
    check_output(out, schema, 40, "mostly_ai")
    # what the cell records (generate.json's synthesizer_info): JSON-safe, every column's encoding
    info = json.loads(json.dumps(synth.info()))
    assert info["encodings"] == {"age": DIGIT, "income": "TABULAR_NUMERIC_BINNED", "member": CAT,
                                 "color": CAT, "city": CAT, "grade": CAT}
    assert info["requested_encodings"]["income"] == "TABULAR_NUMERIC_BINNED"
    assert (info["epochs"], info["rare_to_missing"]) == (2.0, {})
    assert "engine_version" in info


def test_binned_to_digit_redoes_split_and_analysis_with_the_same_seed(monkeypatch, tmp_path, train, fit_ctx):
    fake = FakeEngine(train)
    monkeypatch.setattr(mostly, "_engine", lambda: fake)
    synth = MostlyAI(binned_to_digit=True, point_mass=0, workspace_dir=str(tmp_path))
    synth.fit(train, fit_ctx(seed=6))
    assert [s["income"] for s in fake.splits] == [AUTO, DIGIT]
    assert [s["age"] for s in fake.splits] == [AUTO, AUTO]
    assert fake.seeds == [6, 6]
    assert synth.fit_record["requested_encodings"]["income"] == DIGIT
    assert synth.fit_record["encodings"] == {"age": DIGIT, "income": DIGIT, "member": CAT, "color": CAT,
                                             "city": CAT, "grade": CAT}


def test_without_binned_columns_nothing_is_redone(monkeypatch, tmp_path, train, fit_ctx):
    fake = FakeEngine(train.assign(income=0))  # an int column: the fake AUTO gives it digits
    monkeypatch.setattr(mostly, "_engine", lambda: fake)
    MostlyAI(binned_to_digit=True, workspace_dir=str(tmp_path)).fit(train, fit_ctx(seed=6))
    assert len(fake.splits) == 1


def test_a_binned_column_without_point_mass_stays_binned(monkeypatch, tmp_path, train, fit_ctx):
    fake = FakeEngine(train)  # income: ~285 distinct values in 300 rows, none holds 1 %
    monkeypatch.setattr(mostly, "_engine", lambda: fake)
    synth = MostlyAI(binned_to_digit=True, workspace_dir=str(tmp_path))
    synth.fit(train, fit_ctx(seed=6))
    assert len(fake.splits) == 1 and synth.fit_record["encodings"]["income"] == "TABULAR_NUMERIC_BINNED"


# --- the real engine --------------------------------------------------------------------------

@pytest.mark.slow
def test_smoke_fit_sample_is_reproducible_in_ts_dtypes(tmp_path, train, schema, fit_ctx):
    _engine_or_skip()
    outs = []
    for i in range(2):
        cfg = synthesizer_config("mostly_ai", preset="smoke")
        cfg["workspace_dir"] = str(tmp_path / f"ws{i}")
        synth = build_synthesizer(cfg)
        synth.fit(train, fit_ctx(seed=4))
        outs.append(synth.sample(150, seed=1))
    assert {c: str(t) for c, t in outs[0].dtypes.items()} == {c: str(t) for c, t in train.dtypes.items()}
    assert len(check_output(outs[0], schema, 150, "mostly_ai")) == 150
    pd.testing.assert_frame_equal(outs[0], outs[1])
    assert not synth.sample(150, seed=2).equals(outs[1])
    assert set(synth.fit_record["encodings"]) == set(schema.names)
    assert "TABULAR_NUMERIC_AUTO" not in synth.fit_record["encodings"].values()
    assert (tmp_path / "ws1" / "hf-cache" / "datasets").is_dir()

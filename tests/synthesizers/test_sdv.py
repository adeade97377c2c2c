"""SDV wrappers: smoke fit/sample through the configs, seeding, metadata, epoch logs."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch

from benchmark.config import build_synthesizer, synthesizer_config
from synthesizers import sdv as sdv_wrappers
from synthesizers._seeding import single_thread
from synthesizers.checks import check_output

SDV_NAMES = ("gaussian_copula", "ctgan", "tvae", "copulagan")


def _fitted(name, train, ctx, **overrides):
    synth = build_synthesizer(
        synthesizer_config(name, preset="smoke", overrides=[f"{k}={v}" for k, v in overrides.items()])
    )
    synth.fit(train, ctx)
    return synth


@pytest.mark.parametrize("name", SDV_NAMES)
def test_smoke_fit_sample_passes_checks(name, train, schema, fit_ctx):
    synth = _fitted(name, train, fit_ctx(seed=3))
    out = check_output(synth.sample(250, seed=5), schema, 250, name)
    assert len(out) == 250
    assert list(out.columns) == schema.names
    # categories come from T: the model must not invent labels
    assert set(out["color"].dropna()) <= set(train["color"])
    assert set(out["grade"].dropna()) <= set(train["grade"])


@pytest.mark.parametrize("name", ["gaussian_copula", "ctgan"])
def test_same_seeds_same_output(name, train, fit_ctx):
    first = _fitted(name, train, fit_ctx(seed=11))
    second = _fitted(name, train, fit_ctx(seed=11))
    a = first.sample(300, seed=1)
    pd.testing.assert_frame_equal(a, second.sample(300, seed=1))
    other = first.sample(300, seed=2)
    # the model's own draws follow the seed, not only where the missing values go
    assert not a[["age", "color"]].equals(other[["age", "color"]])
    # sampling depends on (fit, n, seed) only, not on earlier sample calls
    pd.testing.assert_frame_equal(a, first.sample(300, seed=1))


def test_missing_values_move_with_the_sample_seed(train, fit_ctx):
    synth = _fitted("gaussian_copula", train, fit_ctx())
    a = synth.sample(400, seed=1)["income"].isna()
    b = synth.sample(400, seed=2)["income"].isna()
    assert a.any() and b.any()
    assert not a.equals(b)


def test_ctgan_fit_seed_changes_the_model(train, fit_ctx):
    a = _fitted("ctgan", train, fit_ctx(seed=1)).sample(200, seed=0)
    b = _fitted("ctgan", train, fit_ctx(seed=2)).sample(200, seed=0)
    assert not a.equals(b)


def test_metadata_follows_model_kind_not_detection(schema):
    meta = sdv_wrappers.sdv_metadata(schema).to_dict()
    sdtypes = {c: spec["sdtype"] for c, spec in meta["tables"]["train"]["columns"].items()}
    assert sdtypes == {
        "age": "numerical",
        "income": "numerical",
        "member": "boolean",
        "color": "categorical",
        "city": "categorical",
        "grade": "categorical",
    }


def test_epochs_are_logged_and_tqdm_restored(train, fit_ctx, caplog):
    import ctgan.synthesizers.ctgan as ctgan_module

    original = ctgan_module.tqdm
    threads = torch.get_num_threads()
    with caplog.at_level(logging.INFO, logger="holdbench.synth"):
        _fitted("ctgan", train, fit_ctx(), epochs=3, log_every=2)
    epochs = [r.getMessage() for r in caplog.records if "epoch" in r.getMessage()]
    assert [m.split(",")[0] for m in epochs] == ["CTGAN: epoch 2/3", "CTGAN: epoch 3/3"]
    assert "Gen." in epochs[0] and "Discrim." in epochs[0]
    assert ctgan_module.tqdm is original
    assert torch.get_num_threads() == threads


def test_tvae_logs_loss(train, fit_ctx, caplog):
    with caplog.at_level(logging.INFO, logger="holdbench.synth"):
        _fitted("tvae", train, fit_ctx())
    assert any(r.getMessage().startswith("TVAE: epoch 2/2, Loss:") for r in caplog.records)


def test_config_exposes_defaults_of_sdv():
    cfg = synthesizer_config("ctgan")
    assert (cfg["epochs"], cfg["batch_size"], cfg["pac"]) == (300, 500, 10)
    assert synthesizer_config("tvae")["epochs"] == 300
    assert synthesizer_config("copulagan")["default_distribution"] == "beta"


def test_batch_size_must_be_a_multiple_of_pac():
    with pytest.raises(ValueError, match="batch_size"):
        sdv_wrappers.CTGAN(batch_size=105, pac=10)


def test_sample_before_fit_is_an_error():
    with pytest.raises(RuntimeError, match="before fit"):
        sdv_wrappers.GaussianCopula().sample(10, seed=0)


def test_single_thread_blocks_worker_processes_and_restores_threads():
    from joblib import Parallel, delayed

    threads = torch.get_num_threads()
    with single_thread():
        assert torch.get_num_threads() == 1
        # ctgan's transformer asks joblib for n_jobs=-1 on tables of 500+ rows
        assert set(Parallel(n_jobs=-1)(delayed(os.getpid)() for _ in range(4))) == {os.getpid()}
    assert torch.get_num_threads() == threads


_DIGEST_SCRIPT = """
import sys, hashlib
import pandas as pd
sys.path.insert(0, sys.argv[1])
from conftest import make_table, SCHEMA
from benchmark.config import build_synthesizer, synthesizer_config
from synthesizers.base import FitContext
for name in ("gaussian_copula", "ctgan"):
    synth = build_synthesizer(synthesizer_config(name, preset="smoke"))
    synth.fit(make_table(600, seed=1), FitContext(SCHEMA, 7, "mixed"))
    out = synth.sample(300, seed=3)
    print(name, hashlib.sha256(pd.util.hash_pandas_object(out).values.tobytes()).hexdigest())
"""


@pytest.mark.slow
def test_reproducible_across_processes():
    """Fresh interpreters with different hash seeds give the same bytes (600 rows: ctgan's joblib path)."""
    here = str(Path(__file__).parent)
    env = dict(os.environ)
    # rpy2, once another test has started R, prepends R's library dirs here, and a child
    # python then loads the system libpython and loses its site-packages
    env.pop("LD_LIBRARY_PATH", None)
    digests = [
        subprocess.run(
            [sys.executable, "-c", _DIGEST_SCRIPT, here], capture_output=True, text=True, check=True,
            env={**env, "PYTHONHASHSEED": str(hash_seed)},
        ).stdout
        for hash_seed in (1, 2)
    ]
    assert digests[0] == digests[1]
    assert digests[0].count("\n") == 2

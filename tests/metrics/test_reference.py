"""Reproduce the published adult numbers (../shared/reference/paper_adult_expected.csv).

Fidelity is checked for all 17 rows, privacy for a few; scripts/reference/check_paper_reference.py
checks every number of every row. T, H and T's fitted buckets are shared across rows.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest

from holdbench.metrics import Fidelity, evaluate, kinds_from_dtypes, paper_families
from holdbench.metrics.fidelity import FidelityModel
from holdbench.metrics.privacy import distance_data, privacy


def shared_dir() -> Path:
    env = os.environ.get("HOLDBENCH_SHARED_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared"


SHARED = shared_dir()
DATA = SHARED / "datasets" / "paper_study"
EXPECTED_CSV = SHARED / "reference" / "paper_adult_expected.csv"

pytestmark = pytest.mark.skipif(
    not (EXPECTED_CSV.exists() and (DATA / "adult_trn.csv.gz").exists()),
    reason=f"paper reference data not found under {SHARED} (set HOLDBENCH_SHARED_DIR)",
)

EXPECTED = pd.read_csv(EXPECTED_CSV).set_index("synthesizer") if EXPECTED_CSV.exists() else pd.DataFrame()
PRIVACY_ROWS = ["synthpop", "flip50", "mostly"]


@pytest.fixture(scope="module")
def real():
    train = pd.read_csv(DATA / "adult_trn.csv.gz")
    holdout = pd.read_csv(DATA / "adult_val.csv.gz")
    return train, holdout, kinds_from_dtypes(train)


@pytest.fixture(scope="module")
def model(real):
    train, holdout, kinds = real
    return FidelityModel(train, holdout, kinds)


@pytest.fixture(scope="module")
def synthetic_tables():
    cache: dict[str, pd.DataFrame] = {}

    def get(name: str) -> pd.DataFrame:
        if name not in cache:
            cache[name] = pd.read_csv(DATA / f"adult_{name}.csv.gz")
        return cache[name]

    return get


def close(got: float, want: float) -> bool:
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


def published(got: float, want: float) -> bool:
    """Equal at the 10 significant digits the reference CSV carries."""
    return f"{got:.10g}" == f"{want:.10g}"


@pytest.mark.parametrize("name", list(EXPECTED.index))
def test_fidelity_row(name, model, synthetic_tables):
    row = EXPECTED.loc[name]
    scores = model.score(None if name == "holdout" else synthetic_tables(name))
    for k in (1, 2, 3):
        assert close(scores.F[k], row[f"F{k}"]), (k, scores.F[k], row[f"F{k}"])
        assert close(scores.ratio(k), row[f"F{k}_ratio"]), (k, scores.ratio(k), row[f"F{k}_ratio"])


@pytest.mark.parametrize("name", PRIVACY_ROWS)
def test_privacy_row(name, real, synthetic_tables):
    train, holdout, kinds = real
    row = EXPECTED.loc[name]
    synthetic = synthetic_tables(name)
    dcr = privacy(distance_data(train, holdout, synthetic, kinds), holdout_row=False)
    assert published(dcr.share, row["dcr_share"]), (dcr.share, row["dcr_share"])
    assert abs(dcr.d_train.mean() - row["dcr_train_mean"]) < 1e-6
    assert abs(dcr.d_holdout.mean() - row["dcr_holdout_mean"]) < 1e-6
    assert len(synthetic) == row["n_synthetic"]


def test_holdout_row_end_to_end(real):
    train, holdout, kinds = real
    d = evaluate(train, holdout, None, kinds, holdout_row=True, families=paper_families()).to_dict()
    row = EXPECTED.loc["holdout"]
    assert published(d["dcr_share"], row["dcr_share"]), d["dcr_share"]
    assert abs(d["dcr_train_mean"] - row["dcr_train_mean"]) < 1e-6
    assert abs(d["dcr_holdout_mean"] - row["dcr_holdout_mean"]) < 1e-6
    assert d["n_synthetic"] == row["n_synthetic"]
    for k in (1, 2, 3):
        assert close(d[f"F{k}"], row[f"F{k}"]) and d[f"F{k}_ratio"] == 1.0

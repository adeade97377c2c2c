"""Small mixed-type data for the synthesizer tests: a ~300-row table T, a holdout H, a Schema.

Every dtype the harness hands a synthesizer is here: an int column, a float column with
a few missing values, a bool, two categoricals (one with a missing value) and an
integer-coded column that synthesizers model as categorical (like credit-default's SEX).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from holdbench.contracts.schema import Schema
from holdbench.synthesizers.base import FitContext

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("HOLDBENCH_SHARED_DIR", REPO.parent / "shared")).resolve()
PAPER = SHARED / "datasets" / "paper_study"

N_TRAIN = 300

SCHEMA = Schema.from_mapping(
    "mixed",
    {
        "age": {"kind": "numeric", "dtype": "int"},
        "income": {"kind": "numeric", "dtype": "float"},
        "member": {"kind": "numeric", "dtype": "bool"},
        "color": {"kind": "categorical"},
        "city": {"kind": "categorical"},
        "grade": {"kind": "numeric", "dtype": "int", "model_kind": "categorical"},
    },
    target="member",
)


def make_table(n: int, seed: int) -> pd.DataFrame:
    """A table with the schema above; a few incomes and one city are missing."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    member = rng.random(n) < 0.2 + 0.5 * (age > 50)
    income = np.round(rng.lognormal(10 + 0.01 * age, 0.5), 2)
    income[rng.choice(n, size=max(n // 20, 1), replace=False)] = np.nan
    city = rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1]).astype(object)
    city[rng.integers(n)] = None
    raw = pd.DataFrame({
        "age": age,
        "income": income,
        "member": member,
        "color": rng.choice(["red", "green", "blue"], n),
        "city": city,
        "grade": np.where(member, rng.integers(1, 4, n), rng.integers(2, 5, n)),
    })
    return SCHEMA.coerce(raw, "test table")


@pytest.fixture()
def schema() -> Schema:
    return SCHEMA


@pytest.fixture()
def train() -> pd.DataFrame:
    return make_table(N_TRAIN, seed=1)


@pytest.fixture()
def holdout() -> pd.DataFrame:
    return make_table(N_TRAIN, seed=2)


@pytest.fixture()
def fit_ctx(holdout) -> Callable[..., FitContext]:
    """fit_ctx(seed=0, dataset='mixed', with_holdout=False) -> FitContext on the mixed schema."""

    def make(seed: int = 0, dataset: str = "mixed", with_holdout: bool = False) -> FitContext:
        return FitContext(schema=SCHEMA, seed=seed, dataset=dataset, holdout=holdout if with_holdout else None)

    return make


@pytest.fixture()
def paper_dir() -> Path:
    """../shared/datasets/paper_study, or skip."""
    if not PAPER.is_dir():
        pytest.skip(f"the paper's study files are not at {PAPER}")
    return PAPER

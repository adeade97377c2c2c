"""Flip baselines (docs/definitions/paper.md §5): row draw, per-cell replacement, seeding, validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.contracts.schema import Schema
from holdbench.synthesizers.base import FitContext
from holdbench.benchmark.cell.checks import check_output
from holdbench.synthesizers.flip import Flip

LEVELS = [f"flip{k}0" for k in range(1, 10)]


def _row_keys(df: pd.DataFrame) -> pd.Series:
    """One string per row, to compare whole rows."""
    return df.astype(str).agg("|".join, axis=1)


def _flip(p, train, ctx):
    synth = Flip(p)
    synth.fit(train, ctx)
    return synth


@pytest.mark.parametrize("name", LEVELS)
def test_configs_smoke(name, train, schema, fit_ctx):
    cfg = synthesizer_config(name, preset="smoke")
    assert cfg["p"] == pytest.approx(int(name[4:]) / 100)
    synth = build_synthesizer(cfg)
    synth.fit(train, fit_ctx())
    out = check_output(synth.sample(500, seed=1), schema, 500, name)
    assert len(out) == 500


def test_p0_returns_the_first_n_rows(train, fit_ctx):
    out = _flip(0, train, fit_ctx()).sample(120, seed=9)
    pd.testing.assert_frame_equal(out, train.head(120))


def test_p0_draws_with_replacement_when_n_exceeds_t(train, fit_ctx):
    n = 3 * len(train)
    out = _flip(0.0, train, fit_ctx()).sample(n, seed=4)
    assert len(out) == n
    keys = _row_keys(train)
    drawn = _row_keys(out)
    assert drawn.isin(set(keys)).all()
    assert drawn.duplicated().any()
    assert not drawn.head(len(train)).equals(keys)


def test_p1_keeps_marginals_and_breaks_rows(train, fit_ctx):
    n = 20_000
    out = _flip(1.0, train, fit_ctx()).sample(n, seed=2)
    for col in ["color", "city", "member", "grade"]:
        want = train[col].value_counts(normalize=True, dropna=False)
        got = out[col].value_counts(normalize=True, dropna=False)
        tvd = 0.5 * want.sub(got, fill_value=0).abs().sum()
        assert tvd < 0.03, col
    assert out["age"].mean() == pytest.approx(train["age"].mean(), rel=0.03)
    assert out["income"].isna().mean() == pytest.approx(train["income"].isna().mean(), abs=0.01)
    # rows are rebuilt cell by cell from different rows of T: almost none is a row of T
    rows_of_t = set(_row_keys(train))
    assert _row_keys(out).isin(rows_of_t).mean() < 0.01


def test_share_of_replaced_cells_is_p():
    schema = Schema.from_mapping("u", {"u": {"kind": "numeric", "dtype": "int"}})
    train = pd.DataFrame({"u": np.arange(2000)})
    out = _flip(0.3, train, FitContext(schema, 0, "u")).sample(2000, seed=7)
    changed = (out["u"] != train["u"]).mean()
    # a replacement equals the original with probability 1/|T|
    assert changed == pytest.approx(0.3 * (1 - 1 / 2000), abs=0.035)


def test_seeded_by_the_sample_seed(train, fit_ctx):
    synth = _flip(0.5, train, fit_ctx())
    a = synth.sample(400, seed=1)
    pd.testing.assert_frame_equal(a, synth.sample(400, seed=1))
    assert not a.equals(synth.sample(400, seed=2))


def test_dtypes_survive(train, fit_ctx):
    train = train.astype({"age": "Int64"})
    out = _flip(0.5, train, fit_ctx()).sample(50, seed=0)
    assert out.dtypes.to_dict() == train.dtypes.to_dict()


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.5", True, None])
def test_p_is_validated(bad):
    with pytest.raises(ValueError, match=r"\bp\b"):
        Flip(bad)


def test_empty_t_is_refused(train, fit_ctx):
    with pytest.raises(ValueError, match="no rows"):
        Flip(0.1).fit(train.head(0), fit_ctx())

"""Bale & Quick's legal criteria and attribute disclosure (docs/definitions/bale-quick.md §8) on a few hundred rows of the
public adult table, against a literal, loop-based re-implementation written here from the definitions page
(plain Python loops over records, no helper from metrics/)."""

from __future__ import annotations

import gzip
import math

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.disclosure import AttributeDisclosure
from holdbench.metrics.legal import LegalCriteria
from holdbench.metrics.registry import EvalData
from tests.conftest import DATASETS, needs_shared

COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
           "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
           "income"]
KEEP = ["age", "education", "race", "sex", "hours-per-week", "capital-gain", "income"]
NUMERIC = {"age", "hours-per-week", "capital-gain"}
DELTAS = [0.001 + i * (0.5 - 0.001) / 4 for i in range(5)]   # linspace(0.001, 0.5, 5)


@pytest.fixture(scope="module")
def tables():
    if not (DATASETS / "adult.data.gz").is_file():
        pytest.skip("adult.data.gz not found")
    with gzip.open(DATASETS / "adult.data.gz", "rt") as f:
        df = pd.read_csv(f, header=None, names=COLUMNS, skipinitialspace=True, nrows=1200)[KEEP]
    t, h, other = df.iloc[:300].reset_index(drop=True), df.iloc[300:600].reset_index(drop=True), df.iloc[600:]
    # S: 80 exact copies of T records (every 3rd one) and 220 records T never saw
    s = pd.concat([t.iloc[::3].iloc[:80], other.iloc[:220]], ignore_index=True)
    return t, h, s


def kinds():
    return {c: "numeric" if c in NUMERIC else "categorical" for c in KEEP}


# ---------------------------------------------------------------- literal legal criteria


def encode(rows: pd.DataFrame, train: pd.DataFrame, every: list[pd.DataFrame]) -> list[list[float]]:
    """Numbers per docs/definitions/bale-quick.md §8: numeric as is; a category's code = its rank among T's sorted levels,
    levels T lacks after them (sorted)."""
    out = []
    codes = {}
    for c in KEEP:
        if c not in NUMERIC:
            seen = sorted(set(train[c]))
            extra = sorted({v for f in every for v in f[c]} - set(seen))
            codes[c] = {v: i for i, v in enumerate(seen + extra)}
    for _, row in rows.iterrows():
        out.append([float(row[c]) if c in NUMERIC else float(codes[c][row[c]]) for c in KEEP])
    return out


def scale(rows: list[list[float]], fit: list[list[float]]) -> list[list[float]]:
    n = len(fit)
    means = [sum(r[j] for r in fit) / n for j in range(len(fit[0]))]
    sds = [math.sqrt(sum((r[j] - means[j]) ** 2 for r in fit) / n) for j in range(len(fit[0]))]
    sds = [sd if sd > 0 else 1.0 for sd in sds]
    return [[(r[j] - means[j]) / sds[j] for j in range(len(r))] for r in rows]


def nearest(queries, ref, k, leave_one_out=False):
    out = []
    for i, q in enumerate(queries):
        d = [math.sqrt(sum((a - b) ** 2 for a, b in zip(q, r))) for j, r in enumerate(ref)
             if not (leave_one_out and i == j)]
        out.append(sorted(d)[:k])
    return out


def percentile(values, p):
    v = sorted(values)
    pos = (len(v) - 1) * p / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def summary(dists, delta=0.001):
    d1 = [d[0] for d in dists]
    ratios = [1.0 if d[-1] == 0 else d[0] / d[-1] for d in dists]
    return sum(x <= delta for x in d1) / len(d1), percentile(d1, 5), percentile(ratios, 5)


@needs_shared
def test_legal_matches_literal(tables):
    t, h, s = tables
    every = [t, h, s]
    et, eh, es = encode(t, t, every), encode(h, t, every), encode(s, t, every)
    zt, zh, zs = scale(et, es), scale(eh, es), scale(es, es)        # S and H sides: S's scaler
    zt_own = scale(et, et)                                           # leave-one-out side: T's scaler
    want = {"synthetic": summary(nearest(zs, zt, 5)), "holdout": summary(nearest(zh, zt, 5)),
            "loo": summary(nearest(zt_own, zt_own, 5, leave_one_out=True))}
    r = LegalCriteria().compute(EvalData(t, h, s, kinds()))
    for who, (ims, dcr, nndr) in want.items():
        assert getattr(r, f"legal_ims_{who}") == ims
        assert getattr(r, f"legal_dcr_p05_{who}") == pytest.approx(dcr, rel=1e-12, abs=1e-14)
        assert getattr(r, f"legal_nndr_p05_{who}") == pytest.approx(nndr, rel=1e-12, abs=1e-14)
    assert want["synthetic"][0] >= 80 / 300                        # the copies are found
    loo_d1 = [d[0] for d in nearest(zt_own, zt_own, 1, leave_one_out=True)]
    for delta, ims in zip(r.legal_ims_curve["delta"], r.legal_ims_curve["ims_loo"]):
        assert ims == sum(x <= delta for x in loo_d1) / 300


# ---------------------------------------------------------------- literal attribute disclosure

QIS_CONT, QIS_CAT, SENSITIVE = ["age"], ["education", "race", "sex"], "income"


def literal_ratios(targets: pd.DataFrame, synthetic: pd.DataFrame, prior: dict, delta: float) -> list[float]:
    ages = [float(a) for a in synthetic["age"]]
    mean = sum(ages) / len(ages)
    sd = math.sqrt(sum((a - mean) ** 2 for a in ages) / len(ages))
    syn = [((float(r.age) - mean) / sd, tuple(r[c] for c in QIS_CAT), r[SENSITIVE])
           for _, r in synthetic.iterrows()]
    out = []
    for _, r in targets.iterrows():
        z, cat = (float(r.age) - mean) / sd, tuple(r[c] for c in QIS_CAT)
        near = [v for zs, cs, v in syn if cs == cat and (zs - z) ** 2 <= delta ** 2]
        if not near:
            out.append(1.0)
        else:
            out.append(sum(v == r[SENSITIVE] for v in near) / len(near) / prior[r[SENSITIVE]])
    return out


def share(frame: pd.DataFrame) -> dict:
    return {v: sum(x == v for x in frame[SENSITIVE]) / len(frame) for v in set(frame[SENSITIVE])}


@needs_shared
def test_disclosure_both_forms_match_literal(tables):
    t, h, s = tables
    data = EvalData(t, h, s, kinds(), sensitive=SENSITIVE, quasi_identifiers=tuple(QIS_CONT + QIS_CAT))
    # n_targets=None and |T| = |H|: holdbench's form then takes every record too (prior = S's share)
    r = AttributeDisclosure(n_targets=None).compute(data)
    bq, default = r.disclosure_curve_bq, r.disclosure_curve
    for who, targets in (("train", t), ("holdout", h)):
        bq_max, mine_max, mine_mean = [], [], []
        for delta in DELTAS:
            theirs = literal_ratios(targets, s, share(t), delta)           # prior = T's share
            bq_max.append(max(theirs))
            mine = literal_ratios(targets, s, share(s), delta)             # prior = S's share
            mine_max.append(max(mine))
            mine_mean.append(sum(mine) / len(mine))
        got = bq[bq["targets"] == who]
        np.testing.assert_allclose(got["max_ratio"], bq_max, rtol=1e-13)
        assert (got["n_targets"] == 300).all()
        assert getattr(r, f"disclosure_bq_max_{who}") == pytest.approx(max(bq_max), rel=1e-13)
        got = default[default["targets"] == who]
        np.testing.assert_allclose(got["max_ratio"], mine_max, rtol=1e-13)
        np.testing.assert_allclose(got["mean_ratio"], mine_mean, rtol=1e-13)
    assert share(t) != share(s)                # the two priors differ on this table
    assert max(bq["max_ratio"]) > 1.5

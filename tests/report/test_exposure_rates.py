"""The report's exposure view keeps two match rates apart: exact copies (identical in every value, what the
`exact_copies` gate counts) and Hamming distance 0 on the DCR's bins (the same bin of every column)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from holdbench.benchmark.outputs.filereport.compute import exposure
from holdbench.metrics._discretise import distance_codes
from holdbench.metrics.privacy import exact_row_ids
from tests.report.conftest import population

KINDS = {"age": "numeric", "hours": "numeric", "education": "categorical", "job": "categorical",
         "income": "categorical"}


def _share_found(rows: pd.DataFrame, other: pd.DataFrame) -> float:
    """pandas' own row equality: the share of `rows` that occur in `other` (the reference the view must equal)."""
    found = rows.merge(other.drop_duplicates(), how="left", indicator=True)["_merge"] == "both"
    return float(found.mean())


def test_a_near_copy_is_at_distance_zero_but_not_an_exact_copy():
    pop = population(800, seed=11)
    t, h = pop.iloc[:400].reset_index(drop=True), pop.iloc[400:].reset_index(drop=True)
    near = t.iloc[200:].copy()
    near["hours"] = near["hours"] + 1e-7  # a different number, almost surely in the same quantile bin
    s = pd.concat([t.iloc[:200], near], ignore_index=True)
    inputs = SimpleNamespace(train=t, holdout=h, synthetic={"s": s}, kinds=KINDS)
    ids = exact_row_ids([t, h, s], KINDS)
    exp = exposure(inputs, "s", 1, False, ids)
    assert exp["train_exact_copy_rate"] == _share_found(t, s)
    assert 0.49 < exp["train_exact_copy_rate"] < 0.52  # T's first 200 rows (and any exact twin of them)
    assert exp["holdout_exact_copy_rate"] == _share_found(h, s)
    # distance 0 = the same quantile bin of every column: most near copies count here (a bin edge can fall
    # between a value and its copy), and not as exact copies; the reference compares the code tuples directly
    codes = distance_codes([t, h, s], KINDS)
    s_rows = set(map(tuple, codes[2].T.tolist()))
    for side, c in (("train", codes[0]), ("holdout", codes[1])):
        assert exp[f"{side}_zero_distance_rate"] == np.mean([tuple(r) in s_rows for r in c.T.tolist()])
    assert exp["train_zero_distance_rate"] > exp["train_exact_copy_rate"] + 0.25
    assert exp["masked"] and len(exp["records"]) == 25 and exp["n_train"] == 400
    assert np.isnan(exposure(SimpleNamespace(train=t, holdout=h.iloc[:0], synthetic={"s": s}, kinds=KINDS), "s", 1,
                             False, exact_row_ids([t, h.iloc[:0], s], KINDS))["holdout_exact_copy_rate"])

"""Fidelity on wide tables (issue 36, item 9) and a merge that checks its own inputs (item 12).

Wide: above WIDE_SAMPLE k-combinations the default F_k is the mean over a seeded sample of WIDE_SAMPLE of
them, drawn as ranks and turned into combinations arithmetically (never the list of all C(n, k)); the
output says so (combinations_sampled, n_combinations_k). Merge: partial results that do not hold exactly
the table's combinations once each and in order (a duplicated, missing, reordered part, another seed's)
are refused with a ValueError saying which, instead of a shifted F_k."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics import fidelity as fid
from holdbench.metrics.fidelity import Fidelity, _unrank_combinations, select_combinations
from holdbench.metrics.registry import EvalData


def _lex_rank(combo, n: int) -> int:
    """Lexicographic rank of a sorted k-combination of range(n) (the test's own formula)."""
    k = len(combo)
    return math.comb(n, k) - 1 - sum(math.comb(n - 1 - c, k - i) for i, c in enumerate(combo))


@pytest.mark.parametrize(("n", "k"), [(1, 1), (5, 1), (6, 2), (9, 3), (8, 4), (12, 3)])
def test_unranking_is_the_lexicographic_enumeration(n, k):
    want = list(itertools.combinations(range(n), k))
    got = _unrank_combinations(np.arange(len(want)), n, k)
    assert [tuple(r) for r in got.tolist()] == want


def test_unranking_of_a_10000_column_table_round_trips():
    n, k = 10_000, 3
    ranks = np.array([0, 1, 12345678901, math.comb(n, k) - 1], dtype=np.int64)
    combos = _unrank_combinations(ranks, n, k).tolist()
    assert combos[0] == [0, 1, 2] and combos[-1] == [n - 3, n - 2, n - 1]
    assert [_lex_rank(c, n) for c in combos] == ranks.tolist()


def test_ten_thousand_columns_are_sampled_within_a_small_memory_limit():
    """C(10000, 3) = 1.7e11: listing them dies of MemoryError; the default now draws WIDE_SAMPLE of them,
    seeded, in a process limited to 1.5 GB of address space."""
    code = textwrap.dedent("""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        import numpy as np
        from holdbench.metrics.fidelity import WIDE_SAMPLE, chosen_combinations
        combos, sampled = chosen_combinations(10_000, None, None, seed=3)
        again, _ = chosen_combinations(10_000, None, None, seed=3)
        assert sampled and len(combos[1]) == 10_000
        assert combos[2].shape == (WIDE_SAMPLE, 2) and combos[3].shape == (WIDE_SAMPLE, 3)
        assert all(np.array_equal(combos[k], again[k]) for k in combos)
        c3 = combos[3]
        assert (np.diff(c3, axis=1) > 0).all() and c3.min() >= 0 and c3.max() < 10_000
        assert len(np.unique(c3, axis=0)) == WIDE_SAMPLE
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def _wide(n_rows: int, n_cols: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({f"c{j}": rng.integers(0, 3, n_rows).astype(str) for j in range(n_cols)})


@pytest.fixture()
def small_sample(monkeypatch):
    monkeypatch.setattr(fid, "WIDE_SAMPLE", 300)
    cols = 30                                                  # C(30, 3) = 4060 > 300, C(30, 2) = 435 > 300
    t, h, s = _wide(80, cols, 1), _wide(70, cols, 2), _wide(90, cols, 3)
    kinds = dict.fromkeys(t.columns, "categorical")
    return lambda seed=0: EvalData(t, h, s, kinds, seed=seed)


def test_a_table_wider_than_the_sample_is_averaged_over_a_seeded_sample_that_the_output_names(small_sample):
    res = Fidelity().compute(small_sample())
    assert res.combinations_sampled is True
    assert (res.n_combinations_1, res.n_combinations_2, res.n_combinations_3) == (30, 300, 300)
    table = res.marginals
    assert (table["k"] == 3).sum() == 300 and table.loc[table["k"] == 3, "columns"].is_unique
    assert Fidelity().compute(small_sample()).F3 == res.F3                      # seeded: the same again
    other = Fidelity().compute(small_sample(seed=1)).marginals
    assert list(other.loc[other["k"] == 3, "columns"]) != list(table.loc[table["k"] == 3, "columns"])
    # the sample's F3 is the mean of exactly the sampled marginals' TVDs
    assert res.F3 == pytest.approx(table.loc[table["k"] == 3, "tvd_synthetic"].mean(), rel=1e-12)


def test_an_explicit_max_combinations_still_decides(small_sample):
    res = Fidelity(max_combinations=5000).compute(small_sample())
    assert res.combinations_sampled is False and res.n_combinations_3 == 4060


# --- item 12: the merge checks its own inputs ---------------------------------------------------------

@pytest.fixture(scope="module")
def parts():
    rng = np.random.default_rng(5)
    t = pd.DataFrame({c: rng.choice(list("abc"), 60) for c in "pqrstu"})
    h = pd.DataFrame({c: rng.choice(list("abc"), 50) for c in "pqrstu"})
    s = pd.DataFrame({c: rng.choice(list("abcd"), 70) for c in "pqrstu"})
    data = EvalData(t, h, s, dict.fromkeys(t.columns, "categorical"))
    family = Fidelity()
    return family, data, [family.partial(data, i, 3) for i in range(3)]


def test_merge_of_the_right_parts_is_compute(parts):
    family, data, p = parts
    assert family.merge(data, p).F2 == family.compute(data).F2


@pytest.mark.parametrize(("pick", "says"), [
    ([0, 0, 2], "more than once"),           # a duplicated part (it shifted F2 before)
    ([0, 1], "missing"),                     # a part left out
    ([1, 0, 2], "out of order"),             # parts swapped
])
def test_merge_refuses_parts_that_are_not_the_tables_combinations_once_each(parts, pick, says):
    family, data, p = parts
    with pytest.raises(ValueError, match=f"fidelity: the {len(pick)} partial results hold .*{says}"):
        family.merge(data, [p[i] for i in pick])


def test_merge_refuses_another_seeds_or_an_incomplete_part():
    rng = np.random.default_rng(6)
    t = pd.DataFrame({c: rng.choice(list("abc"), 40) for c in "pqrstuvw"})
    kinds = dict.fromkeys(t.columns, "categorical")
    family = Fidelity(max_combinations=10)
    made = family.partial(EvalData(t, t, t, kinds, seed=1), 0, 1)
    with pytest.raises(ValueError, match="from another table or seed"):
        family.merge(EvalData(t, t, t, kinds, seed=2), [made])
    broken = {k: v for k, v in made.items() if k != "tvd_holdout_3"}
    with pytest.raises(ValueError, match="partial result 0 of 1 lacks tvd_holdout_3"):
        family.merge(EvalData(t, t, t, kinds, seed=1), [broken])
    with pytest.raises(ValueError, match="no partial results"):
        family.merge(EvalData(t, t, t, kinds, seed=1), [])

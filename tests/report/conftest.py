"""Small tables of one made-up population: T, H and synthetic candidates of known character."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

#: a cheaper attack panel for the tests (the default bootstraps 200 times)
FAST = ("families.attacks.n_bootstrap=20",)


def population(n: int, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    edu = rng.choice(["basic", "school", "college", "bachelor", "master", "doctor"], n, p=[.1, .3, .2, .2, .15, .05])
    job = rng.choice([f"job{i}" for i in range(8)], n)
    age = rng.integers(18, 80, n)
    hours = np.round(rng.normal(40, 10, n), 1)
    score = (pd.Series(edu).map({"basic": 0, "school": 1, "college": 2, "bachelor": 3, "master": 4, "doctor": 5})
             .to_numpy() + (age > 40) + rng.normal(0, 1, n))
    income = np.where(score > 3, ">50K", "<=50K")
    return pd.DataFrame({"age": age, "hours": hours, "education": edu, "job": job, "income": income})


@pytest.fixture(scope="session")
def files(tmp_path_factory):
    """T, H (400 rows each) and three S: an independent sample (what an ideal generator gives), a leaky one
    (T's rows verbatim) and a shuffled one (T's columns permuted independently: no pair trend kept)."""
    d = tmp_path_factory.mktemp("report_files")
    pop = population(1200)
    t, h, fresh = pop.iloc[:400], pop.iloc[400:800], pop.iloc[800:]
    rng = np.random.default_rng(3)
    shuffled = pd.DataFrame({c: rng.permutation(t[c].to_numpy()) for c in t.columns})
    paths = {}
    for name, frame in (("train", t), ("holdout", h), ("fresh", fresh), ("leaky", t.sample(frac=1, random_state=1)),
                        ("shuffled", shuffled)):
        paths[name] = d / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths

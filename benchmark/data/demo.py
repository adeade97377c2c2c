"""An embedded, seeded demo dataset: a small person-level mixed-type table.

It lets the harness and its tests run with no download. It has what makes tabular
synthesis hard: skewed and zero-inflated numerics, integer-valued numerics, correlated
categoricals, a boolean and a few missing values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REGIONS = np.array(["north", "south", "east", "west", "centre"])
EDUCATION = np.array(["primary", "secondary", "bachelor", "master", "doctorate"])
OCCUPATIONS = {
    "primary": ["manual", "service", "sales"],
    "secondary": ["manual", "service", "sales", "clerical"],
    "bachelor": ["clerical", "sales", "professional", "manager"],
    "master": ["professional", "manager", "scientist"],
    "doctorate": ["scientist", "professional"],
}


def make_demo(n_rows: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Generate the demo table; the same (n_rows, seed) always gives the same frame."""
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(18 + rng.gamma(4.0, 7.0, n_rows)), 18, 95).astype(np.int64)
    region = rng.choice(REGIONS, n_rows, p=[0.3, 0.25, 0.2, 0.15, 0.1])
    edu_idx = np.clip(
        np.round(rng.normal(1.5 + 0.4 * (region == "centre") + 0.01 * (age - 40), 1.0)), 0, 4
    ).astype(int)
    education = EDUCATION[edu_idx]
    occupation = np.array([rng.choice(OCCUPATIONS[e]) for e in education], dtype=object)
    employed = rng.random(n_rows) < np.where(age > 66, 0.15, 0.85)
    hours = np.where(employed, np.clip(np.round(rng.normal(38, 8, n_rows)), 5, 80), 0).astype(np.int64)
    base = np.exp(rng.normal(9.6 + 0.25 * edu_idx, 0.6, n_rows))
    income = np.where(employed, np.round(base * hours / 38, 2), 0.0)
    children = rng.poisson(np.where((age > 25) & (age < 60), 1.3, 0.3)).astype(np.int64)
    visits = np.where(rng.random(n_rows) < 0.45, 0, rng.negative_binomial(2, 0.3, n_rows)).astype(np.int64)
    debt = np.where(rng.random(n_rows) < 0.6, 0.0, np.round(rng.lognormal(8, 1.2, n_rows), 2))
    logit = -4 + 0.6 * edu_idx + 0.00002 * income - 0.3 * children
    subscribed = np.where(rng.random(n_rows) < 1 / (1 + np.exp(-logit)), "yes", "no")
    df = pd.DataFrame(
        {
            "age": age,
            "region": region.astype(object),
            "education": education.astype(object),
            "occupation": occupation,
            "employed": employed,
            "hours_per_week": hours,
            "income": income,
            "children": children,
            "doctor_visits": visits,
            "debt": debt,
            "subscribed": subscribed.astype(object),
        }
    )
    df.loc[rng.random(n_rows) < 0.02, "occupation"] = np.nan
    df.loc[rng.random(n_rows) < 0.03, "debt"] = np.nan
    return df

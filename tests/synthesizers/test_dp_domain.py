"""The DP generators' domain step (synthesizers/plugins/dp/domain.py) and the public-domain schema keys.

Runs in holdbench's own environment (no plug-in venv): the domain is estimated on the main side.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from holdbench.contracts.schema import Schema, SchemaError
from holdbench.synthesizers.plugins.dp import AIM, MST, PrivBayes
from holdbench.synthesizers.plugins.dp import domain as D


def _schema(**cols) -> Schema:
    return Schema.from_mapping("t", cols)


def _estimate(train, schema, eps=10.0, delta=1e-9, binning="quantile", bins=32, seed=0):
    return D.estimate(train, schema, epsilon=eps, delta=delta, binning=binning, bins=bins,
                      rng=np.random.default_rng(seed))


def test_rho_conversion_gives_back_epsilon():
    for eps, delta in ((0.1, 1e-9), (1.0, 1e-6), (10.0, 1e-10)):
        rho = D.rho_of(eps, delta)
        assert rho + 2 * math.sqrt(rho * math.log(1 / delta)) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("kind", ["float", "int"])
def test_every_value_falls_in_its_grid_cell_and_0_is_a_point(kind):
    grid = D.GRIDS[kind]
    x = np.array([-1e12, -300.0, -3.0, -1e-5, 0.0, 1e-5, 0.3, 1.0, 2.0, 17.0, 40.0, 99999.0, 1e12])
    cells = grid.index(x)
    lo, hi = grid.cells[cells, 0], grid.cells[cells, 1]
    assert np.all((lo <= x) & (x < hi))
    assert grid.points[cells[4]] == 0.0 and np.isnan(grid.points[cells[-2]])
    if kind == "int":  # every small integer is a cell of its own, sampled back exactly
        assert [grid.points[c] for c in grid.index([-3.0, 1.0, 2.0, 17.0, 40.0])] == [-3.0, 1.0, 2.0, 17.0, 40.0]
    else:
        assert len(set(cells)) == len(x)


def _zero_cell(code):
    return int(code.grid.index([0.0])[0])


def test_public_levels_and_bools_cost_nothing_and_unknown_values_are_refused():
    schema = _schema(color={"kind": "categorical", "levels": ["red", "blue", "green"]},
                     flag={"kind": "numeric", "dtype": "bool"})
    train = pd.DataFrame({"color": ["red", "blue"] * 50, "flag": [True, False] * 50})
    dom = _estimate(train, schema)
    assert (dom.epsilon, dom.delta, dom.sigma) == (0.0, 0.0, None)
    assert dom.codes["color"].levels == ["red", "blue", "green"]  # green: declared, absent from T, kept
    assert dom.summary()["flag"] == {"source": "public", "levels": 2}
    bad = train.assign(color=["red", "purple"] * 50)
    with pytest.raises(ValueError, match=r"column 'color': T holds value\(s\) \['purple'\] outside the levels"):
        _estimate(bad, schema).encode(bad)


def test_dp_levels_keep_frequent_levels_and_drop_a_level_of_one_record():
    schema = _schema(city={"kind": "categorical"})
    train = pd.DataFrame({"city": ["north"] * 5000 + ["south"] * 3000 + ["rare"]})
    for seed in range(20):
        dom = _estimate(train, schema, eps=1.0, seed=seed)
        assert set(dom.codes["city"].levels) == {"north", "south"}
        assert dom.threshold > 1 and (dom.epsilon, dom.delta) == (1.0, 1e-9)
    codes = dom.encode(train)["city"]
    assert codes.iloc[-1] == len(dom.codes["city"].levels)  # the rare record: the 'not kept' code
    assert pd.isna(dom.decode(pd.DataFrame({"city": [codes.iloc[-1]]}), np.random.default_rng(0))["city"][0])


def test_quantile_bins_give_a_point_mass_its_own_bin_and_spread_values_many_bins():
    rng = np.random.default_rng(1)
    n = 20000
    skewed = np.where(rng.random(n) < 0.9, 0.0, rng.lognormal(8, 1.5, n))  # zero-heavy, long tail
    spread = rng.lognormal(5, 1, n)
    schema = _schema(gain={"kind": "numeric"}, duration={"kind": "numeric"})
    train = pd.DataFrame({"gain": skewed, "duration": spread})
    dom = _estimate(train, schema, eps=10.0, bins=32)
    gain, duration = dom.codes["gain"], dom.codes["duration"]
    zero = _zero_cell(gain)
    assert zero in gain.starts and gain.stops[gain.starts.index(zero)] == zero + 1  # [0] alone
    assert len(duration.starts) > 10
    uniform = _estimate(train, schema, eps=10.0, binning="uniform", bins=10).codes["gain"]
    # equal width: 0 shares its bin with the whole lower part of the range
    first = uniform.starts.index(max(s for s in uniform.starts if s <= zero))
    assert uniform.stops[first] > zero + 1
    # round trip: every decoded value lies in the bin it was coded to
    codes = dom.encode(train)
    back = dom.decode(codes, np.random.default_rng(2))
    again = dom.encode(back)
    assert (again["duration"] == codes["duration"]).all() and (again["gain"] == codes["gain"]).all()


def test_missing_numeric_values_have_a_code_and_come_back_missing():
    schema = _schema(x={"kind": "numeric"})
    x = np.r_[np.random.default_rng(0).normal(100, 10, 3000), [np.nan] * 300]
    dom = _estimate(pd.DataFrame({"x": x}), schema)
    codes = dom.encode(pd.DataFrame({"x": x}))
    assert (codes["x"].iloc[-300:] == dom.codes["x"].size - 1).all()
    assert dom.decode(codes, np.random.default_rng(0))["x"].iloc[-300:].isna().all()


def test_public_bounds_clip_and_uniform_public_bins_spend_nothing():
    schema = _schema(age={"kind": "numeric", "dtype": "int", "bounds": [17, 90]})
    train = pd.DataFrame({"age": [5, 20, 40, 60, 95] * 100})
    dom = _estimate(train, schema, binning="uniform", bins=10)
    assert dom.epsilon == 0.0 and dom.summary()["age"]["source"] == "public"
    out = dom.decode(dom.encode(train), np.random.default_rng(0))["age"]
    assert out.min() >= 17 and out.max() <= 90
    assert _estimate(train, schema, binning="quantile").epsilon == 10.0  # quantile bins: a DP histogram


def test_the_domain_step_refuses_no_budget_naming_the_columns():
    schema = _schema(x={"kind": "numeric"})
    with pytest.raises(ValueError, match=r"columns \['x'\] is not declared public"):
        _estimate(pd.DataFrame({"x": [1.0, 2.0]}), schema, eps=0.0)


@pytest.mark.parametrize("spec, match", [
    ({"kind": "numeric", "levels": ["a"]}, "levels are declared for categorical columns only"),
    ({"kind": "categorical", "levels": []}, "non-empty list"),
    ({"kind": "categorical", "levels": ["a", "a"]}, "repeat a value"),
    ({"kind": "categorical", "bounds": [0, 1]}, "bounds must be"),
    ({"kind": "numeric", "bounds": [3, 1]}, "bounds must be"),
    ({"kind": "numeric", "bounds": [0, float("inf")]}, "bounds must be"),
    ({"kind": "numeric", "dtype": "bool", "bounds": [0, 1]}, "bounds must be"),
    ({"kind": "numeric", "range": [0, 1]}, "unknown keys"),
])
def test_schema_refuses_bad_public_domains_naming_the_column(spec, match):
    with pytest.raises(SchemaError, match=match):
        _schema(col=spec)


def test_schema_round_trips_public_domains_and_omits_them_when_absent():
    schema = _schema(c={"kind": "categorical", "levels": ["x", "y"]}, n={"kind": "numeric", "bounds": [0, 5]},
                     m={"kind": "numeric"})
    d = schema.to_dict()
    assert d["columns"][0]["levels"] == ["x", "y"] and d["columns"][1]["bounds"] == [0, 5]
    assert set(d["columns"][2]) == {"name", "kind", "dtype", "model_kind"}
    assert Schema.from_dict(d) == schema


@pytest.mark.parametrize("make, match", [
    (lambda: MST(epsilon=1, domain_share=1.0), "domain_share"), (lambda: MST(binning="log"), "binning"),
    (lambda: MST(bins=1), "bins"), (lambda: AIM(rounds=0), "rounds"), (lambda: AIM(max_model_size=0), "max_model_size"),
    (lambda: PrivBayes(delta=0), "delta"), (lambda: AIM(degree=True), "degree"),
])
def test_bad_dp_settings_are_refused_naming_the_setting(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_guides_public_domain_block_is_a_valid_schema_that_spends_nothing():
    import yaml

    from tests.docs_blocks import block

    cfg = yaml.safe_load(block("docs/guides/dp-and-plugin-generators.md", "columns:"))
    schema = Schema.from_mapping("guide", cfg["columns"])
    train = pd.DataFrame({"region": ["north", "east"] * 20, "age": [30, 200] * 20})
    dom = _estimate(train, schema, binning="uniform", bins=12)
    assert dom.epsilon == 0.0 and dom.codes["region"].levels == ["north", "south", "east", "west"]
    assert dom.decode(dom.encode(train), np.random.default_rng(0))["age"].max() <= 120  # clipped to the bounds


def test_a_column_whose_levels_all_fall_under_the_threshold_fails_naming_it():
    schema = _schema(city={"kind": "categorical"}, x={"kind": "numeric"})
    train = pd.DataFrame({"city": ["north", "south", "east"] * 100, "x": np.arange(300.0)})
    with pytest.raises(ValueError, match=r"no level of column\(s\) \['city'\] passed the DP threshold: .* of the "
                                         r"300 rows at epsilon_domain 0.1.*declare the levels public"):
        _estimate(train, schema, eps=0.1)


def test_noise_alone_does_not_stretch_a_range_into_empty_octaves():
    # 14 non-negative columns of a few thousand rows at a small domain budget: an empty (negative) octave
    # must not pass the range threshold (with 3 sigma about two of 1,300 empty octaves did per fit)
    rng = np.random.default_rng(0)
    schema = _schema(**{f"c{i}": {"kind": "numeric"} for i in range(14)})
    train = pd.DataFrame({f"c{i}": np.where(rng.random(6000) < 0.5, 0.0, rng.lognormal(3, 1, 6000)) for i in range(14)})
    for seed in range(5):
        dom = _estimate(train, schema, eps=0.3, seed=seed)
        assert all(d["range"][0] >= 0 for d in dom.summary().values()), dom.summary()

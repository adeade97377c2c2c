"""The synthpop-style CART synthesizer: contract, seeds, leaf sampling, level grouping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.contracts.schema import Schema
from holdbench.synthesizers._cart_tree import rpart_leaf_map
from holdbench.synthesizers._rconvert import r_unavailable_reason
from holdbench.synthesizers.base import FitContext


def mixed_table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """int, float with NaN, bool and two categoricals (one with missing), mildly dependent."""
    rng = np.random.default_rng(seed)
    grp = rng.choice(["a", "b", "c", "d"], n)
    age = rng.integers(18, 80, n)
    income = np.round(1000 + 50 * age + 800 * (grp == "a") + rng.normal(0, 300, n), 2)
    income[rng.random(n) < 0.1] = np.nan
    member = (age > 40) ^ (rng.random(n) < 0.2)
    city = rng.choice(["x", "y", "z"], n).astype(object)
    city[rng.random(n) < 0.15] = np.nan
    return pd.DataFrame({"age": age, "grp": grp.astype(object), "income": income, "member": member,
                         "city": city})


def fit(train: pd.DataFrame, seed: int = 0, overrides: tuple[str, ...] = ()):
    schema = Schema.infer("mixed", train)
    synth = build_synthesizer(synthesizer_config("cart", preset="smoke", overrides=overrides))
    synth.fit(schema.coerce(train, "T"), FitContext(schema, seed, "mixed"))
    return synth, schema


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return mixed_table()


def test_rows_columns_and_canonical_dtypes(table):
    synth, schema = fit(table)
    out = synth.sample(500, seed=1)
    assert len(out) == 500 and list(out.columns) == schema.names
    pd.testing.assert_frame_equal(out, schema.coerce(out, "S"))
    assert out.dtypes.to_dict() == schema.coerce(table, "T").dtypes.to_dict()


def test_shared_mixed_table_including_an_integer_coded_column(train, schema, fit_ctx):
    """The synthesizer-suite table (conftest): `grade` is int with model_kind categorical."""
    synth = build_synthesizer(synthesizer_config("cart", preset="smoke"))
    synth.fit(train, fit_ctx(seed=0))
    out = synth.sample(400, seed=0)
    pd.testing.assert_frame_equal(out, schema.coerce(out, "S"))
    assert out.dtypes.to_dict() == train.dtypes.to_dict()
    assert set(out["grade"]) <= set(train["grade"])
    assert len(synth.sample(0, seed=0)) == 0


def test_same_seeds_same_output_other_seeds_differ(table):
    first, _ = fit(table, seed=3)
    again, _ = fit(table, seed=3)
    pd.testing.assert_frame_equal(first.sample(400, seed=7), again.sample(400, seed=7))
    pd.testing.assert_frame_equal(first.sample(400, seed=7), first.sample(400, seed=7))
    assert not first.sample(400, seed=7).equals(first.sample(400, seed=8))


def test_every_value_was_observed_in_training(table):
    synth, _ = fit(table)
    out = synth.sample(2000, seed=2)
    for col in table.columns:
        seen = set(table[col].dropna())
        assert set(out[col].dropna()) <= seen, col
        assert out[col].isna().any() == table[col].isna().any(), col


def test_missing_numbers_and_levels_keep_their_share(table):
    synth, _ = fit(table)
    out = synth.sample(5000, seed=4)
    for col in ("income", "city"):
        assert abs(out[col].isna().mean() - table[col].isna().mean()) < 0.04, col


def test_first_visited_column_is_drawn_from_its_marginal(table):
    order = ["city", "age", "grp", "income", "member"]
    synth, _ = fit(table, overrides=(f"visit_sequence=[{','.join(order)}]",))
    out = synth.sample(300, seed=5)
    rng = np.random.default_rng(5)
    expected = table["city"].to_numpy(dtype=object)[rng.integers(0, len(table), 300)]
    assert out["city"].equals(pd.Series(expected, name="city"))
    assert list(out.columns) == list(table.columns)


def test_visit_sequence_must_name_every_column_once(table):
    with pytest.raises(ValueError, match="missing \\['member'\\]"):
        fit(table, overrides=("visit_sequence=[city,age,grp,income]",))


def grouped_levels(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """The target depends on level membership {a, c} vs {b, d}: no cut of a<b<c<d splits it."""
    rng = np.random.default_rng(seed)
    level = rng.choice(["a", "b", "c", "d"], n)
    in_ac = np.isin(level, ["a", "c"])
    return pd.DataFrame({
        "level": level.astype(object),
        "label": np.where(in_ac, "hi", "lo").astype(object),
        "score": np.where(in_ac, 10.0, 0.0) + rng.normal(0, 1, n),
        "kind": np.where(in_ac, "x", np.where(level == "b", "y", "z")).astype(object),
    })


@pytest.mark.parametrize("target", ["label", "score", "kind"])
def test_one_split_groups_categorical_levels(target):
    """With a single split allowed, only a grouped level order separates {a, c} from {b, d}."""
    train = grouped_levels()[["level", target]]
    synth, _ = fit(train, overrides=("max_depth=1",))
    out = synth.sample(2000, seed=1)
    in_ac = out["level"].isin(["a", "c"])
    train_ac = train["level"].isin(["a", "c"])
    if target == "score":
        assert out.loc[in_ac, "score"].min() > train.loc[~train_ac, "score"].max()
    else:
        assert set(out.loc[in_ac, target]) == set(train.loc[train_ac, target])
        assert not set(out.loc[~in_ac, target]) & set(train.loc[train_ac, target])


def test_pruning_collapses_subtrees_that_change_no_majority_class():
    """A class subtree whose leaves all predict the parent's class is one leaf for rpart."""
    from sklearn.tree import DecisionTreeClassifier

    x = np.arange(40, dtype=float).reshape(-1, 1)
    scattered = np.zeros(40, dtype=int)
    scattered[[2, 12, 22, 32]] = 1
    tree = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(x, scattered)
    assert tree.get_n_leaves() > 1
    assert len(np.unique(rpart_leaf_map(tree, True, 1e-8)[tree.apply(x)])) == 1

    step = (x[:, 0] >= 20).astype(int)
    tree = DecisionTreeClassifier(min_samples_leaf=5, random_state=0).fit(x, step)
    assert len(np.unique(rpart_leaf_map(tree, True, 1e-8)[tree.apply(x)])) == 2


R_REASON = r_unavailable_reason(["rpart"])


@pytest.mark.needs_r
@pytest.mark.skipif(R_REASON is not None, reason=str(R_REASON))
@pytest.mark.parametrize("method", ["class", "anova"])
def test_leaf_count_is_close_to_rpart(method):
    """Grown with rpart's minbucket/minsplit and pruned at cp, the tree has rpart's size."""
    import rpy2.robjects as ro
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, 3))
    signal = x[:, 0] + 0.5 * x[:, 1] ** 2 + rng.normal(0, 1, 3000)
    y = np.digitize(signal, [0.0, 1.5]) if method == "class" else signal
    kind = DecisionTreeClassifier if method == "class" else DecisionTreeRegressor
    tree = kind(min_samples_leaf=5, min_samples_split=15, max_depth=30, random_state=0).fit(x, y)
    ours = len(np.unique(rpart_leaf_map(tree, method == "class", 1e-8)[tree.apply(x)]))
    fit_rpart = ro.r(
        "function(x1, x2, x3, y, m) { library(rpart); if (m == 'class') y <- factor(y);"
        " f <- rpart(y ~ ., data.frame(y, x1, x2, x3), method = m, minbucket = 5, cp = 1e-8);"
        " sum(f$frame$var == '<leaf>') }"
    )
    vec = ro.vectors.FloatVector
    theirs = int(fit_rpart(vec(x[:, 0]), vec(x[:, 1]), vec(x[:, 2]), vec(y.astype(float)), method)[0])
    assert abs(ours - theirs) <= max(3, 0.03 * theirs), (ours, theirs)

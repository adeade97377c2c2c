"""Sequential CART synthesis after R synthpop's `syn()` defaults, without R.

synthpop's default (`method = "cart"`) walks the columns in visit order: the first column
is drawn from its marginal with replacement (method "sample"); every following column is
modelled on the columns before it with an rpart tree (`syn.cart`: minbucket = 5, cp = 1e-8,
rpart's minsplit = 3 × minbucket = 15 and maxdepth = 30), and each synthetic value is an
observed T value drawn at random from the leaf that the synthetic predictors fall into
(numeric targets: a donor in the leaf; factor targets: a draw from the leaf's class
frequencies, which is the same thing). synthpop's smoothing defaults to none, and so here.

How the scikit-learn trees are made to behave like rpart's (see holdbench.synthesizers._cart_tree):

- **Categorical predictors** are not given an arbitrary numeric code: rpart splits them by
  grouping levels. For every target column, each categorical predictor's levels are ranked
  by the target's mean within the level (numeric or two-class targets: Breiman's ordering,
  which makes a threshold on the rank the best grouping) or by the first principal
  component of the within-level class distribution (more classes). The installed
  scikit-learn trees have no native categorical splits (only HistGradientBoosting does).
  rpart reorders at every node and searches all groupings for multi-class targets; the
  order here is computed once per target on all of T, so deeper splits can differ.
- **cp** is rpart's complexity parameter: the tree is grown fully (min_samples_leaf,
  min_samples_split, max_depth) and then collapsed where rpart's pruning at cp would, with
  rpart's risk (sum of squares, or misclassification count for factors). For regression at
  cp = 1e-8 that prunes practically nothing; for factor targets it removes every subtree
  that does not change a leaf's majority class, which keeps rpart's class trees small.
- **Missing values**: a categorical column's missing value is a level of its own (synthpop
  adds NA as a factor level). A numeric column with missing values is synthesised in two
  steps, as synthpop does with its missing-indicator variable: first whether the value is
  missing (a classification tree), then the value for the rows that are not missing (a
  regression tree fitted on T's non-missing rows). As predictors, missing numbers go to the
  trees as NaN and sklearn routes them to the better child (rpart uses surrogate splits).
- **Types**: str columns are modelled as categorical, int/float/bool columns as numeric,
  the way the paper's R run saw pandas/read.csv types (so credit-default's SEX etc. are
  numeric here even though their schema `model_kind` is categorical).

Other differences that remain: sklearn compares thresholds in float32 (values beyond 2**24
can share a split; sampled values keep full precision), and ties between equally good
splits are broken by a seeded feature permutation rather than rpart's column order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from holdbench.contracts.schema import Column, Schema
from holdbench.synthesizers._cart_tree import TreeModel, level_scores, ranks
from holdbench.synthesizers.base import FitContext, Synthesizer


@dataclass
class EncodedColumn:
    """A column of T as the trees see it: integer codes with levels, or floats with NaN."""

    name: str
    values: np.ndarray
    levels: np.ndarray | None = None

    @property
    def categorical(self) -> bool:
        return self.levels is not None


@dataclass
class _Fitted:
    """A tree plus the level ranks its categorical predictors were given."""

    rank_maps: list[np.ndarray | None]
    model: TreeModel

    def draw(self, predictors: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
        return self.model.draw(_design(predictors, self.rank_maps), rng)


@dataclass
class ColumnModel:
    """How one column (after the first) is synthesised from the columns visited before it."""

    name: str
    categorical: bool
    predictors: list[str]
    missing: _Fitted | None
    value: _Fitted | None


class CART(Synthesizer):
    """synthpop-style sequential CART with leaf-donor sampling (module docstring: details).

    min_samples_leaf is rpart's minbucket (synthpop: 5), min_samples_split rpart's
    minsplit (3 × minbucket when only minbucket is given), max_depth rpart's maxdepth
    (default 30; None for unlimited), cp rpart's complexity parameter (synthpop: 1e-8).
    visit_sequence lists every column in the order to synthesise them (None: schema order).
    """

    def __init__(self, min_samples_leaf: int = 5, min_samples_split: int = 15, cp: float = 1e-8,
                 max_depth: int | None = 30, visit_sequence: list[str] | None = None) -> None:
        if int(min_samples_leaf) < 1 or int(min_samples_split) < 2:
            raise ValueError("min_samples_leaf must be >= 1 and min_samples_split >= 2")
        if cp < 0:
            raise ValueError(f"cp must be >= 0, got {cp}")
        if max_depth is not None and int(max_depth) < 1:
            raise ValueError(f"max_depth must be >= 1 or None, got {max_depth}")
        self.min_samples_leaf = int(min_samples_leaf)
        self.min_samples_split = int(min_samples_split)
        self.cp = float(cp)
        self.max_depth = None if max_depth is None else int(max_depth)
        self.visit_sequence = None if visit_sequence is None else [str(c) for c in visit_sequence]

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        self._schema = ctx.schema
        self._seed = int(ctx.seed) % 2**32
        train = ctx.schema.coerce(train, "cart: training data")
        order = self.visit_order(ctx.schema)
        cols = {c.name: encode_column(train[c.name], c) for c in ctx.schema.columns}
        self._levels = {name: col.levels for name, col in cols.items()}
        self._first = cols[order[0]]
        self._models = [self.fit_column(cols[name], [cols[p] for p in order[:i]])
                        for i, name in enumerate(order) if i > 0]

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        rng = np.random.default_rng(seed)
        first = self._first.values
        synthetic = {self._first.name: first[rng.integers(0, len(first), n)]}
        for col in self._models:
            synthetic[col.name] = draw_column(col, [synthetic[p] for p in col.predictors], n, rng)
        out = {}
        for name in self._schema.names:
            levels = self._levels[name]
            out[name] = levels[synthetic[name]] if levels is not None else synthetic[name]
        return self._schema.coerce(pd.DataFrame(out), "cart: synthetic data")

    def visit_order(self, schema: Schema) -> list[str]:
        """The configured visit sequence checked against the schema, or the schema order."""
        if self.visit_sequence is None:
            return schema.names
        seq = self.visit_sequence
        missing = [c for c in schema.names if c not in seq]
        unknown = [c for c in seq if c not in schema.names]
        dupes = sorted({c for c in seq if seq.count(c) > 1})
        if missing or unknown or dupes:
            raise ValueError(
                f"cart: visit_sequence must list every column once: missing {missing}, "
                f"unknown {unknown}, repeated {dupes}"
            )
        return list(seq)

    def fit_column(self, target: EncodedColumn, predictors: list[EncodedColumn]) -> ColumnModel:
        """The model of one column given the columns before it (also used by holdbench.synthesizers.sequential's
        ar_cart, which fits events on subject attributes and earlier events)."""
        names = [p.name for p in predictors]
        if target.categorical:
            value = self._fit_tree(target.values, len(target.levels), predictors, None)
            return ColumnModel(target.name, True, names, None, value)
        absent = np.isnan(target.values)
        present = ~absent
        missing = None
        if absent.any():
            missing = self._fit_tree(absent.astype(np.int64), 2, predictors, None)
        value = None
        if present.any():
            value = self._fit_tree(target.values[present], None, predictors, present)
        return ColumnModel(target.name, False, names, missing, value)

    def _fit_tree(self, y: np.ndarray, n_classes: int | None, predictors: list[EncodedColumn],
                  rows: np.ndarray | None) -> _Fitted:
        values = [p.values if rows is None else p.values[rows] for p in predictors]
        rank_maps = [
            ranks(level_scores(v, len(p.levels), y, n_classes)) if p.categorical else None
            for p, v in zip(predictors, values)
        ]
        model = TreeModel.fit(
            _design(values, rank_maps), y, n_classes is not None,
            min_samples_leaf=self.min_samples_leaf, min_samples_split=self.min_samples_split,
            max_depth=self.max_depth, cp=self.cp, seed=self._seed,
        )
        return _Fitted(rank_maps, model)


def encode_column(series: pd.Series, column: Column) -> EncodedColumn:
    """Codes over sorted levels (missing: one extra level) for str columns, else floats."""
    if column.dtype != "str":
        return EncodedColumn(column.name, series.astype("Float64").to_numpy(dtype=float, na_value=np.nan))
    codes, uniques = pd.factorize(series.astype(object), sort=True)
    levels = np.asarray(uniques, dtype=object)
    if (codes < 0).any():
        codes = np.where(codes < 0, len(levels), codes)
        levels = np.append(levels, np.array([np.nan], dtype=object))
    return EncodedColumn(column.name, codes.astype(np.int64), levels)


def _design(values: list[np.ndarray], rank_maps: list[np.ndarray | None]) -> np.ndarray:
    """The predictor matrix: categorical codes replaced by their ranks for this target."""
    return np.column_stack([v if r is None else r[v] for v, r in zip(values, rank_maps)]).astype(float)


def draw_column(col: ColumnModel, predictors: list[np.ndarray], n: int,
                 rng: np.random.Generator) -> np.ndarray:
    if col.categorical:
        return col.value.draw(predictors, rng)
    absent = np.zeros(n, dtype=bool)
    if col.missing is not None:
        absent = col.missing.draw(predictors, rng).astype(bool)
    out = np.full(n, np.nan)
    present = ~absent
    if col.value is not None and present.any():
        out[present] = col.value.draw([p[present] for p in predictors], rng)
    return out

"""Tree building blocks for the sequential CART synthesizer (holdbench.synthesizers.cart).

Three pieces make a scikit-learn tree behave like the rpart tree that synthpop's
`syn.cart` grows and then use it the way synthpop does:

- `level_scores`: an order of a categorical predictor's levels under which a threshold
  split on the rank is the best grouping of levels (rpart groups levels, sklearn trees
  only threshold numbers).
- `rpart_leaf_map`: rpart's complexity pruning at `cp`, applied to a fully grown sklearn
  tree by mapping every node to the leaf that survives pruning.
- `LeafDonors`: draw, for every synthetic row, one observed target value from the T rows
  in the same (pruned) leaf, vectorised with sorted arrays and `searchsorted`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # imported when a tree is fitted: checking a config must stay cheap
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor


def level_scores(codes: np.ndarray, n_levels: int, y: np.ndarray, n_classes: int | None) -> np.ndarray:
    """A score per level of a categorical predictor; ranking levels by it orders them for splits.

    Regression (`n_classes` None): the mean of y within the level. Ordering by it is exact
    (Breiman et al. 1984, Fisher 1958): the best binary grouping of levels under squared
    error is a cut of this order. Two classes: the share of class 1 within the level, exact
    for the Gini criterion too. More classes: the projection of the level's class
    distribution on its first principal component (Coppersmith, Hong & Hosking 1999), a
    close heuristic; rpart searches all groupings here. Levels absent from these rows get
    the overall mean so they sit in the middle.
    """
    counts = np.bincount(codes, minlength=n_levels).astype(float)
    seen = counts > 0
    if n_classes is None:
        sums = np.bincount(codes, weights=y, minlength=n_levels)
        scores = np.full(n_levels, y.mean() if len(y) else 0.0)
        scores[seen] = sums[seen] / counts[seen]
        return scores
    table = np.bincount(codes * n_classes + y, minlength=n_levels * n_classes).reshape(n_levels, n_classes)
    shares = np.zeros_like(table, dtype=float)
    shares[seen] = table[seen] / counts[seen, None]
    if n_classes <= 2:
        scores = shares[:, -1] if n_classes == 2 else np.zeros(n_levels)
        overall = table[:, -1].sum() / max(counts.sum(), 1) if n_classes == 2 else 0.0
        return np.where(seen, scores, overall)
    weights = counts / counts.sum()
    centre = weights @ shares
    dev = shares - centre
    cov = (dev * weights[:, None]).T @ dev
    _, vecs = np.linalg.eigh(cov)
    axis = vecs[:, -1]
    scores = dev @ axis
    return np.where(seen, scores, 0.0)


def ranks(scores: np.ndarray) -> np.ndarray:
    """Rank 0..k-1 of each level by score, ties broken by level code (stable)."""
    order = np.argsort(scores, kind="stable")
    out = np.empty(len(scores), dtype=float)
    out[order] = np.arange(len(scores), dtype=float)
    return out


def rpart_leaf_map(tree, classification: bool, cp: float) -> np.ndarray:
    """Map every node id of a fitted sklearn tree to its leaf after rpart's cp pruning.

    rpart grows a node's subtree and collapses it when its complexity (risk reduction per
    split) is at most cp × risk(root); that yields the optimal cost-complexity subtree at
    alpha = cp × risk(root), computed here bottom-up (sklearn numbers nodes in preorder, so
    children come after parents). Risk is rpart's: the sum of squares for regression and
    the misclassification count for classification (default priors, 0/1 loss). At the
    default cp = 1e-8 regression trees are practically unpruned, but a classification
    subtree whose leaves all predict the parent's majority class reduces no risk and is
    collapsed, so rpart's class trees are much smaller than a fully grown Gini tree.
    """
    t = tree.tree_
    left, right = t.children_left, t.children_right
    n = t.n_node_samples.astype(float)
    if classification:
        value = t.value[:, 0, :]
        share = value / value.sum(axis=1, keepdims=True)
        risk = n - np.rint(share.max(axis=1) * n)
    else:
        risk = t.impurity * n
    alpha = cp * risk[0]
    cost = risk + alpha
    pruned = np.zeros(t.node_count, dtype=bool)
    for node in range(t.node_count - 1, -1, -1):
        if left[node] < 0:
            continue
        subtree = cost[left[node]] + cost[right[node]]
        if risk[node] + alpha <= subtree * (1 + 1e-12):
            pruned[node] = True
        else:
            cost[node] = subtree
    top = np.arange(t.node_count)
    for node in range(t.node_count):
        if left[node] >= 0 and (pruned[node] or top[node] != node):
            top[left[node]] = top[right[node]] = top[node]
    return top


class LeafDonors:
    """The observed target values of T grouped by leaf, for drawing synthetic values."""

    def __init__(self, leaves: np.ndarray, values: np.ndarray) -> None:
        order = np.argsort(leaves, kind="stable")
        self.leaves = leaves[order]
        self.values = values[order]

    def draw(self, leaves: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One donor value per requested leaf, uniformly among that leaf's T rows."""
        lo = np.searchsorted(self.leaves, leaves, side="left")
        hi = np.searchsorted(self.leaves, leaves, side="right")
        if np.any(hi <= lo):
            raise RuntimeError("a synthetic row fell into a leaf with no training rows")
        return self.values[rng.integers(lo, hi)]


@dataclass
class TreeModel:
    """One fitted tree: its pruning map and the T values per leaf it draws from."""

    tree: DecisionTreeClassifier | DecisionTreeRegressor
    leaf_map: np.ndarray
    donors: LeafDonors

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, classification: bool, *, min_samples_leaf: int,
            min_samples_split: int, max_depth: int | None, cp: float, seed: int) -> TreeModel:
        """Grow the tree on (x, y), prune it as rpart would and index y by surviving leaf."""
        from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

        kind = DecisionTreeClassifier if classification else DecisionTreeRegressor
        tree = kind(min_samples_leaf=min_samples_leaf, min_samples_split=min_samples_split,
                    max_depth=max_depth, random_state=seed)
        tree.fit(x, y)
        leaf_map = rpart_leaf_map(tree, classification, cp)
        return cls(tree, leaf_map, LeafDonors(leaf_map[tree.apply(x)], y))

    def draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """For each row of x, a T value from the leaf the row falls into."""
        if len(x) == 0:
            return self.donors.values[:0]
        return self.donors.draw(self.leaf_map[self.tree.apply(x)], rng)

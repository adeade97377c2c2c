"""Building blocks of Bale & Quick's synthesizer (holdbench.synthesizers.bale_quick): T's encoding, the
Gaussian mixture of the numeric columns, the per-column CART and MNL models, post-processing.

Everything here is fitted on T only and draws only from the numpy Generator it is handed.

Encoding (`encode`):

- numeric columns (schema `model_kind` numeric; bool counts as 0/1): standardised with T's
  mean and SD (SD 0 -> 1). A missing number is imputed with the mean (0 once standardised)
  for the mixture and gets a missing indicator, a two-level categorical step `<col>_missing`;
- point masses (`mass_share` not None): when one value of a numeric column holds at least
  `mass_share` of T's rows (adult's capital-gain: 92 % zeros; every bool), a two-level step
  `<col>_mass` says "the value is exactly that one", and the mixture models only the rest:
  the mass value is left out of the column's mean, SD and range, and in the mixture's data a
  row at the mass holds a random one of the column's other T values (seeded). A Gaussian
  mixture cannot put probability on a single point, so without this S gets a smear of small
  values T never has. Not the mean (as for missing numbers): then "at the mass" is exactly
  "z = 0", which the step's model learns as a knife-edge split that the mixture's continuous
  draws almost never hit (online-shoppers: 15 % of S at PageValues' mass, T has 78 %; pMSE
  ratio at K = 50, b = 50: 6.4 with mean-filling, 2.6 with random values, 3.6 without point
  masses; adult 2.3, 2.15, 4.6);
- categorical columns (`model_kind` categorical, any dtype): integer codes 0..L-1 of T's
  distinct values in sorted order; a missing value is one more level (code L).

The categorical steps are visited in order: first the indicators (in T's column order; a
column's missing indicator before its mass indicator), then the categorical columns in the visit order. Step j is modelled on the
standardised numerics followed by the integer codes of steps 0..j-1 (codes, not one-hot,
as Bale & Quick's label-encoded data: a tree splits the code at thresholds, the MNL expands
it polynomially like any number).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from holdbench.synthesizers._cart_tree import LeafDonors


@dataclass(frozen=True)
class Step:
    """One categorical step: a categorical column, or the missing indicator of a numeric one."""

    name: str
    """the column it produces (for an indicator: the numeric column it belongs to)"""
    indicator: bool
    """True: a 0/1 indicator of numeric column `name` (missing, or at its point mass)"""
    codes: np.ndarray
    """T's codes 0..L-1"""
    levels: np.ndarray
    """the value of each code (object array; a missing level is NaN; indicators: [False, True])"""
    mass: float | None = None
    """an indicator of the value being exactly `mass` (None: a missing indicator / a categorical)"""

    @property
    def label(self) -> str:
        """the step's name in parameters and warnings: `<col>`, `<col>_missing` or `<col>_mass`"""
        if not self.indicator:
            return self.name
        return f"{self.name}_{'missing' if self.mass is None else 'mass'}"

    @property
    def n_levels(self) -> int:
        return len(self.levels)


@dataclass(frozen=True)
class Encoded:
    """T as the models see it, and what post-processing needs to return to T's scale."""

    numeric: list[str]
    dtypes: dict[str, str]
    mean: np.ndarray
    sd: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    """T's range of each numeric column (without its point mass, if it has one)"""
    z: np.ndarray
    """n × p standardised numerics, missing values at 0 (the mean)"""
    steps: list[Step]
    names: list[str]
    """T's column order"""

    @property
    def design(self) -> np.ndarray:
        """[z | codes of every step]: step j's predictors are the first p + j columns."""
        codes = [s.codes.astype(float) for s in self.steps]
        return np.column_stack([self.z, *codes]) if codes else self.z


def encode(train: pd.DataFrame, model_kinds: dict[str, str], dtypes: dict[str, str],
           categorical_order: Sequence[str], mass_share: float | None = None, seed: int = 0) -> Encoded:
    """Encode T (see the module doc); `categorical_order` is the visit order of the categoricals,
    `mass_share` the share of T's rows from which a numeric value is a point mass (None: never),
    `seed` that of the draws standing in for point-mass values in the mixture."""
    numeric = [c for c in train.columns if model_kinds[c] == "numeric"]
    cols, indicators, at_mass = [], [], []
    flags = np.array([False, True], dtype=object)
    for name in numeric:
        values = train[name].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        absent = np.isnan(values)
        if absent.all():
            raise ValueError(f"bale_quick: numeric column {name!r} is entirely missing in T")
        if absent.any():
            indicators.append(Step(name, True, absent.astype(np.int64), flags))
        if mass_share is not None:
            uniques, counts = np.unique(values[~absent], return_counts=True)
            top = int(np.argmax(counts))  # ties: the smallest value
            if len(uniques) > 1 and counts[top] >= mass_share * len(values):
                at = values == uniques[top]
                indicators.append(Step(name, True, at.astype(np.int64), flags, mass=float(uniques[top])))
                values = np.where(at, np.nan, values)  # the mixture sees the rest only
                at_mass.append((len(cols), at))
        cols.append(values)
    raw = np.column_stack(cols) if cols else np.empty((len(train), 0))
    mean = np.nanmean(raw, axis=0) if cols else np.empty(0)
    sd = np.nanstd(raw, axis=0) if cols else np.empty(0)
    sd = np.where(sd > 0, sd, 1.0)
    z = np.nan_to_num((raw - mean) / sd, nan=0.0)
    rng = np.random.default_rng(seed)
    for i, at in at_mass:  # see the module doc: a random other value, not the mean
        rest = z[~np.isnan(raw[:, i]), i]
        z[at, i] = rest[rng.integers(0, len(rest), int(at.sum()))]
    lo = np.nanmin(raw, axis=0) if cols else np.empty(0)
    hi = np.nanmax(raw, axis=0) if cols else np.empty(0)
    steps = indicators + [_categorical_step(train[name], name) for name in categorical_order]
    return Encoded(numeric, dict(dtypes), mean, sd, lo, hi, z, steps, list(train.columns))


def _categorical_step(series: pd.Series, name: str) -> Step:
    missing = series.isna().to_numpy()
    present = series[~missing]
    uniques = pd.unique(present.astype(object))
    try:
        levels = np.array(sorted(uniques), dtype=object)
    except TypeError:  # mixed types: sort by their text
        levels = np.array(sorted(uniques, key=str), dtype=object)
    codes = np.full(len(series), len(levels), dtype=np.int64)
    codes[~missing] = pd.Index(levels).get_indexer(present.astype(object))
    if missing.any():
        levels = np.append(levels, np.array([np.nan], dtype=object))
    return Step(name, False, codes, levels)


class Mixture:
    """A fitted GaussianMixture, sampled with a caller's Generator (sklearn's `sample` is not)."""

    def __init__(self, z: np.ndarray, k: int, seed: int) -> None:
        from sklearn.mixture import GaussianMixture

        self.k = int(k)
        model = GaussianMixture(n_components=self.k, covariance_type="full", init_params="k-means++",
                                n_init=2, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.fit(z)
        self.converged = bool(model.converged_) and not caught
        self.model = model
        self.weights = model.weights_ / model.weights_.sum()
        self.means = model.means_
        self.chol = np.linalg.cholesky(model.covariances_)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """n standardised rows and the component each was drawn from."""
        comp = rng.choice(self.k, size=n, p=self.weights)
        noise = rng.standard_normal((n, self.means.shape[1]))
        out = np.empty_like(noise)
        for j in range(self.k):
            rows = comp == j
            if rows.any():
                out[rows] = self.means[j] + noise[rows] @ self.chol[j].T
        return out, comp

    def sample_component(self, comps: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One standardised row from each given component."""
        noise = rng.standard_normal((len(comps), self.means.shape[1]))
        return self.means[comps] + np.einsum("nij,nj->ni", self.chol[comps], noise)

    def responsible(self, z: np.ndarray) -> np.ndarray:
        """The component with the largest posterior probability for each row."""
        return self.model.predict(z)


class Marginal:
    """A step without predictors: T's codes drawn with replacement."""

    def __init__(self, y: np.ndarray) -> None:
        self.y = y

    def draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.y[rng.integers(0, len(self.y), len(x))]


class CartStep:
    """Classification tree with min_samples_leaf b; a value is a uniform draw from its leaf's T values."""

    def __init__(self, x: np.ndarray, y: np.ndarray, b: int, seed: int) -> None:
        from sklearn.tree import DecisionTreeClassifier

        self.tree = DecisionTreeClassifier(min_samples_leaf=int(b), random_state=seed).fit(x, y)
        self.donors = LeafDonors(self.tree.apply(x), y)

    def draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return self.donors.draw(self.tree.apply(x), rng)


def _saga(c: float, seed: int, max_iter: int, tol: float, warm_start: bool = False):
    """sklearn's L1 LogisticRegression with the saga solver (multinomial for > 2 classes).

    scikit-learn 1.8 deprecates `penalty` (gone in 1.10): L1 is `l1_ratio=1` there, with the
    same coefficients as `penalty="l1"` (tests/synthesizers/test_bale_quick_tuning.py). Before
    1.8, `l1_ratio` is ignored unless penalty="elasticnet", so those versions keep penalty="l1"
    (pyproject allows scikit-learn >= 1.4)."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    kw = {"C": float(c), "solver": "saga", "max_iter": int(max_iter), "tol": float(tol), "random_state": seed,
          "warm_start": warm_start}
    if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) >= (1, 8):
        return LogisticRegression(l1_ratio=1.0, **kw)
    return LogisticRegression(penalty="l1", **kw)


FEATURE_MAPS = ("standardised", "quantile")
"""The predictor maps an MNL step can expand polynomially (`_features`)."""


def check_feature_map(kind: str) -> str:
    """`kind` if it is one of FEATURE_MAPS, else a ValueError naming the setting and the choices."""
    if kind not in FEATURE_MAPS:
        raise ValueError(f"bale_quick: features must be one of {list(FEATURE_MAPS)}, got {kind!r}")
    return kind


def _symmetric(u: np.ndarray) -> np.ndarray:
    """[0, 1] -> [-1, 1] (a module-level function, so a fitted feature map pickles)."""
    return 2.0 * u - 1.0


def _features(degree: int, kind: str = "standardised", n_rows: int | None = None):
    """The (unfitted) feature map of an MNL step, for `kind`:

    - standardised (Bale & Quick's code): standardise, degree-d polynomial terms, standardise;
    - quantile: each predictor to its quantile in T mapped to [-1, 1] (1,000 quantiles or one per
      row, no subsampling), then degree-d polynomial terms, not rescaled: every term lies in
      [-1, 1], so no row's squared norm exceeds the number of terms. saga's step size is inversely
      proportional to the largest squared row norm, which heavy-tailed numerics cubed and then
      standardised make large (online-shoppers: 0.7-1.3 million standardised, 750-2,600 on these
      terms), so within the same epochs saga gets much nearer its optimum (saga_convergence.csv's
      quantile column); the fresh-set ratios it leads to are no nearer 1 (fresh_sets_paper.csv).
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import (
        FunctionTransformer,
        PolynomialFeatures,
        QuantileTransformer,
        StandardScaler,
    )

    if check_feature_map(kind) == "standardised":
        return make_pipeline(StandardScaler(), PolynomialFeatures(degree, include_bias=False), StandardScaler())
    rows = max(int(n_rows or 1), 1)
    quantiles = QuantileTransformer(n_quantiles=min(1000, rows), subsample=rows, random_state=0)
    return make_pipeline(quantiles, FunctionTransformer(_symmetric),
                         PolynomialFeatures(degree, include_bias=False))


def _null_saga(c: float, seed: int, max_iter: int, tol: float, n_features: int, y: np.ndarray):
    """`_saga` (warm_start=True, not yet fitted) set to the null model, as glmnet starts its
    path: no coefficient, the intercepts of y's marginal (sigmoid(b) = P(class 1) for two
    classes, softmax(b) = the marginal for more), so saga improves on the marginal instead of
    first having to find it. saga's step size shrinks with the design's largest squared row
    norm, and on heavy-tailed numerics cubed (online-shoppers: 0.7-1.3 million) 10 epochs from
    zero intercepts ended three of its columns' models worse than their marginal
    (results/published/bale_quick/saga_convergence.csv). The objective is unchanged."""
    logit = _saga(c, seed, max_iter, tol, warm_start=True)
    _, counts = np.unique(y, return_counts=True)
    log_p = np.log(counts / counts.sum())
    if len(counts) == 2:
        logit.coef_, logit.intercept_ = np.zeros((1, n_features)), np.array([log_p[1] - log_p[0]])
    else:
        logit.coef_, logit.intercept_ = np.zeros((len(counts), n_features)), log_p - log_p.mean()
    return logit


def _fit_logit(logit, features: np.ndarray, y: np.ndarray) -> bool:
    """Fit in place; True when saga met its tolerance within max_iter epochs."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        logit.fit(features, y)
    return not any(issubclass(w.category, ConvergenceWarning) for w in caught)


class MNLStep:
    """L1-penalised multinomial logit (saga) on degree-d polynomial features of the predictors
    (mapped as `feature_map` says, see `_features`), fitted from the null model (`_null_saga`)
    with at most `max_iter` epochs."""

    def __init__(self, x: np.ndarray, y: np.ndarray, c: float, seed: int, *, degree: int,
                 max_iter: int, tol: float, feature_map: str = "standardised") -> None:
        self.features = _features(degree, feature_map, len(x))
        features = self.features.fit_transform(x)
        self.logit = _null_saga(c, seed, max_iter, tol, features.shape[1], y)
        self.converged = _fit_logit(self.logit, features, y)
        self.classes = self.logit.classes_

    @classmethod
    def _of(cls, features, logit, converged: bool) -> MNLStep:
        step = cls.__new__(cls)
        step.features, step.logit, step.converged, step.classes = features, logit, converged, logit.classes_
        return step

    def draw(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if len(x) == 0:
            return self.classes[:0]
        cum = np.cumsum(self.logit.predict_proba(self.features.transform(x)), axis=1)
        u = rng.random(len(x)) * cum[:, -1]
        pick = np.minimum((cum < u[:, None]).sum(axis=1), len(self.classes) - 1)
        return self.classes[pick]


class MNLPath:
    """One column's MNL steps along an ascending grid of C: a regularisation path, fitted as
    glmnet fits one, from the strongest penalty up, each point warm-started from the solution
    at the point before (the first from the null model, `_null_saga`) with at
    most `max_iter` saga epochs. Points are fitted in grid order, and only up to the highest
    one asked for, so the model at a point is the same whichever points were asked for first.

    Why: on adult saga rarely meets its tolerance within 100 epochs, and an epoch costs
    ~ rows x polynomial terms x levels, so a cold fit per C pays the whole cap every time;
    along the path a point starts from its neighbour's solution. Adult's workclass (164 terms,
    9 levels), training log-loss of 100 cold epochs vs a 13-point path of 10 epochs each (both
    started from zero coefficients and intercepts):
    1.0250 vs 1.0243 at C = 3, 1.0338 vs 1.0423 at C = 0.055 (the strongly penalised end is
    the less converged), for 130 epochs instead of 100 per C asked for.
    """

    def __init__(self, x: np.ndarray, y: np.ndarray, cs: np.ndarray, seed: int, *, degree: int,
                 max_iter: int, tol: float, feature_map: str = "standardised") -> None:
        cs = np.asarray(cs, dtype=float)
        if cs.ndim != 1 or len(cs) == 0 or np.any(np.diff(cs) <= 0):
            raise ValueError(f"bale_quick: an MNL path needs an ascending grid of C, got {cs!r}")
        self.cs, self._x, self._y, self._seed = cs, x, y, seed
        self._degree, self._max_iter, self._tol = degree, max_iter, tol
        self._map = check_feature_map(feature_map)  # an unknown map is refused here, before any fit
        self._features = None
        self._logit = None
        self.steps: list[MNLStep] = []

    def at(self, i: int) -> MNLStep:
        """The model at grid point i (fitting the path up to it if needed)."""
        if not 0 <= i < len(self.cs):
            raise IndexError(f"bale_quick: MNL path point {i} outside 0..{len(self.cs) - 1}")
        if i >= len(self.steps):
            if self._features is None:
                self._features = _features(self._degree, self._map, len(self._x))
                features = self._features.fit_transform(self._x)
                self._logit = _null_saga(self.cs[0], self._seed, self._max_iter, self._tol, features.shape[1],
                                         self._y)
            else:  # fitted: not kept between extensions (adult's last column: 24,421 x 968 floats)
                features = self._features.transform(self._x)
            for c in self.cs[len(self.steps):i + 1]:
                self._logit.set_params(C=float(c))
                converged = _fit_logit(self._logit, features, self._y)
                self.steps.append(MNLStep._of(self._features, copy.deepcopy(self._logit), converged))
        return self.steps[i]


def generate(enc: Encoded, mixture: Mixture | None, models: list, n: int, rng: np.random.Generator,
             z: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """n rows in model space: [z | step codes], and each row's mixture component (None: no
    numerics, or `z` given: the standardised numerics to start from)."""
    p = len(enc.numeric)
    x = np.empty((n, p + len(enc.steps)))
    comp = None
    if p:
        if z is None:
            z, comp = mixture.sample(n, rng)
        x[:, :p] = z
    for j, model in enumerate(models):
        x[:, p + j] = model.draw(x[:, :p + j], rng)
    return x, comp


def release(enc: Encoded, x: np.ndarray, clip: bool) -> pd.DataFrame:
    """Model-space rows back to T's columns: original scale, missing values, ints rounded,
    numbers clipped to T's range (when `clip`; without the point mass), the point mass where its
    indicator says so, bools as bool, categorical codes as T's values."""
    p = len(enc.numeric)
    values = x[:, :p] * enc.sd + enc.mean if p else x[:, :0]
    if clip and p:
        values = np.clip(values, enc.lo, enc.hi)
    out: dict[str, object] = {}
    absent = {s.name: x[:, p + j] == 1 for j, s in enumerate(enc.steps) if s.indicator and s.mass is None}
    masses = {s.name: (x[:, p + j] == 1, s.mass) for j, s in enumerate(enc.steps) if s.mass is not None}
    for i, name in enumerate(enc.numeric):
        col = values[:, i]
        dtype = enc.dtypes[name]
        if dtype in ("int", "bool"):
            col = np.round(col)
        if dtype == "bool":
            col = np.clip(col, 0, 1)
        if name in masses:
            col = np.where(masses[name][0], masses[name][1], col)
        if name in absent:
            col = pd.array(col, dtype="Float64")
            col[absent[name]] = pd.NA
            out[name] = col.astype("Int64" if dtype == "int" else "boolean") if dtype != "float" else col.astype(float)
        else:
            out[name] = col.astype(np.int64) if dtype == "int" else col.astype(bool) if dtype == "bool" else col
    for j, step in enumerate(enc.steps):
        if not step.indicator:
            out[step.name] = step.levels[x[:, p + j].astype(np.int64)]
    return pd.DataFrame({name: out[name] for name in enc.names})


@dataclass(frozen=True)
class DisclosureSpec:
    """The dataset's binary sensitive attribute and its quasi-identifiers (metric kinds split them)."""

    sensitive: str
    values: tuple
    continuous: list[str]
    categorical: list[str]


def disclosure_spec(schema, train: pd.DataFrame) -> DisclosureSpec:
    """Read the sensitive attribute and quasi-identifiers from the schema; ValueError if unusable."""
    sensitive = getattr(schema, "sensitive", None)
    qis = list(getattr(schema, "quasi_identifiers", ()) or ())
    if sensitive is None or not qis:
        raise ValueError(f"bale_quick: disclosure_reduction needs the dataset's sensitive attribute and "
                         f"quasi-identifiers; dataset {schema.name!r} has sensitive={sensitive!r}, "
                         f"quasi_identifiers={qis}")
    unknown = [c for c in [sensitive, *qis] if c not in train.columns]
    if unknown:
        raise ValueError(f"bale_quick: disclosure column(s) {unknown} are not columns of T")
    values = tuple(pd.unique(train[sensitive].dropna()))
    if len(values) != 2:
        raise ValueError(f"bale_quick: disclosure_reduction needs a binary sensitive attribute; "
                         f"{sensitive!r} has {len(values)} distinct values in T")
    kinds = schema.kinds
    return DisclosureSpec(sensitive, values, [q for q in qis if kinds[q] == "numeric"],
                          [q for q in qis if kinds[q] != "numeric"])


def reduce_disclosure(out: pd.DataFrame, targets: pd.DataFrame, base, spec: DisclosureSpec,
                      deltas: Sequence[float], bound: float, max_rounds: int, rng: np.random.Generator,
                      coerce) -> tuple[pd.DataFrame, int, bool]:
    """Replace rows of `out` by decoys until no target's disclosure ratio exceeds `bound`.

    A round computes every target's ratio (holdbench.metrics.disclosure.disclosure_ratios) at every
    radius; for each target above the bound at some radius, one decoy: `base(target rows, rng)`
    (a synthetic record drawn from the mixture component responsible for the target, its
    categorical columns drawn by the fitted models), then its categorical QIs set to the
    target's, its sensitive value to the other one and its continuous QIs moved towards the
    target's until within half the smallest offending radius (S-standardised; the target's
    own values when rounding would leave the radius or the target has a missing QI). The decoy
    replaces a random row that is not yet a decoy. `coerce` turns a frame into released rows
    (schema dtypes), so the ratios are those of the output. Returns (rows, decoys, converged).
    """
    from holdbench.metrics.disclosure import disclosure_ratios

    deltas = np.sort(np.asarray(deltas, dtype=float))
    is_decoy = np.zeros(len(out), dtype=bool)
    for _ in range(max_rounds):
        ratios = np.vstack([disclosure_ratios(targets, out, spec.sensitive, spec.continuous,
                                              spec.categorical, d) for d in deltas])
        risky = ratios > bound
        at_risk = np.flatnonzero(risky.any(axis=0))
        if len(at_risk) == 0:
            return out, int(is_decoy.sum()), True
        free = np.flatnonzero(~is_decoy)
        at_risk = at_risk[:len(free)]
        if len(at_risk) == 0:
            break
        radius = deltas[risky[:, at_risk].argmax(axis=0)]
        decoys = coerce(_place(base(at_risk, rng), targets.iloc[at_risk].reset_index(drop=True), out, spec,
                               radius))
        rows = rng.choice(free, size=len(at_risk), replace=False)
        combined = pd.concat([out, decoys], ignore_index=True)
        take = np.arange(len(out))
        take[rows] = len(out) + np.arange(len(decoys))
        out = coerce(combined.iloc[take])
        is_decoy[rows] = True
    return out, int(is_decoy.sum()), False


def _place(decoys: pd.DataFrame, targets: pd.DataFrame, out: pd.DataFrame, spec: DisclosureSpec,
           radius: np.ndarray) -> pd.DataFrame:
    decoys = decoys.copy()
    for col in spec.categorical:
        decoys[col] = targets[col].to_numpy()
    first, second = spec.values
    decoys[spec.sensitive] = np.where(targets[spec.sensitive].to_numpy() == first, second, first)
    if not spec.continuous:
        return decoys
    cols = spec.continuous
    r = targets[cols].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    d = decoys[cols].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    sd = np.nanstd(out[cols].astype("Float64").to_numpy(dtype=float, na_value=np.nan), axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    gap = np.sqrt(np.nansum(((d - r) / sd) ** 2, axis=1))
    shrink = np.minimum(1.0, np.divide(radius / 2, gap, out=np.ones_like(gap), where=gap > 0))
    moved = r + shrink[:, None] * (d - r)
    whole = [i for i, c in enumerate(cols) if not pd.api.types.is_float_dtype(targets[c])]
    moved[:, whole] = np.round(moved[:, whole])
    far = np.sqrt(np.nansum(((moved - r) / sd) ** 2, axis=1)) > 0.9 * radius
    copy = far | np.isnan(r).any(axis=1) | np.isnan(moved).any(axis=1)
    moved[copy] = r[copy]
    for i, col in enumerate(cols):
        decoys[col] = moved[:, i]
    return decoys

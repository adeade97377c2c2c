"""The discrete domain a DP generator works on, taken from public declarations or estimated under DP.

MST, AIM and PrivBayes model discrete columns. Which values a column can take (a categorical column's
levels, a numeric column's bins) is part of what they release, so it must not be read from T for free:

- a column declared public in the dataset config (`levels: [...]` on a categorical column, `bounds:
  [lo, hi]` on a numeric one; contracts/schema.py) costs nothing; a bool column's levels (False, True)
  are public by its dtype;
- every other column is estimated from ONE noisy release: a Gaussian-noised histogram per column
  (each record adds 1 to one count of every estimated column: L2 sensitivity sqrt(#columns)), at
  (epsilon_domain, delta_domain) -- zCDP rho from (epsilon_domain, delta_domain / 2) (Bun & Steinke
  2016, Prop. 1.3), the other delta_domain / 2 covering the levels thresholding.
  * numeric column: counts over a fixed, data-independent grid (a float column: the point 0 and
    +-[2^(i/4), 2^((i+1)/4)) for 2^-10 ... 2^34, 19% relative width; an integer column: every integer
    in [-128, 128] a point of its own, the float grid's cells beyond; clipped to public bounds where
    declared) and over its octaves (four cells
    each: a two-level hierarchical histogram, so each record adds 1 to two counts of the column): the
    column's range is the outermost octaves whose noisy count exceeds z sigma (z such that an empty
    octave passes with probability 5% at most over every octave of every column), an octave's mass
    (noisy count, clipped at 0) is shared among its cells in proportion to theirs; `binning: quantile` cuts it into
    `bins` bins holding equal noisy mass (a bin is a run of grid cells: a point mass such as 0 gets a
    bin of its own), `binning: uniform` into `bins` equal-width bins between the public bounds or the
    range. A sampled bin becomes a value by drawing a
    grid cell in proportion to its noisy count, then a uniform value inside it. A missing value is a
    bin of its own in every numeric column;
  * categorical column: the noisy counts of the levels T holds; a level is kept when its noisy count
    exceeds tau = 1 + sigma * Phi^-1(1 - (delta_domain / 2) / #categorical columns) (a level held by one
    record passes with probability at most delta_domain / 2 over all columns: the stability
    histogram of Korolova et al. 2009 / Bun, Nissim & Stemmer 2016). Records of a level not kept,
    and missing values, share one code that is sampled back as a missing value.

The cell's guarantee is basic composition: (epsilon_domain + epsilon_fit, delta_domain + delta_fit),
where the generator fits at (epsilon - epsilon_domain, delta - delta_domain). `Domain.accounting()`
states the parts; generate.json records them (synthesizer_info.privacy).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from holdbench.contracts.schema import Schema
from scipy.stats import norm

#: positive edges of the float grid: 2^(i/4) for i = -40 ... 136 (about 0.001 ... 1.7e10)
GRID_EDGES = 2.0 ** (np.arange(-40, 137) / 4.0)
#: an integer column's grid holds every integer in [-INT_POINTS, INT_POINTS] as a cell of its own
INT_POINTS = 128
BINNINGS = ("quantile", "uniform")


@dataclass(frozen=True)
class Grid:
    """Data-independent cells over the real line: cell i is [bounds[i], bounds[i+1]); `points[i]` is the one
    value a point cell holds (NaN for a range); `octave[i]` groups the cells of one power of two."""
    bounds: np.ndarray
    points: np.ndarray
    octave: np.ndarray

    @property
    def cells(self) -> np.ndarray:
        return np.column_stack([self.bounds[:-1], self.bounds[1:]])

    def __len__(self) -> int:
        return len(self.points)

    def index(self, x: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.bounds, np.asarray(x, dtype=float), side="right") - 1


def _grid(bounds: np.ndarray, points: np.ndarray) -> Grid:
    lo, hi = bounds[:-1], bounds[1:]
    rep = np.where(~np.isnan(points), points, np.where(np.isfinite(lo) & np.isfinite(hi), (lo + hi) / 2,
                                                       np.where(np.isfinite(lo), 2 * lo, 2 * hi)))
    key = np.where(rep == 0, 0.0, np.sign(rep) * (np.floor(np.log2(np.abs(np.where(rep == 0, 1, rep)))) + 1000))
    return Grid(bounds, points, np.unique(key, return_inverse=True)[1])


def float_grid() -> Grid:
    """0 as a point; +-[2^(i/4), 2^((i+1)/4)) (19% relative width), the innermost cells running to 0 and
    the outermost to +-inf."""
    tiny = np.nextafter(0.0, 1.0)
    b = np.concatenate([[-np.inf], -GRID_EDGES[::-1], [0.0, tiny], GRID_EDGES, [np.inf]])
    points = np.full(len(b) - 1, np.nan)
    points[len(GRID_EDGES) + 1] = 0.0
    return _grid(b, points)


def int_grid() -> Grid:
    """Every integer in [-INT_POINTS, INT_POINTS] a point; beyond, the float grid's cells."""
    k = np.arange(-INT_POINTS, INT_POINTS + 1)
    outer = GRID_EDGES[GRID_EDGES > INT_POINTS + 0.5]
    b = np.concatenate([[-np.inf], -outer[::-1], k - 0.5, [INT_POINTS + 0.5], outer, [np.inf]])
    points = np.full(len(b) - 1, np.nan)
    points[len(outer) + 1: len(outer) + 1 + len(k)] = k
    return _grid(b, points)


GRIDS = {"float": float_grid(), "int": int_grid()}


def rho_of(epsilon: float, delta: float) -> float:
    """The zCDP rho whose (epsilon, delta)-DP conversion rho + 2 sqrt(rho ln(1/delta)) equals epsilon."""
    log = math.log(1.0 / delta)
    return (math.sqrt(log + epsilon) - math.sqrt(log)) ** 2


@dataclass
class NumericCode:
    """A numeric column's bins: runs of grid cells [starts[b], stops[b]) with their noisy masses."""
    grid: Grid
    lo: float
    hi: float
    starts: list[int]
    stops: list[int]
    mass: np.ndarray  # noisy (clipped at 0) mass of every grid cell
    source: str

    @property
    def size(self) -> int:
        return len(self.starts) + 1  # + the missing-value code

    def encode(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        missing = np.isnan(x)
        cells = self.grid.index(np.clip(np.where(missing, 0.0, x), self.lo, self.hi))
        cells = np.clip(cells, self.starts[0], self.stops[-1] - 1)
        codes = np.searchsorted(np.asarray(self.stops), cells, side="right")
        return np.where(missing, len(self.starts), codes)

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        codes = np.asarray(codes, dtype=int)
        out = np.full(len(codes), np.nan)
        for b, (start, stop) in enumerate(zip(self.starts, self.stops)):
            rows = np.flatnonzero(codes == b)
            if not len(rows):
                continue
            w = self.mass[start:stop]
            p = w / w.sum() if w.sum() > 0 else np.full(stop - start, 1.0 / (stop - start))
            cells = start + rng.choice(stop - start, size=len(rows), p=p)
            lo = np.maximum(self.grid.bounds[cells], self.lo)
            hi = np.minimum(self.grid.bounds[cells + 1], self.hi)
            lo = np.where(np.isfinite(lo), lo, hi)
            hi = np.where(np.isfinite(hi), hi, lo)
            point = self.grid.points[cells]
            out[rows] = np.where(np.isnan(point), lo + (hi - lo) * rng.random(len(rows)), point)
        return out


@dataclass
class CategoricalCode:
    """A categorical column's levels; the code len(levels) is 'missing or a level not kept'."""
    levels: list
    source: str
    strict: bool  # public levels: a value of T outside them is an error

    @property
    def size(self) -> int:
        return len(self.levels) + 1

    def encode(self, values: pd.Series, column: str) -> np.ndarray:
        keys = values.map(lambda v: None if pd.isna(v) else str(v))
        index = {str(v): i for i, v in enumerate(self.levels)}
        if self.strict:
            unknown = sorted({k for k in keys.dropna() if k not in index})
            if unknown:
                raise ValueError(f"column {column!r}: T holds value(s) {unknown[:5]} outside the levels the dataset "
                                 f"config declares public ({len(self.levels)} levels)")
        return keys.map(lambda k: index.get(k, len(self.levels)) if k is not None else len(self.levels)).to_numpy(int)

    def decode(self, codes: np.ndarray) -> list:
        return [self.levels[c] if c < len(self.levels) else np.nan for c in np.asarray(codes, dtype=int)]


@dataclass
class Domain:
    """Per column its code; what the domain step spent."""
    codes: dict
    epsilon: float
    delta: float
    sigma: float | None
    threshold: float | None
    notes: dict = field(default_factory=dict)

    @property
    def cardinalities(self) -> dict[str, int]:
        return {c: code.size for c, code in self.codes.items()}

    def encode(self, train: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({c: code.encode(train[c], c) if isinstance(code, CategoricalCode)
                             else code.encode(train[c].astype("Float64").to_numpy(dtype=float, na_value=np.nan))
                             for c, code in self.codes.items()})

    def decode(self, codes: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        return pd.DataFrame({c: code.decode(codes[c].to_numpy(int)) if isinstance(code, CategoricalCode)
                             else code.decode(codes[c].to_numpy(int), rng) for c, code in self.codes.items()})

    def summary(self) -> dict:
        """Per column: where its domain came from and its size (what generate.json shows)."""
        out = {}
        for c, code in self.codes.items():
            if isinstance(code, CategoricalCode):
                out[c] = {"source": code.source, "levels": len(code.levels)}
            else:
                out[c] = {"source": code.source, "bins": len(code.starts), "range": [_finite(code, 0), _finite(code, 1)]}
        return out


def _finite(code: NumericCode, side: int) -> float:
    """The lowest (side 0) or highest (1) value the column's bins can produce."""
    cell = code.starts[0] if side == 0 else code.stops[-1] - 1
    if not np.isnan(code.grid.points[cell]):
        return float(code.grid.points[cell])
    edge = code.grid.bounds[cell + side]
    value = max(edge, code.lo) if side == 0 else min(edge, code.hi)
    return float(value) if math.isfinite(value) else float(code.grid.bounds[cell + 1 - side])


def estimate(train: pd.DataFrame, schema: Schema, *, epsilon: float, delta: float, binning: str, bins: int,
             rng: np.random.Generator) -> Domain:
    """The domain of every column of `train` (coerced to `schema`): public where declared, else from one
    Gaussian release at (epsilon, delta). epsilon/delta are what the domain step may spend; when every
    column is public it spends nothing (Domain.epsilon == 0)."""
    if binning not in BINNINGS:
        raise ValueError(f"binning must be one of {BINNINGS}, got {binning!r}")
    cols = {c.name: c for c in schema.columns}
    public_cat = {n: list(c.levels) for n, c in cols.items() if c.levels is not None}
    public_cat |= {n: [False, True] for n, c in cols.items() if c.dtype == "bool" and n not in public_cat}
    categorical = [n for n, c in cols.items() if c.model_kind == "categorical" or c.dtype == "bool"]
    numeric = [n for n in cols if n not in categorical]
    # a numeric column needs the noisy grid unless its bounds are public and its bins equal-width
    est_num = [n for n in numeric if not (binning == "uniform" and cols[n].bounds is not None)]
    est_cat = [n for n in categorical if n not in public_cat]
    n_est = len(est_num) + len(est_cat)
    sigma = tau = None
    if n_est:
        if not (epsilon > 0 and 0 < delta < 1):
            raise ValueError(f"the domain of columns {(est_num + est_cat)[:5]} is not declared public, so it is "
                             f"estimated under DP: it needs epsilon_domain > 0 and delta_domain in (0, 1) "
                             f"(got {epsilon!r}, {delta!r})")
        rho = rho_of(epsilon, delta / 2)
        # a record adds 1 to one count per categorical column and to two (cell, octave) per numeric one
        sigma = math.sqrt((len(est_cat) + 2 * len(est_num)) / (2 * rho))
        if est_cat:
            tau = 1.0 + sigma * float(norm.isf((delta / 2) / len(est_cat)))
    # an empty octave passes the range threshold with probability 5% at most over all estimated columns
    n_oct = max(int(g.octave.max()) + 1 for g in GRIDS.values())
    range_z = float(norm.isf(0.05 / (n_oct * max(len(est_num), 1))))
    codes: dict = {}
    for name in schema.names:
        col = cols[name]
        if name in public_cat:
            codes[name] = CategoricalCode(public_cat[name], "public", strict=True)
        elif name in est_cat:
            counts = train[name].dropna().map(str).value_counts(sort=False)
            noisy = counts.to_numpy(float) + rng.normal(0.0, sigma, len(counts))
            order = np.argsort(-noisy, kind="stable")
            kept = [counts.index[i] for i in order if noisy[i] > tau]
            codes[name] = CategoricalCode(kept, "dp", strict=False)
        else:
            codes[name] = _numeric_code(train[name].astype("Float64").to_numpy(dtype=float, na_value=np.nan),
                                        GRIDS["int" if col.dtype == "int" else "float"], col.bounds, binning, bins,
                                        sigma if name in est_num else None, rng, range_z)
    empty = [n for n in est_cat if not codes[n].levels]
    if empty:
        rows = len(train)
        raise ValueError(f"no level of column(s) {empty} passed the DP threshold: a level needs a noisy count above "
                         f"{tau:,.0f} of the {rows:,} rows at epsilon_domain {epsilon:.3g} (sigma {sigma:,.0f} over "
                         f"{n_est} estimated columns); declare the levels public in the dataset config (`levels`), or "
                         "raise epsilon or domain_share")
    spent = (epsilon, delta) if n_est else (0.0, 0.0)
    notes = {"estimated_columns": est_num + est_cat, "public_columns": [n for n in schema.names
                                                                       if n not in est_num + est_cat]}
    return Domain(codes, spent[0], spent[1], sigma, tau, notes)


def _numeric_code(x: np.ndarray, grid: Grid, bounds, binning: str, bins: int, sigma: float | None,
                  rng: np.random.Generator, range_z: float = 3.0) -> NumericCode:
    lo, hi = (-np.inf, np.inf) if bounds is None else (float(bounds[0]), float(bounds[1]))
    source = "public" if sigma is None else ("public bounds, dp bins" if bounds is not None else "dp")
    first = int(grid.index([lo])[0]) if np.isfinite(lo) else 0
    last = int(grid.index([hi])[0]) + 1 if np.isfinite(hi) else len(grid)
    if sigma is None:  # public bounds, equal width: no data used at all
        edges = np.linspace(lo, hi, bins + 1)
        starts, stops = _uniform_runs(grid, edges, first, last)
        mass = np.zeros(len(grid))  # uniform over [lo, hi]: each cell weighs its width inside the bounds
        mass[first:last] = np.minimum(grid.cells[first:last, 1], hi) - np.maximum(grid.cells[first:last, 0], lo)
        return NumericCode(grid, lo, hi, starts, stops, mass, source)
    finite = x[~np.isnan(x)]
    cells = grid.index(np.clip(finite, lo, hi))
    counts = np.bincount(cells, minlength=len(grid)).astype(float)
    noisy = counts + rng.normal(0.0, sigma, len(grid))
    n_oct = int(grid.octave.max()) + 1
    oct_noisy = np.bincount(grid.octave[cells], minlength=n_oct).astype(float) + rng.normal(0.0, sigma, n_oct)
    inside = np.zeros(len(grid), bool)
    inside[first:last] = True
    oct_noisy[~np.isin(np.arange(n_oct), grid.octave[inside])] = -np.inf
    above = np.flatnonzero(oct_noisy > range_z * sigma)
    if not len(above):  # nothing stands out of the noise: the single noisiest octave
        above = np.array([int(np.argmax(oct_noisy))])
    keep = inside & (grid.octave >= above[0]) & (grid.octave <= above[-1])
    first, last = int(np.flatnonzero(keep)[0]), int(np.flatnonzero(keep)[-1]) + 1
    # each octave's clipped noisy mass, shared among its cells in proportion to their clipped noisy counts
    fine = np.where(keep, np.clip(noisy, 0.0, None), 0.0)
    per_oct = np.bincount(grid.octave, weights=fine, minlength=n_oct)
    n_cells = np.bincount(grid.octave, weights=keep.astype(float), minlength=n_oct)
    share = np.where(per_oct[grid.octave] > 0, fine / np.where(per_oct[grid.octave] > 0, per_oct[grid.octave], 1.0),
                     1.0 / np.maximum(n_cells[grid.octave], 1.0))
    mass = np.where(keep, np.clip(np.where(np.isfinite(oct_noisy), oct_noisy, 0.0), 0.0, None)[grid.octave] * share, 0.0)
    if binning == "uniform":
        a = grid.cells[first, 0] if np.isfinite(grid.cells[first, 0]) else grid.cells[first, 1]
        b = grid.cells[last - 1, 1] if np.isfinite(grid.cells[last - 1, 1]) else grid.cells[last - 1, 0]
        a, b = max(a, lo), min(b, hi)
        edges = np.linspace(a, b, bins + 1) if b > a else np.array([a, b])
        starts, stops = _uniform_runs(grid, edges, first, last)
    else:
        cdf = np.cumsum(mass[first:last])
        total = cdf[-1]
        if total <= 0:
            stops = [last]
        else:
            cuts = {int(np.searchsorted(cdf, total * j / bins, side="left")) + 1 + first for j in range(1, bins)}
            stops = sorted(c for c in cuts if first < c < last) + [last]
        starts = [first] + stops[:-1]
    return NumericCode(grid, lo, hi, starts, stops, mass, source)


def _uniform_runs(grid: Grid, edges: np.ndarray, first: int, last: int) -> tuple[list[int], list[int]]:
    """Runs of grid cells [first, last) cut where equal-width edges fall (a grid cell goes to the bin its
    lower edge falls in; runs that would be empty are merged)."""
    lows = grid.cells[first:last, 0]
    lows = np.where(np.isfinite(lows), lows, grid.cells[first:last, 1])
    which = np.clip(np.searchsorted(edges, lows, side="right") - 1, 0, len(edges) - 2)
    stops = [first + int(i) for i in np.flatnonzero(np.diff(which)) + 1] + [last]
    return [first] + stops[:-1], stops

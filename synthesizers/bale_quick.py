"""Bale & Quick's optimized sequential synthesizer (docs/definitions/bale-quick.md §8 "Their synthesizer"): BQCart, BQMNL.

Model (details of the encoding in holdbench.synthesizers._bq_models):

- the numeric columns (schema `model_kind` numeric, bools as 0/1) are ONE Gaussian mixture
  (full covariance, k-means++ init, n_init 2, seeded) on standardised values, K components;
- the categorical columns (`model_kind` categorical) are visited in `visit_order` (default:
  T's column order), each modelled on the mixture's numerics and the integer codes of the
  categoricals before it, and fitted on T only:
  - BQCart: a classification tree with min_samples_leaf b (per column); a synthetic value is
    a uniform draw from the T values in the leaf the synthetic predictors fall into;
  - BQMNL: L1-penalised multinomial logit (saga) on standardised degree-`poly_degree`
    polynomial features, inverse-penalty C (per column);
- missing numbers: mean-imputed for the mixture, plus a missing indicator per such column,
  a two-level categorical step visited before the categoricals (so it is tuned like one);
  where it says "missing" the released value is missing. Missing categoricals are a level.
- point masses (`point_mass_share`, default 0.5; null: off): a numeric value holding at least
  that share of T (adult's capital-gain 0, every bool's commoner value) gets the same kind of
  indicator step, `<col>_mass`; the mixture models the other values only (a row at the mass
  holds a random other value of the column there), and where the indicator says so the
  released value is exactly the mass value.

Tuning: K and every column's b (or C) by Bayesian optimisation (`bayesian-optimization`,
expected improvement with xi = `xi`; K on the grid low, low + `k_step`, ..., high of `k_range`,
BQMNL's C in log10 C over `c_range` and, when `c_grid` is set, on that many points evenly
spaced in log C, a proposal snapping to the nearest point): `init_points` random starts then
`n_iter` suggestions, for each of `optimizer_seeds` optimiser seeds.
An evaluation draws `m` synthetic sets, post-processes them exactly as `sample` releases them
and scores objective = −(1 − mean pMSE ratio)² with holdbench.metrics.pmse.pmse_ratio (degree
`pmse_degree`; its null m·c·(1−c)/N; `pmse_form` picks Bale & Quick's count of terms,
`ratio_bq`, or the design's rank, `ratio`; the trace records both and c). Every set has
|T| rows and is scored against T, so c = ½ as in Bale & Quick's code (where their null
2·m·(1−c)²·c/N is the same number); `tuning_rows` below |T| scores sets of that size against
seeded samples of T of the same size, above |T| it means |T|. Seeds: with `fresh_seeds`
false set i of every evaluation is drawn from the same seed (common random numbers), with it
true (the default) every evaluation has seeds of its own. `gp_noise` "white" gives the
optimiser's GP a WhiteKernel beside its Matern kernel, its level fitted with the kernel's, so the
surrogate smooths the set-to-set noise instead of interpolating it (None: bayes_opt's own GP).
Then the `rescore_top` best distinct parameter
sets of the search are scored again on `rescore_sets` new sets (the same seeds for each of
them), and the best re-scored is kept (the winner's curse: the search's best score is its
luckiest); the SD of a set's ratio there, and that SD / √m for the search's mean, are the
objective's noise (`info()`; trace columns rescored_*, `chosen`). 0 keeps the search's best.
Last, the kept parameter set is scored on `check_sets` sets of seeds of their own, which no
selection saw: `info()`'s check_mean_pmse_ratio, check_set_ratio_sd and check_ci95 (a 95%
t-interval) are the honest estimate of its ratio (0: off; the time cap does not skip it).
The mixture for a K and a column's model for a (column, b or C) are fitted
once per `fit` and reused by every evaluation of both optimiser seeds (all are fitted on T,
deterministically; with `c_grid`, a column's MNL models are one regularisation path over the
grid, `_bq_models.MNLPath`); the trace's *_cpu_seconds columns split each evaluation's CPU time.
`max_tuning_seconds` caps the wall clock: it is checked before every evaluation after the
first and before every re-scoring, so tuning stops at most one evaluation late (a cap hit in
the search skips the re-scoring); `hit_time_cap` records it. Evaluations
of a parameter set seen before reuse its score (`cached` in the trace). `tuning_trace` /
`artifacts()` hold one row per evaluation; `info()` summarises.

Release: back to T's scale, integer (and bool) columns rounded, numbers clipped to T's
range when `clip` (for a column with a point mass: the range of its other values), bools as
bool, schema dtypes. (Truncating the mixture to T's range instead -- redrawing out-of-range
rows -- was tried on adult: it removes clipping's pile-up at T's min/max but shifts the
means, and the pMSE ratio got worse, 2.4 -> 3.1 at K = 50, b = 50.)

Attribute-disclosure reduction (`disclosure_reduction`, off by default; Bale & Quick's
inference prevention, our reading of it; details in `_bq_models.reduce_disclosure`): after
release, every T record whose disclosure ratio (holdbench.metrics.disclosure, S's prior, radii
`disclosure_delta`) exceeds `disclosure_bound` gets decoys -- records drawn from its mixture
component with its quasi-identifiers and the other sensitive value -- until none does (at
most `disclosure_max_rounds` rounds; `disclosure_converged`). The tuning objective is
computed without decoys. `sample(n)` still returns exactly n rows: each decoy REPLACES a
randomly chosen non-decoy row; `n_decoys_added` says how many rows of the last sample are
decoys.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections import OrderedDict
from typing import ClassVar

import numpy as np
import pandas as pd

from holdbench.synthesizers._bq_models import (
    CartStep,
    Encoded,
    Marginal,
    Mixture,
    MNLPath,
    MNLStep,
    check_feature_map,
    disclosure_spec,
    encode,
    generate,
    reduce_disclosure,
    release,
)
from holdbench.synthesizers._seeding import check_seed, derive_seed
from holdbench.synthesizers.base import FitContext, Synthesizer

# stream keys for derive_seed
_GMM, _STEP, _TUNE, _PMSE, _BO, _SAMPLE, _TRAIN_SAMPLE, _MASS_FILL, _RESCORE, _CHECK = 1, 2, 3, 4, 5, 6, 7, 9, 10, 11
# the pMSE ratio the objective reads: Bale & Quick's count of terms (their code's k - 1) or the
# design's rank (holdbench's own ratio); both are recorded in the trace
_FORMS = {"bale_quick": "ratio_bq", "holdbench": "ratio"}
# the GP's noise: None = bayes_opt's default (alpha 1e-6: the surrogate interpolates every noisy
# score), "white" = a WhiteKernel added to its Matern kernel, its level fitted with the kernel's
_GP_NOISE = (None, "white")
_CACHE = 32  # fitted column models kept per step (mixtures are small: all kept)
LOG = logging.getLogger("holdbench.synth")


def _range(name: str, value, kind: type, lo_min: float, hi_max: float | None = None) -> tuple:
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise ValueError(f"bale_quick: {name} must be a [low, high] pair, got {value!r}") from None
    if kind is int and (float(lo) != int(lo) or float(hi) != int(hi)):
        raise ValueError(f"bale_quick: {name} must hold integers, got {value!r}")
    lo, hi = kind(lo), kind(hi)
    if not lo_min <= lo <= hi or (hi_max is not None and hi > hi_max):
        raise ValueError(f"bale_quick: {name} must satisfy {lo_min} <= low <= high"
                         f"{'' if hi_max is None else f' <= {hi_max}'}, got [{lo}, {hi}]")
    return lo, hi


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"bale_quick: {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class _BaleQuick(Synthesizer):
    """Shared machinery; the subclasses choose the per-column model (module doc)."""

    _param: ClassVar[str]  # prefix of a step's tuned parameter in the trace: "b" or "C"

    def __init__(self, k_range=(10, 200), visit_order=None, init_points=5, n_iter=20, optimizer_seeds=1,
                 m=10, tuning_rows=None, max_tuning_seconds=14400, pmse_degree=3, pmse_max_design_mb=None,
                 xi=0.01, clip=True, disclosure_reduction=False, disclosure_bound=3.0,
                 disclosure_delta=None, disclosure_max_rounds=50, point_mass_share=0.5, k_step=10,
                 pmse_form="bale_quick", fresh_seeds=True, rescore_top=5, rescore_sets=10,
                 gp_noise="white", check_sets=10) -> None:
        self.k_range = _range("k_range", k_range, int, 1)
        self.k_step = _count("k_step", k_step, 1)
        if visit_order is not None:
            visit_order = [str(c) for c in visit_order]
            dupes = sorted({c for c in visit_order if visit_order.count(c) > 1})
            if dupes:
                raise ValueError(f"bale_quick: visit_order repeats column(s) {dupes}")
        self.visit_order = visit_order
        self.init_points = _count("init_points", init_points, 1)
        self.n_iter = _count("n_iter", n_iter, 0)
        self.optimizer_seeds = _count("optimizer_seeds", optimizer_seeds, 1)
        self.m = _count("m", m, 1)
        self.tuning_rows = None if tuning_rows is None else _count("tuning_rows", tuning_rows, 2)
        if max_tuning_seconds is not None and not float(max_tuning_seconds) >= 0:
            raise ValueError(f"bale_quick: max_tuning_seconds must be >= 0 or null, got {max_tuning_seconds!r}")
        self.max_tuning_seconds = None if max_tuning_seconds is None else float(max_tuning_seconds)
        self.pmse_degree = _count("pmse_degree", pmse_degree, 1)
        if pmse_form not in _FORMS:
            raise ValueError(f"bale_quick: pmse_form must be one of {sorted(_FORMS)}, got {pmse_form!r}")
        self.pmse_form = pmse_form
        self.fresh_seeds = bool(fresh_seeds)
        self.rescore_top = _count("rescore_top", rescore_top, 0)
        self.rescore_sets = _count("rescore_sets", rescore_sets, 2)
        if gp_noise not in _GP_NOISE:
            raise ValueError(f"bale_quick: gp_noise must be one of {list(_GP_NOISE)}, got {gp_noise!r}")
        self.gp_noise = gp_noise
        self.check_sets = _count("check_sets", check_sets, 0)
        if self.check_sets == 1:
            raise ValueError("bale_quick: check_sets must be 0 (off) or >= 2 (an interval needs two sets), got 1")
        self.pmse_max_design_mb = None if pmse_max_design_mb is None else float(pmse_max_design_mb)
        if not float(xi) >= 0:
            raise ValueError(f"bale_quick: xi must be >= 0, got {xi!r}")
        self.xi = float(xi)
        self.clip = bool(clip)
        self.disclosure_reduction = bool(disclosure_reduction)
        if not float(disclosure_bound) >= 1:
            raise ValueError(f"bale_quick: disclosure_bound must be >= 1, got {disclosure_bound!r}")
        self.disclosure_bound = float(disclosure_bound)
        deltas = np.linspace(0.001, 0.5, 5) if disclosure_delta is None else np.atleast_1d(disclosure_delta)
        if deltas.size == 0 or not np.all(deltas.astype(float) > 0):
            raise ValueError(f"bale_quick: disclosure_delta must be positive radii, got {disclosure_delta!r}")
        self.disclosure_delta = [float(d) for d in deltas]
        self.disclosure_max_rounds = _count("disclosure_max_rounds", disclosure_max_rounds, 1)
        if point_mass_share is not None and (isinstance(point_mass_share, bool)
                                             or not 0 < float(point_mass_share) <= 1):
            raise ValueError(f"bale_quick: point_mass_share must be in (0, 1] or null, got {point_mass_share!r}")
        self.point_mass_share = None if point_mass_share is None else float(point_mass_share)
        self.tuning_trace: pd.DataFrame | None = None
        self.n_decoys_added = 0
        self.disclosure_converged: bool | None = None

    # ---- hooks for the per-column model --------------------------------------------------
    def _step_bounds(self) -> tuple[float, float, type]:
        raise NotImplementedError

    def _fit_step(self, j: int, x: np.ndarray, y: np.ndarray, value, seed: int):
        """Step j's model for parameter `value`, fitted on predictors x and codes y."""
        raise NotImplementedError

    def _step_value(self, value: float):
        """A step parameter from the optimiser's coordinate."""
        raise NotImplementedError

    # ---- fit ------------------------------------------------------------------------------
    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        from threadpoolctl import threadpool_limits

        schema = ctx.schema
        self._schema = schema
        self._seed = check_seed(int(ctx.seed) % 2**32)
        self._train = schema.coerce(train, "bale_quick: training data")
        if len(self._train) < 2:
            raise ValueError(f"bale_quick: T needs at least 2 rows, has {len(self._train)}")
        self._check_disclosure_schema(schema)
        order = self._categorical_order(schema)
        self._enc = encode(self._train, schema.model_kinds, schema.dtypes, order, self.point_mass_share,
                           derive_seed(self._seed, _MASS_FILL))
        self._design = self._enc.design
        self._bounds, self._fixed = self._space(self._enc)
        self._mixtures: dict = {}
        self._models: OrderedDict = OrderedDict()
        self._memo: dict = {}
        self._warnings = {"pmse": 0, "models_not_converged": set()}
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # GP fits; model/pmse convergence is counted instead
            self._tune()
            self._mixture_fit, self._step_models = self._build(self.best_params)

    def _categorical_order(self, schema) -> list[str]:
        cats = [c.name for c in schema.columns if c.model_kind == "categorical"]
        if self.visit_order is None:
            return cats
        unknown = [c for c in self.visit_order if c not in schema.names]
        not_cat = [c for c in self.visit_order if c in schema.names and c not in cats]
        missing = [c for c in cats if c not in self.visit_order]
        if unknown or not_cat or missing:
            raise ValueError(f"bale_quick: visit_order must list every categorical column once: unknown "
                             f"column(s) {unknown}, numeric column(s) {not_cat}, missing {missing}")
        return list(self.visit_order)

    def _space(self, enc: Encoded) -> tuple[dict, dict]:
        """BO bounds {param: (lo, hi[, int])} and fixed parameters (zero-width ranges)."""
        bounds, fixed = {}, {}
        p = len(enc.numeric)
        if p:
            k_lo, k_hi = min(self.k_range[0], len(enc.z)), min(self.k_range[1], len(enc.z))
            if k_lo == k_hi:
                fixed["K"] = k_lo
            else:
                bounds["K"] = (k_lo, k_hi, int)
        lo, hi, kind = self._step_bounds()
        for j, step in enumerate(enc.steps):
            if p + j == 0 or step.n_levels < 2:
                continue
            key = self._key(step)
            if key in bounds or key in fixed or key == "K":
                raise ValueError(f"bale_quick: parameter name {key!r} is ambiguous; rename column {step.name!r}")
            if lo == hi:
                fixed[key] = self._step_value(lo)
            else:
                bounds[key] = (lo, hi, int) if kind is int else (lo, hi)
        return bounds, fixed

    def _key(self, step) -> str:
        return f"{self._param}_{step.label}"

    def _mixture(self, k: int) -> Mixture:
        if k not in self._mixtures:
            self._mixtures[k] = Mixture(self._enc.z, k, derive_seed(self._seed, _GMM))
        return self._mixtures[k]

    def _step(self, j: int, value):
        key = (j, value)
        if key not in self._models:
            p = len(self._enc.numeric)
            y = self._enc.steps[j].codes
            if value is None:
                model = Marginal(y)
            else:
                model = self._fit_step(j, self._design[:, :p + j], y, value, derive_seed(self._seed, _STEP, j))
                if not getattr(model, "converged", True):
                    self._warnings["models_not_converged"].add(self._enc.steps[j].label)
            self._models[key] = model
            if len(self._models) > _CACHE * max(len(self._enc.steps), 1):
                self._models.popitem(last=False)
        self._models.move_to_end(key)
        return self._models[key]

    def _build(self, params: dict, cpu: dict | None = None) -> tuple[Mixture | None, list]:
        enc = self._enc
        t0 = time.process_time()
        mixture = self._mixture(int(params["K"])) if enc.numeric else None
        t1 = time.process_time()
        models = [self._step(j, params.get(self._key(s))) for j, s in enumerate(enc.steps)]
        if cpu is not None:
            cpu["gmm_cpu_seconds"], cpu["models_cpu_seconds"] = t1 - t0, time.process_time() - t1
        return mixture, models

    def _tuning_rows(self) -> int:
        """Rows of every tuning set, synthetic and real alike (c = 1/2): `tuning_rows`, at most |T|."""
        n = len(self._train)
        return n if self.tuning_rows is None else min(self.tuning_rows, n)

    def _real_set(self, seed: int) -> pd.DataFrame:
        """T, or its seeded sample of `_tuning_rows()` rows."""
        n, rows = len(self._train), self._tuning_rows()
        if rows == n:
            return self._train
        if seed not in self._real_sets:
            idx = np.random.default_rng(seed).choice(n, rows, replace=False)
            self._real_sets[seed] = self._train.iloc[np.sort(idx)].reset_index(drop=True)
        return self._real_sets[seed]

    def _release(self, x: np.ndarray) -> pd.DataFrame:
        return self._release_frame(release(self._enc, x, self.clip))

    def _release_frame(self, frame: pd.DataFrame) -> pd.DataFrame:
        return self._schema.coerce(frame, "bale_quick: synthetic data")

    def _set_seeds(self, stream: int, key: tuple, n_sets: int) -> list[tuple[int, int, int]]:
        """(synthetic seed, T-sample seed, pMSE seed) of each of n_sets tuning sets in `stream`
        (search or re-scoring), `key` () for common random numbers or (evaluation,) for fresh ones."""
        return [(derive_seed(self._seed, stream, *key, i), derive_seed(self._seed, _TRAIN_SAMPLE, stream, *key, i),
                 derive_seed(self._seed, _PMSE, i)) for i in range(n_sets)]

    def _score(self, params: dict, seeds: list, cpu: dict) -> dict:
        """Mean pMSE ratios (both forms) of a parameter set on released synthetic sets of
        `_tuning_rows()` rows, set i drawn with seeds[i] and scored against T or its sample;
        `cpu` receives the CPU seconds of the parts."""
        from holdbench.metrics.pmse import pmse_ratio

        mixture, models = self._build(params, cpu)
        rows = self._tuning_rows()
        scores = []
        cpu["generate_cpu_seconds"] = cpu["pmse_cpu_seconds"] = 0.0
        for synth_seed, real_seed, pmse_seed in seeds:
            t0 = time.process_time()
            synthetic = self._release(generate(self._enc, mixture, models, rows,
                                               np.random.default_rng(synth_seed))[0])
            real = self._real_set(real_seed)
            t1 = time.process_time()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", RuntimeWarning)
                score = pmse_ratio(real, synthetic, self._schema.kinds, degree=self.pmse_degree, seed=pmse_seed,
                                   max_design_mb=self.pmse_max_design_mb)
            cpu["generate_cpu_seconds"] += t1 - t0
            cpu["pmse_cpu_seconds"] += time.process_time() - t1
            self._warnings["pmse"] += sum(issubclass(w.category, RuntimeWarning) for w in caught)
            if not np.isfinite(score.ratio):
                raise ValueError(f"bale_quick: the pMSE ratio is undefined ({score.reason})")
            scores.append(score)
        ratios = np.array([getattr(sc, _FORMS[self.pmse_form]) for sc in scores])
        mean = float(ratios.mean())
        return {"mean_pmse_ratio": mean, "objective": -((1.0 - mean) ** 2),
                "mean_pmse_ratio_rank": float(np.mean([sc.ratio for sc in scores])),
                "mean_pmse_ratio_bq": float(np.mean([sc.ratio_bq for sc in scores])),
                "pmse_c": float(np.mean([sc.c for sc in scores])), "set_ratios": ratios}

    def _tune(self) -> None:
        from bayes_opt import BayesianOptimization
        from bayes_opt.acquisition import ExpectedImprovement

        start = time.perf_counter()
        self.hit_time_cap = False
        self._real_sets: dict = {}
        parts = ("gmm_cpu_seconds", "models_cpu_seconds", "generate_cpu_seconds", "pmse_cpu_seconds")
        rows: list[dict] = []
        per_seed = self.init_points + self.n_iter if self._bounds else 1
        total = per_seed * (self.optimizer_seeds if self._bounds else 1)

        def out_of_time() -> bool:
            over = self.max_tuning_seconds is not None and time.perf_counter() - start >= self.max_tuning_seconds
            self.hit_time_cap |= over
            return over

        for s in range(self.optimizer_seeds if self._bounds else 1):
            opt = None
            if self._bounds:
                opt = BayesianOptimization(f=None, pbounds=self._bounds, verbose=0, allow_duplicate_points=True,
                                           acquisition_function=ExpectedImprovement(xi=self.xi),
                                           random_state=derive_seed(self._seed, _BO, s))
                if self.gp_noise == "white":
                    from sklearn.gaussian_process.kernels import Matern, WhiteKernel

                    opt.set_gp_params(kernel=Matern(nu=2.5) + WhiteKernel(1e-2, (1e-6, 1e1)))
            for it in range(per_seed):
                if rows and out_of_time():
                    break
                t_suggest = time.perf_counter()
                proposal = {} if opt is None else (opt.random_sample(1)[0] if it < self.init_points
                                                   else opt.suggest())
                params = {**self._fixed, **{k: self._cast(k, v) for k, v in proposal.items()}}
                key = tuple(sorted(params.items()))
                t0 = time.perf_counter()
                cached = key in self._memo
                cpu = dict.fromkeys(parts, 0.0)
                if not cached:
                    seeds = self._set_seeds(_TUNE, (len(self._memo),) if self.fresh_seeds else (), self.m)
                    self._memo[key] = self._score(params, seeds, cpu)
                result = self._memo[key]
                if opt is not None:
                    opt.register(proposal, result["objective"])
                rows.append({"optimizer_seed": s, "iteration": it,
                             "phase": "random" if it < self.init_points else "bayes", **params,
                             **{k: v for k, v in result.items() if k != "set_ratios"},
                             "seconds": time.perf_counter() - t0, "suggest_seconds": t0 - t_suggest,
                             **cpu, "cached": cached})
                best = max(r["objective"] for r in rows)
                LOG.info("tuning %s: evaluation %d of %d (%s%s): mean pMSE ratio %.3f, objective %.4g "
                         "(best so far %.4g); %.0f s into tuning", type(self).__name__, len(rows), total,
                         rows[-1]["phase"], ", seen before" if cached else "", result["mean_pmse_ratio"],
                         result["objective"], best, time.perf_counter() - start)
            if self.hit_time_cap:
                break
        trace = pd.DataFrame(rows)
        names = list(self._fixed) + list(self._bounds)
        chosen = self._rescore(trace, names, out_of_time)
        self._check(trace, names, chosen)
        self.tuning_seconds = time.perf_counter() - start
        self._real_sets.clear()
        trace["chosen"] = trace.index == chosen
        self.tuning_trace = trace
        self.best_params = {k: trace[k].iloc[chosen].item() for k in names}
        self.best_objective = float(trace["objective"].iloc[chosen])
        self.best_mean_pmse_ratio = float(trace["mean_pmse_ratio"].iloc[chosen])

    def _rescore(self, trace: pd.DataFrame, names: list[str], out_of_time) -> int:
        """Re-score the `rescore_top` best distinct parameter sets of the search on `rescore_sets`
        synthetic sets of seeds no evaluation used (the same for every finalist), add the
        rescored_* columns to `trace` (on each finalist's first row) and return the row chosen:
        the finalist with the best re-scored objective (without re-scoring: the search's best;
        ties: the first)."""
        for col in ("rescored_mean_pmse_ratio", "rescored_objective", "rescored_set_ratio_sd"):
            trace[col] = np.nan
        trace["rescore_cpu_seconds"] = 0.0
        first = trace.drop_duplicates(subset=names)
        order = first.index[np.argsort(-first["objective"].to_numpy(), kind="stable")]
        best = int(order[0])
        if self.rescore_top == 0:
            return best
        seeds = self._set_seeds(_RESCORE, (), self.rescore_sets)
        for row in order[:self.rescore_top]:
            if out_of_time():
                break
            t0 = time.process_time()
            result = self._score({k: trace.at[row, k].item() for k in names}, seeds, {})
            trace.loc[row, ["rescored_mean_pmse_ratio", "rescored_objective", "rescored_set_ratio_sd",
                            "rescore_cpu_seconds"]] = [result["mean_pmse_ratio"], result["objective"],
                                                       float(np.std(result["set_ratios"], ddof=1)),
                                                       time.process_time() - t0]
            LOG.info("tuning %s: evaluation %d's parameters re-scored on %d new sets: mean pMSE ratio %.3f "
                     "(in the search: %.3f)", type(self).__name__, row + 1, self.rescore_sets, result["mean_pmse_ratio"],
                     trace.at[row, "mean_pmse_ratio"])
        rescored = trace["rescored_objective"]
        return best if rescored.isna().all() else int(rescored.idxmax())

    def _check(self, trace: pd.DataFrame, names: list[str], chosen: int) -> None:
        """Score the kept parameter set on `check_sets` sets of seeds no evaluation and no re-scoring
        used, after it was chosen: a ratio no selection saw (`info()`'s check_*)."""
        self.check_ratios = np.array([])
        self.check_cpu_seconds = 0.0
        if self.check_sets == 0:
            return
        t0 = time.process_time()
        result = self._score({k: trace.at[chosen, k].item() for k in names},
                             self._set_seeds(_CHECK, (), self.check_sets), {})
        self.check_ratios = result["set_ratios"]
        self.check_cpu_seconds = time.process_time() - t0
        LOG.info("tuning %s: the kept parameters (evaluation %d) on %d sets no selection saw: mean pMSE ratio %.3f",
                 type(self).__name__, chosen + 1, self.check_sets, float(np.mean(self.check_ratios)))

    def _cast(self, key: str, value):
        if key == "K":  # the nearest point of the grid low, low + k_step, ..., high
            lo, hi = self._bounds["K"][:2]
            grid = np.append(np.arange(lo, hi, self.k_step), hi)
            return int(grid[np.argmin(np.abs(grid - float(value)))])
        return self._step_value(value)

    # ---- sample ---------------------------------------------------------------------------
    def sample(self, n: int, seed: int) -> pd.DataFrame:
        from threadpoolctl import threadpool_limits

        n = _count("n", n, 0)
        rng = np.random.default_rng(derive_seed(check_seed(seed), _SAMPLE))
        with threadpool_limits(limits=1):
            out = self._release(generate(self._enc, self._mixture_fit, self._step_models, n, rng)[0])
            self.n_decoys_added, self.disclosure_converged = 0, None
            if self.disclosure_reduction and n:
                out = self._reduce_disclosure(out, rng)
        return out

    # ---- reporting ------------------------------------------------------------------------
    def artifacts(self) -> dict[str, pd.DataFrame]:
        """Tables to save beside the synthetic data: {"tuning_trace": one row per evaluation}."""
        return {} if self.tuning_trace is None else {"tuning_trace": self.tuning_trace.copy()}

    def info(self) -> dict:
        """Scalars describing the fit (and the decoys of the last `sample`)."""
        if self.tuning_trace is None:
            raise RuntimeError("bale_quick: info() is available after fit()")
        chosen = self.tuning_trace.loc[self.tuning_trace["chosen"]].iloc[0]
        return {
            "best_params": dict(self.best_params), "best_objective": self.best_objective,
            "best_mean_pmse_ratio": self.best_mean_pmse_ratio, "pmse_form": self.pmse_form,
            "tuning_rows": self._tuning_rows(), "tuning_c": float(chosen["pmse_c"]),
            "rescored_mean_pmse_ratio": float(chosen["rescored_mean_pmse_ratio"]),
            "rescored_set_ratio_sd": float(chosen["rescored_set_ratio_sd"]),
            "objective_ratio_sd": float(chosen["rescored_set_ratio_sd"]) / np.sqrt(self.m),
            "n_rescored": int(self.tuning_trace["rescored_objective"].notna().sum()),
            "rescore_cpu_seconds": float(self.tuning_trace["rescore_cpu_seconds"].sum()),
            **self._check_summary(),
            "n_evaluations": len(self.tuning_trace),
            "n_distinct_evaluations": int((~self.tuning_trace["cached"]).sum()),
            "tuning_seconds": self.tuning_seconds, "hit_time_cap": self.hit_time_cap,
            "tuned_parameters": sorted(self._bounds), "fixed_parameters": dict(self._fixed),
            "mixture_converged": None if self._mixture_fit is None else self._mixture_fit.converged,
            "models_not_converged": sorted(self._warnings["models_not_converged"]),
            "pmse_warnings": self._warnings["pmse"], "n_decoys_added": self.n_decoys_added,
            "disclosure_converged": self.disclosure_converged,
        }

    def _check_summary(self) -> dict:
        """Mean of the check sets' ratios (the objective's pMSE form), their SD and a 95% t-interval."""
        from scipy import stats

        r = self.check_ratios
        if r.size == 0:
            return {"check_sets": 0, "check_mean_pmse_ratio": None, "check_set_ratio_sd": None,
                    "check_ci95": None, "check_cpu_seconds": 0.0}
        sd = float(r.std(ddof=1))
        half = float(stats.t.ppf(0.975, r.size - 1) * sd / np.sqrt(r.size))
        return {"check_sets": int(r.size), "check_mean_pmse_ratio": float(r.mean()), "check_set_ratio_sd": sd,
                "check_ci95": [float(r.mean() - half), float(r.mean() + half)],
                "check_cpu_seconds": self.check_cpu_seconds}

    # ---- attribute-disclosure reduction ----------------------------------------------------
    def _check_disclosure_schema(self, schema) -> None:
        self._disclosure = disclosure_spec(schema, self._train) if self.disclosure_reduction else None

    def _decoy_base(self, idx: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        """Synthetic records drawn from the mixture component responsible for each T row idx."""
        enc, mixture, z = self._enc, self._mixture_fit, None
        if enc.numeric:
            z = mixture.sample_component(mixture.responsible(enc.z[idx]), rng)
        return release(enc, generate(enc, mixture, self._step_models, len(idx), rng, z=z)[0], self.clip)

    def _reduce_disclosure(self, out: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        out, self.n_decoys_added, self.disclosure_converged = reduce_disclosure(
            out, self._train, self._decoy_base, self._disclosure, self.disclosure_delta,
            self.disclosure_bound, self.disclosure_max_rounds, rng, self._release_frame)
        return out


class BQCart(_BaleQuick):
    """Bale & Quick with a CART per categorical column; `leaf_range` bounds its min_samples_leaf b."""

    _param = "b"

    def __init__(self, leaf_range=(10, 350), k_range=(10, 200), visit_order=None, init_points=5, n_iter=20,
                 optimizer_seeds=1, m=10, tuning_rows=None, max_tuning_seconds=14400, pmse_degree=3,
                 pmse_max_design_mb=None, xi=0.01, clip=True, disclosure_reduction=False, disclosure_bound=3.0,
                 disclosure_delta=None, disclosure_max_rounds=50, point_mass_share=0.5, k_step=10,
                 pmse_form="bale_quick", fresh_seeds=True, rescore_top=5, rescore_sets=10, gp_noise="white",
                 check_sets=10) -> None:
        self.leaf_range = _range("leaf_range", leaf_range, int, 1)
        super().__init__(k_range, visit_order, init_points, n_iter, optimizer_seeds, m, tuning_rows,
                         max_tuning_seconds, pmse_degree, pmse_max_design_mb, xi, clip, disclosure_reduction,
                         disclosure_bound, disclosure_delta, disclosure_max_rounds, point_mass_share, k_step,
                         pmse_form, fresh_seeds, rescore_top, rescore_sets, gp_noise, check_sets)

    def _step_bounds(self):
        return self.leaf_range[0], self.leaf_range[1], int

    def _step_value(self, value):
        return round(float(value))

    def _fit_step(self, j, x, y, value, seed):
        return CartStep(x, y, int(value), seed)


class BQMNL(_BaleQuick):
    """Bale & Quick with an L1 multinomial logit per categorical column; `c_range` bounds its C
    (searched in log10 C). `max_iter` caps saga's epochs per fit: a cold fit per C asked for
    (`c_grid` null), or each point of the column's regularisation path over the `c_grid` points,
    warm-started from the point before (`_bq_models.MNLPath`). `features` maps the predictors
    before their polynomial terms: standardised (Bale & Quick's code) or quantile (T's quantiles
    in [-1, 1], on which saga converges much further in the same epochs, though its synthetic data
    is no nearer T's; `_bq_models._features`)."""

    _param = "C"

    def __init__(self, c_range=(0.001, 3.0), poly_degree=3, max_iter=10, tol=1e-4, k_range=(10, 200),
                 visit_order=None, init_points=5, n_iter=20, optimizer_seeds=1, m=10, tuning_rows=None,
                 max_tuning_seconds=14400, pmse_degree=3, pmse_max_design_mb=None, xi=0.01, clip=True,
                 disclosure_reduction=False, disclosure_bound=3.0, disclosure_delta=None,
                 disclosure_max_rounds=50, point_mass_share=0.5, k_step=10, c_grid=17, pmse_form="bale_quick",
                 fresh_seeds=True, rescore_top=5, rescore_sets=10, gp_noise="white", check_sets=10,
                 features="standardised") -> None:
        lo, hi = _range("c_range", c_range, float, 0.0)
        if lo <= 0:
            raise ValueError(f"bale_quick: c_range must be positive, got {c_range!r}")
        self.c_range = (lo, hi)
        self.c_grid = None if c_grid is None else _count("c_grid", c_grid, 2)
        self._c_points = None if c_grid is None else np.unique(np.geomspace(lo, hi, self.c_grid))
        self.poly_degree = _count("poly_degree", poly_degree, 1)
        self.max_iter = _count("max_iter", max_iter, 1)
        if not float(tol) > 0:
            raise ValueError(f"bale_quick: tol must be > 0, got {tol!r}")
        self.tol = float(tol)
        self.features = check_feature_map(features)
        super().__init__(k_range, visit_order, init_points, n_iter, optimizer_seeds, m, tuning_rows,
                         max_tuning_seconds, pmse_degree, pmse_max_design_mb, xi, clip, disclosure_reduction,
                         disclosure_bound, disclosure_delta, disclosure_max_rounds, point_mass_share, k_step,
                         pmse_form, fresh_seeds, rescore_top, rescore_sets, gp_noise, check_sets)

    def _step_bounds(self):  # the optimiser searches log10 C
        return float(np.log10(self.c_range[0])), float(np.log10(self.c_range[1])), float

    def _step_value(self, value):
        c = float(10.0 ** float(value))
        if self._c_points is None:
            return float(np.clip(c, *self.c_range))
        return float(self._c_points[self._c_index(c)])

    def _c_index(self, c: float) -> int:
        """The nearest (in log C) of the c_grid points spaced evenly in log C over c_range."""
        return int(np.argmin(np.abs(np.log(self._c_points) - np.log(float(c)))))

    def fit(self, train, ctx) -> None:
        self._paths: dict[int, MNLPath] = {}  # step j -> its regularisation path, for this fit
        super().fit(train, ctx)

    def _fit_step(self, j, x, y, value, seed):
        if self._c_points is None:
            return MNLStep(x, y, float(value), seed, degree=self.poly_degree, max_iter=self.max_iter, tol=self.tol,
                           feature_map=self.features)
        if j not in self._paths:
            self._paths[j] = MNLPath(x, y, self._c_points, seed, degree=self.poly_degree, max_iter=self.max_iter,
                                     tol=self.tol, feature_map=self.features)
        return self._paths[j].at(self._c_index(value))

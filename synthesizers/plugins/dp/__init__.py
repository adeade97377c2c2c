"""Differentially private generators from maintained libraries, at the ε (and δ) of their YAML.

- `MST` — smartnoise-synth's MST (McKenna et al. 2021; NIST 2018 challenge winner): noisy 1- and
  selected 2-way marginals (a maximum spanning tree of noisy mutual information), a graphical model
  fitted to them by `mbi`, rows sampled from it. (ε, δ)-DP through zCDP.
- `AIM` — smartnoise-synth's AIM (McKenna et al. 2022): the same library family, an adaptive,
  workload-driven choice of marginals (all 2-way marginals of at most `max_cells` cells), measured
  in `rounds` rounds (the authors' default 16 × columns is capped here, see aim.yaml) under a model
  size limit `max_model_size` (MB, the authors' default 80).
- `PrivBayes` — DataSynthesizer's correlated-attribute mode (Zhang et al. 2017; Ping et al. 2017):
  a Bayesian network of degree `degree`, learned with the exponential mechanism, with Laplace-noised
  conditionals; ε-DP for the network and the conditionals.

All three model discrete columns: the domain (a categorical column's levels, a numeric column's
bins) is taken from the dataset config where declared public, else estimated under DP with the share
`domain_share` of ε (and half of δ): domain.py. Nothing about the domain is read from T without
budget. The cell's generate.json records what was spent (`synthesizer_info.privacy`: total, domain,
fit) and each column's domain (`synthesizer_info.domain`). Both libraries draw from numpy's global
RNG; they run in the isolated `dp` venv: this folder is the `dp` plug-in (plugin.toml,
requirements.txt, worker.py; contracts/plugin_env.py), whose worker seeds it from the cell's seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from holdbench.synthesizers._isolated import IsolatedSynthesizer
from holdbench.synthesizers.base import FitContext
from holdbench.synthesizers.plugins.dp import domain as _domain


def _check_epsilon(who: str, epsilon: float) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < float(epsilon) < float("inf"):
        raise ValueError(f"{who}: epsilon must be a positive finite number, got {epsilon!r}")
    return float(epsilon)


def _check_int(who: str, key: str, value, low: int, allow_none: bool = False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{who}: {key} must be an integer >= {low}{' or null' if allow_none else ''}, got {value!r}")
    return value


class _DPGenerator(IsolatedSynthesizer):
    """A DP library on discrete codes: the domain step (domain.py) runs here, the library in the worker.

    `epsilon`/`delta`: the cell's whole budget. `domain_share`: the share of epsilon the domain step may
    spend on columns not declared public (it also takes half of delta); the library fits at the rest.
    `binning`/`bins`: how numeric columns are cut (quantile: equal noisy mass; uniform: equal width)."""

    #: the library's own delta when the generator is pure epsilon-DP (PrivBayes): None
    pure: bool = False

    def _init_budget(self, who: str, epsilon, delta, domain_share, binning, bins) -> None:
        self.epsilon = _check_epsilon(who, epsilon)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < float(delta) < 1:
            raise ValueError(f"{who}: delta must be in (0, 1), got {delta!r}")
        self.delta = float(delta)
        if isinstance(domain_share, bool) or not isinstance(domain_share, (int, float)) or not 0 < domain_share < 1:
            raise ValueError(f"{who}: domain_share must be in (0, 1), got {domain_share!r}")
        self.domain_share = float(domain_share)
        if binning not in _domain.BINNINGS:
            raise ValueError(f"{who}: binning must be one of {_domain.BINNINGS}, got {binning!r}")
        self.binning = binning
        self.bins = _check_int(who, "bins", bins, 2)

    def budget_params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "domain_share": self.domain_share,
                "binning": self.binning, "bins": self.bins}

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        train = self._start_fit(train, ctx)
        rng = np.random.default_rng([int(ctx.seed) % 2**32, 7_004_001])
        try:
            self._domain = _domain.estimate(train, ctx.schema, epsilon=self.epsilon * self.domain_share,
                                            delta=self.delta / 2, binning=self.binning, bins=self.bins, rng=rng)
        except ValueError as exc:
            raise ValueError(f"{self.method} on dataset {ctx.dataset!r}: {exc}") from None
        d = self._domain
        fit_eps, fit_delta = self.epsilon - d.epsilon, self.delta - d.delta
        self._fit_budget = {"epsilon": fit_eps, "delta": 0.0 if self.pure else fit_delta}
        self._keep_dir()
        codes = d.encode(train)
        self._categorical, self._numeric, self._integer = list(codes.columns), [], []
        info = self._run("fit", int(ctx.seed), 0, {"train": codes})["info"]
        spent_delta = d.delta + (0.0 if self.pure else fit_delta)
        self._info = {**info, "privacy": {
            "epsilon": d.epsilon + fit_eps, "delta": spent_delta,
            "epsilon_domain": d.epsilon, "delta_domain": d.delta,
            "epsilon_fit": fit_eps, "delta_fit": self._fit_budget["delta"],
            "domain_sigma": d.sigma, "domain_level_threshold": d.threshold,
            "guarantee": f"({d.epsilon + fit_eps:g}, {spent_delta:g})-DP by basic composition of the domain step "
                         f"and the {self.method} fit"}, "domain": d.summary()}

    def worker_params(self) -> dict:
        """The library's settings at the budget left after the domain step, and each column's cardinality."""
        return {**self.library_params(), **self._fit_budget, "cards": self._domain.cardinalities}

    def library_params(self) -> dict:
        return {}

    def params(self) -> dict:
        return {**self.budget_params(), **self.library_params()}

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        out = self._run("sample", int(seed), int(n), {}, read="synthetic")
        codes = out.apply(lambda s: pd.to_numeric(s, errors="raise")).astype(int)
        bad = {c: int(codes[c].max()) for c in codes if codes[c].min() < 0 or codes[c].max() >= self._domain.codes[c].size}
        if bad:
            raise RuntimeError(f"{self.method}: the worker returned codes outside the domain: {bad}")
        rng = np.random.default_rng([int(seed) % 2**32, 7_004_002])
        frame = self._domain.decode(codes, rng)
        for c in self._schema.columns:
            if c.dtype in ("int", "bool") and c.name in frame and frame[c.name].dtype.kind == "f":
                frame[c.name] = np.rint(frame[c.name])
        return self._schema.coerce(frame, f"{self.method}: synthetic data")


class MST(_DPGenerator):
    """smartnoise-synth's MST at (epsilon, delta) on the domain of domain.py."""

    method = "mst"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-9, domain_share: float = 0.3,
                 binning: str = "quantile", bins: int = 32, secure_noise: bool = False) -> None:
        self._init_budget("mst", epsilon, delta, domain_share, binning, bins)
        self.secure_noise = bool(secure_noise)

    def library_params(self) -> dict:
        return {"secure_noise": self.secure_noise}


class AIM(_DPGenerator):
    """smartnoise-synth's AIM at (epsilon, delta) on the domain of domain.py; rounds (None: the authors'
    16 x columns), max_model_size (MB), max_cells (largest workload marginal), degree (workload order)."""

    method = "aim"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-9, domain_share: float = 0.3,
                 binning: str = "quantile", bins: int = 32, rounds: int | None = None,
                 max_model_size: float = 80.0, max_cells: int = 10000, degree: int = 2,
                 secure_noise: bool = False) -> None:
        self._init_budget("aim", epsilon, delta, domain_share, binning, bins)
        self.rounds = _check_int("aim", "rounds", rounds, 1, allow_none=True)
        if isinstance(max_model_size, bool) or not isinstance(max_model_size, (int, float)) or not max_model_size > 0:
            raise ValueError(f"aim: max_model_size must be a positive number (MB), got {max_model_size!r}")
        self.max_model_size = float(max_model_size)
        self.max_cells = _check_int("aim", "max_cells", max_cells, 1)
        self.degree = _check_int("aim", "degree", degree, 1)
        self.secure_noise = bool(secure_noise)

    def library_params(self) -> dict:
        return {"rounds": self.rounds, "max_model_size": self.max_model_size, "max_cells": self.max_cells,
                "degree": self.degree, "secure_noise": self.secure_noise}


class PrivBayes(_DPGenerator):
    """DataSynthesizer's PrivBayes at epsilon with a network of the given degree (parents per node), on
    the domain of domain.py. The library is pure epsilon-DP; delta is spent only by the domain step."""

    method = "privbayes"
    pure = True

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-9, domain_share: float = 0.3,
                 binning: str = "quantile", bins: int = 32, degree: int = 2) -> None:
        self._init_budget("privbayes", epsilon, delta, domain_share, binning, bins)
        self.degree = _check_int("privbayes", "degree", degree, 1)

    def library_params(self) -> dict:
        return {"degree": self.degree}

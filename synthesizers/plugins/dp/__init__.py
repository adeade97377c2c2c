"""Differentially private generators from maintained libraries, at the ε (and δ) of their YAML.

- `MST` — smartnoise-synth's MST (McKenna et al. 2021; NIST 2018 challenge winner): noisy 1- and
  selected 2-way marginals (a maximum spanning tree of noisy mutual information), a graphical model
  fitted to them by `mbi`, rows sampled from it. (ε, δ)-DP through zCDP. Numeric columns are binned
  by smartnoise's own preprocessor, whose bounds are estimated with `preprocessor_eps` of the total
  ε (DP bounds, subtracted from the training budget; `bounds: dp`) -- at small ε on a few thousand
  rows smartnoise cannot find them and the cell fails saying so; `bounds: data` takes T's minimum
  and maximum instead (`bins` equal-width bins, no budget spent: the numeric columns are then NOT
  covered by the guarantee, as in PrivBayes). The ε that the marginals got is recorded as
  `epsilon_training` in the cell's generate.json. smartnoise draws its noise from OpenDP's
  CSPRNG, which cannot be seeded; by default (`secure_noise: false`) the worker swaps it for numpy's
  seeded Gaussian/Laplace sampler (same distributions and scales, as McKenna's reference code does),
  so a cell is reproducible byte for byte but not hardened against floating-point attacks on the
  noise; `secure_noise: true` keeps OpenDP's sampler and gives up reproducibility.
- `PrivBayes` — DataSynthesizer's correlated-attribute mode (Zhang et al. 2017; Ping et al. 2017):
  a Bayesian network of degree `degree`, learned with the exponential mechanism, with Laplace-noised
  conditionals; ε-DP for the network and the conditionals. Numeric columns are cut into
  `histogram_bins` equal-width bins between T's minimum and maximum: those bounds are read from T
  without spending budget, so the numeric columns are NOT covered by the guarantee (a known gap of
  DataSynthesizer), nor is the share of missing values per column it records.

In both, the set of levels of each categorical column is read from T (no budget): ε covers the
counts, not which levels exist. Both libraries draw from numpy's global RNG; they run in the
isolated `dp` venv: this folder is the `dp` plug-in (plugin.toml, requirements.txt, worker.py;
contracts/plugin_env.py), whose worker seeds it from the cell's seed.
"""

from __future__ import annotations

from holdbench.synthesizers._isolated import IsolatedSynthesizer


def _check_epsilon(who: str, epsilon: float) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < float(epsilon) < float("inf"):
        raise ValueError(f"{who}: epsilon must be a positive finite number, got {epsilon!r}")
    return float(epsilon)


class MST(IsolatedSynthesizer):
    """smartnoise-synth's MST at (epsilon, delta); preprocessor_eps of epsilon estimates numeric bounds."""

    method = "mst"

    def __init__(self, epsilon: float = 1.0, delta: float = 1e-9, preprocessor_eps: float | None = None,
                 secure_noise: bool = False, bounds: str = "data", bins: int = 10) -> None:
        self.epsilon = _check_epsilon("mst", epsilon)
        if not 0 < float(delta) < 1:
            raise ValueError(f"mst: delta must be in (0, 1), got {delta!r}")
        self.delta = float(delta)
        if bounds not in ("dp", "data"):
            raise ValueError(f"mst: bounds must be 'dp' or 'data', got {bounds!r}")
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise ValueError(f"mst: bins must be an integer >= 2, got {bins!r}")
        self.bounds, self.bins = bounds, bins
        if bounds == "data" and preprocessor_eps is not None:
            raise ValueError(f"mst: preprocessor_eps ({preprocessor_eps!r}) is spent on DP bounds only: it needs "
                             "bounds: dp (bounds: data reads T's min/max without budget)")
        pre = 0.0 if bounds == "data" else self.epsilon / 10 if preprocessor_eps is None else float(preprocessor_eps)
        if bounds == "dp" and not 0 < pre < self.epsilon:
            raise ValueError(f"mst: preprocessor_eps must be in (0, epsilon = {self.epsilon:g}), got {preprocessor_eps!r}")
        self.preprocessor_eps = pre
        self.secure_noise = bool(secure_noise)

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "delta": self.delta, "preprocessor_eps": self.preprocessor_eps,
                "secure_noise": self.secure_noise, "bounds": self.bounds, "bins": self.bins}


class PrivBayes(IsolatedSynthesizer):
    """DataSynthesizer's PrivBayes at epsilon with a network of the given degree (parents per node)."""

    method = "privbayes"

    def __init__(self, epsilon: float = 1.0, degree: int = 2, histogram_bins: int = 20) -> None:
        self.epsilon = _check_epsilon("privbayes", epsilon)
        if isinstance(degree, bool) or not isinstance(degree, int) or degree < 1:
            raise ValueError(f"privbayes: degree must be an integer >= 1, got {degree!r}")
        if isinstance(histogram_bins, bool) or not isinstance(histogram_bins, int) or histogram_bins < 2:
            raise ValueError(f"privbayes: histogram_bins must be an integer >= 2, got {histogram_bins!r}")
        self.degree, self.histogram_bins = degree, histogram_bins

    def params(self) -> dict:
        return {"epsilon": self.epsilon, "degree": self.degree, "histogram_bins": self.histogram_bins}

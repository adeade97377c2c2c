"""Tree-based generators that lead recent CPU benchmarks (not differentially private).

- `ARF` — adversarial random forests (Watson et al. 2023, `arfpy`): a random forest is trained
  to tell T from a synthetic copy until it cannot (accuracy <= 0.5 + delta, at most `max_iters`
  rounds); every leaf gets a density per column (`dist`: truncated normal for numerics), and rows are
  drawn leaf by leaf. Numeric columns with missing values get a missing flag (the flag is modelled
  as a categorical column, the gap filled with the column minimum) since arfpy takes no NaN.
- `ForestDiffusion` — Jolicoeur-Martineau et al. 2024: a flow-matching (`diffusion_type: flow`) or
  VP-diffusion (`vp`) model whose score/vector field at each of `n_t` noise levels is an XGBoost
  regressor (`n_estimators`, `max_depth`), trained on `duplicate_K` noisy copies of every row.
  Categorical columns are one-hot coded by ForestDiffusion; missing numerics are left to XGBoost.

Both run in the isolated `forest` venv, one thread each: this folder is the `forest` plug-in
(plugin.toml, requirements.txt, worker.py; contracts/plugin_env.py); the worker seeds
numpy's global RNG (arfpy has no seed argument) and passes the seed to scikit-learn / XGBoost.
"""

from __future__ import annotations

from holdbench.synthesizers._isolated import IsolatedSynthesizer


def _positive_int(who: str, name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{who}: {name} must be an integer >= 1, got {value!r}")
    return value


class ARF(IsolatedSynthesizer):
    """arfpy's adversarial random forest (`arf`) with density estimation (`forde`) and sampling (`forge`)."""

    method = "arf"

    def __init__(self, num_trees: int = 30, delta: float = 0.0, max_iters: int = 10, min_node_size: int = 5,
                 dist: str = "truncnorm", alpha: float = 0.0) -> None:
        self.num_trees = _positive_int("arf", "num_trees", num_trees)
        self.max_iters = _positive_int("arf", "max_iters", max_iters)
        self.min_node_size = _positive_int("arf", "min_node_size", min_node_size)
        if not 0 <= float(delta) < 0.5:
            raise ValueError(f"arf: delta must be in [0, 0.5), got {delta!r}")
        if dist not in ("truncnorm", "unif"):
            raise ValueError(f"arf: dist must be 'truncnorm' or 'unif', got {dist!r}")
        if float(alpha) < 0:
            raise ValueError(f"arf: alpha must be >= 0, got {alpha!r}")
        self.delta, self.dist, self.alpha = float(delta), dist, float(alpha)

    def params(self) -> dict:
        return {"num_trees": self.num_trees, "delta": self.delta, "max_iters": self.max_iters,
                "min_node_size": self.min_node_size, "dist": self.dist, "alpha": self.alpha}


class ForestDiffusion(IsolatedSynthesizer):
    """ForestDiffusion with XGBoost: flow matching or VP diffusion over n_t noise levels."""

    method = "forest_diffusion"

    def __init__(self, diffusion_type: str = "flow", n_t: int = 50, duplicate_K: int = 100,
                 n_estimators: int = 100, max_depth: int = 7) -> None:
        if diffusion_type not in ("flow", "vp"):
            raise ValueError(f"forest_diffusion: diffusion_type must be 'flow' or 'vp', got {diffusion_type!r}")
        self.diffusion_type = diffusion_type
        self.n_t = _positive_int("forest_diffusion", "n_t", n_t)
        self.duplicate_K = _positive_int("forest_diffusion", "duplicate_K", duplicate_K)
        self.n_estimators = _positive_int("forest_diffusion", "n_estimators", n_estimators)
        self.max_depth = _positive_int("forest_diffusion", "max_depth", max_depth)

    def params(self) -> dict:
        return {"diffusion_type": self.diffusion_type, "n_t": self.n_t, "duplicate_K": self.duplicate_K,
                "n_estimators": self.n_estimators, "max_depth": self.max_depth}

"""How far bq_mnl's column models are from their own optimum: saga's convergence per column of a paper table.

    python scripts/reference/bq_saga_convergence.py --dataset online-shoppers [--columns A B ...] [--out CSV]

For each categorical step of BQMNL's encoding of the paper's T (synthesizers/_bq_models.py: the numerics
standardised, point masses as 0/1 steps, the steps in T's order), on the design BQMNL fits it on
(standardised degree-3 polynomial terms of the numerics and the earlier steps), the training log-loss of:

  marginal      the step's marginal distribution (no predictor): what any model should beat;
  path          BQMNL's model at C = c_range's top (3), on its 17-point regularisation path with 10 saga
                epochs a point (the defaults), started from the null model (zero coefficients, the
                marginal's intercepts, as glmnet starts): the least penalised model the search can pick;
  zero start    the same path started from zero coefficients and intercepts (saga's own default start);
  saga300       one saga fit at C = 3 with 300 epochs from the null model (BQMNL's objective, 30 times
                the epochs);
  clip3         the path again, the standardised numerics clipped to [-3, 3] before the polynomial terms;
  quantile      the path again on BQMNL's other feature map (features=quantile: each predictor's quantile
                in T mapped to [-1, 1], then the polynomial terms, not rescaled), with its largest squared
                row norm (quantile norm2);
  lbfgs_l2      an L2-penalised fit at C = 3 with L-BFGS to convergence: not BQMNL's objective (L2, not
                L1), a yardstick of what a converged logit on these features reaches on T.

with the design's largest squared row norm (saga's step size is inversely proportional to it) and
whether saga met its tolerance. C's grid, the epochs, saga's tolerance, the polynomial degree and the
point-mass share are BQMNL's defaults, read from the class. Seeds fixed: the fits' random_state 0, and the
standardised values of point-mass rows drawn with seed 0 (a fit of seed s derives its own); the paper's T,
no sampling.
Prints one line per step; --out writes the same as CSV.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bq_objective_noise import load_table

LONG = 300
"""Epochs of the long saga fit."""


def _loss(y, proba, n_levels: int) -> float:
    from sklearn.metrics import log_loss

    return float(log_loss(y, proba, labels=np.arange(n_levels)))


def rows(dataset: str, columns: list[str] | None) -> list[dict]:
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    from holdbench.synthesizers._bq_models import MNLPath, _fit_logit, _null_saga, _saga, encode
    from holdbench.synthesizers.bale_quick import BQMNL

    defaults = BQMNL()
    grid, c_top, fit = defaults._c_points, defaults._c_points[-1], {
        "degree": defaults.poly_degree, "max_iter": defaults.max_iter, "tol": defaults.tol}
    train, schema = load_table(dataset, None, None)
    cats = [c.name for c in schema.columns if c.model_kind == "categorical"]
    enc = encode(train, schema.model_kinds, schema.dtypes, cats, defaults.point_mass_share, 0)
    design, p = enc.design, len(enc.numeric)
    labels = [s.label for s in enc.steps]
    unknown = sorted(set(columns or []) - set(labels))
    if unknown:
        raise SystemExit(f"bq_saga_convergence: {unknown} are not steps of {dataset} (steps: {labels})")
    out = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence is reported per fit instead
        for j, step in enumerate(enc.steps):
            if p + j == 0 or step.n_levels < 2 or (columns and step.label not in columns):
                continue
            start = time.process_time()
            y, k = step.codes, step.n_levels
            x = design[:, :p + j]
            path = MNLPath(x, y, grid, 0, **fit).at(len(grid) - 1)
            feats = path.features.transform(x)
            zero = _saga(grid[0], 0, fit["max_iter"], fit["tol"], warm_start=True)
            for c in grid:
                zero.set_params(C=float(c))
                zero.fit(feats, y)
            marginal = np.bincount(y, minlength=k) / len(y)
            cold = _null_saga(c_top, 0, LONG, fit["tol"], feats.shape[1], y)
            converged = _fit_logit(cold, feats, y)
            clipped = x.copy()
            clipped[:, :p] = np.clip(clipped[:, :p], -3.0, 3.0)
            clip = MNLPath(clipped, y, grid, 0, **fit).at(len(grid) - 1)
            quant = MNLPath(x, y, grid, 0, **fit, feature_map="quantile").at(len(grid) - 1)
            quant_feats = quant.features.transform(x)
            l2 = LogisticRegression(C=c_top, max_iter=5000).fit(feats, y)
            row = {"dataset": dataset, "step": step.label, "levels": k, "terms": feats.shape[1],
                   "max row norm2": f"{float((feats ** 2).sum(axis=1).max()):.3g}",
                   "marginal": _loss(y, np.tile(marginal, (len(y), 1)), k),
                   "path": _loss(y, _proba(path.logit, feats, k), k),
                   "zero start": _loss(y, _proba(zero, feats, k), k),
                   "saga300": _loss(y, _proba(cold, feats, k), k), "saga300 converged": converged,
                   "clip3": _loss(y, _proba(clip.logit, clip.features.transform(clipped), k), k),
                   "quantile": _loss(y, _proba(quant.logit, quant_feats, k), k),
                   "quantile norm2": f"{float((quant_feats ** 2).sum(axis=1).max()):.3g}",
                   "lbfgs_l2": _loss(y, _proba(l2, feats, k), k),
                   "cpu s": round(time.process_time() - start)}
            for key in ("marginal", "path", "zero start", "saga300", "clip3", "quantile", "lbfgs_l2"):
                row[key] = f"{row[key]:.4f}"
            print("  ".join(f"{key} {val}" for key, val in row.items()), flush=True)
            out.append(row)
    return out


def _proba(model, feats: np.ndarray, k: int) -> np.ndarray:
    """Class probabilities over all k levels (a level the fit never saw gets 0)."""
    proba = np.zeros((len(feats), k))
    proba[:, model.classes_.astype(int)] = model.predict_proba(feats)
    return proba


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="online-shoppers")
    ap.add_argument("--columns", nargs="*", help="only these steps (their labels, e.g. Revenue_mass)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    table = rows(a.dataset, a.columns)
    if a.out and table:
        with a.out.open("w", newline="") as fh:
            w = csv.DictWriter(fh, list(table[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(table)
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

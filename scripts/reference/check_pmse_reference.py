"""Full comparison of the utility metrics with their references on the paper's data (not a test).

T = <ds>_trn, H = <ds>_val, S = <ds>_<synth> (default adult / synthpop):

  pMSE, degrees 1..3: holdbench's `pmse_ratio` against
      - base R `glm(family = binomial)` through rpy2 on the same design (holdbench's
        `propensity_design`: the standardised polynomial terms, aliased ones included; R's
        pivoted QR drops them), for degrees <= --r-max-degree (R's IRLS on adult's 815-term
        degree-3 design is slow);
      - statsmodels Logit (Newton) on the columns picked by scipy's pivoted QR of that design.
  TSTR: scikit-learn HistGradientBoostingClassifier fitted here (T's sorted level codes, unseen
      and missing values as NaN, random_state = seed) against holdbench's AUCs.
  CI overlap: statsmodels Logit on holdbench's CI design (`_ci_design`), Karr's overlap
      written out here, against holdbench's mean.

Prints each pair and the number of significant digits that agree (-log10 of the relative
difference). Usage: python scripts/reference/check_pmse_reference.py [--ds adult] [--synth synthpop]
[--degrees 1,2,3] [--r-max-degree 2] [--shared DIR]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TARGETS = {"adult": "income", "credit-default": "default payment next month", "bank-marketing": "y"}


def digits(a: float, b: float) -> str:
    if a == b:
        return "all digits"
    rel = abs(a - b) / max(abs(b), 1e-300)
    return f"rel. diff {rel:.2e}, {-math.log10(rel):.1f} digits agree"


def r_glm_pmse(z: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    import rpy2.robjects as ro

    mat = ro.r["matrix"](ro.FloatVector(z.ravel(order="F")), nrow=z.shape[0])
    out = ro.r("""function(z, y) {
        f <- glm(y ~ z, family = binomial, control = glm.control(epsilon = 1e-10, maxit = 100))
        c(mean((fitted(f) - mean(y))^2), f$rank - 1, f$converged)
    }""")(mat, ro.FloatVector(y))
    if not bool(out[2]):
        print("    (R glm did not converge)")
    return float(out[0]), int(out[1])


def statsmodels_pmse(z: np.ndarray, y: np.ndarray) -> tuple[float, int]:
    import statsmodels.api as sm
    from scipy.linalg import qr

    _, r, piv = qr(z, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    keep = np.sort(piv[diag > 1e-9 * diag[0]])
    fit = sm.Logit(y, sm.add_constant(z[:, keep])).fit(disp=0, method="newton", maxiter=100, tol=1e-10)
    return float(np.mean((fit.predict() - y.mean()) ** 2)), len(keep)


def check_pmse(t, s, kinds, degrees, r_max):
    from holdbench.metrics.pmse import pmse_ratio, propensity_design, stacked_inputs

    x, y = stacked_inputs(t, s, kinds)
    for degree in degrees:
        cpu = time.process_time()
        got = pmse_ratio(t, s, kinds, degree=degree)
        print(f"pMSE degree {degree}: holdbench {got.pmse:.10g} (m = {got.n_terms}, Bale & Quick count "
              f"{got.n_terms_bq}, c = {got.c:.4f}, ratio {got.ratio:.5g}, B&Q form {got.ratio_bq:.5g}; "
              f"{time.process_time() - cpu:.1f} s CPU)", flush=True)
        z, _, _ = propensity_design(x, degree)
        if degree <= r_max:
            cpu = time.process_time()
            want, rank = r_glm_pmse(z, y)
            print(f"    R glm       {want:.10g} (rank {rank}; {time.process_time() - cpu:.1f} s CPU "
                  f"in this process): {digits(got.pmse, want)}", flush=True)
        cpu = time.process_time()
        want, rank = statsmodels_pmse(z, y)
        print(f"    statsmodels {want:.10g} (rank {rank}; {time.process_time() - cpu:.1f} s CPU): "
              f"{digits(got.pmse, want)}", flush=True)
        del z


def check_tstr_ci(t, h, s, kinds, target, seed=0):
    import statsmodels.api as sm
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.metrics import roc_auc_score

    from holdbench.metrics.registry import EvalData
    from holdbench.metrics.utility import _ci_design, _ci_overlap, _tstr

    data = EvalData(t, h, s, kinds, target=target, seed=seed)
    reasons: list[str] = []
    tstr = _tstr(data, target, reasons)
    feats = [c for c in t.columns if c != target]
    positive = sorted(t[target].astype(str).unique())[1]

    def enc(f):
        cols = []
        for c in feats:
            if kinds[c] == "categorical":
                lv = {v: float(i) for i, v in enumerate(sorted(t[c].dropna().astype(str).unique()))}
                cols.append(f[c].astype(str).where(f[c].notna()).map(lv).to_numpy(dtype=float, na_value=np.nan))
            else:
                cols.append(pd.to_numeric(f[c]).to_numpy(dtype=float))
        return np.column_stack(cols)

    mask = [kinds[c] == "categorical" for c in feats]
    for label, train in (("train T", t), ("train S", s)):
        model = HistGradientBoostingClassifier(categorical_features=mask, random_state=seed)
        model.fit(enc(train), (train[target].astype(str) == positive).astype(int))
        want = roc_auc_score(h[target].astype(str) == positive, model.predict_proba(enc(h))[:, 1])
        got = tstr["tstr_auc_train" if label == "train T" else "tstr_auc_synthetic"]
        print(f"TSTR AUC ({label}): holdbench {got:.10g}, sklearn {want:.10g}: {digits(got, want)}", flush=True)

    ci = _ci_overlap(data, target, reasons)
    build = _ci_design(t[feats], kinds)
    table = ci["ci_overlap_table"].set_index("term")
    names = list(table.index)
    overlaps = []
    for frame in (t, s):
        xm, all_names = build(frame[feats])
        cols = [all_names.index(n) for n in names]
        fit = sm.Logit((frame[target].astype(str) == positive).astype(float), xm[:, cols]).fit(
            disp=0, method="newton", maxiter=100)
        overlaps.append(np.asarray(fit.conf_int(0.05)))
    (it, is_) = overlaps
    want = []
    for (a, b), (c, d) in zip(it, is_):
        inter = max(0.0, min(b, d) - max(a, c))
        want.append(0.5 * (inter / (b - a) + inter / (d - c)))
    note = table["note"].fillna("") == ""
    want_mean = float(np.mean(np.asarray(want)[note.to_numpy()])) if note.any() else math.nan
    print(f"CI overlap mean over {int(note.sum())} plainly estimable terms: holdbench "
          f"{table.loc[note, 'overlap'].mean():.10g}, statsmodels + Karr {want_mean:.10g}: "
          f"{digits(float(table.loc[note, 'overlap'].mean()), want_mean)}; holdbench's reported mean "
          f"{ci['ci_overlap_mean']:.6g} over {ci['ci_n_coefficients']} terms", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ds", default="adult")
    ap.add_argument("--synth", default="synthpop")
    ap.add_argument("--degrees", default="1,2,3")
    ap.add_argument("--r-max-degree", type=int, default=2)
    ap.add_argument("--shared")
    args = ap.parse_args()
    shared = Path(args.shared or os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared"))
    paper = shared / "datasets" / "paper_study"
    t = pd.read_csv(paper / f"{args.ds}_trn.csv.gz")
    h = pd.read_csv(paper / f"{args.ds}_val.csv.gz")
    s = pd.read_csv(paper / f"{args.ds}_{args.synth}.csv.gz")
    kinds = {c: "categorical" if t[c].dtype == object else "numeric" for c in t.columns}
    print(f"{args.ds}: T {len(t)} rows, S = {args.synth} {len(s)} rows, H {len(h)} rows", flush=True)
    check_pmse(t, s, kinds, [int(d) for d in args.degrees.split(",")], args.r_max_degree)
    check_tstr_ci(t, h, s, kinds, TARGETS[args.ds])


if __name__ == "__main__":
    main()

"""Cost of Bale & Quick's synthesizer (holdbench.synthesizers.bale_quick) on a paper T, and its pMSE ratio.

Three parts, each optional:

- `--costs`: the pieces of one tuning evaluation timed separately on the paper's T (GMM fits
  at several K, the CART and MNL column fits at several b / C, generating |T| rows, one pMSE
  ratio on |T| + |T| rows), in CPU seconds of this process (the machine is shared), then
  the default budget (optimizer_seeds × (init_points + n_iter) evaluations of m synthetic
  sets) extrapolated from them for one core, for bq_cart and bq_mnl;
- `--tune`: fit `--synth` (bq_cart or bq_mnl) with the budget of the flags below (`--default-
  budget`: the config's own), print the trace, where the CPU time went (mixture fits, column
  model fits, generating, pMSE, optimiser; from the trace's *_cpu_seconds) and how many
  mixtures were fitted; then time sampling `--n` rows;
- `--compare`: the pMSE ratio (degree 3) of |T| rows from the tuned synthesizer and from the
  `cart` synthesizer (synthpop defaults), each against the whole T, same sample seeds;
- `--search`: how the search's choices fare on fresh data. `--synth` is fitted on a seeded
  sample of `--search-rows` rows of T with the budget of the flags, once per search variant
  (`--variants`: common random numbers or fresh seeds per evaluation, m, k_step); each fit
  re-scores its `rescore_top` best on new sets, so it gives two picks, the search's best and
  the re-scored best. For each pick: its parameters, its objective's mean pMSE ratio, the SD of
  a set's ratio over the re-scoring sets, and the mean pMSE ratio (both forms) of 5 fresh
  |T|-row sets from `sample` against that T; CPU seconds of the fit with and without the
  re-scoring;
- `--disclosure`: bq_cart with fixed K = 10, b = 50 (one evaluation) and the attribute-
  disclosure post-processor on, for a stand-in spec (sensitive `income`, quasi-identifiers
  age, sex, race unless the schema names its own): time and decoys for `--n` rows.

Run from the repo root (one core):

    OMP_NUM_THREADS=1 python scripts/bench/bench_bale_quick.py --costs --tune --compare \
        [--dataset adult] [--synth bq_cart] [--init-points 3] [--n-iter 5] [--optimizer-seeds 1] [--m 1]
    OMP_NUM_THREADS=1 nice -n 5 python scripts/bench/bench_bale_quick.py --tune --compare --default-budget
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from holdbench.benchmark.config import build_synthesizer, synthesizer_config
from holdbench.benchmark.data.tables import dataset_schema
from holdbench.synthesizers._bq_models import CartStep, Mixture, MNLStep, encode, generate, release
from holdbench.synthesizers.base import FitContext

PAPER = ROOT.parent / "shared" / "datasets" / "paper_study"


def _timed(fn):
    """fn()'s result and its CPU seconds (this process; the honest one-core cost when the
    machine is shared) -- the wall-clock seconds are printed where they matter."""
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def costs(train: pd.DataFrame, schema, ks: list[int], leaves: list[int], cs: list[float],
          budget: dict) -> None:
    from holdbench.metrics.pmse import pmse_ratio

    cats = [c.name for c in schema.columns if c.model_kind == "categorical"]
    enc = encode(train, schema.model_kinds, schema.dtypes, cats)
    design, p = enc.design, len(enc.numeric)
    print(f"T {train.shape}: {p} numeric columns in the mixture, {len(enc.steps)} categorical steps")
    gmm, gmm_sec, cart_sec = {}, {}, {}
    for k in ks:
        gmm[k], sec = _timed(lambda k=k: Mixture(enc.z, k, seed=0))
        gmm_sec[k] = sec
        print(f"  GMM fit K={k:>3}: {sec:6.2f} s (converged {gmm[k].converged})")
    cart = {}
    for b in leaves:
        models, sec = _timed(
            lambda b=b: [CartStep(design[:, :p + j], s.codes, b, 0) for j, s in enumerate(enc.steps)])
        cart[b], cart_sec[b] = models, sec
        print(f"  CART fits, all {len(enc.steps)} columns, b={b:>3}: {sec:6.2f} s")
    mnl_sec = []
    for c in cs:
        for j in (0, len(enc.steps) - 1):
            model, sec = _timed(lambda j=j, c=c: MNLStep(design[:, :p + j], enc.steps[j].codes, c, 0,
                                                degree=3, max_iter=100, tol=1e-4))
            print(f"  MNL fit column {enc.steps[j].name!r} ({p + j} predictors), C={c}: {sec:6.2f} s "
                  f"(converged {model.converged})")
            mnl_sec.append(sec)
    rng = np.random.default_rng(0)
    k_mid, b_mid = ks[len(ks) // 2], leaves[len(leaves) // 2]
    synthetic, gen_sec = _timed(lambda: schema.coerce(
        release(enc, generate(enc, gmm[k_mid], cart[b_mid], len(train), rng)[0], True), "S"))
    print(f"  generate + release {len(train)} rows: {gen_sec:6.2f} s")
    score, pmse_sec = _timed(lambda: pmse_ratio(train, synthetic, schema.kinds, degree=3))
    print(f"  pMSE ratio on {score.n} rows, {score.n_terms} terms: {pmse_sec:6.2f} s (ratio {score.ratio:.2f})")

    # extrapolation: K and b spread like the grids, no cache hits
    evals = budget["optimizer_seeds"] * (budget["init_points"] + budget["n_iter"])
    per_eval_models = float(np.mean(list(gmm_sec.values())) + np.mean(list(cart_sec.values())))
    per_eval_sets = budget["m"] * (gen_sec + pmse_sec)
    total = evals * (per_eval_models + per_eval_sets)
    print(f"default budget: {evals} evaluations x (models {per_eval_models:.1f} s + m={budget['m']} sets x "
          f"(generate {gen_sec:.1f} s + pMSE {pmse_sec:.1f} s)) = {total:.0f} s = {total / 3600:.2f} h CPU on one core "
          f"(models {evals * per_eval_models / total:.0%}, synthetic sets {evals * per_eval_sets / total:.0%})")
    mnl_models = float(np.mean(list(gmm_sec.values())) + len(enc.steps) * np.mean(mnl_sec))
    mnl_total = evals * (mnl_models + per_eval_sets)
    print(f"bq_mnl with cold fits (c_grid null; the default's path costs <= c_grid x max_iter epochs per column, "
          f"fitted once): {evals} x (GMM + {len(enc.steps)} saga fits ~{mnl_models:.0f} s + sets {per_eval_sets:.0f} s) "
          f"= {mnl_total:.0f} s = {mnl_total / 3600:.1f} h CPU (saga fits timed at the first and last column)")


def tune(train, schema, dataset: str, args) -> object:
    overrides = [] if args.default_budget else [
        f"init_points={args.init_points}", f"n_iter={args.n_iter}", f"optimizer_seeds={args.optimizer_seeds}",
        f"m={args.m}"]
    cfg = synthesizer_config(args.synth, overrides=overrides)
    synth = build_synthesizer(cfg)
    wall = time.perf_counter()
    _, fit_sec = _timed(lambda: synth.fit(train, FitContext(schema, args.seed, dataset)))
    info = synth.info()
    print(f"{args.synth} fit ({cfg['optimizer_seeds']} seed(s) x ({cfg['init_points']} random + {cfg['n_iter']} BO), "
          f"m={cfg['m']}, tuning_rows={cfg['tuning_rows']}): {fit_sec:.0f} s CPU, "
          f"{time.perf_counter() - wall:.0f} s wall; best mean pMSE ratio {info['best_mean_pmse_ratio']:.3f}, "
          f"params {info['best_params']}")
    trace = synth.tuning_trace
    parts = [c for c in trace.columns if c.endswith("_cpu_seconds")]
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(trace.drop(columns=[c for c in trace.columns if c.startswith(synth._param + "_")]).round(3)
              .to_string(index=False))
    split = {c.removesuffix("_cpu_seconds"): float(trace[c].sum()) for c in parts}
    split["optimiser, final fit, rest"] = fit_sec - sum(split.values())
    print("CPU split of the fit: " + ", ".join(f"{k} {v:.0f} s ({v / fit_sec:.0%})" for k, v in split.items()))
    print(f"evaluations {len(trace)}, distinct {int((~trace['cached']).sum())}, mixtures fitted "
          f"{len(synth._mixtures)} (distinct K {trace['K'].nunique() if 'K' in trace else 0})")
    wall = time.perf_counter()
    out, sec = _timed(lambda: synth.sample(args.n, args.seed + 1))
    print(f"{args.synth} sample {len(out)} rows: {sec:.2f} s CPU, {time.perf_counter() - wall:.2f} s wall")
    return synth


def compare(train, schema, dataset: str, bq, seed: int) -> None:
    from holdbench.metrics.pmse import pmse_ratio

    cart = build_synthesizer(synthesizer_config("cart"))
    _, sec = _timed(lambda: cart.fit(train, FitContext(schema, seed, dataset)))
    print(f"cart fit: {sec:.1f} s")
    for name, synth in ((type(bq).__name__, bq), ("cart", cart)):
        ratios = [pmse_ratio(train, synth.sample(len(train), seed + 100 + i), schema.kinds, degree=3).ratio
                  for i in range(3)]
        print(f"{name:>8}: pMSE ratio (deg 3, |S| = |T|, 3 fresh sets) {np.round(ratios, 2).tolist()} "
              f"mean {np.mean(ratios):.2f}")


VARIANTS = {  # name: overrides of the config; every fit re-scores its best 3 on 5 new sets
    "crn": [],
    "fresh": ["fresh_seeds=true"],
    "crn_m6": ["m=6"],
    "crn_k5": ["k_step=5"],
}


def _fresh_ratios(synth, train, schema, n_sets: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """pMSE ratios (holdbench's, Bale & Quick's form) of n_sets fresh |T|-row samples against T."""
    from holdbench.metrics.pmse import pmse_ratio

    scores = [pmse_ratio(train, synth.sample(len(train), 10_000 + i), schema.kinds, degree=synth.pmse_degree)
              for i in range(n_sets)]
    return np.array([s.ratio for s in scores]), np.array([s.ratio_bq for s in scores])


def search(train, schema, dataset: str, args) -> None:
    idx = np.sort(np.random.default_rng(args.seed).choice(len(train), min(args.search_rows, len(train)),
                                                           replace=False))
    t = train.iloc[idx].reset_index(drop=True)
    print(f"search variants on a seeded sample of {len(t)} rows of {dataset}'s T, {args.synth}, "
          f"{args.optimizer_seeds} x ({args.init_points} + {args.n_iter}) evaluations, fresh sets: 5 x |T| rows")
    budget = [f"init_points={args.init_points}", f"n_iter={args.n_iter}", f"optimizer_seeds={args.optimizer_seeds}",
              f"m={args.m}", "rescore_top=3", "rescore_sets=5"]
    for name in args.variants:
        synth = build_synthesizer(synthesizer_config(args.synth, overrides=budget + VARIANTS[name]))
        _, fit_sec = _timed(lambda synth=synth: synth.fit(t, FitContext(schema, args.seed, dataset)))
        info, trace = synth.info(), synth.tuning_trace
        names = list(info["best_params"])
        search_best = int(np.argmax(trace["objective"].to_numpy()))
        chosen = int(np.flatnonzero(trace["chosen"])[0])
        picks = [("search's best", search_best), ("re-scored best", chosen)]
        for label, row in picks if search_best != chosen else [("both picks", chosen)]:
            params = {k: trace[k].iloc[row].item() for k in names}
            if row != chosen:  # sample from the search's pick: rebuild the final models with it
                synth.best_params = params
                synth._mixture_fit, synth._step_models = synth._build(params)
            rank, bq = _fresh_ratios(synth, t, schema)
            cpu = fit_sec - (info["rescore_cpu_seconds"] if label == "search's best" else 0.0)
            if label == "both picks":
                cpu = f"{fit_sec - info['rescore_cpu_seconds']:.0f} / {fit_sec:.0f}"
            print(f"  {name:>7} {label:>14}: objective's mean ratio ({info['pmse_form']}) "
                  f"{trace['mean_pmse_ratio'].iloc[row]:.3f}, re-scored {trace['rescored_mean_pmse_ratio'].iloc[row]:.3f} "
                  f"(set SD {trace['rescored_set_ratio_sd'].iloc[row]:.3f}); fresh sets: Bale & Quick form "
                  f"{bq.mean():.3f} +- {bq.std(ddof=1):.3f}, holdbench {rank.mean():.3f}; fit {cpu if isinstance(cpu, str) else f'{cpu:.0f}'} s CPU; "
                  f"K {params.get('K')}, {({k: round(v, 4) for k, v in params.items() if k != 'K'})}")
            if row != chosen:
                synth.best_params = {k: trace[k].iloc[chosen].item() for k in names}
                synth._mixture_fit, synth._step_models = synth._build(synth.best_params)


def disclosure(train, schema, dataset: str, args) -> None:
    import dataclasses

    from holdbench.metrics.disclosure import disclosure_ratios

    if getattr(schema, "sensitive", None) is None:
        schema = dataclasses.replace(schema, sensitive="income", quasi_identifiers=("age", "sex", "race"))
    cfg = synthesizer_config("bq_cart", overrides=[
        "k_range=[10,10]", "leaf_range=[50,50]", "m=1", "disclosure_reduction=true"])
    synth = build_synthesizer(cfg)
    synth.fit(train, FitContext(schema, args.seed, dataset))
    wall = time.perf_counter()
    out, sec = _timed(lambda: synth.sample(args.n, args.seed + 1))
    spec = synth._disclosure
    worst = [disclosure_ratios(train, out, spec.sensitive, spec.continuous, spec.categorical, d).max()
             for d in synth.disclosure_delta]
    print(f"disclosure reduction ({spec.sensitive} | {spec.continuous + spec.categorical}), {args.n} rows: "
          f"{sec:.1f} s CPU, {time.perf_counter() - wall:.1f} s wall, {synth.n_decoys_added} decoys, "
          f"converged {synth.disclosure_converged}, max ratio per delta {np.round(worst, 2).tolist()}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="adult")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--costs", action="store_true")
    ap.add_argument("--tune", action="store_true")
    ap.add_argument("--compare", action="store_true")
    ap.add_argument("--disclosure", action="store_true")
    ap.add_argument("--search", action="store_true")
    ap.add_argument("--search-rows", type=int, default=6712)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--init-points", type=int, default=3)
    ap.add_argument("--n-iter", type=int, default=5)
    ap.add_argument("--optimizer-seeds", type=int, default=1)
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--synth", default="bq_cart", choices=["bq_cart", "bq_mnl"])
    ap.add_argument("--default-budget", action="store_true", help="the config's budget, not the flags'")
    args = ap.parse_args(argv)

    schema = dataset_schema(args.dataset)
    train = schema.coerce(pd.read_csv(PAPER / f"{args.dataset}_trn.csv.gz"), "T")
    if args.costs:
        cfg = synthesizer_config("bq_cart")
        costs(train, schema, [10, 50, 100, 200], [10, 100, 350], [0.01, 1.0], cfg)
    bq = tune(train, schema, args.dataset, args) if args.tune or args.compare else None
    if args.compare:
        compare(train, schema, args.dataset, bq, args.seed)
    if args.disclosure:
        disclosure(train, schema, args.dataset, args)
    if args.search:
        search(train, schema, args.dataset, args)


if __name__ == "__main__":
    main()

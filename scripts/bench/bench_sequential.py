"""CPU time and peak memory of the sequential measures per cell on baseball, against a plain pandas
implementation of the same D2.2 flat table and TVDs measured in the same run (not a test).

Data: conf/dataset/baseball.yaml, split by subject with seed 0 (T ~10,000 players / ~55,000 batting
rows). For each cell (holdout, copy, flip50, indep_events, swap_sequences, ar_cart) it prints

  synth     CPU seconds of fit + sample (the study's cost without the optional engines),
  holdbench CPU seconds and tracemalloc peak (MB) of holdbench.metrics.sequential.evaluate_sequential: D2.2
            table + F1-F3 + ratios, coherence, length TVD, per-subject DCR share and IMS,
  all fams  CPU seconds of every family of conf/metrics/sequential.yaml on the cell (what the study's
            evaluate job computes: the above plus the subject panel, legal criteria and attacks), one job,
  pandas    the same D2.2 tables, F1, coherence and length TVDs written plainly with pandas
            (groupby / pd.cut / value_counts), plus F2 and F3 each on a seeded sample of --sample of
            their C(49,2) = 1,176 and C(49,3) = 18,424 combinations, the CPU extrapolated to all of them
            (marked ~: value_counts costs ~20 ms per table and combination); no privacy part,
  diff      the largest |difference| between the pandas TVD values and holdbench's (same combinations).

CPU is time.process_time (one BLAS/OpenMP thread); peak memory is tracemalloc's, measured in a second
pass so that tracing does not slow the timed pass. Target (issue 25): every sequential measure of a
cell under a minute of CPU.

Usage: HOLDBENCH_DATA_DIR=../shared/datasets python scripts/bench/bench_sequential.py [--sample 150]
       [--cells holdout,copy,flip50,indep_events,swap_sequences,ar_cart]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pandas as pd

from holdbench.benchmark.data.sequential import load_sequential, split_by_subject
from holdbench.benchmark.config import build_metric_families, group_config
from holdbench.metrics.sequential import SequentialLayout, d22_tables, evaluate_families, evaluate_sequential
from holdbench.synthesizers.sequential import (
    ARCart,
    Copy,
    IndependentEvents,
    SequentialContext,
    SequentialFlip,
    SequentialHoldout,
    SwapSequences,
)

CELLS = {"holdout": SequentialHoldout, "copy": Copy, "flip50": lambda: SequentialFlip(0.5),
         "indep_events": IndependentEvents, "swap_sequences": SwapSequences, "ar_cart": ARCart}
CAPS = {1: 100, 2: 10, 3: 5}


# ---- the plain pandas reference ------------------------------------------------------------------

def pandas_d22(subjects: pd.DataFrame, events: pd.DataFrame, key: str, event_cols: list[str],
               seed: int) -> pd.DataFrame:
    """One row per subject: attributes, length, events t and t+1 (same draw rule as holdbench)."""
    ev = events.copy()
    ev["_pos"] = ev.groupby(key, sort=False).cumcount()
    lengths = ev.groupby(key).size().reindex(subjects[key], fill_value=0).to_numpy()
    u = np.random.default_rng(seed).random(len(subjects))
    t = np.where(lengths >= 2, np.floor(u * np.maximum(lengths - 1, 1)), 0).astype(int)
    out = subjects.drop(columns=key).reset_index(drop=True).assign(n_events=lengths)
    want = pd.DataFrame({key: subjects[key].to_numpy(), "_t": t})
    at = want.merge(ev, how="left", left_on=[key, "_t"], right_on=[key, "_pos"])
    at1 = want.assign(_t=t + 1).merge(ev, how="left", left_on=[key, "_t"], right_on=[key, "_pos"])
    for c in event_cols:
        out[f"{c}@t"] = at[c].to_numpy()
    for c in event_cols:
        out[f"{c}@t+1"] = at1[c].to_numpy()
    return out


def pandas_buckets(train: pd.Series, other: pd.Series, kind: str, cap: int) -> pd.Series:
    """docs/definitions/paper.md §3.1 buckets of `other` under T's statistics, as strings."""
    if kind == "numeric":
        x, tr = pd.to_numeric(other, errors="coerce").astype(float), pd.to_numeric(train, errors="coerce").astype(float)
        edges = np.unique(np.quantile(tr.dropna().to_numpy(), np.linspace(0, 1, cap + 1)))
        codes = pd.cut(x, edges, include_lowest=True, labels=False, duplicates="drop")
        b = codes.map(lambda v: "nan" if pd.isna(v) else str(int(v))).astype(object)  # "3", never "3.0"
        b[(x < edges[0]) | (x > edges[-1])] = "_other_"
        b[x.isna()] = "nan"
        return b.astype(str)
    top = train.dropna().astype(str).value_counts(sort=True).index[:cap]
    s = other.astype(object)
    b = s.where(s.isin(top), "_other_")
    b[s.isna()] = "nan"
    return b.astype(str)


def pandas_tvd(a: pd.DataFrame, b: pd.DataFrame) -> float:
    pa = a.value_counts(normalize=True, dropna=False)
    pb = b.value_counts(normalize=True, dropna=False)
    return 0.5 * pa.sub(pb, fill_value=0).abs().sum()


def pandas_measures(t, h, s, layout: SequentialLayout, sample: int, seed: int = 0) -> dict:
    key, event_cols = layout.key, list(layout.event_kinds)
    flat = [pandas_d22(x[0], x[1], key, event_cols, seed) for x in (t, h, s)]
    kinds = {**layout.subject_kinds, "n_events": "numeric", **{f"{c}@t": k for c, k in layout.event_kinds.items()},
             **{f"{c}@t+1": k for c, k in layout.event_kinds.items()}}
    cols = list(flat[0].columns)
    out = {}
    for k, cap in CAPS.items():
        coded = [pd.DataFrame({c: pandas_buckets(flat[0][c], f[c], kinds[c], cap) for c in cols}) for f in flat]
        combos = list(itertools.combinations(range(len(cols)), k))
        picked = combos
        if k >= 2 and sample < len(combos):
            rows = np.sort(np.random.default_rng(1).choice(len(combos), sample, replace=False))
            picked = [combos[i] for i in rows]
        start = time.process_time()
        tvd = {cmb: (pandas_tvd(coded[0][[cols[i] for i in cmb]], coded[2][[cols[i] for i in cmb]]),
                     pandas_tvd(coded[0][[cols[i] for i in cmb]], coded[1][[cols[i] for i in cmb]])) for cmb in picked}
        spent = time.process_time() - start
        out[k] = {"tvd": tvd, "extra_cpu": spent * (len(combos) / len(picked) - 1), "n": len(combos),
                  "names": {cmb: " | ".join(cols[i] for i in cmb) for cmb in picked}}
    # coherence and lengths
    def pairs(ev):
        ev = ev.copy()
        nxt = ev.groupby(key, sort=False).shift(-1)
        keep = ev[key].eq(ev[key].shift(-1))
        return ev[keep], nxt[keep]
    tp, hp, sp = (pairs(x[1]) for x in (t, h, s))
    coh = {}
    for c in event_cols:
        both = pd.concat([tp[0][c], tp[1][c]])
        def code(p, c=c, both=both):
            return pd.DataFrame({"a": pandas_buckets(both, p[0][c], layout.event_kinds[c], 10).to_numpy(),
                                 "b": pandas_buckets(both, p[1][c], layout.event_kinds[c], 10).to_numpy()})
        coh[c] = (pandas_tvd(code(tp), code(sp)), pandas_tvd(code(tp), code(hp)))
    lens = [x[1].groupby(key).size().reindex(x[0][key], fill_value=0) for x in (t, h, s)]
    out["coherence"] = coh
    out["length"] = (pandas_tvd(lens[0].to_frame(), lens[2].to_frame()), pandas_tvd(lens[0].to_frame(), lens[1].to_frame()))
    return out


# ---- the run ------------------------------------------------------------------------------------

def measure(fn):
    """(result, CPU seconds) of fn() untraced, then its tracemalloc peak in MB in a second call."""
    start = time.process_time()
    result = fn()
    cpu = time.process_time() - start
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, cpu, peak


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=150)
    ap.add_argument("--cells", default=",".join(CELLS))
    args = ap.parse_args()
    data = load_sequential("baseball")
    t, h = split_by_subject(data, 0)
    spec = data.spec
    layout = SequentialLayout(spec.key, spec.subject_schema.kinds, spec.event_schema.kinds, spec.n_events_privacy)
    ctx = SequentialContext(spec.key, spec.subject_schema, spec.event_schema, 0, "baseball", (h.subjects, h.events))
    T, H = (t.subjects, t.events), (h.subjects, h.events)
    print(f"baseball: T {t.n_subjects} subjects / {t.n_events} events, H {h.n_subjects} / {h.n_events}; "
          f"D2.2 table {len(d22_tables(T, H, T, layout, 0)[3])} columns", flush=True)
    families = build_metric_families(group_config("metrics", "sequential"))
    print(f"{'cell':15s} {'synth s':>8s} {'holdbench s':>11s} {'MB':>6s} {'all fams s':>10s} {'pandas s':>10s} {'MB':>6s} "
          f"{'pandas/hb':>9s} {'max|diff|':>9s}  seq_F3_ratio coherence length dcr_share", flush=True)
    total_synth = total_hb = total_all = 0.0
    for name in args.cells.split(","):
        synth = CELLS[name]()
        start = time.process_time()
        synth.fit(*T, ctx)
        S = synth.sample(t.n_subjects, 1)
        synth_cpu = time.process_time() - start
        holdout_row = synth.holdout_rule
        res, hb_cpu, hb_mb = measure(lambda S=S, hr=holdout_row: evaluate_sequential(T, H, S, layout, seed=0,
                                                                                    holdout_row=hr))
        start = time.process_time()
        evaluate_families(T, H, None if holdout_row else S, layout, families=families, holdout_row=holdout_row)
        all_cpu = time.process_time() - start
        ref, pd_cpu, pd_mb = measure(lambda S=S: pandas_measures(T, H, S, layout, args.sample))
        pd_total = pd_cpu + ref[2]["extra_cpu"] + ref[3]["extra_cpu"]
        marg = res.seq_marginals.set_index(["columns", "k"])
        diffs = [abs(marg.loc[(ref[k]["names"][c], k), "tvd_synthetic"] - v[0]) for k in CAPS
                 for c, v in ref[k]["tvd"].items()]
        diffs += [abs(a - b) for a, b in zip(res.seq_coherence["tvd_synthetic"], [v[0] for v in ref["coherence"].values()])
                  if np.isfinite(a)]
        diffs.append(abs(res.seq_length_tvd - ref["length"][0]))
        total_synth += synth_cpu
        total_hb += hb_cpu
        total_all += all_cpu
        print(f"{name:15s} {synth_cpu:8.1f} {hb_cpu:11.2f} {hb_mb:6.0f} {all_cpu:10.1f} {pd_total:9.1f}~ {pd_mb:6.0f} "
              f"{pd_total / hb_cpu:9.1f} {max(diffs):9.2e}  {res.seq_F3_ratio:.3f} {res.seq_coherence_ratio:.3f} "
              f"{res.seq_length_ratio:.3f} {res.seq_dcr_share:.3f}", flush=True)
    print(f"total CPU: synthesizers {total_synth:.1f} s, sequential measures {total_hb:.1f} s, every family "
          f"{total_all:.1f} s "
          f"(~ = pandas F2/F3 extrapolated from {args.sample} combinations each; pandas has no privacy part)")


if __name__ == "__main__":
    main()

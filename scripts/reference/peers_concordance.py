"""holdbench against its peers, SDMetrics and mostlyai-qa, where their definitions meet (not a test).

On one training table T, holdout H and synthetic tables S (default: adult's paper files, the published
synthpop and CTGAN files), computes side by side:

  column shapes   holdbench's per-column TVD of T vs S (F1's marginals, 100 buckets of T) as 1 - TVD,
                  against SDMetrics' QualityReport 'Column Shapes' (TVComplement on categorical columns,
                  KSComplement on numeric ones);
  pair trends     holdbench's per-pair TVD (F2's marginals, 10 buckets of T) as 1 - TVD, against
                  SDMetrics' 'Column Pair Trends' (ContingencySimilarity; CorrelationSimilarity on two
                  numeric columns);
  accuracy        holdbench's 1- and 2-way TVDs against mostlyai-qa's univariate / bivariate accuracy
                  (1 - TVD on its own binning of T and H together), both as each tool computes them by
                  default (holdbench against T) and with holdbench given T and H together as its
                  reference (where the definitions meet); mostlyai-qa runs in its plug-in environment
                  (metrics/plugins/mostlyai_qa/);
  DCR             holdbench's DCR share (Hamming, all of S; and on a seeded sample of S, Hamming and
                  Gower) against SDMetrics' DCROverfittingProtection on the same sample of S (its
                  'closer_to_training' share and score), and mostlyai-qa's own dcr_share.

Writes OUT/{headline,summary,column_shapes,pair_trends,accuracy,dcr}.csv and OUT/provenance.json
(the results page docs/gen/results.py renders them). summary.csv is where every agreement claim comes
from: per comparison and subset, the largest absolute difference, the decimal digits that agree
(floor(-log10(max |diff|)), 'exact' at 0) and Spearman's rank correlation over the subset.

Usage: nice python scripts/reference/peers_concordance.py [--data DIR] [--ds adult]
       [--synthetic synthpop ctgan] [--dcr-sample 1000] [--seed 0] [--out results/published/concordance]
About 4 CPU-minutes per S (SDMetrics' DCR on the sample and mostlyai-qa's report take most of it).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = Path(os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared")) / "datasets" / "paper_study"
#: decimals mostlyai-qa rounds its accuracies to (mostlyai.qa._accuracy.calculate_accuracy_cnts)
MOSTLYAI_DECIMALS = 5
SMALL = 10  # bucket cap of holdbench's 2-way marginals; mostlyai-qa keeps 10 categories too


# ---------------------------------------------------------------- inputs

def load(data: Path, ds: str, synthetic: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, pd.DataFrame]]:
    def read(name: str) -> pd.DataFrame:
        path = data / f"{ds}_{name}.csv.gz"
        if not path.is_file():
            raise SystemExit(f"peers_concordance: {path} does not exist (--data names the paper_study folder)")
        return pd.read_csv(path)
    t, h = read("trn"), read("val")
    return t, h, {s: read(s)[list(t.columns)] for s in synthetic}


def sdv_metadata(kinds: dict[str, str]) -> dict:
    return {"columns": {c: {"sdtype": "numerical" if k == "numeric" else "categorical"} for c, k in kinds.items()}}


# ---------------------------------------------------------------- the three tools

def holdbench_tvds(train: pd.DataFrame, holdout: pd.DataFrame, s: pd.DataFrame, kinds: dict) -> dict:
    """{(col,): tvd, (a, b): tvd} of holdbench's 1- and 2-way marginals of `train` against S."""
    from holdbench.metrics.fidelity import FidelityModel

    model = FidelityModel(train, holdout, kinds)
    out = {}
    for k, (tvd_s, _) in model.tvds(s).items():
        if k > 2:
            continue
        for combo, tvd in zip(model.combos[k], tvd_s, strict=True):
            out[tuple(model.columns[j] for j in combo)] = float(tvd)
    return out


def sdmetrics_quality(t: pd.DataFrame, s: pd.DataFrame, metadata: dict) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    import warnings

    with warnings.catch_warnings():  # sdmetrics 0.32 deprecates the single-table report for the unified one,
        warnings.simplefilter("ignore", FutureWarning)  # whose default thresholds leave weak pairs out
        from sdmetrics.reports.single_table import QualityReport

    report = QualityReport()
    report.num_rows_subsample = None  # no sampling (its default 50,000 would not cut these tables either)
    # score every pair: by default sdmetrics 0.32 leaves a pair whose association in T is below its
    # thresholds unscored (NaN, out of the average)
    report.real_correlation_threshold = 0
    report.real_association_threshold = 0
    report.generate(t, s, metadata, verbose=False)
    props = report.get_properties().set_index("Property")["Score"].to_dict()
    return report.get_details("Column Shapes"), report.get_details("Column Pair Trends"), props


def sdmetrics_dcr(t: pd.DataFrame, s_sample: pd.DataFrame, h: pd.DataFrame, metadata: dict) -> dict:
    from sdmetrics.single_table import DCROverfittingProtection

    return DCROverfittingProtection.compute_breakdown(t, s_sample, h, metadata, None, num_rows_subsample=None)


def mostlyai_qa(files: dict[str, Path], seed: int, workdir: Path) -> dict:
    from holdbench.contracts import plugin_env

    plugin = plugin_env.get("mostlyai_qa")
    why = plugin.unavailable()
    if why:
        raise SystemExit(f"peers_concordance: {why}")
    workdir.mkdir(parents=True, exist_ok=True)
    config = json.dumps({"seed": seed, "n_jobs": 1, "files": {k: str(v) for k, v in files.items()}})
    done = workdir / "result.json"
    if (workdir / "config.json").is_file() and (workdir / "config.json").read_text() == config and done.is_file():
        print(f"  (mostlyai-qa's result of the same inputs and seed reused from {done})", flush=True)
        return json.loads(done.read_text())
    (workdir / "config.json").write_text(config)
    result, _, _ = plugin_env.run_worker("mostlyai_qa", plugin.python(), plugin.worker, workdir, timeout=3600)
    if "missing" in result:
        raise SystemExit(f"peers_concordance: mostlyai-qa cannot be imported: {result['missing']}")
    return result


def holdbench_dcr(t: pd.DataFrame, h: pd.DataFrame, s: pd.DataFrame, kinds: dict, gower: bool) -> dict:
    from holdbench.metrics.evaluate import evaluate
    from holdbench.metrics.panel import PrivacyPanel
    from holdbench.metrics.privacy import DCRShare

    fams = [DCRShare(), PrivacyPanel()] if gower else [DCRShare()]
    return evaluate(t, h, s, kinds, families=fams).to_dict()  # one flat dict of every family's fields


# ---------------------------------------------------------------- comparing

def digits(max_abs: float) -> str:
    if max_abs == 0:
        return "exact"
    return str(max(0, math.floor(-math.log10(max_abs))))


def spearman(a: list[float], b: list[float]) -> str:
    from scipy.stats import spearmanr

    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return ""
    return f"{spearmanr(a, b).statistic:.3f}"


def summarise(df: pd.DataFrame, comparison: str, subset_col: str, a: str, b: str) -> list[dict]:
    rows = []
    for (syn, subset), g in df.groupby(["synthetic", subset_col], sort=False):
        missing = int((g[a].isna() | g[b].isna()).sum())  # a value one tool could not compute
        g = g.dropna(subset=[a, b])
        if g.empty:
            rows.append({"comparison": comparison, "synthetic": syn, "subset": subset, "n": 0,
                         "n_not_computed": missing, "max_abs_diff": "", "mean_abs_diff": "", "digits_agree": "",
                         "spearman": ""})
            continue
        diff = (g[a] - g[b]).abs()
        rows.append({"comparison": comparison, "synthetic": syn, "subset": subset, "n": len(g),
                     "n_not_computed": missing,
                     "max_abs_diff": f"{diff.max():.3g}", "mean_abs_diff": f"{diff.mean():.3g}",
                     "digits_agree": digits(float(diff.max())),
                     "spearman": spearman(g[a].tolist(), g[b].tolist())})
    return rows


def n_levels(df: pd.DataFrame, col: str) -> int:
    return int(df[col].nunique(dropna=False))


def column_class(kind: str, levels: int) -> str:
    if kind == "numeric":
        return "numeric"
    return f"categorical, at most {SMALL} categories" if levels <= SMALL else f"categorical, over {SMALL} categories"


def pair_class(classes: tuple[str, str]) -> str:
    if "numeric" in classes:
        return "both numeric" if classes == ("numeric", "numeric") else "numeric with categorical"
    if all("at most" in c for c in classes):
        return f"categorical pair, both at most {SMALL} categories"
    return f"categorical pair, one over {SMALL} categories"


def compare(t: pd.DataFrame, h: pd.DataFrame, syn: dict[str, pd.DataFrame], files: dict[str, Path],
            dcr_sample: int, seed: int, work: Path) -> dict[str, pd.DataFrame]:
    from holdbench.metrics.evaluate import kinds_from_dtypes

    kinds = kinds_from_dtypes(t)
    meta = sdv_metadata(kinds)
    th = pd.concat([t, h], ignore_index=True)
    cls = {c: column_class(kinds[c], n_levels(th, c)) for c in t.columns}
    shapes, pairs, acc, dcr, head = [], [], [], [], []
    timings = {}
    for name, s in syn.items():
        cache = work / f"raw_{name}_seed{seed}_dcr{dcr_sample}.pkl"
        if cache.is_file():  # this S's per-column results of an earlier run with the same settings
            print(f"[{name}] results reused from {cache}", flush=True)
            got = pd.read_pickle(cache)
        else:
            got = one_synthetic(name, s, t, h, th, kinds, meta, cls, files, dcr_sample, seed, work)
            work.mkdir(parents=True, exist_ok=True)
            pd.to_pickle(got, cache)
        for key, store in (("shapes", shapes), ("pairs", pairs), ("acc", acc), ("dcr", dcr), ("head", head)):
            store.extend(got[key])
        timings.update(got["timings"])
        mq_versions = got["mq_versions"]
    shapes, pairs, acc, dcr, head = map(pd.DataFrame, (shapes, pairs, acc, dcr, head))
    summary = [*summarise(shapes, "column shapes: holdbench 1-TVD vs SDMetrics", "subset",
                          "holdbench_1_minus_tvd", "sdmetrics_score"),
               *summarise(pairs, "pair trends: holdbench 1-TVD vs SDMetrics", "subset",
                          "holdbench_1_minus_tvd", "sdmetrics_score"),
               *summarise(acc, "accuracy: holdbench 1-TVD against T and H vs mostlyai-qa", "subset",
                          "holdbench_1_minus_tvd_TH", "mostlyai_accuracy"),
               *summarise(acc, "accuracy: holdbench 1-TVD against T (its default) vs mostlyai-qa", "subset",
                          "holdbench_1_minus_tvd_T", "mostlyai_accuracy")]
    return {"headline": head, "summary": pd.DataFrame(summary), "column_shapes": shapes, "pair_trends": pairs,
            "accuracy": acc, "dcr": dcr, "_timings": timings, "_mq_versions": mq_versions}


def one_synthetic(name, s, t, h, th, kinds, meta, cls, files, dcr_sample, seed, work) -> dict:
    """Every per-column, per-pair and DCR row of one S, from the three tools."""
    shapes, pairs, acc, dcr, head, timings = [], [], [], [], [], {}
    print(f"[{name}] holdbench TVDs", flush=True)
    tv_t = holdbench_tvds(t, h, s, kinds)          # as holdbench computes them: against T
    tv_th = holdbench_tvds(th, h, s, kinds)        # against T and H together (mostlyai-qa's reference)
    print(f"[{name}] SDMetrics QualityReport", flush=True)
    c0 = time.process_time()
    sd_shapes, sd_pairs, props = sdmetrics_quality(t, s, meta)
    timings[f"sdmetrics_quality_{name}"] = time.process_time() - c0
    for r in sd_shapes.itertuples(index=False):
        col = r.Column
        hb = 1.0 - tv_t[(col,)]
        shapes.append({"synthetic": name, "column": col, "subset": cls[col], "sdmetrics_metric": r.Metric,
                       "holdbench_1_minus_tvd": hb, "sdmetrics_score": float(r.Score)})
    for r in sd_pairs.itertuples(index=False):
        a, b = r._0, r._1  # 'Column 1', 'Column 2'
        key = (a, b) if (a, b) in tv_t else (b, a)
        classes = tuple(sorted((cls[a], cls[b]), key=lambda x: x != "numeric"))
        pairs.append({"synthetic": name, "column_1": a, "column_2": b,
                      "subset": f"{pair_class(classes)} ({r.Metric})", "sdmetrics_metric": r.Metric,
                      "holdbench_1_minus_tvd": 1.0 - tv_t[key], "sdmetrics_score": float(r.Score)})
    print(f"[{name}] mostlyai-qa report (plug-in environment)", flush=True)
    c0 = time.perf_counter()
    mq = mostlyai_qa({"train": files["trn"], "holdout": files["val"], "synthetic": files[name]}, seed,
                     work / f"mostlyai_qa_{name}")
    timings[f"mostlyai_qa_wall_{name}"] = time.perf_counter() - c0
    for r in mq["univariate"]:
        col = r["column"]
        acc.append({"synthetic": name, "order": 1, "columns": col, "subset": f"1-way, {cls[col]}",
                    "holdbench_1_minus_tvd_T": 1.0 - tv_t[(col,)],
                    "holdbench_1_minus_tvd_TH": 1.0 - tv_th[(col,)], "mostlyai_accuracy": r["accuracy"]})
    for r in mq["bivariate"]:
        a, b = r["column_1"], r["column_2"]
        key = (a, b) if (a, b) in tv_t else (b, a)
        classes = tuple(sorted((cls[a], cls[b]), key=lambda x: x != "numeric"))
        acc.append({"synthetic": name, "order": 2, "columns": f"{key[0]} | {key[1]}",
                    "subset": f"2-way, {pair_class(classes)}",
                    "holdbench_1_minus_tvd_T": 1.0 - tv_t[key], "holdbench_1_minus_tvd_TH": 1.0 - tv_th[key],
                    "mostlyai_accuracy": r["accuracy"]})
    print(f"[{name}] DCR: holdbench on all of S, then both tools on a sample of {dcr_sample} rows", flush=True)
    hb_full = holdbench_dcr(t, h, s, kinds, gower=False)
    sample = s.sample(n=min(dcr_sample, len(s)), random_state=seed).reset_index(drop=True)
    hb_s = holdbench_dcr(t, h, sample, kinds, gower=True)
    c0 = time.process_time()
    sd = sdmetrics_dcr(t, sample, h, meta)
    timings[f"sdmetrics_dcr_{name}"] = time.process_time() - c0
    n = len(sample)
    p = hb_s
    dcr.append({"synthetic": name, "rows_of_S": n,
                "holdbench_hamming_dcr_share": p["dcr_share"],
                "holdbench_hamming_closer_to_T": p["n_closer_train"] / n,
                "holdbench_hamming_ties": p["n_ties"] / n,
                "holdbench_gower_dcr_share": hb_s["gower_dcr_share"],
                "holdbench_gower_ties": hb_s["gower_n_ties"] / n,
                "sdmetrics_closer_to_training": sd["synthetic_data_percentages"]["closer_to_training"],
                "sdmetrics_score": sd["score"]})
    uni = [1.0 - v for k, v in tv_t.items() if len(k) == 1]
    biv = [1.0 - v for k, v in tv_t.items() if len(k) == 2]
    head.append({"synthetic": name,
                 "holdbench_1_minus_F1": float(np.mean(uni)),
                 "sdmetrics_column_shapes": props["Column Shapes"],
                 "mostlyai_univariate": mq["metrics"]["accuracy"]["univariate"],
                 "holdbench_1_minus_F2": float(np.mean(biv)),
                 "sdmetrics_column_pair_trends_all_pairs": props["Column Pair Trends"],
                 "mostlyai_bivariate": mq["metrics"]["accuracy"]["bivariate"],
                 "holdbench_dcr_share": hb_full["dcr_share"],
                 "mostlyai_dcr_share": mq["metrics"]["distances"]["dcr_share"]})
    print(f"[{name}] done", flush=True)
    return {"shapes": shapes, "pairs": pairs, "acc": acc, "dcr": dcr, "head": head, "timings": timings,
            "mq_versions": mq["versions"]}

# ---------------------------------------------------------------- writing

def _fmt(df: pd.DataFrame) -> pd.DataFrame:
    """Floats with 6 significant digits for reading; differences in scientific notation."""
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = out[c].map(lambda v: "" if pd.isna(v) else f"{v:.6g}")
    return out


def with_diff(df: pd.DataFrame, a: str, b: str, name: str = "abs_diff") -> pd.DataFrame:
    out = df.copy()
    out[name] = (df[a] - df[b]).abs().map(lambda v: f"{v:.2g}")
    return out


TITLES = {
    "headline.csv": "The headline numbers of each tool on the same files",
    "summary.csv": "Where the tools agree: largest difference and agreeing digits per comparison and subset",
    "column_shapes.csv": "Column shapes: holdbench's 1 - TVD against SDMetrics' TVComplement / KSComplement",
    "pair_trends.csv": "Column pair trends: holdbench's 1 - TVD of the 2-way marginal against SDMetrics",
    "accuracy.csv": "Accuracy: holdbench's 1 - TVD against mostlyai-qa's univariate and bivariate accuracy",
    "dcr.csv": "DCR on a seeded sample of S: holdbench's shares against SDMetrics' DCROverfittingProtection",
}


def write(out: Path, tables: dict, args: argparse.Namespace, seconds: float) -> None:
    import sdmetrics

    import holdbench

    out.mkdir(parents=True, exist_ok=True)
    files = {
        "headline.csv": _fmt(tables["headline"]),
        "summary.csv": tables["summary"],
        "column_shapes.csv": _fmt(with_diff(tables["column_shapes"], "holdbench_1_minus_tvd", "sdmetrics_score")),
        "pair_trends.csv": _fmt(with_diff(tables["pair_trends"], "holdbench_1_minus_tvd", "sdmetrics_score")),
        "accuracy.csv": _fmt(with_diff(tables["accuracy"], "holdbench_1_minus_tvd_TH", "mostlyai_accuracy",
                                       "abs_diff_TH")),
        "dcr.csv": _fmt(tables["dcr"]),
    }
    for name, df in files.items():
        df.to_csv(out / name, index=False)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip() or None
    command = ("python scripts/reference/peers_concordance.py --ds " + args.ds + " --synthetic "
               + " ".join(args.synthetic) + f" --dcr-sample {args.dcr_sample} --seed {args.seed}")
    today = datetime.date.today().isoformat()
    versions = {"holdbench": holdbench.__version__, "sdmetrics": sdmetrics.__version__,
                **{k: v for k, v in tables["_mq_versions"].items()}}
    machine = f"{os.cpu_count()} cores, {_mem_gib()} GiB, no GPU, {platform.system()}"
    note = {
        "dcr.csv": f"S is a sample of {args.dcr_sample} rows drawn with pandas' sample(random_state={args.seed}); "
                   "T and H whole",
        "headline.csv": "holdbench's DCR share on all of S; mostlyai-qa's dcr_share on its own embeddings",
    }
    prov = {"study": out.name, "tables": [
        {"file": name, "title": TITLES[name], "command": command, "run_commit": commit, "machine": machine,
         "date": today, "run_date": today,
         "source": f"written by scripts/reference/peers_concordance.py on {args.ds}'s paper files "
                   f"(T = {args.ds}_trn, H = {args.ds}_val, S = " + ", ".join(f"{args.ds}_{s}" for s in args.synthetic)
                   + f") in {seconds:.0f} s; regenerate with the command",
         "versions": versions, **({"note": note[name]} if name in note else {}),
         **({"group_by": "synthetic"} if name in ("column_shapes.csv", "pair_trends.csv", "accuracy.csv") else {})}
        for name in files]}
    (out / "provenance.json").write_text(json.dumps(prov, indent=2) + "\n")


def _mem_gib() -> int:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    except (ValueError, OSError):
        return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--ds", default="adult")
    ap.add_argument("--synthetic", nargs="+", default=["synthpop", "ctgan"])
    ap.add_argument("--dcr-sample", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "published" / "concordance")
    ap.add_argument("--work", type=Path, help="keep mostlyai-qa's runs here and reuse a run of the same "
                                               "inputs and seed (default: a temporary folder)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    t, h, syn = load(args.data, args.ds, args.synthetic)
    files = {k: args.data / f"{args.ds}_{k}.csv.gz" for k in ("trn", "val", *args.synthetic)}
    with tempfile.TemporaryDirectory(prefix="hb-concordance-") as tmp:
        tables = compare(t, h, syn, files, args.dcr_sample, args.seed, args.work or Path(tmp))
    print(tables["summary"].to_string(index=False))
    print(tables["headline"].to_string(index=False))
    print(tables["dcr"].to_string(index=False))
    print("CPU seconds:", {k: round(v, 1) for k, v in tables["_timings"].items()})
    write(args.out, tables, args, time.perf_counter() - start)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

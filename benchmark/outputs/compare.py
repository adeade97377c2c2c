"""A fresh study beside a reference study: `holdbench compare FRESH REFERENCE`.

Typical use: the `paper` study (fresh split, fresh fits) beside `paper_published` (the paper's split
and synthetic files). For each dataset both studies have:

- one row per synthesizer of the fresh study, and per reference synthesizer without a fresh
  counterpart; a reference synthesizer `published_X` stands for the fresh `X` (`--pair REF=FRESH`
  adds or replaces a pairing, e.g. `published_mostly=mostly_ai`);
- every metric of the comparison (`METRICS`) on each side where that side has it, and the fresh
  cell's timings;
- the Spearman rank correlation of the F3 ratios over the synthesizers ok on both sides, the holdout
  left out (its ratio is 1 by construction on both);
- the fresh study's CPU split between generating and evaluating: per job, the harness's own record
  in the cell's status.json (`generate_cpu_seconds`, `evaluate_cpu_seconds`: user + system CPU of the
  isolated process and its descendants, from getrusage) where the cell has it, else Snakemake's
  benchmark record (`cpu_time`). Snakemake polls the process tree (every second, then every 30 s
  once a job has run 30 s) and keeps each process's last sample, so it misses up to 30 s of every
  process that runs longer: a 45 s evaluation was recorded at 41 s or at 13 s. The table says how
  many jobs each source counted. A job interrupted and rerun counts once (its last, finished attempt),
  so a resumed study does not double count.

Writes results/<fresh>/compare_<reference>.{csv,md} and returns the tables.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.layout import STATUS_JSON, StudyLayout
from holdbench.benchmark.outputs.leaderboard import aggregate
from holdbench.benchmark.outputs.results import load_results
from holdbench.contracts.io import read_json_object

#: (metric key, column label, digits): compared on both sides where the reference has the metric
METRICS = (("F1_ratio", "F1 ratio", 3), ("F2_ratio", "F2 ratio", 3), ("F3_ratio", "F3 ratio", 3),
           ("dcr_share", "DCR share", 3), ("pmse_ratio", "pMSE ratio", 3), ("mia_auc_max", "best MIA AUC", 3))
#: (timing key, label): the fresh cell's only
TIMES = (("fit_seconds", "fit s"), ("sample_seconds", "sample s"), ("evaluate_seconds", "eval s"))
#: the prefix of a reference synthesizer that stands for a fresh one (conf/synthesizer/published.yaml)
REFERENCE_PREFIX = "published_"
HOLDOUT = "holdout"
#: the Snakemake jobs (benchmark record <synth>.<job>.tsv) that generate a cell, and that evaluate it
GENERATE_JOB, EVALUATE_JOB = "generate", "evaluate"   # plus evaluate_shard<i> (sharded evaluation)


class CompareError(ValueError):
    """A study to compare is missing or has nothing in common with the other."""


@dataclass(frozen=True)
class Comparison:
    """The fresh study beside the reference."""

    rows: pd.DataFrame
    """One row per (dataset, synthesizer): `<metric>` (fresh), `<metric>_reference`, timings, statuses."""
    spearman: pd.DataFrame
    """Per dataset: `n` synthesizers ok on both sides (holdout excluded), `rho` of their F3 ratios."""
    cpu: pd.DataFrame
    """Per dataset of the fresh study: generate and evaluate CPU seconds, jobs counted, evaluate share."""


def _summary(study_dir: Path) -> pd.DataFrame:
    """The study's leaderboard summary (means over ok seeds), its cells' statuses as `status`."""
    results = load_results(study_dir)
    if results.table.empty:
        raise CompareError(f"{study_dir}: no cell has finished (run the study first)")
    return aggregate(results.table, results.specs).rename(columns={"statuses": "status"})


def _pairs(reference_names: list[str], fresh_names: set[str], extra: dict[str, str]) -> dict[str, str]:
    """reference synthesizer -> the fresh one it stands for."""
    out = {}
    for name in reference_names:
        if name in extra:
            out[name] = extra[name]
        elif name in fresh_names:
            out[name] = name
        elif name.startswith(REFERENCE_PREFIX):
            out[name] = name[len(REFERENCE_PREFIX):]
    return out


def compare(fresh_dir: str | Path, reference_dir: str | Path, pairs: dict[str, str] | None = None) -> Comparison:
    fresh_dir, reference_dir = Path(fresh_dir), Path(reference_dir)
    for d in (fresh_dir, reference_dir):
        if not (d / "study.json").is_file():
            raise CompareError(f"{d}: not a study directory (no study.json; run `holdbench run {d.name}` first)")
    fresh, ref = _summary(fresh_dir), _summary(reference_dir)
    pairs = _pairs(list(dict.fromkeys(ref["synthesizer"])), set(fresh["synthesizer"]), pairs or {})
    ref = ref.assign(synthesizer=ref["synthesizer"].map(lambda n: pairs.get(n, n)))
    datasets = [d for d in dict.fromkeys(fresh["dataset"]) if d in set(ref["dataset"])]
    if not datasets:
        raise CompareError(f"{fresh_dir.name} and {reference_dir.name} share no dataset")
    keep = ["dataset", "synthesizer", "status"] + [f"{m}_mean" for m, _, _ in METRICS if f"{m}_mean" in ref]
    merged = fresh[fresh["dataset"].isin(datasets)].merge(
        ref.loc[ref["dataset"].isin(datasets), keep], on=["dataset", "synthesizer"], how="outer",
        suffixes=("", "_reference"), sort=False)
    rows = pd.DataFrame({"dataset": merged["dataset"], "synthesizer": merged["synthesizer"],
                         "status": merged["status"], "status_reference": merged["status_reference"]})
    for m, _, _ in METRICS:
        rows[m] = merged.get(f"{m}_mean", np.nan)
        rows[f"{m}_reference"] = merged.get(f"{m}_mean_reference", np.nan)
    for t, _ in TIMES:
        rows[t] = merged.get(f"{t}_mean", np.nan)
    # the fresh study's order (datasets, then synthesizers), then the reference's synthesizers it lacks
    names = list(dict.fromkeys([*fresh["synthesizer"], *ref["synthesizer"]]))
    rows = rows.sort_values(["dataset", "synthesizer"], key=lambda col: col.map(
        {"dataset": {d: i for i, d in enumerate(datasets)}, "synthesizer": {n: j for j, n in enumerate(names)}}[col.name]),
        kind="stable").reset_index(drop=True)
    return Comparison(rows, _spearman(rows, datasets), cpu_split(fresh_dir, datasets))


def _spearman(rows: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    from scipy.stats import spearmanr

    out = []
    for d in datasets:
        r = rows[(rows["dataset"] == d) & (rows["synthesizer"] != HOLDOUT)]
        both = r[np.isfinite(r["F3_ratio"].astype(float)) & np.isfinite(r["F3_ratio_reference"].astype(float))]
        rho = float(spearmanr(both["F3_ratio"], both["F3_ratio_reference"]).statistic) if len(both) >= 3 else math.nan
        out.append({"dataset": d, "n": len(both), "rho": rho, "synthesizers": " ".join(both["synthesizer"])})
    return pd.DataFrame(out)


def _cpu_seconds(path: Path) -> float:
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return sum(float(r["cpu_time"]) for r in rows if r.get("cpu_time") not in (None, "", "NA"))


def _harness_cpu(status: dict, job: str) -> float | None:
    """The cell's own CPU record of `job` (generate or evaluate), None when it has none."""
    value = status.get(f"{job}_cpu_seconds")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def cpu_split(study_dir: Path, datasets: list[str]) -> pd.DataFrame:
    """Generate and evaluate CPU seconds per dataset: the cells' own records where they have them, else
    Snakemake's benchmark records (module docstring); `harness_jobs` / `snakemake_jobs` count each source."""
    lay = StudyLayout(study_dir)
    base = lay.root / "benchmarks"
    out = []
    for d in datasets:
        jobs: dict[tuple[str, str, str], Path | None] = {}
        for path in sorted((base / d).glob("seed*/*.tsv")):
            synth, _, job = path.name[:-len(".tsv")].rpartition(".")  # <synth>.<job>.tsv (or split.tsv)
            if synth and (job in (GENERATE_JOB, EVALUATE_JOB) or job.startswith(EVALUATE_JOB + "_shard")):
                jobs[(path.parent.name, synth, job)] = path
        for status_path in sorted((lay.root / d).glob(f"seed*/*/{STATUS_JSON}")):
            for job in (GENERATE_JOB, EVALUATE_JOB):
                jobs.setdefault((status_path.parent.parent.name, status_path.parent.name, job), None)
        row = {"dataset": d, "generate_cpu_s": 0.0, "evaluate_cpu_s": 0.0, "generate_jobs": 0, "evaluate_jobs": 0,
               "harness_jobs": 0, "snakemake_jobs": 0}
        statuses: dict[tuple[str, str], dict] = {}
        for (seed_dir, synth, job), record in sorted(jobs.items(), key=lambda kv: kv[0]):
            own = None
            if job in (GENERATE_JOB, EVALUATE_JOB):  # a shard has only Snakemake's record
                if (seed_dir, synth) not in statuses:  # one read per cell, not per job
                    statuses[(seed_dir, synth)] = read_json_object(lay.root / d / seed_dir / synth / STATUS_JSON)
                own = _harness_cpu(statuses[(seed_dir, synth)], job)
            if own is None and record is None:
                continue
            seconds = own if own is not None else _cpu_seconds(record)
            row["harness_jobs" if own is not None else "snakemake_jobs"] += 1
            kind = "generate" if job == GENERATE_JOB else "evaluate"
            row[f"{kind}_cpu_s"] += seconds
            row[f"{kind}_jobs"] += 1
        both = row["generate_cpu_s"] + row["evaluate_cpu_s"]
        row["evaluate_share"] = row["evaluate_cpu_s"] / both if both else math.nan
        out.append(row)
    df = pd.DataFrame(out)
    total = {"dataset": "all", **{k: df[k].sum() for k in ("generate_cpu_s", "evaluate_cpu_s", "generate_jobs",
                                                           "evaluate_jobs", "harness_jobs", "snakemake_jobs")}}
    both = total["generate_cpu_s"] + total["evaluate_cpu_s"]
    total["evaluate_share"] = total["evaluate_cpu_s"] / both if both else math.nan
    return pd.concat([df, pd.DataFrame([total])], ignore_index=True)


def _num(value, digits: int) -> str:
    return "–" if value is None or not np.isfinite(float(value)) else f"{float(value):.{digits}f}"


def render_markdown(c: Comparison, fresh: str, reference: str) -> str:
    lines = [f"# {fresh} beside {reference}", "",
             f"Each metric: {fresh}'s value, then {reference}'s in brackets where it has one.", ""]
    metrics = [(m, label, dg) for m, label, dg in METRICS if c.rows[m].notna().any() or c.rows[f"{m}_reference"].notna().any()]
    for d in dict.fromkeys(c.rows["dataset"]):
        lines += [f"## {d}", ""]
        head = ["synthesizer", "status"] + [label for _, label, _ in metrics] + [label for _, label in TIMES]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
        for _, r in c.rows[c.rows["dataset"] == d].iterrows():
            status = r["status"] if isinstance(r["status"], str) else "–"
            cells = [str(r["synthesizer"]), status]
            for m, _, dg in metrics:
                text = _num(r[m], dg)
                if np.isfinite(float(r[f"{m}_reference"])):
                    text += f" ({_num(r[f'{m}_reference'], dg)})"
                cells.append(text)
            cells += [_num(r[t], 1) for t, _ in TIMES]
            lines.append("| " + " | ".join(cells) + " |")
        s = c.spearman[c.spearman["dataset"] == d].iloc[0]
        lines += ["", (f"Spearman ρ of the F3 ratios ({int(s['n'])} synthesizers ok on both sides, holdout left out): "
                       f"{_num(s['rho'], 3)}"), ""]
    lines += ["## CPU: generating against evaluating (the fresh study)", "",
              "| dataset | generate CPU s | evaluate CPU s | evaluate share | jobs: harness / Snakemake record |",
              "|---|---:|---:|---:|---:|"]
    for _, r in c.cpu.iterrows():
        lines.append(f"| {r['dataset']} | {r['generate_cpu_s']:.0f} | {r['evaluate_cpu_s']:.0f} | "
                     f"{_num(r['evaluate_share'], 3)} | {int(r['harness_jobs'])} / {int(r['snakemake_jobs'])} |")
    return "\n".join(lines) + "\n"


def reference_label(reference_dir: str | Path, fresh_dir: str | Path) -> str:
    """What a comparison's outputs are named after (compare_<label>.{md,csv} in the fresh study): the
    reference study's name when it sits beside the fresh study (one results root: names are unique there),
    else its directory's name and a digest of its full path, so two references of one name (two copies of
    paper_published in other checkouts) never overwrite each other's comparison."""
    import hashlib

    ref = Path(reference_dir).resolve()
    if ref.parent == Path(fresh_dir).resolve().parent:
        return ref.name
    return f"{ref.name}-{hashlib.sha256(str(ref).encode()).hexdigest()[:8]}"


def write_comparison(c: Comparison, fresh_dir: Path, reference: str) -> dict[str, Path]:
    from holdbench.contracts.io import atomic_path

    out = {"csv": Path(fresh_dir) / f"compare_{reference}.csv", "md": Path(fresh_dir) / f"compare_{reference}.md"}
    with atomic_path(out["csv"]) as tmp:
        c.rows.merge(c.spearman[["dataset", "rho"]].rename(columns={"rho": "spearman_F3"}), on="dataset") \
            .to_csv(tmp, index=False)
    with atomic_path(out["md"]) as tmp:
        Path(tmp).write_text(render_markdown(c, Path(fresh_dir).name, reference))
    return out

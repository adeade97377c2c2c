"""The jobs Snakemake runs: `python -m benchmark.runner {split,generate,evaluate,collect,track}`.

generate and evaluate supervise an isolated child (benchmark.isolation) and ALWAYS
write their outputs, so one failed cell never stops the others and the leaderboard
shows it with its status. The supervisor imports no heavy library: it starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from benchmark.io import write_json, write_text
from benchmark.isolation import failure, run_isolated

VERSIONED = ("holdbench", "sdv", "torch", "pandas", "numpy", "scikit-learn", "snakemake", "mlflow")


def cell_dir(study_dir: Path, dataset: str, seed: int, synth: str) -> Path:
    return study_dir / dataset / f"seed{seed}" / synth


def split_dir(study_dir: Path, dataset: str, seed: int) -> Path:
    return study_dir / dataset / f"seed{seed}"


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in VERSIONED:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def git_commit() -> str | None:
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parents[1],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


def do_split(study_dir: Path, dataset: str, seed: int) -> None:
    """Write train/holdout parquet and schema.json for one (dataset, seed)."""
    from benchmark.data import dataset_schema, load_dataset
    from benchmark.io import write_parquet
    from benchmark.split import provided_split, random_split

    study = _load(study_dir / ".config" / f"split-{dataset}.json")
    schema = dataset_schema(dataset)
    if study["split"] == "provided":
        files = {k: v.format(dataset=dataset) for k, v in study["split_files"].items()}
        train, holdout = provided_split(schema, files["train"], files["holdout"])
        how = f"provided files {files['train']} / {files['holdout']}"
    else:
        train, holdout = random_split(load_dataset(dataset), seed)
        how = f"random 50/50 split, seed {seed}"
    out = split_dir(study_dir, dataset, seed)
    write_parquet(out / "train.parquet", train)
    write_parquet(out / "holdout.parquet", holdout)
    write_json(out / "schema.json", schema.to_dict())
    print(f"[holdbench] split {dataset}/seed{seed}: {how}; T {len(train):,} rows, H {len(holdout):,} rows")


def do_generate(study_dir: Path, dataset: str, seed: int, synth: str) -> None:
    """Fit and sample in an isolated child; always writes generate.json."""
    t0 = time.perf_counter()
    run = _load(study_dir / ".config" / "run.json")
    snap = _load(study_dir / ".config" / f"synth-{synth}.json")
    cfg = snap["config"]
    sdir, cdir = split_dir(study_dir, dataset, seed), cell_dir(study_dir, dataset, seed, synth)
    synthetic = cdir / "synthetic.parquet"
    synthetic.unlink(missing_ok=True)
    payload = {
        "dataset": dataset, "seed": seed, "synthesizer": synth, "config": cfg,
        "n_synthetic": snap["n_synthetic"], "schema": str(sdir / "schema.json"),
        "train": str(sdir / "train.parquet"), "holdout": str(sdir / "holdout.parquet"),
        "synthetic": str(synthetic),
    }
    result = run_isolated("generate", payload, cdir, run["timeout_seconds"], run["memory_gb"], threads=1)
    if result["status"] == "ok" and not synthetic.exists():
        result = failure("error", "generate reported ok but wrote no synthetic.parquet")
    result.update(
        stage="generate", config=cfg, versions=versions(), git_commit=git_commit(),
        job_wall_seconds=round(time.perf_counter() - t0, 3),
    )
    write_json(cdir / "generate.json", result)
    if result["status"] != "ok":
        print(f"[holdbench] {dataset}/seed{seed}/{synth}: generate {result['status']}: {result['reason']}",
              file=sys.stderr)


def do_evaluate(study_dir: Path, dataset: str, seed: int, synth: str) -> None:
    """Evaluate an ok cell in an isolated child; always writes metrics.json, marginals.csv, status.json."""
    t0 = time.perf_counter()
    run = _load(study_dir / ".config" / "run.json")
    sdir, cdir = split_dir(study_dir, dataset, seed), cell_dir(study_dir, dataset, seed, synth)
    gen = _load(cdir / "generate.json")
    metrics: dict = {}
    ev: dict = {}
    marginals = cdir / "marginals.csv"
    if gen["status"] == "ok":
        payload = {
            "schema": str(sdir / "schema.json"), "train": str(sdir / "train.parquet"),
            "holdout": str(sdir / "holdout.parquet"), "synthetic": str(cdir / "synthetic.parquet"),
            "marginals": str(marginals), "holdout_rule": gen.get("holdout_rule", False),
            "metrics": _load(study_dir / ".config" / "metrics.json"),
        }
        ev = run_isolated("evaluate", payload, cdir, run["timeout_seconds"], run["memory_gb"],
                          threads=None)
        metrics = ev.pop("metrics", {}) if ev["status"] == "ok" else {}
    # timings vary run to run: they go to status.json, so metrics.json is reproducible to the byte
    timings = {k: metrics.pop(k) for k in list(metrics) if k.startswith("seconds_")}
    if not metrics or not marginals.exists():
        write_text(marginals, "columns,k,tvd_synthetic,tvd_holdout\n")
    write_json(cdir / "metrics.json", metrics)
    # the stage that decided the cell's fate: generation if it failed, else the evaluation
    final, stage = (gen, "generate") if gen["status"] != "ok" else (ev, "evaluate")
    wall = gen.get("job_wall_seconds", 0) + (time.perf_counter() - t0)
    # the harness's own overhead: all but loading the synthesizer's library, fit, sample, evaluate
    spent = sum(x or 0 for x in (gen.get("load_seconds"), gen.get("fit_seconds"), gen.get("sample_seconds"),
                                 ev.get("evaluate_seconds")))
    status = {
        "cell_id": f"{run['name']}/{dataset}/seed{seed}/{synth}", "study": run["name"],
        "dataset": dataset, "synthesizer": synth, "seed": seed,
        "status": final["status"], "stage": None if final["status"] == "ok" else stage,
        "reason": final.get("reason", ""), "traceback_tail": final.get("traceback_tail", ""),
        "load_seconds": gen.get("load_seconds"), "fit_seconds": gen.get("fit_seconds"),
        "sample_seconds": gen.get("sample_seconds"),
        "evaluate_seconds": ev.get("evaluate_seconds"), "metric_seconds": timings, "wall_seconds": round(wall, 3),
        "overhead_seconds": round(wall - spent, 3), "peak_rss_mb": gen.get("peak_rss_mb"),
        "evaluate_peak_rss_mb": ev.get("peak_rss_mb"), "n_synthetic": gen.get("n_synthetic"),
        "holdout_rule": gen.get("holdout_rule", False), "config": gen.get("config"),
        "versions": gen.get("versions"), "git_commit": gen.get("git_commit"),
    }
    write_json(cdir / "status.json", status)
    print(summary_line(status, metrics), flush=True)


def summary_line(status: dict, metrics: dict) -> str:
    head = f"[holdbench] {status['dataset']}/seed{status['seed']}/{status['synthesizer']}: {status['status']}"
    if status["status"] != "ok":
        return f"{head} ({status['stage']}): {status['reason']}"

    def f(key: str, fmt: str = ".2f") -> str:
        v = metrics.get(key)
        return "n/a" if v is None else format(v, fmt)

    return (f"{head}  fit {status['fit_seconds']:.1f}s sample {status['sample_seconds']:.1f}s "
            f"eval {status['evaluate_seconds']:.1f}s | ratio F1/F2/F3 {f('F1_ratio')}/{f('F2_ratio')}/"
            f"{f('F3_ratio')} | dcr_share {f('dcr_share', '.3f')} "
            f"[{f('dcr_share_ci_low', '.3f')}, {f('dcr_share_ci_high', '.3f')}]")


def do_collect(study_dir: Path, n_jobs: int = 1) -> None:
    from benchmark.leaderboard import write_leaderboard
    from benchmark.plots import make_plots
    from benchmark.report import write_report

    written = write_leaderboard(study_dir)
    plots = make_plots(study_dir, n_jobs=n_jobs)
    report = write_report(study_dir)
    print(f"[holdbench] leaderboard: {written.get('csv', study_dir / 'leaderboard.csv')}; "
          f"{len(plots)} plots; report: {report}")


def do_track(study_dir: Path, uri: str, out: Path) -> int:
    """Log the study to MLflow. On failure every result stays on disk, the job fails
    loudly and writes no marker, so the next run (or `holdbench track`) retries it."""
    from benchmark.tracking import TrackingError, log_study

    try:
        info = log_study(study_dir, uri)
    except TrackingError as exc:
        print(f"[holdbench] MLflow logging FAILED: {exc}. All results are on disk under {study_dir}; "
              f"rerun the workflow or `holdbench track {study_dir.name}` when the store is back.",
              file=sys.stderr)
        print(f"[holdbench] MLflow logging FAILED: {exc}", flush=True)
        return 1
    write_json(out, {"uri": uri, **info})
    print(f"[holdbench] MLflow: logged {len(info.get('runs', {}))} cell runs of {study_dir.name} to {uri}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmark.runner")
    ap.add_argument("job", choices=["split", "generate", "evaluate", "collect", "track"])
    ap.add_argument("--study-dir", required=True, type=Path)
    ap.add_argument("--dataset")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--synthesizer")
    ap.add_argument("--uri", default=os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///results/mlflow.db"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--n-jobs", type=int, default=1, help="collect: processes drawing the plots")
    a = ap.parse_args(argv)
    if a.job == "split":
        do_split(a.study_dir, a.dataset, a.seed)
    elif a.job == "generate":
        do_generate(a.study_dir, a.dataset, a.seed, a.synthesizer)
    elif a.job == "evaluate":
        do_evaluate(a.study_dir, a.dataset, a.seed, a.synthesizer)
    elif a.job == "collect":
        do_collect(a.study_dir, a.n_jobs)
    else:
        return do_track(a.study_dir, a.uri, a.out or a.study_dir / "mlflow.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

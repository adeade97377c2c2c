"""`holdbench run|validate|track|report`: drive a study through the Snakemake workflow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmark.config import REPO_ROOT


def register(sub) -> None:
    p = sub.add_parser("run", help="run a study with Snakemake (cached, resumable)")
    p.add_argument("study", nargs="?", default="paper", help="conf/study/<name>.yaml (default: paper)")
    p.add_argument("--cores", default="all", help="Snakemake --cores (default: all)")
    p.add_argument("--no-track", action="store_true", help="do not log to MLflow")
    p.add_argument("--dry-run", "-n", action="store_true", help="show what would run")
    p.add_argument("snakemake_args", nargs="*", help="extra Snakemake arguments, after --")
    p.set_defaults(func=_run)

    p = sub.add_parser("validate", help="check a study config and list its cells; runs nothing")
    p.add_argument("study")
    p.set_defaults(func=_validate)

    p = sub.add_parser("track", help="(re)log a finished study to MLflow; idempotent")
    p.add_argument("study")
    p.add_argument("--uri", default=os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///results/mlflow.db"))
    p.set_defaults(func=_track)

    p = sub.add_parser("report", help="rebuild leaderboard, plots and report.html of a study")
    p.add_argument("study")
    p.set_defaults(func=_report)


def _study_dir(name: str) -> Path:
    from benchmark.config import check_name
    from benchmark.workflow import results_root

    d = results_root({}) / check_name("study", name)
    if not (d / "study.json").exists():
        raise FileNotFoundError(f"{d}: no results of study {name!r} yet (run `holdbench run {name}`)")
    return d


def _run(args) -> int:
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO_ROOT / "Snakefile"),
           "--directory", os.getcwd(), "--cores", str(args.cores), "--config", f"study={args.study}"]
    if args.no_track:
        cmd.append("track=False")
    if args.dry_run:
        cmd.append("--dry-run")
    cmd += args.snakemake_args
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.call(cmd)


def _validate(args) -> int:
    from benchmark.study import load_study

    study = load_study(args.study)
    cells = study.cells()
    print(f"study {study.name!r}: {len(study.datasets)} dataset(s) x {len(study.synthesizers)} "
          f"synthesizer(s) x {len(study.seeds)} seed(s) = {len(cells)} cells, "
          f"{study.n_synthetic:,} records each, split {study.split}")
    for c in cells:
        print(f"  {c.cell_id}")
    return 0


def _track(args) -> int:
    from benchmark.runner import do_track

    d = _study_dir(args.study)
    return do_track(d, args.uri, d / "mlflow.json")


def _report(args) -> int:
    from benchmark.runner import do_collect

    do_collect(_study_dir(args.study))
    return 0

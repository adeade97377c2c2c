"""The cost of holdbench's report against mostlyai-qa's report on the same three files, in one run.

Each tool runs in its own child process, one after the other, both on one thread (OMP/BLAS threads 1,
holdbench `--n-jobs 1`, mostlyai-qa under joblib `n_jobs=1`), from reading the CSV files to writing its
HTML report:

  holdbench    `holdbench report --train T --holdout H --synthetic S --out DIR --n-jobs 1` (its console script)
  mostlyai-qa  its plug-in worker (metrics/plugins/mostlyai_qa/worker.py) in .venv-mostlyai_qa:
               `qa.report(syn_tgt_data=S, trn_tgt_data=T, hol_tgt_data=H)` with its defaults (all rows)

For each: CPU seconds (user + sys of the child and of whatever it started and waited for, from
wait4's rusage), wall seconds, peak RSS (the largest resident set of the child or a descendant), and
the ratio of holdbench's CPU to mostlyai-qa's (the target of issue 33: at most 1/5). With
`--million`, holdbench's report once more on a 1,000,000-row S drawn with replacement from S
(numpy default_rng(seed)), for its peak memory.

Before the timed runs, each tool makes one untimed report on the first 500 rows of the same three files:
numba compiles holdbench's kernels (and anonymeter's) into its on-disk cache on the first use after an
install, about 13 CPU s more on the first report, which every later run loads instead; the warm-up's
CPU is printed.

Default files: adult's paper files (T = adult_trn, H = adult_val, S = the published synthpop file).
`--publish` writes results/published/performance/report_cost.csv and its entry in that folder's
provenance.json (replacing an earlier entry of the same file).

Usage: nice python scripts/bench/report_vs_mostlyai_qa.py [--data DIR] [--ds adult] [--synthetic synthpop]
       [--million] [--seed 0] [--publish] [--profile FILE]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = Path(os.environ.get("HOLDBENCH_SHARED_DIR", ROOT.parent / "shared")) / "datasets" / "paper_study"
PUBLISHED = ROOT / "results" / "published" / "performance"
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
                                "POLARS_MAX_THREADS")}
TARGET_RATIO = 0.2


def measure(cmd: list[str], env: dict, cwd: Path, log: Path) -> dict:
    """Run cmd to its end; CPU (user+sys, with waited-for descendants), wall, peak RSS, exit code."""
    start = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    return {"cpu_seconds": usage.ru_utime + usage.ru_stime, "wall_seconds": wall,
            "peak_rss_mib": usage.ru_maxrss / 1024, "exit_code": proc.returncode}


def holdbench_report(files: dict[str, Path], out: Path, env: dict, profile: Path | None) -> dict:
    # the console script beside this interpreter (a Python file cProfile can run too; `which` may find a
    # version manager's shell shim first)
    beside = Path(sys.executable).parent / "holdbench"
    script = str(beside) if beside.is_file() else shutil.which("holdbench")
    if script is None:
        raise SystemExit("report_vs_mostlyai_qa: no `holdbench` command on PATH (pip install -e .)")
    cli = [script, "report", "--train", str(files["train"]), "--holdout",
           str(files["holdout"]), "--synthetic", str(files["synthetic"]), "--out", str(out / "report"),
           "--n-jobs", "1"]
    pre = ["-m", "cProfile", "-o", str(profile)] if profile else []
    r = measure([sys.executable, *pre, *cli], env, out, out / "holdbench.log")
    if r["exit_code"] not in (0, 1):  # 1 = a gate failed: the report is written all the same
        raise SystemExit(f"holdbench report exited {r['exit_code']}:\n{(out / 'holdbench.log').read_text()[-3000:]}")
    if not (out / "report" / "report.html").is_file():
        raise SystemExit(f"holdbench report wrote no report.html; see {out / 'holdbench.log'}")
    r["parts"] = parts(out / "report" / "report.json")
    return r


def warm_up(files: dict[str, Path], out: Path, env: dict, seed: int, rows: int = 500) -> dict[str, float]:
    """Each tool's report on the first `rows` rows of each file, so that the timed runs find numba's on-disk
    cache filled (module doc); returns each tool's CPU seconds."""
    out.mkdir(parents=True)
    small = {}
    for role, path in files.items():
        small[role] = out / path.name
        pd.read_csv(path, nrows=rows).to_csv(small[role], index=False)
    (out / "holdbench").mkdir()
    hb = holdbench_report(small, out / "holdbench", env, None)
    mq = mostlyai_report(small, out / "mostlyai_qa", env, seed)
    return {"holdbench": hb["cpu_seconds"], "mostlyai-qa": mq["cpu_seconds"]}


def parts(report_json: Path) -> dict[str, float]:
    """The seconds report.json records per part (each metric family's seconds_* of each S, and the CPU of
    the report's own process), to say where the time goes."""
    doc = json.loads(report_json.read_text())
    out = {"report process cpu_seconds": float(doc.get("cpu_seconds", float("nan")))}
    for name, s in (doc.get("synthetic") or {}).items():
        for key, value in (s.get("metrics") or {}).items():
            if key.startswith("seconds_") and isinstance(value, (int, float)):
                out[f"{name}: {key}"] = float(value)
    return out


def mostlyai_report(files: dict[str, Path], out: Path, env: dict, seed: int) -> dict:
    from holdbench.contracts import plugin_env

    plugin = plugin_env.get("mostlyai_qa")
    why = plugin.unavailable()
    if why:
        raise SystemExit(f"report_vs_mostlyai_qa: {why}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps({"seed": seed, "n_jobs": 1, "report": str(out / "report.html"),
                                                 "files": {k: str(v) for k, v in files.items()}}))
    clean = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    r = measure([str(plugin.python()), "-I", str(plugin.worker), str(out)], clean, out, out / "worker.log")
    if r["exit_code"] != 0:
        raise SystemExit(f"mostlyai-qa worker exited {r['exit_code']}:\n{(out / 'worker.log').read_text()[-3000:]}")
    result = json.loads((out / "result.json").read_text())
    r["version"] = result["versions"]["mostlyai-qa"]
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--ds", default="adult")
    ap.add_argument("--synthetic", default="synthpop")
    ap.add_argument("--million", action="store_true", help="also holdbench's report on a 1,000,000-row S")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--publish", action="store_true", help="write results/published/performance/report_cost.csv")
    ap.add_argument("--profile", type=Path, help="cProfile holdbench's report into this file (its CPU then "
                                                  "includes the profiler's overhead)")
    args = ap.parse_args(argv)
    files = {"train": args.data / f"{args.ds}_trn.csv.gz", "holdout": args.data / f"{args.ds}_val.csv.gz",
             "synthetic": args.data / f"{args.ds}_{args.synthetic}.csv.gz"}
    for role, path in files.items():
        if not path.is_file():
            raise SystemExit(f"report_vs_mostlyai_qa: {role} file {path} does not exist (--data, --ds, --synthetic)")
    env = {**os.environ, **ONE_THREAD, "PYTHONHASHSEED": "0"}
    rows = []
    n_s = len(pd.read_csv(files["synthetic"], usecols=[0]))
    with tempfile.TemporaryDirectory(prefix="hb-report-cost-") as tmp:
        tmp = Path(tmp)
        warm = warm_up(files, tmp / "warm-up", env, args.seed)
        print(f"warm-up on 500 rows of each file (untimed; numba's cache filled where cold): holdbench "
              f"{warm['holdbench']:.1f} CPU s, mostlyai-qa {warm['mostlyai-qa']:.1f} CPU s", flush=True)
        print(f"holdbench report on {args.ds}: T, H, S = {args.synthetic} ({n_s} rows) ...", flush=True)
        (tmp / "holdbench").mkdir()
        hb = holdbench_report(files, tmp / "holdbench", env, args.profile)
        breakdown = hb.pop("parts")
        rows.append({"tool": "holdbench report", "rows_of_S": n_s, **hb})
        print(f"  {hb}", flush=True)
        print("  where holdbench's time goes (report.json; wall seconds unless named cpu):", flush=True)
        for key, value in sorted(breakdown.items(), key=lambda kv: -kv[1]):
            print(f"    {key:60s} {value:9.2f}", flush=True)
        print("mostlyai-qa report (plug-in environment) ...", flush=True)
        mq = mostlyai_report(files, tmp / "mostlyai_qa", env, args.seed)
        rows.append({"tool": f"mostlyai-qa {mq.pop('version')} report", "rows_of_S": n_s, **mq})
        print(f"  {mq}", flush=True)
        if args.million:
            big = tmp / "synthetic_1m.parquet"
            s = pd.read_csv(files["synthetic"])
            idx = np.random.default_rng(args.seed).integers(0, len(s), 1_000_000)
            s.iloc[idx].reset_index(drop=True).to_parquet(big)
            print("holdbench report with a 1,000,000-row S ...", flush=True)
            (tmp / "holdbench_1m").mkdir()
            m = holdbench_report({**files, "synthetic": big}, tmp / "holdbench_1m", env, None)
            m.pop("parts")
            rows.append({"tool": "holdbench report", "rows_of_S": 1_000_000, **m})
            print(f"  {m}", flush=True)
    ratio = rows[0]["cpu_seconds"] / rows[1]["cpu_seconds"]
    for r in rows:
        r["cpu_ratio_to_mostlyai_qa"] = r["cpu_seconds"] / rows[1]["cpu_seconds"]
    table = pd.DataFrame(rows)[["tool", "rows_of_S", "cpu_seconds", "wall_seconds", "peak_rss_mib",
                                "cpu_ratio_to_mostlyai_qa"]]
    print(table.to_string(index=False))
    verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
    print(f"holdbench / mostlyai-qa CPU = {ratio:.3f}: {verdict} the target of at most {TARGET_RATIO}")
    if args.publish:
        publish(table, args)
    return 0


def publish(table: pd.DataFrame, args: argparse.Namespace) -> None:
    import holdbench

    out = table.copy()
    for c, d in (("cpu_seconds", 1), ("wall_seconds", 1), ("peak_rss_mib", 0), ("cpu_ratio_to_mostlyai_qa", 3)):
        out[c] = out[c].map(lambda v, d=d: f"{v:.{d}f}")
    out.to_csv(PUBLISHED / "report_cost.csv", index=False)
    prov_path = PUBLISHED / "provenance.json"
    prov = json.loads(prov_path.read_text())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=False).stdout.strip() or None
    today = datetime.date.today().isoformat()
    mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30)
    entry = {
        "file": "report_cost.csv",
        "title": "holdbench's report against mostlyai-qa's report on the same files",
        "command": "python scripts/bench/report_vs_mostlyai_qa.py --ds " + args.ds + " --synthetic " + args.synthetic
                   + (" --million" if args.million else "") + " --publish",
        "run_commit": commit, "run_date": today,
        "machine": f"{os.cpu_count()} cores, {mem} GiB, no GPU, {platform.system()}",
        "date": today,
        "source": f"written by scripts/bench/report_vs_mostlyai_qa.py (T = {args.ds}_trn, H = {args.ds}_val, "
                  f"S = {args.ds}_{args.synthetic}); holdbench {holdbench.__version__}",
        "note": "each tool in its own process from reading the CSV files to writing its HTML report, one thread "
                "each, one after the other on a 2-core machine shared with other jobs; CPU is user + sys of the "
                "process and its waited-for children, peak RSS the largest resident set; holdbench's report "
                "with every family of the default metrics config (anonymeter's CPU in its plug-in worker counted)",
    }
    prov["tables"] = [t for t in prov["tables"] if t.get("file") != "report_cost.csv"] + [entry]
    prov_path.write_text(json.dumps(prov, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {PUBLISHED / 'report_cost.csv'} and its provenance entry")


if __name__ == "__main__":
    sys.exit(main())

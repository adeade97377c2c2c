"""The audit study's committed tables (results/published/audit/), beside the leaderboard export.

    python scripts/bench/audit_tables.py results/audit results/published/audit [--fit-times LOG ...]

Writes
- `epsilon.csv`: per cell, the configured ε (what the cell recorded; empty for a generator without ε),
  the audited ε lower bound, the excess, the per-target attack's largest and mean AUC, and the
  population MIA panel's best AUC;
- `targets.csv`: per cell and target, its rank, vulnerability score, AUC, TPR at low FPR, ε bound and
  the counts at the threshold (the cell's audit_targets.csv without the masked values);
- `fit_times.csv` (with --fit-times): the lines scripts/bench/audit_fit_times.py printed, parsed;
and adds their entries to provenance.json (run `docs/gen/export_results.py` first: it writes the
leaderboard and the provenance file these join).
"""

from __future__ import annotations

import argparse
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from holdbench.benchmark.outputs.results import load_results

_LINE = re.compile(r"^(?P<dataset>\S+) (?P<synthesizer>\S+)\s+rows (?P<rows>\d+) cols (?P<cols>\d+): fit\+sample "
                   r"median (?P<median>[\d.]+) s, max (?P<max>[\d.]+) s over (?P<repeats>\d+)$")


def _fmt(v, digits: int = 3) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(f) else f"{f:.{digits}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study_dir", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--fit-times", nargs="*", type=Path, default=[])
    ap.add_argument("--fit-times-command", default="python scripts/bench/audit_fit_times.py --dataset adult")
    a = ap.parse_args()
    res = load_results(a.study_dir)
    eps_rows, target_rows = [], []
    for cell in res.cells:
        m = cell.metrics
        if cell.status.get("status") != "ok" or m.get("audit_epsilon_lower") is None and not m.get("audit_na_reason"):
            continue
        conf = m.get("audit_epsilon_configured")
        eps_rows.append({"dataset": cell.dataset, "synthesizer": cell.synthesizer,
                         "configured ε": "" if conf is None else f"{conf:g}",
                         "audited ε (lower bound)": _fmt(m.get("audit_epsilon_lower"), 2),
                         "excess": _fmt(m.get("audit_epsilon_excess"), 2),
                         "audit AUC max": _fmt(m.get("audit_auc_max")), "audit AUC mean": _fmt(m.get("audit_auc_mean")),
                         "population MIA AUC max": _fmt(m.get("mia_auc_max")),
                         "test fits": m.get("audit_n_fits_test") or "", "audit n/a": m.get("audit_na_reason") or ""})
        path = cell.path / "audit_targets.csv"
        if path.is_file():
            t = pd.read_csv(path)
            for _, r in t.iterrows():
                target_rows.append({"dataset": cell.dataset, "synthesizer": cell.synthesizer, "rank": int(r["rank"]),
                                    "vulnerability": _fmt(r["vulnerability"], 2), "AUC": _fmt(r["auc"]),
                                    "TPR at low FPR": _fmt(r["tpr_at_low_fpr"]),
                                    "ε bound": _fmt(r["epsilon_lower"], 2),
                                    "TP/members": f"{int(r['tp'])}/{int(r['tp'] + r['fn'])}",
                                    "FP/non-members": f"{int(r['fp'])}/{int(r['fp'] + r['tn'])}"})
    a.out_dir.mkdir(parents=True, exist_ok=True)
    prov_path = a.out_dir / "provenance.json"
    doc = json.loads(prov_path.read_text())
    base = next(t for t in doc["tables"] if t["file"] == "leaderboard.csv")
    tables = [t for t in doc["tables"] if t["file"] not in ("epsilon.csv", "targets.csv", "fit_times.csv")]
    command = f"python scripts/bench/audit_tables.py {a.study_dir} {a.out_dir}"
    source = (f"from the audit study's cells (metrics.json, audit_targets.csv) by scripts/bench/audit_tables.py; "
              f"regenerate with `holdbench run audit` + `python docs/gen/export_results.py` + `{command}`")
    common = {k: base.get(k) for k in ("run_commit", "run_date", "machine", "date", "group_by")}
    pd.DataFrame(eps_rows).to_csv(a.out_dir / "epsilon.csv", index=False)
    tables.append({"file": "epsilon.csv", "title": "Audited against configured ε, beside the population panel",
                   "command": f"holdbench run audit; {command}", "source": source, **common})
    pd.DataFrame(target_rows).to_csv(a.out_dir / "targets.csv", index=False)
    tables.append({"file": "targets.csv", "title": "Per target: the shadow-model attack on each vulnerable record",
                   "command": f"holdbench run audit; {command}", "source": source, **common})
    if a.fit_times:
        rows = [m.groupdict() for p in a.fit_times for line in p.read_text().splitlines()
                if (m := _LINE.match(line.strip()))]
        if not rows:
            raise SystemExit(f"no audit_fit_times.py lines in {[str(p) for p in a.fit_times]}")
        when = datetime.fromtimestamp(max(p.stat().st_mtime for p in a.fit_times), timezone.utc).strftime("%Y-%m-%d")
        pd.DataFrame(rows).rename(columns={"median": "median s (fit+sample)", "max": "max s"}).to_csv(
            a.out_dir / "fit_times.csv", index=False)
        tables.append({"file": "fit_times.csv", "title": "One shadow fit per generator on the audit's domain",
                       "command": a.fit_times_command, "run_commit": base.get("run_commit"), "machine": base["machine"],
                       "date": when, "source": "the lines scripts/bench/audit_fit_times.py printed, parsed by "
                       "scripts/bench/audit_tables.py --fit-times; regenerate with the command"})
    doc["tables"] = tables
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"{a.out_dir}: epsilon.csv ({len(eps_rows)} cells), targets.csv ({len(target_rows)} rows)"
          + (", fit_times.csv" if a.fit_times else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The DP rows of a frontier study run, by generator and ε, with the harness's intervals over seeds.

    python scripts/bench/frontier_dp_table.py STUDY_DIR OUT_DIR [--command TEXT] [--merge] [--references]

Reads every DP cell of STUDY_DIR (whichever run wrote it: a run with --synthesizers rewrites the study's own
summary with its cells only) and aggregates them with holdbench's leaderboard.aggregate (the mean over the
ok seeds and its 95% t interval with three or more seeds), then writes OUT_DIR/dp_epsilon.csv, one row
per dataset x DP generator x ε that ran: seeds ok, F3 ratio, best MIA AUC and DCR share (mean [low, high]),
the ε spent on the domain and on the fit (from each cell's generate.json), fit seconds, and the reason a
seed failed. Adds or replaces
its entry in OUT_DIR/provenance.json, keeping every other table's. With --merge, the committed rows of
OUT_DIR/dp_epsilon.csv whose dataset x generator x ε this run does not hold are kept (a run of one
dataset's cells adds to the other's), and the entry lists the commands of both runs.

With --references, the same for every other cell of the run (cart, synthpop, gaussian_copula, the forest
generators, the flips, the holdout): OUT_DIR/references.csv, one row per dataset x synthesizer, in the order
of conf/study/frontier.yaml's line-up, so that the DP rows can be read against references measured over
the same seeds.
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import math
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from holdbench.benchmark.outputs.leaderboard import aggregate
from holdbench.benchmark.outputs.results import cells_table, load_results, read_cell

FILE, REFERENCES = "dp_epsilon.csv", "references.csv"
STUDY_CONFIG = Path(__file__).resolve().parents[2] / "conf" / "study" / "frontier.yaml"
DP = re.compile(r"^(?P<gen>mst|aim|privbayes)_eps(?P<eps>[\d.]+)$")
METRICS = (("F3 ratio", "F3_ratio", 3), ("best MIA AUC", "mia_auc_max", 3), ("DCR share", "dcr_share", 3))


def _fmt(v, digits: int) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.{digits}f}"


def _reason(study_dir: Path, dataset: str, synth: str) -> str:
    """The first failed cell's reason, up to its first ';' (what a row with failed seeds shows)."""
    for path in sorted(study_dir.glob(f"{dataset}/seed*/{synth}/status.json")):
        st = json.loads(path.read_text())
        if st.get("status") != "ok" and st.get("reason"):
            return str(st["reason"]).split(";")[0].replace("\n", " ")[:300]
    return ""


@functools.cache
def _line_up() -> tuple[str, ...]:
    """The study config's synthesizer order, read once (every reference row's sort key asks for it)."""
    import yaml

    return tuple(str(s) for s in yaml.safe_load(STUDY_CONFIG.read_text())["synthesizers"])


def table(summary: pd.DataFrame, study_dir: Path, references: bool = False) -> list[dict]:
    """dp_epsilon.csv's rows (the DP cells), or with references references.csv's (every other cell)."""
    rows = []
    for _, r in summary.iterrows():
        m = DP.match(str(r["synthesizer"]))
        if bool(m) == references:
            continue
        row = ({"dataset": r["dataset"], "synthesizer": r["synthesizer"]} if references else
               {"dataset": r["dataset"], "generator": m["gen"], "ε": _fmt(r.get("setting_epsilon"), 1)})
        row.update({"seeds ok": f"{int(r['n_ok'])}/{int(r['n_seeds'])}",
                    "interval": r["interval"] if isinstance(r.get("interval"), str) else ""})
        for label, name, digits in METRICS:
            row[label] = _fmt(r.get(f"{name}_mean"), digits)
            low, high = _fmt(r.get(f"{name}_ci_low"), digits), _fmt(r.get(f"{name}_ci_high"), digits)
            row[f"{label} 95%"] = f"[{low}, {high}]" if low and high else ""
        if not references:
            row["ε domain"] = _fmt(r.get("setting_spent_epsilon_domain"), 3)
            row["ε fit"] = _fmt(r.get("setting_spent_epsilon_fit"), 3)
        row["fit s"] = _fmt(r.get("fit_seconds_mean"), 0)
        row["failed seeds"] = _reason(study_dir, r["dataset"], r["synthesizer"]) if r["n_ok"] < r["n_seeds"] else ""
        rows.append(row)
    return sorted(rows, key=_order)


def _key(row: dict) -> tuple:
    if "synthesizer" in row:
        return row["dataset"], row["synthesizer"]
    return row["dataset"], row["generator"], float(row["ε"] or 0)


def _order(row: dict) -> tuple:
    if "synthesizer" in row:  # a reference row: the study's line-up order, then any other name
        line_up = _line_up()
        name = row["synthesizer"]
        return row["dataset"], line_up.index(name) if name in line_up else len(line_up), name
    return row["dataset"], {"mst": 0, "aim": 1, "privbayes": 2}[row["generator"]], float(row["ε"] or 0)


def merged(rows: list[dict], path: Path) -> tuple[list[dict], list[dict]]:
    """(all rows in table order, the committed rows kept): this run's rows plus the rows of the committed
    table at `path` whose dataset x generator x ε (references: dataset x synthesizer) this run does not hold."""
    if not path.is_file():
        raise SystemExit(f"--merge: {path} does not exist (nothing to merge with)")
    with path.open(newline="") as fh:
        old = list(csv.DictReader(fh))
    if old and list(old[0]) != list(rows[0]):
        raise SystemExit(f"--merge: {path} has columns {list(old[0])}, this run {list(rows[0])}; "
                         "regenerate the whole table instead")
    ran = {_key(r) for r in rows}
    kept = [r for r in old if _key(r) not in ran]
    return sorted(kept + rows, key=_order), kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study_dir", type=Path)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--command", default=None, help="the command that ran the cells")
    ap.add_argument("--machine", default="2 cores shared by several jobs, no GPU")
    ap.add_argument("--merge", action="store_true",
                    help="keep the committed rows of dataset x generator x ε this run does not hold")
    ap.add_argument("--references", action="store_true",
                    help=f"tabulate the run's other cells (not DP) into {REFERENCES} instead")
    a = ap.parse_args(argv)
    file, kind = (REFERENCES, "non-DP") if a.references else (FILE, "DP")
    ours = (lambda name: not DP.match(name)) if a.references else (lambda name: bool(DP.match(name)))
    results = load_results(a.study_dir)
    cells = [read_cell(results.name, p.parent.parent.name, int(p.parent.name[4:]), p)
             for p in sorted(a.study_dir.glob("*/seed*/*")) if p.is_dir() and ours(p.name)]
    if not cells:
        raise SystemExit(f"{a.study_dir}: no {kind} cells" + ("" if a.references else " (mst/aim/privbayes_eps*)"))
    summary = aggregate(cells_table(cells), results.specs)
    rows = table(summary, a.study_dir, a.references)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    prov_path = a.out_dir / "provenance.json"
    doc = json.loads(prov_path.read_text()) if prov_path.is_file() else {"study": a.out_dir.name, "tables": []}
    old_entry = next((t for t in doc["tables"] if t.get("file") == file), None)
    kept: list[dict] = []
    if a.merge:
        if old_entry is None:
            raise SystemExit(f"--merge: {prov_path} has no entry for {file} (nothing to merge with)")
        rows, kept = merged(rows, a.out_dir / file)
    with (a.out_dir / file).open("w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    run = (f"`{a.command or 'holdbench run frontier'}`")
    source = f"holdbench's aggregate over seeds (leaderboard.aggregate) of the {kind} cells run by {run}"
    commits = []
    if kept:  # the committed rows keep their runs' commands, commits and dates
        source = f"{old_entry['source']}; and by {run}"
        commits = [c for c in str(old_entry.get("run_commit") or "").split(", ") if c]
    statuses = [json.loads(p.read_text()) for p in a.study_dir.glob("*/seed*/*/status.json")
                if ours(p.parent.name)]
    commits = list(dict.fromkeys(commits + sorted({str(s.get("git_commit"))[:7] for s in statuses
                                                   if s.get("git_commit")})))
    written = max(p.stat().st_mtime for p in a.study_dir.glob("*/seed*/*/status.json") if ours(p.parent.name))
    day = datetime.fromtimestamp(written, timezone.utc).strftime("%Y-%m-%d")
    if kept:  # the latest of the runs, as export_results.py --merge dates a merged table
        day = max(str(old_entry.get("run_date") or ""), day)
    title = ("The references beside them: means and 95% t intervals over the same seeds" if a.references
             else "DP generators by ε: means and 95% t intervals over the seeds")
    entry = {"file": file, "title": title,
             "command": f"python scripts/bench/frontier_dp_table.py {a.study_dir} {a.out_dir}"
                        + (" --merge" if a.merge else "") + (" --references" if a.references else ""),
             "run_commit": ", ".join(commits) or None, "run_date": day, "machine": a.machine,
             "date": day, "source": source, "group_by": "dataset"}
    doc["tables"] = [t for t in doc["tables"] if t.get("file") != file] + [entry]
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"{a.out_dir / file}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())

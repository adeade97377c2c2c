"""The frontier generators' fit and sample time and peak memory, from the frontier study's committed cells.

    python scripts/docs/fit_time_table.py [--frontier results/published/frontier] [--out results/published/performance]

Reads the committed frontier leaderboard (one row per cell, written by docs/gen/export_results.py) and writes
OUT/fit_time.csv: one row per dataset x generator of the study except the holdout and the flips (they fit
nothing worth timing), in the leaderboard's order, with the number of ok seeds, the median over those seeds
of the fit and the sample seconds (one decimal) and the largest peak memory of their generate jobs (MB). Its
entry in OUT/provenance.json names the frontier run it comes from (its commits, date and machine) and
replaces an earlier entry of the same file. Nothing is measured here: the table is a view of the cells.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FILE = "fit_time.csv"
SKIP = re.compile(r"^(holdout|flip\d+)$")
COLUMNS = ("generator", "dataset", "seeds ok", "fit s", "sample s", "peak MB")


def rows(board: list[dict]) -> list[dict]:
    """fit_time.csv's rows from the frontier leaderboard's (ok cells only)."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in board:
        if SKIP.match(r["synthesizer"]) or r["status"] != "ok":
            continue
        groups.setdefault((r["dataset"], r["synthesizer"]), []).append(r)
    out = []
    for (dataset, synth), cells in groups.items():
        missing = [c["seed"] for c in cells if not (c["fit s"] and c["sample s"] and c["peak MB"])]
        if missing:
            raise SystemExit(f"{dataset}/{synth}: seed(s) {missing} have no fit s, sample s or peak MB")
        out.append({"generator": synth, "dataset": dataset, "seeds ok": len(cells),
                    "fit s": f"{statistics.median(float(c['fit s']) for c in cells):.1f}",
                    "sample s": f"{statistics.median(float(c['sample s']) for c in cells):.1f}",
                    "peak MB": max(int(float(c["peak MB"])) for c in cells)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frontier", type=Path, default=REPO / "results" / "published" / "frontier")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "published" / "performance")
    a = ap.parse_args(argv)
    board_path = a.frontier / "leaderboard.csv"
    if not board_path.is_file():
        raise SystemExit(f"{board_path}: no frontier leaderboard (export it with docs/gen/export_results.py)")
    with board_path.open(newline="") as fh:
        board = list(csv.DictReader(fh))
    needed = {"dataset", "synthesizer", "seed", "status", "fit s", "sample s", "peak MB"}
    if not board or needed - set(board[0]):
        raise SystemExit(f"{board_path}: needs the columns {sorted(needed)} (one row per cell)")
    table = rows(board)
    if not table:
        raise SystemExit(f"{board_path}: no ok cell of a generator to time")
    frontier = next(t for t in json.loads((a.frontier / "provenance.json").read_text())["tables"]
                    if t["file"] == "leaderboard.csv")
    with (a.out / FILE).open("w", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    entry = {"file": FILE, "title": "Fit and sample time and peak memory of the frontier study's generators",
             "command": "python scripts/docs/fit_time_table.py",
             "run_commit": frontier.get("run_commit"), "run_date": frontier.get("run_date"),
             "machine": frontier.get("machine"), "date": frontier.get("date"),
             "source": f"the ok cells of results/published/frontier/leaderboard.csv ({frontier['command']})",
             "note": "medians over the ok seeds of each cell's fit and sample wall seconds, two cells at a time on "
                     "2 shared cores (upper bounds); the largest peak RSS of their generate jobs; n = 10,000 sampled"}
    prov = a.out / "provenance.json"
    doc = json.loads(prov.read_text())
    tables = doc["tables"]
    at = next((i for i, t in enumerate(tables) if t.get("file") == FILE), len(tables))
    doc["tables"] = tables[:at] + [entry] + tables[at + 1:]
    prov.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"{a.out / FILE}: {len(table)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())

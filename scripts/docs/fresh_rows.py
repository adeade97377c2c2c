"""A study's rows run after its committed run, beside the committed table (and, for the paper, the Spearman ρ with them).

results/published/<study>/leaderboard.csv may hold a run in which some synthesizers were `skipped` (R's
synthpop was not installed there). When those cells are run later on the same study (its split and seed,
e.g. `holdbench run paper --synthesizers synthpop`), this script writes them into the committed results
without touching that run's table:

- `fresh_rows.csv`: one row per (dataset, synthesizer) of STUDY_DIR's cells, in leaderboard.csv's columns:
  the fresh values from the cells (means over ok seeds, as `holdbench compare` takes them; a metric under
  its registry or comparison label, digits as there; `ε` the cell's recorded epsilon), and a column
  `<label>, published` copied from leaderboard.csv's row of the same dataset and synthesizer;
- where leaderboard.csv has published F3 ratios (the paper study), `spearman.csv`: per dataset, the
  Spearman ρ of the fresh F3 ratios against the published ones over the synthesizers that have both (the
  holdout left out; `holdbench.benchmark.outputs.compare`'s rule), with the fresh rows in place of the
  leaderboard's skipped ones, beside the ρ of leaderboard.csv alone;
- their entries in provenance.json (the fresh cells' commit, date, machine and versions), after
  leaderboard.csv's. A full export of the study (docs/gen/export_results.py) replaces both: their
  commands start with `holdbench run <study>` / `holdbench compare <study>`.

    python scripts/docs/fresh_rows.py results/paper results/published/paper

A synthesizer whose leaderboard row is not `skipped` (it ran in the committed run) is refused: the two
runs' values of one cell would disagree on the page. So is a cell that is not ok, a dataset or
synthesizer leaderboard.csv does not have, and a column this cannot fill.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from holdbench.benchmark.outputs.compare import METRICS, TIMES, _spearman
from holdbench.benchmark.outputs.leaderboard import _MD_TIMINGS, _fmt, aggregate, provenance
from holdbench.benchmark.outputs.results import SETTING_PREFIX, load_results

PUBLISHED_SUFFIX = ", published"
FRESH_FILE, SPEARMAN_FILE, BOARD_FILE = "fresh_rows.csv", "spearman.csv", "leaderboard.csv"
SPEARMAN_COLUMNS = ("dataset", "synthesizers ok on both sides", "Spearman rho of F3 ratio",
                    "Spearman rho of F3 ratio, without the fresh rows")
F3 = "F3 ratio"
EPSILON = "ε"


def _csv_text(header: list[str], rows: list[list[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def fresh_rows(study_dir: Path, board: pd.DataFrame) -> tuple[list[list[str]], object]:
    """(rows in leaderboard.csv's columns, the study's results) of every cell of study_dir."""
    results = load_results(study_dir)
    if results.table.empty:
        raise ValueError(f"{study_dir}: no cell has finished")
    summary = aggregate(results.table, results.specs)
    fresh_of = {sp.label: (sp.name, sp.digits) for sp in results.specs if sp.headline}
    fresh_of.update({label: (key, digits) for label, key, digits in _MD_TIMINGS})
    fresh_of.update({label: (key, digits) for key, label, digits in METRICS})
    fresh_of.update({label: (key, 1) for key, label in TIMES})
    columns = list(board.columns)
    for col in columns[3:]:
        if not col.endswith(PUBLISHED_SUFFIX) and col not in fresh_of and col != EPSILON:
            raise ValueError(f"leaderboard.csv: column {col!r} is neither a metric nor a timing of the cells")
    counted = board["status"].dropna().str.match(r"^\d+ ").all()
    rows = []
    for _, s in summary.iterrows():
        where = f"{study_dir}: {s['dataset']}/{s['synthesizer']}"
        if s["n_ok"] != s["n_seeds"]:
            raise ValueError(f"{where}: {s['statuses']} (only finished, ok cells are published)")
        mine = board[(board["dataset"] == s["dataset"]) & (board["synthesizer"] == s["synthesizer"])]
        if len(mine) != 1:
            raise ValueError(f"{where}: leaderboard.csv has {len(mine)} rows for it (one expected)")
        old = mine.iloc[0]
        if not str(old["status"]).endswith("skipped"):
            raise ValueError(f"{where}: leaderboard.csv's row is {old['status']!r}, not skipped; "
                             "its run has this cell already")
        # a one-seed cell as leaderboard.csv writes it; over seeds, their count ("3 ok": the values are means)
        row = [str(s["dataset"]), str(s["synthesizer"]),
               str(s["statuses"]) if counted or s["n_seeds"] != 1 else "ok"]
        for col in columns[3:]:
            if col.endswith(PUBLISHED_SUFFIX):
                row.append("" if pd.isna(old[col]) else str(old[col]))
            elif col == EPSILON:
                eps = s.get(SETTING_PREFIX + "epsilon")
                row.append("" if eps is None or pd.isna(eps) else f"{float(eps):g}")
            else:
                key, digits = fresh_of[col]
                row.append(_fmt(s.get(f"{key}_mean", np.nan), digits))
        rows.append(row)
    return rows, results


def spearman_rows(board: pd.DataFrame, fresh: list[list[str]]) -> list[list[str]]:
    """ρ per dataset of the leaderboard with the fresh rows in place of its skipped ones, and of it alone."""
    def frame(table: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame({"dataset": table["dataset"], "synthesizer": table["synthesizer"],
                             "F3_ratio": pd.to_numeric(table[F3], errors="coerce"),
                             "F3_ratio_reference": pd.to_numeric(table[F3 + PUBLISHED_SUFFIX], errors="coerce")})

    new = pd.DataFrame(fresh, columns=board.columns)
    replaced = set(zip(new["dataset"], new["synthesizer"]))
    keep = [(d, s) not in replaced for d, s in zip(board["dataset"], board["synthesizer"])]
    datasets = list(dict.fromkeys(board["dataset"]))
    after = _spearman(frame(pd.concat([board[keep], new], ignore_index=True)), datasets)
    before = _spearman(frame(board), datasets)
    return [[d, str(int(a["n"])), _fmt(a["rho"], 3), _fmt(b["rho"], 3)]
            for d, (_, a), (_, b) in zip(datasets, after.iterrows(), before.iterrows())]


def write(study_dir: Path, out: Path, machine_text: str | None = None) -> dict:
    sys.path.insert(0, str(REPO / "docs" / "gen"))
    from export_results import machine

    board_path = out / BOARD_FILE
    board = pd.read_csv(board_path, dtype=str, keep_default_na=False).replace("", np.nan)
    for col in ("dataset", "synthesizer", "status"):
        if col not in board.columns:
            raise ValueError(f"{board_path}: no column {col!r}")
    rows, results = fresh_rows(study_dir, board)
    rho = spearman_rows(board, rows) if F3 + PUBLISHED_SUFFIX in board.columns else None
    common, own, commits = provenance(results)
    versions = {**common, **{k: v for d in own.values() for k, v in d.items()}}
    statuses = sorted(study_dir.glob("*/seed*/*/status.json"))
    day = datetime.fromtimestamp(max(p.stat().st_mtime for p in statuses), timezone.utc).strftime("%Y-%m-%d")
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    synths = " ".join(dict.fromkeys(r[1] for r in rows))
    command = f"holdbench run {results.name} --synthesizers {synths}"
    script = f"python scripts/docs/fresh_rows.py {study_dir} {out}"
    prov_path = out / "provenance.json"
    doc = json.loads(prov_path.read_text())
    board_entry = next(t for t in doc["tables"] if t["file"] == BOARD_FILE)
    fresh_entry = {
        "file": FRESH_FILE,
        "title": f"The {results.name} study's {synths} row, run fresh",
        "command": f"{command}; {script}",
        "run_commit": ", ".join(c[:7] for c in commits) or None,
        "run_date": day,
        "machine": machine_text or machine(),
        "date": day,
        "source": (f"the cells of `{command}` (the study's own seeds and their splits)"
                   + (f"; the published values copied from {BOARD_FILE}"
                      if any(c.endswith(PUBLISHED_SUFFIX) for c in board.columns) else "")
                   + f"; regenerate with `{command}` + `{script}`"),
        "note": ("fresh values are means over the ok seeds of the cells, as `holdbench compare` takes them; fit and "
                 "sample seconds are wall seconds on a machine shared with other jobs (upper bounds)"),
        "versions": versions,
    }
    spearman_entry = {
        "file": SPEARMAN_FILE,
        "title": "Spearman ρ of the fresh F3 ratios against the published ones",
        "command": f"holdbench compare {results.name} paper_published --pair published_mostly=mostly_ai; {script}",
        "run_commit": f"{board_entry['run_commit']}; {fresh_entry['run_commit']} ({synths})",
        "run_date": day,
        "machine": fresh_entry["machine"],
        "date": today,
        "source": (f"computed by scripts/docs/fresh_rows.py from {BOARD_FILE} with the rows of {FRESH_FILE} in "
                   f"place of its skipped ones (the last column: {BOARD_FILE} alone); regenerate with `{script}`"),
        "note": "holdout left out; ρ of the values as committed (3 decimals)",
    }
    ours = (FRESH_FILE, SPEARMAN_FILE) if rho is not None else (FRESH_FILE,)
    tables = [t for t in doc["tables"] if t["file"] not in ours]
    at = next(i for i, t in enumerate(tables) if t["file"] == BOARD_FILE) + 1
    tables[at:at] = [fresh_entry, spearman_entry] if rho is not None else [fresh_entry]
    doc["tables"] = tables
    (out / FRESH_FILE).write_text(_csv_text(list(board.columns), rows))
    if rho is not None:
        (out / SPEARMAN_FILE).write_text(_csv_text(list(SPEARMAN_COLUMNS), rho))
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study_dir", type=Path, help="the study directory of the later run, e.g. results/paper")
    ap.add_argument("out_dir", type=Path, help="the paper's committed results, e.g. results/published/paper")
    ap.add_argument("--machine", help="the machine as the footer names it (default: detected)")
    args = ap.parse_args(argv)
    write(args.study_dir, args.out_dir, args.machine)
    print((args.out_dir / FRESH_FILE).read_text(), end="")
    if any(t["file"] == SPEARMAN_FILE and "fresh_rows.py" in t["command"] for t in json.loads(
            (args.out_dir / "provenance.json").read_text())["tables"]):
        print("\n" + (args.out_dir / SPEARMAN_FILE).read_text(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())

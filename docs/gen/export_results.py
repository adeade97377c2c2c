"""Export a study's results directory into the committed form the results pages are generated from.

    python docs/gen/export_results.py STUDY_DIR OUT_DIR [--machine TEXT] [--command TEXT] [--merge]

STUDY_DIR is a study's results directory (results/<study>, with the leaderboard.csv that
`holdbench.benchmark.outputs.leaderboard` writes); OUT_DIR is results/published/<study>. It writes

- `leaderboard.csv`: one row per cell, its identity (dataset, synthesizer, seed, status), the study's
  headline metrics under their registry labels and rounded to their registry digits (as leaderboard.md
  shows them), then fit, sample and evaluate seconds and peak memory;
- `provenance.json`: the study command, the git commit(s) the cells recorded, the machine, the date
  the cells were written, the library versions every cell shares, and where the files came from.

An export replaces what the study's previous run produced: the tables of OUT_DIR whose provenance
command is `holdbench run <study>` or `holdbench compare <study>` (and any file provenance.json does
not list) are removed; tables from other sources (a benchmark script's, e.g. the paper page's `sdv07`
table) are kept with their own provenance. With --merge, a run of some cells adds to the committed
leaderboard instead: its rows replace those of the same dataset, synthesizer and seed, the others are
kept, the rows follow the study config's order, and the provenance lists both runs' commands and
commits (library versions: those both runs share). A run may have columns the committed leaderboard lacks
(the study's metrics config computes more than when the kept rows ran): they are added, empty in the kept
rows, and the entry's note names those rows (a later merge that re-runs some of them drops them from the note);
any other difference of columns is refused.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import platform
import re
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
from holdbench.benchmark.config import available, group_config
from holdbench.benchmark.outputs.leaderboard import _MD_TIMINGS, _fmt, provenance, value_text
from holdbench.benchmark.outputs.results import load_results

IDENTITY = ("dataset", "synthesizer", "seed", "status")


def machine() -> str:
    """This machine in the form the footers use: '2 cores, 24 GiB, no GPU, Debian 12'."""
    cores = os.cpu_count() or 0
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{round(int(line.split()[1]) / 1024 ** 2)} GiB"
    except OSError:
        mem = "memory unknown"
    gpu = "GPU" if shutil.which("nvidia-smi") else "no GPU"
    system = platform.system()
    try:
        info = platform.freedesktop_os_release()
        system = f"{info.get('NAME', system).split()[0]} {info.get('VERSION_ID', '')}".strip()
    except OSError:
        pass
    return ", ".join(p for p in (f"{cores} cores", mem, gpu, system) if p)


def export(study_dir: Path, out: Path, *, machine_text: str | None = None, command: str | None = None,
           merge: bool = False, note: str | None = None) -> dict:
    """The study's leaderboard and its provenance entry into `out` (see the module doc); `note`: what a reader
    needs to read the table (split, sizes, caveats), the entry's note (with `merge`, in place of the previous
    note's own text; its "not in the table of the earlier run(s)" parts are still kept up to date)."""
    study_dir = Path(study_dir)
    results = load_results(study_dir)
    board_path = results.layout.leaderboard_csv
    if not board_path.is_file():
        raise FileNotFoundError(f"{board_path}: no leaderboard.csv in the study directory "
                                f"(run `holdbench run {results.name}` or `holdbench report {results.name}` first)")
    board = pd.read_csv(board_path)
    missing = [c for c in IDENTITY if c not in board.columns]
    if missing:
        raise ValueError(f"{board_path}: columns {missing} missing (not a holdbench leaderboard.csv)")
    if board.empty:
        raise ValueError(f"{board_path}: no cells")
    shown = [(sp.label, sp.name, sp.digits, sp) for sp in results.shown]
    shown += [(label, name, digits, None) for label, name, digits in _MD_TIMINGS]
    cols = list(IDENTITY) + [label for label, *_ in shown]
    rows = []
    for _, r in board.iterrows():
        row = [str(r["dataset"]), str(r["synthesizer"]), str(int(r["seed"])), str(r["status"])]
        row += ["" if name not in board.columns else value_text(spec, r.get(name)) if spec is not None
                else _fmt(r.get(name), digits) for _, name, digits, spec in shown]
        rows.append(row)
    common, _own, commits = provenance(results)
    status_files = sorted(study_dir.glob("*/seed*/*/status.json"))
    if not status_files:
        raise ValueError(f"{study_dir}: no cell status.json found")
    written = max(p.stat().st_mtime for p in status_files)
    entry = {
        "file": "leaderboard.csv",
        "title": f"The {results.name} study, one row per cell",
        "command": command or f"holdbench run {results.name}",
        "run_commit": ", ".join(c[:7] for c in commits) or None,
        "run_date": datetime.fromtimestamp(written, timezone.utc).strftime("%Y-%m-%d"),
        "machine": machine_text or machine(),
        "date": datetime.fromtimestamp(written, timezone.utc).strftime("%Y-%m-%d"),
        "source": (f"exported from the study's leaderboard.csv by docs/gen/export_results.py; regenerate with "
                   f"`holdbench run {results.name}` + `python docs/gen/export_results.py`"),
        "versions": common,
        "group_by": "dataset",
    }
    if note is not None and not note.strip():
        raise ValueError("--note is empty: give the text, or leave the option out")
    if note and not merge:
        entry["note"] = note.strip()
    out.mkdir(parents=True, exist_ok=True)
    if merge:
        return _merge(out, cols, rows, entry, results, note.strip() if note else None)
    kept = []
    prov_path = out / "provenance.json"
    if prov_path.is_file():
        try:
            previous = json.loads(prov_path.read_text()).get("tables", [])
        except (json.JSONDecodeError, AttributeError) as e:
            raise ValueError(f"{prov_path}: not a provenance file ({e}); remove it to export into {out}") from e
        same_run = re.compile(rf"^holdbench (run|compare) {re.escape(results.name)}(\s|$)")
        kept = [t for t in previous if isinstance(t, dict) and t.get("file") != "leaderboard.csv"
                and not same_run.match(str(t.get("command", "")))]
    keep = {"leaderboard.csv", "provenance.json"} | {t["file"] for t in kept}
    for old in out.iterdir():
        if old.is_file() and old.name not in keep:
            old.unlink()
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    writer.writerows(rows)
    (out / "leaderboard.csv").write_text(buf.getvalue())
    doc = {"study": out.name, "tables": [entry, *kept]}
    (out / "provenance.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc


_NOT_COMPUTED = "not in the table of the earlier run(s), so empty for"
# the same part as notes written before this wording say it (a later merge prunes those too)
_NOT_COMPUTED_BEFORE = "not computed by the earlier run(s), whose metrics config did not have them, so empty for"
_EMPTY_PART = re.compile(rf"^(?P<cols>.+): (?:{re.escape(_NOT_COMPUTED)}|{re.escape(_NOT_COMPUTED_BEFORE)}) "
                         r"(?P<cells>.+)$")


def _empty_note(previous: str | None, kept: list[list[str]], added: list[str], own: str | None = None) -> str | None:
    """The leaderboard entry's note after a merge: the parts of the previous note kept as they were, except that
    each "<columns>: not in the table of the earlier run(s), so empty for <cells>" part names only the cells the
    merged board still holds from earlier runs (a run that replaced them computed those columns; a part left
    with no cell goes), and a new such part for the columns this run adds, naming the kept rows' cells. `own`, when
    given, replaces the previous note's other parts."""
    still = ["/".join(r[:2]) for r in kept]
    parts = [own] if own else []
    for part in previous.split("; ") if previous else []:
        match = _EMPTY_PART.match(part)
        if match is None:
            if not own:
                parts.append(part)
            continue
        cells = [c for c in match["cells"].split(", ") if c in still]
        if cells:
            parts.append(f"{match['cols']}: {_NOT_COMPUTED} {', '.join(cells)}")
    if added and kept:
        parts.append(f"{', '.join(added)}: {_NOT_COMPUTED} {', '.join(still)}")
    return "; ".join(parts) or None


def _merge(out: Path, cols: list[str], rows: list[list[str]], entry: dict, results, own_note: str | None = None) -> dict:
    board, prov_path = out / "leaderboard.csv", out / "provenance.json"
    if not board.is_file() or not prov_path.is_file():
        raise FileNotFoundError(f"--merge: {out} has no leaderboard.csv and provenance.json to merge with")
    with board.open(newline="") as fh:
        old = list(csv.reader(fh))
    added = [c for c in cols if c not in old[0]]
    if [c for c in cols if c in old[0]] != old[0]:
        raise ValueError(f"{board}: columns {old[0]} differ from this run's {cols}; export without --merge")
    if added:  # the study computes more than when the kept rows ran: their cells of the new columns stay empty
        where = [cols.index(c) for c in old[0]]
        old = [cols] + [[row[where.index(i)] if i in where else "" for i in range(len(cols))] for row in old[1:]]
    doc = json.loads(prov_path.read_text())
    previous = next((t for t in doc.get("tables", []) if t.get("file") == "leaderboard.csv"), None)
    if previous is None:
        raise ValueError(f"{prov_path}: no leaderboard.csv entry to merge with")
    ran = {tuple(r[:3]) for r in rows}
    both = [r for r in old[1:] if tuple(r[:3]) not in ran] + rows
    study = group_config("study", results.name) if results.name in available("study") else results.study
    order = {col: list(dict.fromkeys([*map(str, study.get(key) or []), *(r[i] for r in both)]))
             for i, (col, key) in enumerate((("dataset", "datasets"), ("synthesizer", "synthesizers")))}
    both.sort(key=lambda r: (order["dataset"].index(r[0]), order["synthesizer"].index(r[1]), int(r[2])))
    commits = [c.strip() for c in f"{previous.get('run_commit') or ''}, {entry['run_commit'] or ''}".split(",")]
    old_versions = previous.get("versions") or {}
    merged = {**previous,
              "command": f"{previous.get('command')}; then {entry['command']} (its cells replace the rows of the "
                         f"same dataset, synthesizer and seed)",
              "run_commit": ", ".join(dict.fromkeys(c for c in commits if c)) or None,
              "run_date": max(previous.get("run_date") or "", entry["run_date"]),
              "date": max(previous.get("date") or "", entry["date"]),
              "versions": {k: v for k, v in entry["versions"].items() if old_versions.get(k) == v}}
    if not str(previous.get("source", "")).startswith(entry["source"]):  # the kept rows came from elsewhere
        how = entry["source"].partition("; ")[2]  # "regenerate with ...": said once, not again for the kept rows
        kept_from = str(previous.get("source")).removesuffix(f"; {how}" if how else "")
        merged["source"] = f"{entry['source']}; the rows kept from the earlier run(s): {kept_from}"
    kept = [r for r in old[1:] if tuple(r[:3]) not in ran]
    note = _empty_note(previous.get("note"), kept, added, own_note)
    if note:
        merged["note"] = note
    else:
        merged.pop("note", None)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    writer.writerows(both)
    board.write_text(buf.getvalue())
    doc["tables"] = [merged if t is previous else t for t in doc["tables"]]
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study_dir", type=Path, help="a study's results directory, e.g. results/paper")
    ap.add_argument("out_dir", type=Path, help="where the committed files go, e.g. results/published/paper")
    ap.add_argument("--machine", help="the machine as the footer names it (default: detected)")
    ap.add_argument("--command", help="the command that ran the study (default: holdbench run <study>)")
    ap.add_argument("--merge", action="store_true",
                    help="add this run's cells to the committed leaderboard (replacing the same cells) instead of "
                         "replacing it")
    ap.add_argument("--note", help="the leaderboard entry's note: what a reader needs to read the table (split, "
                                   "sizes, caveats); with --merge it replaces the previous note's own text")
    args = ap.parse_args(argv)
    doc = export(args.study_dir, args.out_dir, machine_text=args.machine, command=args.command, merge=args.merge,
                 note=args.note)
    t = doc["tables"][0]
    print(f"{args.out_dir}: leaderboard.csv, provenance.json (commit {t['run_commit']}, {t['machine']}, {t['date']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

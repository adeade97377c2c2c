"""Extract the measured tables of the old README into results/published/<study>/ (CSV + provenance.json).

Before the docs site existed, the studies' results were recorded as Markdown tables in README.md.
This script reads that README from git (`git show <commit>:README.md`), finds each table by its
exact header line, parses it (no number is retyped), tidies it (a dataset column from the heading
the table sits under, "a (b)" cells split into two columns, units and thousands separators taken
out of numeric cells) and writes one CSV per table plus a provenance.json per study: the run
(command and the commit the README names for it, where it names one), the machine, and the date and
commit of the README change that recorded the table (`git blame`, ignoring the layout refactor that
only renamed paths).

    python scripts/docs/extract_readme_results.py [--commit ebd4a99] [--out results/published]

The next real run of a study replaces its extracted files with exported ones
(`python docs/gen/export_results.py STUDY_DIR OUT_DIR`).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: the README whose tables are extracted (the last one written before the docs site)
SOURCE_COMMIT = "ebd4a99"
#: commits that touched README lines without changing measurements (path renames): blame looks past them
IGNORE_REVS = ("ebd4a99",)
MACHINE = "2 cores, 24 GiB, no GPU, Debian 12"
EXPORT = "python docs/gen/export_results.py"

_NUM_WITH_SEP = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+)(?![\d,])")
#: "a (b)": a value and, in brackets, its counterpart (published value, CPU seconds, H's value)
PAIR = r"^(\S+)(?: \((\S+)\))?$"


def _table(study, file, header, title, command, *, run_commit=None, run_date=None, regenerate=None, expect=1,
           dataset=None, split=None, units=None, wide=None, group_by=None, note=""):
    return {"study": study, "file": file, "header": header, "title": title, "command": command, "run_commit": run_commit,
                "run_date": run_date, "regenerate": regenerate, "expect": expect, "dataset": dataset, "split": split or {},
                "units": units or {}, "wide": wide, "group_by": group_by, "note": note}


_F = ("F1 ratio", "F2 ratio", "F3 ratio", "DCR share")
TABLES = [
    # ---- the paper study
    _table("paper", "leaderboard.csv",
           "| synthesizer | status | F1 ratio | F2 ratio | F3 ratio | DCR share | pMSE ratio | best MIA AUC | fit s | sample s | eval s |",
           "The paper study: fresh split beside the published files",
           "holdbench run paper; holdbench run paper --cores 1 -- --forcerun evaluate; "
           "holdbench run paper_published -- --config study_overrides=metrics=paper; "
           "holdbench compare paper paper_published --pair published_mostly=mostly_ai",
           run_commit="05f5b49 (fits), 04f5a46 (evaluations)", run_date="2026-11-27", expect=4,
           dataset=r"^#### ([a-z-]+)$", split={c: (PAIR, [c, f"{c}, published"]) for c in _F}, group_by="dataset",
           note="fit and sample seconds are wall seconds on a machine shared with other jobs (upper bounds); "
                "`synthpop` and `mostly_ai` were skipped here (not installed), `gretel` exists only as a published file"),
    _table("paper", "cpu.csv",
           "| dataset | generate CPU s | evaluate CPU s | evaluate share | jobs counted: cell record / Snakemake record |",
           "The paper study: CPU of generating and of evaluating",
           "holdbench compare paper paper_published --pair published_mostly=mostly_ai",
           run_commit="05f5b49 (fits), 04f5a46 (evaluations)", run_date="2026-11-27",
           regenerate="`holdbench run paper` + `holdbench compare paper paper_published`",
           split={"jobs counted: cell record / Snakemake record":
                  (r"^(\d+) / (\d+)$", ["jobs counted by cell record", "jobs counted by Snakemake record"])},
           note="evaluations counted from each cell's own CPU record; generation from Snakemake's benchmark "
                "records (lower bounds), so the evaluate share is an upper bound"),
    _table("paper", "sdv07.csv",
           "| synthesizer | variant | F1 ratio | F2 ratio | F3 ratio | dcr_share | out of T's range (mean / max) | fit s wall (cpu) |",
           "SDV 2.x defaults, the `sdv07` preset and the paper's SDV 0.7 files",
           "python scripts/bench/bench_sdv07.py", expect=2, dataset=r"^\*\*([a-z-]+)\*\*", group_by="dataset",
           split={"out of T's range (mean / max)": (r"^(\d+%) / (\d+%)$", ["out of T's range, mean", "out of T's range, max"]),
                  "fit s wall (cpu)": (PAIR, ["fit s wall", "fit CPU s"])},
           note="the paper's split (T = `<ds>_trn`, H = `<ds>_val`), n = 50,000, seed 0, scored with the paper's "
                "measures; CTGAN and CopulaGAN were not run on adult"),
    _table("paper", "mostly_ai.csv",
           "| dataset | row | F1 ratio | F2 ratio | F3 ratio | DCR share | epochs | columns as digits |",
           "MOSTLY AI: the engine's defaults and the `paper` preset against the published row",
           "python scripts/bench/bench_mostly.py (in the MOSTLY AI engine's venv)",
           regenerate="`python scripts/bench/bench_mostly.py` in the MOSTLY AI engine's venv",
           note="the paper's split, 50,000 records, seed 1 (adult's default also seed 2), scored with the paper's measures"),
    _table("paper", "extended_families.csv",
           "| S | pMSE ratio | TSTR AUC ratio | CI overlap | best MIA AUC (attack) | B&Q legal, all pass vs H | disclosure excess |",
           "The families beyond the paper on adult's published files",
           "holdbench evaluate on adult's paper split (T and H 24,421 rows) with each published file as S (50,000 rows)",
           regenerate="`holdbench evaluate` with adult's paper split as T and H and each published file as S",
           note="pMSE ratios with the corrected null m·c·(1−c)/N"),
    # ---- Bale & Quick
    _table("bale_quick", "leaderboard.csv",
           "| dataset | synthesizer | pMSE ratio | F3 ratio | DCR share | legal criteria vs H / vs LOO | max disclosure ratio, targets in T / in H | MIA AUC (max) | TSTR AUC ratio | fit |",
           "The study's cells", "holdbench run bale_quick --datasets adult online-shoppers", run_date="2026-11-23",
           split={"legal criteria vs H / vs LOO": (r"^(\S+) / (\S+)$", ["legal criteria vs H", "legal criteria vs LOO"]),
                  "max disclosure ratio, targets in T / in H":
                      (r"^(\S+) / (\S+)$", ["max disclosure ratio, targets in T", "max disclosure ratio, targets in H"])},
           units={"fit": ("s", "fit s")},
           note="random 50/50 split, seed 0, 50,000 records; the pMSE ratio is computed on all 50,000 records "
                "against T with the corrected null m·c·(1−c)/N, so compare it within a dataset; above 10 the "
                "current logistic fit stops once S is plainly told apart from T (pmse_stop_ratio) and reports a "
                "slightly lower ratio than these fits, run to convergence (adult's gaussian_copula); fit is the wall "
                "time of the generate job on a shared machine"),
    _table("bale_quick", "tuning.csv",
           "| search | pick | K | search's mean ratio | re-scored (set SD) | fresh | CPU s |",
           "Tuning `bq_cart`: common seeds, fresh seeds and re-scoring the best",
           "python scripts/bench/bench_bale_quick.py --search --init-points 4 --n-iter 8 --m 3",
           split={"re-scored (set SD)": (PAIR, ["re-scored ratio", "re-scored set SD"]),
                  "fresh": (r"^(\S+) ± (\S+)$", ["fresh ratio, mean", "fresh ratio, SD"]),
                  "CPU s": (r"^(\S+)(?: / (\S+))?$", ["CPU s", "CPU s with re-scoring"])},
           note="`bq_cart` on a seeded 6,712-row sample of adult's paper T, 12 evaluations, one run per variant; "
                "fresh: Bale & Quick's pMSE ratio of 5 sampled sets against that T; where two CPU figures are "
                "given they are the fit without and with the re-scoring, the K step 5 rows give one"),
    # ---- frontier
    _table("frontier", "leaderboard.csv",
           "| synthesizer | status | ε | F3 ratio | DCR share | best MIA AUC | fit s | peak MB |",
           "Every cell of the frontier study", "holdbench run frontier --cores 2", run_commit="d60507f", run_date="2026-11-27", expect=2,
           dataset=r"^Measured on ([a-z-]+) \(seed", group_by="dataset",
           note="n_synthetic = 10,000, seed 0; fit seconds are wall seconds on a shared machine (upper bounds)"),
    # ---- sequential
    _table("sequential", "leaderboard.csv",
           "| dataset | synthesizer | status | fit s | eval s | seq F3 ratio | coherence ratio | length ratio | subject DCR share | subject IMS | best attack AUC |",
           "Every cell of the sequential study", "holdbench run sequential --cores 1", group_by="dataset",
           note="T = 10,046 players of baseball and 2,356 women of nlswork, S with |T| subjects; best attack AUC "
                "is the subject MIA AUC, the maximum over attacks"),
    _table("sequential", "models.csv",
           "| dataset | synthesizer | fit CPU s (wall) | sample CPU s | peak RSS | seq_F3_ratio | coherence ratio | length ratio | seq_dcr_share [95 % CI] | seq_ims (H) |",
           "The model-based sequential synthesizers on the full T",
           "python scripts/bench/bench_sequential_models.py measure seq_par; measure seq_mostly (in the engine's venv)",
           split={"fit CPU s (wall)": (PAIR, ["fit CPU s", "fit wall s"]),
                  "seq_dcr_share [95 % CI]": (r"^(\S+) \[(\S+), (\S+)\]$",
                                              ["seq_dcr_share", "seq_dcr_share CI low", "seq_dcr_share CI high"]),
                  "seq_ims (H)": (PAIR, ["seq_ims", "seq_ims of H"])},
           units={"peak RSS": ("GB", "peak RSS GB")},
           note="split seed 0, |S| = |T| subjects, sample seed 1, default profiles, one thread on a shared machine"),
    _table("sequential", "par_epochs.csv", "| training subjects | CPU s per epoch |",
           "PAR: CPU per training epoch against the number of training subjects",
           "python scripts/bench/bench_sequential_models.py epochs",
           note="baseball's T, one thread; the run on all of T was stopped before its first epoch ended"),
    # ---- performance
    _table("performance", "demo_run.csv", "| run | wall | of which collect |",
           "The demo study: first run, a rerun with one more synthesizer, a rerun with nothing to do",
           "holdbench run demo --cores 2 --no-track", run_date="2026-11-25",
           regenerate="time `holdbench run demo --cores 2 --no-track` from an empty results directory"),
    _table("performance", "panel_cost.csv",
           "| dataset / S | fidelity | privacy | panel | utility | legal | disclosure | attacks | total CPU | target | peak |",
           "The default metric panel's CPU per family", "python scripts/bench/bench_panel.py", run_date="2026-11-25",
           split={"dataset / S": (r"^(\S+) / (.+)$", ["dataset", "S"])},
           units={"total CPU": ("s", "total CPU s"), "peak": ("MB", "peak MB")},
           note="every family of conf/metrics/default.yaml but anonymeter, each in a fresh process on one thread; "
                "CPU seconds of evaluate() and peak RSS"),
    _table("performance", "sharding.csv",
           "| rows | unsharded wall / CPU / peak | 4 shards: CPU of all shards / slowest shard wall / merge wall / peak | identical |",
           "Sharded evaluation against one evaluate job", "python scripts/bench/bench_scale.py --shards 4",
           split={"unsharded wall / CPU / peak": (r"^(\S+) s / (\S+) s / (\S+) MB$",
                                                  ["unsharded wall s", "unsharded CPU s", "unsharded peak MB"]),
                  "4 shards: CPU of all shards / slowest shard wall / merge wall / peak":
                      (r"^(\S+) s / (\S+) s / (\S+) s / (\S+) MB$",
                       ["4 shards: CPU s of all shards", "slowest shard wall s", "merge wall s", "4 shards: peak MB"])},
           note="flip50 cells, |T| = |S| = rows/2; shards run one after another on 2 shared cores"),
    _table("performance", "fit_time.csv",
           "| generator | online-shoppers fit s | sample s | peak MB | adult fit s | sample s | peak MB |",
           "Fit and sample time and peak memory of the DP and forest generators",
           "holdbench run frontier --cores 2", run_commit="d60507f", wide=("generator", 3),
           note="wall seconds of the frontier study, two cells at a time on 2 shared cores (upper bounds); "
                "peak RSS of the generate job; n = 10,000 sampled"),
    # ---- references
    _table("references", "references.csv", "| family | reference | agreement | where |",
           "Each metric family against its independent reference",
           "pytest on the test files named; the scripts in scripts/reference/ on the paper files",
           regenerate="`pytest` on the files in the where column and `python scripts/reference/check_pmse_reference.py`"),
]

#: measured numbers that the README states in a line of prose rather than a table
PROSE = [
    {"study": "paper", "file": "spearman.csv", "title": "Spearman ρ of the fresh F3 ratios against the published ones",
         "command": "holdbench compare paper paper_published --pair published_mostly=mostly_ai",
         "run_commit": "05f5b49 (fits), 04f5a46 (evaluations)", "run_date": "2026-11-27", "expect": 4,
         "regenerate": "`holdbench run paper` + `holdbench compare paper paper_published`",
         "dataset": r"^#### ([a-z-]+)$", "pattern": r"^Spearman ρ of the F3 ratios \((\d+) synthesizers ok on both sides, holdout left out\): (\S+)$",
         "columns": ["synthesizers ok on both sides", "Spearman rho of F3 ratio"],
         "note": "holdout left out"},
]


#: the benchmark scripts' figures, stated in passages of prose: each passage (from the line matching
#: `start` to a blank line or the next bullet, lines joined) is matched by `pattern`; each named group
#: becomes one row (script, measure, value, unit, the date the README recorded it)
BENCH = {"study": "performance", "file": "bench_scripts.csv",
             "title": "The benchmark scripts' figures",
             "command": "python scripts/bench/SCRIPT, SCRIPT in the script column (each row has the date it was recorded)",
             "regenerate": "the script of each row, from the repository root",
             "note": "on the 2-core machine, mostly shared with other jobs; a range is the spread over repeats or cells"}
BENCH_PASSAGES = [
    {"script": "bench_metrics.py", "start": r"^- \*\*Metrics\*\* \(",
         "pattern": r"exact\) (?P<a>\S+) s, (?P<b>\S+)× faster.*?triples\) (?P<c>\S+) s, (?P<d>\S+)× faster"
                 r".*?peaks at (?P<e>\S+) MiB",
         "rows": {"a": ("DCR privacy family on adult (S against T and H, exact)", "s"),
               "b": ("the same against an exact one-hot matrix-product baseline", "× faster"),
               "c": ("F1+F2+F3 on credit-default", "s"),
               "d": ("the same against pandas groupby", "× faster"),
               "e": ("peak memory of a full adult evaluation", "MiB")}},
    {"script": "bench_loading.py", "start": r"^- \*\*Loading\*\* \(",
         "pattern": r"raw files (?P<a>\S+) s, from cache (?P<b>\S+) s",
         "rows": {"a": ("the four paper datasets from their raw files", "s"),
               "b": ("the same from the cache", "s")}},
    {"script": "bench_workflow.py", "start": r"^- \*\*Workflow\*\* \(",
         "pattern": r"runs in (?P<a>\S+) s on 2 cores; wall time / sum of job times (?P<b>\S+); harness overhead per "
                 r"cell median (?P<c>\S+) s \(max (?P<d>\S+) s",
         "rows": {"a": ("the demo study on 2 cores, wall", "s"),
               "b": ("wall time / sum of job times", "ratio"),
               "c": ("harness overhead per cell, median", "s"),
               "d": ("harness overhead per cell, max (cells that load torch)", "s")}},
    {"script": "bench_synthesizers.py", "start": r"^- \*\*Synthesizers on adult's T\*\* \(",
         "pattern": r"gaussian_copula fit (?P<a>\S+) s; cart fit (?P<b>\S+) s; CTGAN ≈ (?P<c>\S+) s/epoch .*?"
                 r"TVAE ≈ (?P<d>\S+) s/epoch, CopulaGAN ≈ (?P<e>\S+) s/epoch",
         "rows": {"a": ("gaussian_copula fit on adult's T", "s"), "b": ("cart fit on adult's T", "s"),
               "c": ("CTGAN on adult's T, per epoch", "s"), "d": ("TVAE on adult's T, per epoch", "s"),
               "e": ("CopulaGAN on adult's T, per epoch", "s")}},
    {"script": "bench_sequential.py --sample 40", "start": r"^Measured on baseball \(T = [\d,]+ players, `python",
         "pattern": r"take (?P<a>\S+) s of CPU \((?P<b>\S+) MB peak\).*? (?P<c>\S+) s for the holdout row and "
                 r"(?P<d>\S+) s for the others.*?takes (?P<e>\S+) s a cell",
         "rows": {"a": ("the sequential measures of a baseball cell, CPU", "s"),
               "b": ("the same, peak memory", "MB"),
               "c": ("every family of the sequential metrics config, holdout row, CPU", "s"),
               "d": ("the same, other rows", "s"),
               "e": ("a plain pandas version of the D2.2 table, TVDs, coherence and lengths, per cell", "s")}},
    {"script": "bench_mlflow_ui.py results/demo", "start": r"^\s+`--workers 1`: MLflow's default",
         "pattern": r"(?P<a>\S+) s until the UI answers with the default 4 workers, (?P<b>\S+) s with one; "
                 r"`holdbench track` into a fresh store \(schema creation included\) (?P<c>\S+) s",
         "rows": {"a": ("MLflow UI answering, default 4 workers", "s"),
               "b": ("MLflow UI answering, 1 worker", "s"),
               "c": ("holdbench track into a fresh store", "s")}},
    {"script": "(pip install --no-deps -r into a fresh venv, wheel cache warm)",
         "start": r"^nvidia-nccl-cu12\. Measured `pip install",
         "pattern": r"dp (?P<a>\S+) s \((?P<b>\S+) GB\), forest (?P<c>\S+) s \((?P<d>\S+) GB\); both together "
                 r"through the install.sh loop: (?P<e>\S+) s",
         "rows": {"a": ("plug-in venv dp, install", "s"), "b": ("plug-in venv dp, disk", "GB"),
               "c": ("plug-in venv forest, install", "s"), "d": ("plug-in venv forest, disk", "GB"),
               "e": ("both through .ci/install.sh", "s")}},
]


def passage(lines: list[str], start: str) -> tuple[int, int, str]:
    """(first line, last line, text joined with single spaces) of the passage starting at `start`."""
    hits = [i for i, line in enumerate(lines) if re.match(start, line)]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} README lines match {start!r}, expected 1")
    first = last = hits[0]
    while last + 1 < len(lines) and lines[last + 1].strip() and not re.match(r"^\s*- ", lines[last + 1]):
        last += 1
    return first, last, " ".join(" ".join(lines[first:last + 1]).split())


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True).stdout


def blame(commit: str) -> list[tuple[str, int]]:
    """(commit, author time) of every line of README.md at `commit`, past the IGNORE_REVS."""
    ignore = [a for rev in IGNORE_REVS for a in ("--ignore-rev", rev)]
    out = git("blame", *ignore, "--line-porcelain", commit, "--", "README.md")
    lines, sha = [], None
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]{40} ", line):
            sha = line.split()[0]
        elif line.startswith("author-time "):
            lines.append((sha, int(line.split()[1])))
    return lines


def clean(cell: str) -> str:
    """One cell as a CSV value: bold and code marks off, a lone dash is empty, thousands separators and
    the typographic minus made plain. Nothing else changes."""
    text = cell.strip()
    text = re.sub(r"\*\*(.*?)\*\*", r"\1", text).replace("`", "").replace("\u2212", "-")
    text = _NUM_WITH_SEP.sub(lambda m: m.group(1).replace(",", ""), text)
    return "" if text in ("–", "-") else text


def _cells(line: str) -> list[str]:
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        raise ValueError(f"not a table row: {line!r}")
    return [c for c in line[1:-1].split("|")]


def find_tables(lines: list[str], header: str) -> list[tuple[int, list[list[str]]]]:
    """(line index of the header, rows of cells) of every table whose header line is `header`
    (tables indented inside list items included; fenced code skipped)."""
    found, fenced = [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced or line.strip() != header:
            continue
        if not re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i + 1]):
            raise ValueError(f"README line {i + 1}: header {header!r} has no separator line")
        rows, j = [], i + 2
        while j < len(lines) and lines[j].strip().startswith("|"):
            rows.append(_cells(lines[j]))
            j += 1
        found.append((i, rows))
    return found


def nearest(lines: list[str], index: int, pattern: str) -> str:
    for j in range(index, -1, -1):
        m = re.match(pattern, lines[j])
        if m:
            return m.group(1)
    raise ValueError(f"no line above README line {index + 1} matches {pattern!r}")


def tidy(spec: dict, header: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    cols = [clean(h) for h in header]
    data = [[clean(c) for c in r] for r in rows]
    for r in data:
        if len(r) != len(cols):
            raise ValueError(f"{spec['study']}/{spec['file']}: a row has {len(r)} cells, the header {len(cols)}: {r}")
    for col, (unit, new) in spec["units"].items():
        k = cols.index(col)
        for r in data:
            if r[k]:
                m = re.match(rf"^(\S+) {re.escape(unit)}$", r[k])
                if not m:
                    raise ValueError(f"{spec['study']}/{spec['file']}: {col!r} cell {r[k]!r} is not '<number> {unit}'")
                r[k] = m.group(1)
        cols[k] = new
    for col, (pattern, names) in spec["split"].items():
        k = cols.index(col)
        for n, r in enumerate(data):
            if not r[k]:
                data[n] = r[:k] + [""] * len(names) + r[k + 1:]
                continue
            m = re.match(pattern, r[k])
            if not m:
                raise ValueError(f"{spec['study']}/{spec['file']}: {col!r} cell {r[k]!r} does not match {pattern!r}")
            parts = [clean(g or "") for g in m.groups()]
            if len(parts) != len(names):
                raise ValueError(f"{spec['study']}/{spec['file']}: {pattern!r} gives {len(parts)} parts for {names}")
            data[n] = r[:k] + parts + r[k + 1:]
        cols = cols[:k] + names + cols[k + 1:]
    if spec["wide"]:
        key, width = spec["wide"]
        if (len(cols) - 1) % width:
            raise ValueError(f"{spec['study']}/{spec['file']}: {len(cols) - 1} columns are not groups of {width}")
        groups = [cols[1 + g * width:1 + (g + 1) * width] for g in range((len(cols) - 1) // width)]
        first = groups[0][0]
        measure = first.split(" ", 1)[1]
        names = [measure] + groups[0][1:]
        long = []
        for g, group in enumerate(groups):
            dataset, rest = group[0].split(" ", 1)
            if rest != measure or group[1:] != names[1:]:
                raise ValueError(f"{spec['study']}/{spec['file']}: column group {group} differs from {groups[0]}")
            long += [[r[0], dataset, *r[1 + g * width:1 + (g + 1) * width]] for r in data]
        cols, data = [key, "dataset", *names], long
    return cols, data


def write_csv(path: Path, cols: list[str], rows: list[list[str]]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    w.writerows(rows)
    path.write_text(buf.getvalue())


def provenance(spec: dict, lines_blame: list[tuple[str, int]], first: int, last: int) -> dict:
    sha, when = max(lines_blame[first:last + 1], key=lambda x: x[1])
    short = sha[:7]
    study_cmd = spec["command"].split(";")[0].strip()
    run = re.match(r"^holdbench (?:run|compare) (\S+)", study_cmd)
    regen = spec.get("regenerate") or (f"`holdbench run {run.group(1)}` + `{EXPORT}`" if run else f"`{study_cmd}`")
    return {
        "file": spec["file"],
        "title": spec["title"],
        "command": spec["command"],
        "run_commit": spec["run_commit"],
        **({"run_date": spec["run_date"]} if spec.get("run_date") else {}),
        "machine": MACHINE,
        "date": datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%d"),
        "recorded_commit": sha,
        "source": f"recorded in README.md at {short} before the docs site existed; regenerate with {regen}",
        **({"note": spec["note"]} if spec.get("note") else {}),
        **({"group_by": spec["group_by"]} if spec.get("group_by") else {}),
    }


def extract(commit: str, out: Path) -> dict[str, list[dict]]:
    text = git("show", f"{commit}:README.md")
    lines = text.split("\n")
    lines_blame = blame(commit)
    if len(lines_blame) < len(lines) - 1:
        raise ValueError(f"git blame gave {len(lines_blame)} lines for {len(lines)}")
    studies: dict[str, list[dict]] = {}
    for spec in TABLES:
        found = find_tables(lines, spec["header"])
        if len(found) != spec["expect"]:
            raise ValueError(f"{spec['study']}/{spec['file']}: {len(found)} tables with header "
                             f"{spec['header']!r} in README.md at {commit}, expected {spec['expect']}")
        header = _cells(spec["header"])
        all_rows, first, last = [], found[0][0], found[-1][0] + 1 + len(found[-1][1])
        for index, rows in found:
            if spec["dataset"]:
                ds = nearest(lines, index, spec["dataset"])
                rows = [[ds, *r] for r in rows]
            all_rows += rows
        hdr = (["dataset"] if spec["dataset"] else []) + header
        cols, data = tidy(spec, hdr, all_rows)
        (out / spec["study"]).mkdir(parents=True, exist_ok=True)
        write_csv(out / spec["study"] / spec["file"], cols, data)
        studies.setdefault(spec["study"], []).append(provenance(spec, lines_blame, first, last))
    for spec in PROSE:
        hits = [(i, re.match(spec["pattern"], line)) for i, line in enumerate(lines)]
        hits = [(i, m) for i, m in hits if m]
        if len(hits) != spec["expect"]:
            raise ValueError(f"{spec['study']}/{spec['file']}: {len(hits)} lines match {spec['pattern']!r}, "
                             f"expected {spec['expect']}")
        rows = [[nearest(lines, i, spec["dataset"]), *m.groups()] for i, m in hits]
        write_csv(out / spec["study"] / spec["file"], ["dataset", *spec["columns"]], rows)
        prov = provenance(dict(spec, group_by=None), lines_blame, hits[0][0], hits[-1][0])
        studies.setdefault(spec["study"], []).append(prov)
    rows, first_last = [], []
    for item in BENCH_PASSAGES:
        first, last, text = passage(lines, item["start"])
        m = re.search(item["pattern"], text)
        if not m:
            raise ValueError(f"{item['script']}: README passage at line {first + 1} does not match {item['pattern']!r}")
        _, when = max(lines_blame[first:last + 1], key=lambda x: x[1])
        day = datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%d")
        rows += [[item["script"], label, clean(m.group(g)), unit, day] for g, (label, unit) in item["rows"].items()]
        first_last.append((first, last))
    write_csv(out / BENCH["study"] / BENCH["file"], ["script", "measure", "value", "unit", "recorded"], rows)
    newest = max(first_last, key=lambda fl: max(t for _, t in lines_blame[fl[0]:fl[1] + 1]))
    studies.setdefault(BENCH["study"], []).append(
        provenance(dict(BENCH, run_commit=None, group_by=None), lines_blame, *newest))
    for study, tables in studies.items():
        doc = {"study": study, "tables": tables}
        (out / study / "provenance.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return studies


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--commit", default=SOURCE_COMMIT, help="the commit whose README.md is read")
    ap.add_argument("--out", type=Path, default=REPO / "results" / "published")
    args = ap.parse_args(argv)
    studies = extract(args.commit, args.out)
    for study, tables in studies.items():
        print(f"{study}: " + ", ".join(t["file"] for t in tables))
    return 0


if __name__ == "__main__":
    sys.exit(main())

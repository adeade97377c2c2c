"""The Results pages of the docs site, generated from the result files committed in results/published/.

Every table of measured numbers on these pages is a committed CSV (results/published/<study>/*.csv)
rendered as it is, and every table carries a footer with its provenance (the run's command and commit,
the machine, the date, where the file came from and how to regenerate it), read from the study's
provenance.json. Nothing here types a number.

- Under mkdocs-gen-files (mkdocs.yml: `plugins: - gen-files: scripts: [docs/gen/results.py]`) the
  pages are written into the site as results/*.md, the figures they show as results/img/...;
- `python docs/gen/results.py OUT_DIR` writes the same pages (and figures) into OUT_DIR, to read them
  without building the site;
- `render_pages()` returns them as {site path: Markdown} (the tests use it).

A study directory gets the page STUDY_PAGE names; an unknown study, a CSV that provenance.json does not
list, a listed file that is missing or a provenance entry without one of REQUIRED fails the build,
naming the file and the key.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "results" / "published"
IMAGES = REPO / "results" / "img"

#: keys every table entry of a provenance.json must have (run_commit may be null: the record names none)
REQUIRED = ("file", "title", "command", "run_commit", "machine", "date", "source")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_NUMBER = re.compile(r"^[-+]?\d+(\.\d+)?(e[-+]?\d+)?%?$")


class ProvenanceError(ValueError):
    """A committed result directory whose provenance is missing or malformed."""


class Table(NamedTuple):
    study: str
    file: str
    meta: dict
    columns: list[str]
    rows: list[list[str]]


# ---------------------------------------------------------------- reading the committed files

def read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as f:
        data = list(csv.reader(f))
    if not data:
        raise ProvenanceError(f"{path}: empty file (no header)")
    header, rows = data[0], data[1:]
    for n, row in enumerate(rows, start=2):
        if len(row) != len(header):
            raise ProvenanceError(f"{path}: line {n} has {len(row)} fields, the header {len(header)}")
    return header, rows


def load_study(directory: Path) -> list[Table]:
    """The tables of one results/published/<study>/, in provenance.json's order, checked."""
    prov_path = directory / "provenance.json"
    if not prov_path.is_file():
        raise ProvenanceError(f"{prov_path}: missing (every results/published/<study>/ needs one)")
    try:
        doc = json.loads(prov_path.read_text())
    except json.JSONDecodeError as e:
        raise ProvenanceError(f"{prov_path}: not valid JSON ({e})") from e
    if not isinstance(doc, dict) or doc.get("study") != directory.name:
        raise ProvenanceError(f"{prov_path}: 'study' must be {directory.name!r}, the directory's name")
    entries = doc.get("tables")
    if not isinstance(entries, list) or not entries:
        raise ProvenanceError(f"{prov_path}: 'tables' must be a non-empty list")
    tables, listed = [], set()
    for n, entry in enumerate(entries):
        where = f"{prov_path}: tables[{n}]"
        if not isinstance(entry, dict):
            raise ProvenanceError(f"{where} is not an object")
        for key in REQUIRED:
            if key not in entry:
                raise ProvenanceError(f"{where} has no {key!r}")
            if key != "run_commit" and not (isinstance(entry[key], str) and entry[key].strip()):
                raise ProvenanceError(f"{where}: {key!r} must be a non-empty string")
        if not _DATE.match(entry["date"]):
            raise ProvenanceError(f"{where}: 'date' {entry['date']!r} is not YYYY-MM-DD")
        path = directory / entry["file"]
        if not path.is_file():
            raise ProvenanceError(f"{where}: file {entry['file']!r} does not exist in {directory}")
        columns, rows = read_csv(path)
        group = entry.get("group_by")
        if group is not None and group not in columns:
            raise ProvenanceError(f"{where}: group_by {group!r} is not a column of {entry['file']}")
        listed.add(entry["file"])
        tables.append(Table(directory.name, entry["file"], entry, columns, rows))
    unlisted = sorted(p.name for p in directory.iterdir() if p.is_file() and p.name != "provenance.json"
                      and p.name not in listed)
    if unlisted:
        raise ProvenanceError(f"{prov_path}: {', '.join(unlisted)} not listed in 'tables' (no provenance)")
    return tables


def load_all(published: Path = PUBLISHED) -> dict[str, list[Table]]:
    if not published.is_dir():
        raise ProvenanceError(f"{published}: no committed results directory")
    studies = {d.name: load_study(d) for d in sorted(published.iterdir()) if d.is_dir()}
    unknown = sorted(set(studies) - set(STUDY_PAGE))
    if unknown:
        raise ProvenanceError(f"{published}: no results page for {', '.join(unknown)} "
                              f"(add it to STUDY_PAGE in docs/gen/results.py)")
    return studies


# ---------------------------------------------------------------- rendering

def _cell(text: str) -> str:
    return "–" if text == "" else text.replace("|", "\\|")


def markdown_table(columns: list[str], rows: list[list[str]]) -> list[str]:
    numeric = [all(_NUMBER.match(r[k]) for r in rows if r[k] != "") and any(r[k] != "" for r in rows)
               for k in range(len(columns))]
    lines = ["| " + " | ".join(_cell(c) for c in columns) + " |",
             "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return lines


def footer(meta: dict) -> str:
    commit = meta["run_commit"] or "not recorded"
    run_date = f", run {meta['run_date']}" if meta.get("run_date") else ""
    versions = meta.get("versions") or {}
    vers = (" Versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".") if versions else ""
    return (f"<small>Provenance — command: `{meta['command']}`; commit: {commit}{run_date}; "
            f"machine: {meta['machine']}; date: {meta['date']}. Source: {meta['source']}.{vers}</small>")


def render_table(table: Table, heading: str = "##") -> list[str]:
    meta = table.meta
    out = [f"{heading} {meta['title']}", ""]
    prose = PROSE.get((table.study, table.file))
    if prose:
        out += [prose, ""]
    group = meta.get("group_by")
    if group:
        k = table.columns.index(group)
        cols = table.columns[:k] + table.columns[k + 1:]
        for value in dict.fromkeys(r[k] for r in table.rows):
            rows = [r[:k] + r[k + 1:] for r in table.rows if r[k] == value]
            out += [f"{heading}# {value}", "", *markdown_table(cols, rows), ""]
    else:
        out += [*markdown_table(table.columns, table.rows), ""]
    if meta.get("note"):
        out += [f"Conditions: {meta['note']}.", ""]
    out += [footer(meta), ""]
    return out


def figures(study: str, tables: list[Table], images: Path = IMAGES) -> list[tuple[str, Path]]:
    """(caption, image file) of the study's figures that exist under results/img/<study>/, in the order
    of the datasets of its first table."""
    folder = images / study
    if not folder.is_dir():
        return []
    datasets = []
    for t in tables:
        if "dataset" in t.columns:
            k = t.columns.index("dataset")
            datasets += [r[k] for r in t.rows]
    datasets = list(dict.fromkeys(datasets))
    wanted = []
    for name, caption in FIGURES.get(study, ()):
        if "{dataset}" in name:
            wanted += [(name.format(dataset=d), caption.format(dataset=d)) for d in datasets]
        else:
            wanted.append((name, caption))
    return [(caption, folder / name) for name, caption in wanted if (folder / name).is_file()]


def render_pages(published: Path = PUBLISHED, images: Path = IMAGES) -> dict[str, str]:
    studies = load_all(published)
    pages = {page: [f"# {title}", "", intro, ""] for page, (title, intro) in PAGES.items()}
    for study, tables in studies.items():
        page = STUDY_PAGE[study]
        if page == "results/index.md":
            pages[page] += [f"## {STUDY_TITLES.get(study, study)}", ""]
            if STUDY_INTRO.get(study):
                pages[page] += [STUDY_INTRO[study], ""]
            for table in tables:
                pages[page] += render_table(table, "###")
        else:
            if STUDY_INTRO.get(study):
                pages[page] += [STUDY_INTRO[study], ""]
            for table in tables:
                pages[page] += render_table(table)
        figs = figures(study, tables, images)
        if figs:
            pages[page] += ["## Figures", "", FIGURE_NOTE.get(study, ""), ""]
            for caption, path in figs:
                pages[page] += [f"![{caption}](img/{study}/{path.name})", ""]
    return {page: "\n".join(lines).rstrip() + "\n" for page, lines in pages.items()}


def figure_files(published: Path = PUBLISHED, images: Path = IMAGES) -> dict[str, Path]:
    """{site path: image file} of every figure the pages show."""
    out = {}
    for study, tables in load_all(published).items():
        for _, path in figures(study, tables, images):
            out[f"results/img/{study}/{path.name}"] = path
    return out


# ---------------------------------------------------------------- the pages' words (no numbers here)

PAGES = {
    "results/index.md": (
        "Results",
        ("What holdbench measured, generated from result files committed in the repository "
        "(`results/published/<study>/`: one CSV per table and a `provenance.json`). Under every table a "
        "footer names the command and commit of the run, the machine, the date and how to regenerate it. "
        "The studies: [the paper study](paper.md) (Platzer & Reutterer's four datasets), "
        "[the frontier study](frontier.md) (differentially private and forest-based generators), "
        "[the sequential study](sequential.md) (subjects with ordered events), "
        "[the Bale & Quick study](bale-quick.md) (pMSE-tuned sequential synthesis), and "
        "[performance](performance.md) (time and memory of the harness, the metrics and the generators), "
        "[concordance](concordance.md) (holdbench's numbers beside SDMetrics' and mostlyai-qa's on the same files). "
        "After a study is rerun, `python docs/gen/export_results.py results/<study> results/published/<study>` "
        "replaces its committed files and the next build of these pages shows the new run.")),
    "results/paper.md": (
        "The paper study",
        ("The `paper` study reruns Platzer & Reutterer (2021) on a fresh random split of each of its four "
        "datasets: the line-up, the flip baselines and the holdout row. Beside each fresh value, the "
        "*published* column holds the value of the paper's own synthetic file, scored by holdbench on the "
        "paper's split (`holdbench run paper_published`). Ratios are to the holdout (1 = as close to T as "
        "fresh real data); a DCR share near one half means S is no nearer its training records than "
        "unseen ones.")),
    "results/frontier.md": (
        "The frontier study",
        ("The `frontier` study places differentially private generators (MST, AIM and PrivBayes at several ε), "
        "forest-based generators (arf, ForestDiffusion) and references (cart, R synthpop's CART, gaussian_copula, "
        "the flips, the holdout) on one fidelity–privacy plane, over three seeds and their splits: F3 ratio "
        "against the best membership-inference AUC and the DCR share. The ε of the DP table is read back "
        "from each cell's `generate.json`.")),
    "results/sequential.md": (
        "The sequential study",
        ("Subjects with ordered events (baseball careers, nlswork interviews): the baselines, holdbench's "
        "`ar_cart` and the two model-based generators, scored per subject. Ratios are to the holdout; "
        "the privacy measures are on one vector per subject, never per event row.")),
    "results/bale-quick.md": (
        "The Bale & Quick study",
        ("Does pMSE-tuned sequential synthesis (Bale & Quick's `bq_cart` and `bq_mnl`) reach a pMSE ratio "
        "near 1 while passing their legal criteria, and what is left of attribute disclosure? Measured "
        "against two sequential CARTs, holdbench's `cart` (synthpop's defaults) and R's synthpop itself, "
        "gaussian_copula and the holdout row.")),
    "results/concordance.md": (
        "Concordance with SDMetrics and mostlyai-qa",
        ("holdbench's column shapes, pair trends, accuracy and DCR share beside the nearest measure of two "
        "peers, SDMetrics (its single-table QualityReport and DCROverfittingProtection) and mostlyai-qa (its "
        "report's univariate and bivariate accuracy, run in the `mostlyai_qa` plug-in environment), on the "
        "same files: adult's paper split and two of the paper's published synthetic files. Every value is "
        "per column or per pair of columns; *summary* is where each claim of agreement on this page comes "
        "from. Where the definitions meet, the tools compute the same frequencies and the same half L1 "
        "distance and agree to the digits the summary shows; elsewhere they measure different things, for the "
        "reasons under each table, and Spearman's ρ says whether they still order the columns alike.")),
    "results/performance.md": (
        "Performance",
        ("Time and memory: the demo study end to end, the metric panel per family, sharded evaluation, "
        "the fit and sample time of the differentially private and forest-based generators, and the "
        "benchmark scripts' figures. Times "
        "were taken on a 2-core machine shared with other jobs; each footer names the run.")),
    "results/audit.md": (
        "The audit study",
        ("The `audit` study (`holdbench run audit`) attacks each cell's most vulnerable records one at a time "
         "with shadow models fitted with and without them, and turns the attack's counts into a lower bound on "
         "ε (Clopper-Pearson; [definition](../definitions/attacks.md#audit-worst-case-membership-and-an-empirical-"
         "epsilon), [guide](../guides/audit.md)). For a DP generator the bound stands beside the ε it was "
         "configured with; the population panel's best membership-inference AUC stands beside the per-target "
         "AUC. The one-run table puts the cells audited again under the one-run bound (Steinke et al.: "
         "every target of every test fit a canary, one guessing rule over all of them) beside their per-target "
         "rows.")),
}

STUDY_PAGE = {
    "audit": "results/audit.md",
    "demo": "results/index.md",
    "references": "results/index.md",
    "paper": "results/paper.md",
    "frontier": "results/frontier.md",
    "sequential": "results/sequential.md",
    "bale_quick": "results/bale-quick.md",
    "performance": "results/performance.md",
    "concordance": "results/concordance.md",
}

STUDY_TITLES = {
    "demo": "The demo study",
    "references": "The metrics against independent references",
}

STUDY_INTRO = {
    "demo": ("The study of the getting-started page (`holdbench run demo`): the embedded demo table, two "
             "split seeds, the fast line-up. This table is exported from a run of the study by "
             "`docs/gen/export_results.py`; metric values are rounded to the digits the metric registry "
             "gives them."),
    "references": ("A metric is done when it equals an independent reference. What each family of the "
                   "default panel is held against, and how closely it agrees (the tests run in CI on small "
                   "data; the scripts run the full comparison on the paper's files)."),
}

PROSE = {
    ("audit", "epsilon.csv"): (
        "Where the population panel is near chance, the per-target attack is not: cart, synthpop and the flips give "
        "their most vulnerable record an AUC far above one half, while gaussian_copula and the holdout stay near the "
        "level the largest of five chance AUCs reaches with this many test fits (the holdout's output never depends "
        "on T); the DP generators' largest AUCs mostly stay near that level, below cart. A few rise above it (AIM at ε "
        "0.1 and PrivBayes at ε 10 on adult), yet at the threshold chosen on the training fits their attacks call "
        "few members, too few for the bound to find evidence against their ε: one seed with 20 + 20 "
        "test fits per target cannot tell chance over this table's many targets from a leak, and such a row calls for "
        "a re-run with more test fits (the re-check table below). Every DP cell's audited ε is at or below its "
        "configured ε. "
        "The ε bounds are small for every generator, DP or not: with 20 member and 20 non-member test fits per "
        "target and the Bonferroni correction over five targets, the bound cannot prove much even of a generator "
        "that copies records, so read a small bound as too little evidence, not as privacy. *largest provable ε* is "
        "the bound a perfect attack would reach on the same test fits: a DP cell configured above it could leak "
        "anything without this audit showing it, so its verdict there is untested, not passed. *audit gate* is the "
        "verdict `holdbench check` gives the cell on the audit (recomputed from targets.csv's counts): "
        "`audited_epsilon` for a DP cell (its bound at most its ε; n/a when its ε is at or above the largest provable "
        "ε), `audited_membership` for a generator without a DP guarantee (its bound must be 0: any bound above 0 is "
        "a vulnerable record whose membership the attack tells beyond chance). The DP cells ran with "
        "the dataset's categorical levels declared public (its dataset config) and numeric bounds estimated under DP "
        "(their share of ε in each cell's generate.json); the DP rows of both datasets come from later runs of "
        "those cells alone, merged into the tables (the provenance names every run)."),
    ("audit", "recheck.csv"): (
        "The two DP cells of adult whose largest per-target AUC rose above chance level in the first table, audited "
        "again by the `audit_recheck` study: the same split and targets, three times the test fits, shadow fits of "
        "another seed. AIM at ε 0.1 falls back to chance on the fresh fits, so its first run's high AUC was the luck "
        "of one seed over the table's many targets, not a leak. PrivBayes at ε 10 keeps its targets' AUCs above one "
        "half on average: a real membership signal, which ε 10 allows (at ε 10 the DP guarantee barely limits an "
        "attack's AUC), and too weak at these counts for a bound above 0. More test fits raise the largest provable "
        "ε of both cells; PrivBayes's ε 10 stays far above it, untested."),
    ("audit", "one_run.csv"): (
        "The `audit_one_run` study: the audit's cells on adult and online-shoppers audited again on as many shadow "
        "fits (40 + 40), with 20 targets and the one-run bound, beside their per-target rows above. On the same "
        "number of test fits the largest provable ε rises from the per-target bound's to several times it, so ε 0.1 "
        "and ε 1 are now tested with room to spare, and every DP cell's audited ε stays at or below its configured "
        "ε. On online-shoppers the generators that copy records — cart, synthpop and both flips — are proven several "
        "times leakier than the per-target bound could show: most of their guesses on the vulnerable records are "
        "right. On adult the per-target bound proves no leak in any cell; the one-run bound proves one for flip10, "
        "cart and flip50, while synthpop's guesses are too few and too often wrong to prove any. gaussian_copula and "
        "the holdout stay at or near 0 on both tables. *right guesses* counts the guesses the rule chosen on the "
        "training fits made on the 800 canaries (20 targets x 40 test fits) and how many were right."),
    ("audit", "targets.csv"): (
        "Each cell's five most vulnerable records of T (rank 1 = the largest mean distance to its five nearest "
        "neighbours) and the attack on each: the ε bound comes from the counts at the threshold chosen on the "
        "training fits; TP/members and FP/non-members are the fresh test fits' counts."),
    ("audit", "fit_times.csv"): (
        "One shadow fit (fit on a 1,000-row reference set over the audit's five columns of adult, then sample 1,000 "
        "rows) per generator, measured on the shared 2-core machine while other jobs ran: upper bounds. A cell's "
        "audit runs n_fits_train + n_fits_test of them. The MST and AIM rows were measured with the audited "
        "columns' levels declared public (as adult's dataset config now declares them) and the `dp` venv's "
        "compilation cache warm."),
    ("paper", "leaderboard.csv"): (
        "*status* counts the cell's seeds by outcome. `cart` stands in for the paper's synthpop row (R's synthpop is not installed on the machine that "
        "ran the study, so `synthpop` and `mostly_ai` are skipped and show only their published values; synthpop's "
        "row, run later on the same split, is the next table); "
        "`gretel` exists only as a published file. credit-default has no published SDV files. "
        "credit-default's synthetic cells are scored with a degree-2 pMSE (the study caps the pMSE design "
        "at 1 GB, and each cell says so), which is not on the degree-3 scale: compare its pMSE ratios "
        "within the dataset only. The flips reproduce their published values on the fresh split, and every "
        "SDV row scores a better F3 ratio than the paper's SDV 0.7 file (the `sdv07` table below shows why); "
        "the attack panel sees nothing in the SDV rows and sees `cart` and the low flips."),
    ("paper", "spearman.csv"): (
        "How well the fresh F3 ratios order the synthesizers as the published files do, per dataset, over "
        "the synthesizers that are ok on both sides (the holdout left out), with synthpop's fresh row; the last "
        "column leaves it out. On credit-default only the flips and synthpop take part; the flips' order is fixed "
        "by their flip share."),
    ("paper", "fresh_rows.csv"): (
        "R's synthpop (CART, synthpop's defaults as the paper ran them) on the study's fresh split and seed, run "
        "after the study above, beside the paper's published synthpop file scored on the paper's split. Its DCR "
        "share is within a few thousandths of the published one on every dataset and its F ratios are near the "
        "published ones (lower on bank-marketing); `cart`, which stood in for it above, scores alike."),
    ("paper", "cpu.csv"): (
        "How the study's CPU divides between generating the synthetic tables and evaluating them, per dataset."),
    ("paper", "sdv07.csv"): (
        "Why the SDV rows differ from the paper: the paper ran SDV 0.7, the line-up runs SDV 2.x, whose "
        "defaults differ (clipping to T's range, the marginal families of GaussianCopula and CopulaGAN, "
        "categorical and boolean encodings, CTGAN's discriminator decay). Each SDV config has an `sdv07` "
        "preset that sets these back. *Out of T's range* is the share of S's values outside T's minimum "
        "and maximum, over the zero-inflated columns. The preset reproduces the published GaussianCopula "
        "files and closes most of the gap for CTGAN and CopulaGAN; TVAE's remaining gap has another cause."),
    ("paper", "sdv07_adult.csv"): (
        "CTGAN and CopulaGAN on adult with their `sdv07` presets: the fidelity ratios of both move from their SDV "
        "2.x rows in the first table (fresh) toward the paper's SDV 0.7 files, as on online-shoppers in the table "
        "above, without reaching them; their shares of values out of T's range stay below the files'."),
    ("bale_quick", "fresh_sets_paper.csv"): (
        "On the paper's tables neither tuned synthesizer reaches Bale & Quick's window at the default budget, while "
        "R synthpop's CART does on online-shoppers and comes near it on adult. On online-shoppers both searches end "
        "on the edge of their space (bq_cart's K at the top of k_range, bq_mnl's regularisation C at the top of "
        "c_range for most columns); widening bq_cart's k_range (the rows with k_range [10, 400], [10, 800] and "
        "[10, 1600]) lowers its ratio each time with K at the top again, until with [10, 3200] K ends inside its "
        "range and most fresh sets fall in the window, with at most about two T records a mixture component: the table "
        "below shows what that costs in privacy. On adult bq_cart's K ends inside its range and the ratio stays near 2, so a "
        "wider K is not what it lacks there; its space has one leaf size per synthesized column besides K, twelve "
        "dimensions for the budget's 25 evaluations. bq_mnl stays further from the window than R synthpop's CART "
        "on both tables. On online-shoppers its K ends inside its range but most columns' C at the top of theirs, "
        "where its column models are still far from their own optimum (the saga table below); searched over K in "
        "[10, 400] and C in [0.001, 100] (the row with *C grid* 24), K ends inside its range again and half the "
        "columns' C at the new top, and the ratio falls but stays far from the window. On adult most columns' C "
        "ends inside its range. With its predictors mapped to their quantiles in T (`features: quantile`, the rows "
        "whose *MNL features* is quantile), on which saga gets much nearer its optimum in the same epochs (the "
        "saga table below), bq_mnl's ratio falls a little on online-shoppers and stays far from the window, while "
        "on adult it rises far above the standardised row's: saga's convergence is not what keeps bq_mnl from the "
        "window, and the default stays Bale & Quick's standardised terms. Searched over K in [10, 3200], the "
        "space in which bq_cart's K ends inside its range and its ratio reaches the window, bq_mnl's K ends at the "
        "top again and nearly every column's C at the top of its range: its ratio falls but stays far from the "
        "window."),
    ("bale_quick", "fresh_sets_privacy.csv"): (
        "The first fresh set of fits above, judged by `holdbench report` against their table's T and H. On adult "
        "bq_cart at the default budget passes Bale & Quick's legal criteria and fails the accuracy gate, while R "
        "synthpop's CART, nearer the window, fails the criteria. On "
        "online-shoppers, bq_cart at the default k_range passes the criteria too and keeps the DCR share near one half, "
        "but fails the accuracy gate; searched up to K = 1600 it passes the criteria against leave-one-out T and "
        "misses them against H by a hair (its DCR 5th percentile a fraction below H's); searched up to K = 3200, "
        "where its pMSE ratio reaches the window, it fails both, with its DCR and NNDR percentiles far below the "
        "references and a higher DCR share than R synthpop's CART: on this table the window is bought by moving S "
        "onto T's records. R synthpop's CART, in the window too, fails the legal criteria as well. Anonymeter's "
        "inference risk does not follow K (one set each). bq_mnl at its defaults, far from the window on both tables, "
        "passes the criteria on both with a DCR share near one half and fails the accuracy gate. R synthpop's CART "
        "is the one S here that also fails the exact-copy gate on both tables: more of its records repeat a T "
        "record than H's do."),
    ("paper", "mostly_ai.csv"): (
        "The engine's defaults miss the paper's MOSTLY AI row. The `paper` preset encodes a numeric column "
        "whose most frequent interior value holds a noticeable share of T as digits instead of quantile "
        "bins, which keeps T's exact values. It helps on three datasets, loses on adult, and reaches the "
        "published row on none of them fully. These are single-seed figures."),
    ("paper", "gates.csv"): (
        "Each published file of adult and bank-marketing judged by `holdbench check` against the default quality "
        "gates ([the guide](../guides/quality-gates.md)). MOSTLY AI's files alone pass every target. The SDV files "
        "and gretel's fail accuracy and nothing else; synthpop's keep accuracy and fail the DCR share and the "
        "exact-copy targets; the flips move from failing the privacy targets (few values flipped) to failing "
        "accuracy (many flipped), failing both in between. Each value is the target's measure as `holdbench check` "
        "prints it: the F3 ratio, a distribution test's effect (positive: S nearer T than H is), the lower end of "
        "the 95% interval of the DCR share and of the exact-copy excess."),
    ("paper", "extended_families.csv"): (
        "The metric families beyond the paper's two measures, on adult's paper split with the paper's "
        "published files as S. Empty cells were not measured."),
    ("bale_quick", "leaderboard.csv"): (
        "No synthesizer reaches a pMSE ratio near 1 beside the legal criteria: the tuned `bq_cart` and `bq_mnl` "
        "pass the criteria and keep the attacks near chance, while the two sequential CARTs, `cart` and R's "
        "synthpop, are closer to T on pMSE and F3 but sit closer to T's records than H's and fail them. At "
        "its worst, attribute disclosure on adult is the same for targets in T and in H in every row (what S "
        "reveals is what the population reveals); on online-shoppers `cart` reveals far more about T's records "
        "than about H's, R's synthpop and `bq_cart` somewhat more, while `bq_mnl` reveals less about T's records "
        "than about H's. On these data the method buys privacy, not fidelity. The holdout row shows what real "
        "data scores. Every `bq_cart` and `bq_mnl` row is tuned with the current defaults (each evaluation scored "
        "on ten synthetic sets of |T| rows, the best five re-scored on new sets). bank-marketing was not run; "
        "credit-default's `bq_cart` and `bq_mnl` cells did not finish tuning and were stopped."),
    ("bale_quick", "robustness_mnl.csv"): (
        "Tuning `bq_mnl` on the sk-proxy table, ten fits per variant: its C searched on 9 log-spaced points, the "
        "same with the finalists re-scored on twice the sets, and on 17 points (the default). With every column "
        "model started from the null model, all three variants keep a point in Bale & Quick's window in nearly "
        "every fit and their intervals overlap: on this table the grid of C does not separate them. *fits in "
        "[0.9, 1.15]* is the share of fits whose kept point's fresh-set ratio lands in Bale & Quick's window."),
    ("bale_quick", "saga_convergence.csv"): (
        "How far `bq_mnl`'s column models are from their own optimum on online-shoppers. For each categorical "
        "step of online-shoppers' T (a point mass is a 0/1 step), the training log-loss of the step's marginal, "
        "of `bq_mnl`'s least penalised model (C at the top of its range, on the regularisation path with its "
        "default epochs a point, started from the null model as `bq_mnl` starts it), of the same path started "
        "from zero intercepts (saga's own start), of one saga fit with 300 epochs, of the path with the "
        "standardised numerics clipped to ±3 before the polynomial terms, and of an L2 logit fitted to "
        "convergence with L-BFGS (another penalty: a yardstick of what these features allow, not `bq_mnl`'s "
        "objective). The table's heavy-tailed numerics give the degree-3 design rows of very large norm, and "
        "saga's step size shrinks with the largest of them: saga meets its tolerance nowhere. From zero "
        "intercepts the path's model is worse than the marginal in some steps; from the null model it beats the "
        "marginal in every step, yet most steps stay far from the yardstick and 300 epochs improve little, "
        "which is why the search still pushes most columns' C to the top of its range. Clipping the predictors "
        "lowers every step's loss further; it is not adopted, as it changes the model. The *quantile* column is the "
        "same path on `bq_mnl`'s other feature map (`features: quantile`: each predictor's quantile in T mapped to "
        "[-1, 1], the terms not rescaled): its rows' squared norms (*quantile norm2*) stay below the number of "
        "terms, and its loss ends below the standardised and the clipped paths' in every step; the fresh-set table "
        "above shows what that does to the synthetic data."),
    ("bale_quick", "tuning.csv"): (
        "The tuning objective scores every evaluation on the same synthetic seeds, so its best score is its "
        "luckiest; re-scoring the best few parameter sets on fresh sets guards against that. *Fresh* is the "
        "pMSE ratio of new sampled sets against T, the honest figure."),
    ("frontier", "leaderboard.csv"): (
        "Every cell of the study, one row per dataset, generator and seed: the tables below aggregate these "
        "rows over the seeds. The attack panel's best membership-inference AUC stays near one half in every DP "
        "cell, at every ε, as in the high flips and gaussian_copula: population-average attacks do not tell "
        "the budgets apart (the [audit](audit.md) asks the worst case). `cart` and R synthpop's CART are "
        "closest to T and the ones the attacks and the DCR share see. The forest rows ran at settings scaled "
        "down to a 2-core budget."),
    ("frontier", "references.csv"): (
        "The rows the DP generators are read against, over the same three seeds and splits as the DP table: "
        "R synthpop's CART and `cart`, arf, gaussian_copula, the flips and the holdout, each the mean over its ok "
        "seeds of the first table with a 95% t interval. ForestDiffusion "
        "(forest_flow, forest_vp) runs at its settings scaled down to a 2-core budget: flow matching is the better "
        "of its two variants on both datasets, and neither comes near cart or R synthpop's CART in fidelity."),
    ("frontier", "dp_epsilon.csv"): (
        "MST, AIM and PrivBayes in their current configuration at the study config's five levels of ε, the "
        "categorical levels declared public (the datasets' configs). On online-shoppers the F3 ratio falls "
        "steeply for all three from ε 0.1 to 1; above ε 1 PrivBayes keeps improving while MST levels off and "
        "AIM's intervals overlap. On adult PrivBayes's mean falls at every step of ε (neighbouring intervals "
        "overlap below ε 3), AIM stays level within its intervals up to ε 3 and improves at ε 10, and MST "
        "improves from ε 0.1 to 0.3 and then stays level: MST with its noise made negligible (the `mst` row at "
        "ε 1000 of the binning table on this page) scores the same, and the domain step alone at ε 10 (its "
        "`domain` rows) scores below 1, so on adult the limit is MST's model, a tree of 2-way marginals, not the "
        "budget or the binning. The attack panel's best AUC stays near one half at every ε. *ε domain* is the "
        "share spent on the numeric columns' ranges and bins; the rest goes to the fit. The second figure of "
        "each dataset below draws this table beside the references."),
    ("sequential", "leaderboard.csv"): (
        "The baselines behave as they must: the holdout row has every ratio at 1, `seq_copy` has a subject "
        "IMS of 1, `seq_swap_sequences` (real sequences on other subjects) is caught by the subject DCR "
        "share and the attacks although its coherence ratio is 0. flip is monotone in its share on both "
        "datasets. A length ratio of 0 flags copied lengths (flip, indep_events and swap_sequences keep "
        "T's). `ar_cart` is the only generator here that makes new sequences."),
    ("sequential", "models.csv"): (
        "SDV's PAR and MOSTLY AI's two-stage engine, at the default profiles (one fit of about a quarter "
        "of an hour each). Neither comes near the holdout at this budget; `seq_mostly` is far better than "
        "`seq_par`, which is undertrained. The MOSTLY stages are capped in wall time, so on a loaded machine "
        "they train fewer epochs."),
    ("sequential", "par_epochs.csv"): (
        "Why PAR fits on a sample of subjects: deepecho trains full-batch, so an epoch's CPU grows about "
        "quadratically with the number of training subjects."),
    ("performance", "demo_run.csv"): (
        "The demo study run end to end, then with one synthesizer added (only the new cells run and only "
        "the figures whose inputs changed are drawn), then with nothing changed."),
    ("performance", "panel_cost.csv"): (
        "CPU seconds of each metric family of the default panel for one cell. credit-default's degree-3 "
        "pMSE is the one expensive piece; a fit that cannot converge because S is plainly separable from "
        "T stops at `pmse_stop_ratio` (the default row) instead of running its whole iteration cap."),
    ("performance", "sharding.csv"): (
        "`evaluate_shards: 4` against one evaluate job; the merged metrics are identical. On small tables "
        "sharding costs more CPU than it saves; its use is a cluster, where each shard is its own job."),
    ("performance", "fit_time.csv"): (
        "Each generator of the frontier study (the holdout and the flips left out), from that study's cells: "
        "the median over its seeds of the fit and the sample time, and its largest peak memory. The "
        "differentially private and forest-based generators run in their plug-in environments; MST's and "
        "AIM's memory is jax's, and AIM's fit takes longer at larger ε. "
        "ForestDiffusion runs at settings scaled down to the 2-core budget."),
    ("performance", "report_cost.csv"): (
        "`holdbench report` and mostlyai-qa's report on the same three files (adult's paper T and H, the "
        "published synthpop S), each in its own process from reading the CSV files to writing the HTML, on "
        "one thread. *cpu_ratio_to_mostlyai_qa* is the CPU of the row over mostlyai-qa's; a row with "
        "1,000,000 rows of S, when present, is holdbench's report on S drawn with replacement to that size."),
    ("performance", "bench_scripts.csv"): (
        "What the benchmark scripts in `scripts/bench/` measured, one figure a row, with the date each was "
        "recorded. A range is the spread over repeated runs or over cells."),
    ("references", "references.csv"): None,
    ("concordance", "headline.csv"): (
        "Each tool's own headline numbers: holdbench's 1 − F1 and 1 − F2 (means of 1 − TVD over columns and "
        "pairs, against T), SDMetrics' Column Shapes and Column Pair Trends scores (against T; every pair "
        "scored, where SDMetrics by default leaves out the pairs whose association in T is below its "
        "thresholds), mostlyai-qa's "
        "univariate and bivariate accuracy (against T and H together), holdbench's DCR share (Hamming, all of "
        "S) and mostlyai-qa's dcr_share (distances between its embeddings of the records). Same direction, "
        "different quantities: the tables below say where they are the same."),
    ("concordance", "summary.csv"): (
        "Per comparison and subset of columns: *n* values, the largest and mean absolute difference, "
        "*digits_agree* = ⌊−log10 of the largest difference⌋ (*exact*: identical floating-point values) and "
        "Spearman's ρ between the two tools' values. The definitions meet on categorical columns "
        "(holdbench's 1-way TVD is 1 − SDMetrics' TVComplement), on pairs of categorical columns of at most "
        "10 categories (holdbench's 2-way marginal keeps all of them, as SDMetrics' ContingencySimilarity "
        "does) and, against mostlyai-qa, on categorical columns of at most 10 categories once holdbench is "
        "given T and H together as its reference, as mostlyai-qa uses them (mostlyai-qa rounds its accuracies "
        "to 5 decimals, so 5 digits is all the agreement there can be)."),
    ("concordance", "column_shapes.csv"): (
        "Categorical columns: the same measure. Numeric columns differ by definition: SDMetrics' "
        "KSComplement is 1 − the Kolmogorov–Smirnov statistic of the raw values (the largest gap between the "
        "two cumulative distributions), holdbench's is 1 − the TVD over 100 quantile buckets of T (the sum "
        "of all the gaps between bucket frequencies, halved): one largest gap against all of them added up."),
    ("concordance", "pair_trends.csv"): (
        "Where the two differ: (1) a pair with a numeric column — SDMetrics 0.32 cuts each table on its own "
        "10 equal-width bins (`np.histogram_bin_edges` of T's and, separately, of S's values), so a bin of S "
        "need not cover the same values as the bin of T it is compared with; holdbench cuts S on T's 10 "
        "quantile buckets; (2) two numeric columns — SDMetrics compares Pearson correlations "
        "(CorrelationSimilarity = 1 − |ρ_T − ρ_S| / 2), holdbench the joint distribution; (3) a categorical "
        "column of more than 10 categories — holdbench keeps T's 10 most frequent and pools the rest into "
        "`_other_`, SDMetrics keeps every category."),
    ("concordance", "accuracy.csv"): (
        "mostlyai-qa's accuracy is 1 − TVD of binned values of S against T and H together (its report "
        "concatenates the training and holdout tables). *holdbench_1_minus_tvd_TH* is holdbench's marginal "
        "TVD with T and H together as its reference, *holdbench_1_minus_tvd_T* holdbench's own (against T). "
        "They differ on numeric columns by the binning: mostlyai-qa makes 10 bins from evenly spaced "
        "positions in the sorted values, closed on the left; holdbench 100 (1-way) or 10 (2-way) quantile "
        "buckets of the reference, closed on the right. On categorical columns mostlyai-qa keeps the 10 most "
        "frequent categories that have at least 5 records and pools the rest into one bin; holdbench keeps "
        "the 10 most frequent in its 2-way buckets and up to 100 in its 1-way ones, whatever their count. "
        "A value of S outside the reference's range is clipped by mostlyai-qa into its first or last bin and "
        "counted by holdbench in a bucket of its own (`_other_`): CTGAN's capital-gain, most of whose values "
        "lie below T's minimum, is where the two part most."),
    ("concordance", "dcr.csv"): (
        "Not the same measure, on purpose. holdbench's DCR share uses the Hamming distance over 100 "
        "quantile bins of T, H and S together, and counts a tie (as near to T as to H, frequent on a "
        "Hamming distance: see *holdbench_hamming_ties*) with weight |T| / (|T| + |H|); its Gower share "
        "scales every numeric column by T's range. SDMetrics' DCROverfittingProtection uses a Gower-type "
        "distance that scales by the range of the table it searches (T's range for the distance to T, H's "
        "for the distance to H), counts a tie as closer to H, and scores min(1, 2 × (1 − closer_to_training)). "
        "SDMetrics' search compares every pair of records in pandas, so both tools see the same seeded sample "
        "of S here; holdbench's own DCR share (the headline table) uses all of S."),
}

FIGURES = {
    "paper": [("fidelity_{dataset}.png", "{dataset}: F1–F3 per synthesizer, the holdout as reference"),
              ("privacy_{dataset}.png", "{dataset}: privacy per synthesizer"),
              ("tradeoff.png", "F3 ratio against DCR share, every dataset"),
              ("attacks.png", "The membership-inference attack panel")],
    "frontier": [("frontier_{dataset}.png", "{dataset}: F3 ratio against best MIA AUC and DCR share"),
                 ("frontier_epsilon_{dataset}.png", "{dataset}: F3 ratio against ε, means over seeds with 95% intervals")],
    "audit": [("audit_{dataset}.png", "{dataset}: configured ε against the audited ε lower bound")],
}

FIGURE_NOTE = {
    "audit": "Drawn by `scripts/bench/audit_tables.py` from the ε table above: the diagonal is audited = configured "
             "ε, the dotted line the largest ε the audit could prove, a ring marks a cell that fails the audit gate (a DP point above its ε, a generator without an ε above 0); each generator without an ε has a slot of its own at the right.",
    "paper": "Drawn by `holdbench report paper` from the cells of the run in the first table above (synthpop "
             "skipped there).",
    "frontier": "The first figure of each dataset is drawn by `holdbench report frontier` from the cells of the "
                "three-seed run behind the table of DP cells by ε and the table of references (means over seeds): "
                "DP points joined along ε, the other generators as squares, the holdout and the flips as reference "
                "marks. "
                "The second is drawn by `scripts/bench/frontier_epsilon_figure.py` from the table of DP cells by ε "
                "and the table of references: each DP generator's F3 ratio against ε with its 95% t interval over "
                "the seeds, the references as horizontal lines (the holdout's in orange).",
}


# ---------------------------------------------------------------- writing

def write_pages(out: Path, published: Path = PUBLISHED, images: Path = IMAGES) -> list[Path]:
    written = []
    for page, text in render_pages(published, images).items():
        path = out / page
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    for site_path, src in figure_files(published, images).items():
        path = out / site_path
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, path)
        written.append(path)
    return written


def write_gen_files() -> None:
    """Under mkdocs-gen-files: the pages and their figures into the site being built."""
    import mkdocs_gen_files

    for page, text in render_pages().items():
        with mkdocs_gen_files.open(page, "w") as f:
            f.write(text)
    for site_path, src in figure_files().items():
        with mkdocs_gen_files.open(site_path, "wb") as f:
            f.write(src.read_bytes())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python docs/gen/results.py OUT_DIR", file=sys.stderr)
        return 2
    for path in write_pages(Path(args[0])):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
elif __name__ == "<run_path>":  # mkdocs-gen-files runs its scripts with runpy.run_path
    write_gen_files()

"""The audit study's committed tables (results/published/audit/) and its figures, beside the leaderboard export.

    python scripts/bench/audit_tables.py results/audit results/published/audit [--merge] [--fit-times LOG ...]
    python scripts/bench/audit_tables.py results/audit_recheck results/published/audit --recheck
    python scripts/bench/audit_tables.py --refresh results/published/audit   (the derived columns only: epsilon.csv's
        largest provable ε and audit gate, and the side of recheck.csv and one_run.csv that repeats epsilon.csv)

Writes
- `epsilon.csv`: per cell, the generator (the class its config named), the configured ε (what the cell
  recorded; empty for a generator without ε), the audited ε lower bound, the largest ε the audit could
  prove at all (the bound of a perfect attack on its test fits: each target's members all called member,
  its non-members none, at the run's confidence over the cell's targets, δ = 0; recomputed for every row
  from targets.csv's counts), the audit gate (the verdict `holdbench check` gives the cell on the audit, judged
  on the bound and ceiling recomputed from the same counts), the excess, the per-target attack's largest and
  mean AUC, and the population MIA panel's best AUC;
- `targets.csv`: per cell and target, its rank, vulnerability score, AUC, TPR at low FPR, ε bound and
  the counts at the threshold (the cell's audit_targets.csv without the masked values);
- `fit_times.csv` (with --fit-times): the lines scripts/bench/audit_fit_times.py printed, parsed (without
  --fit-times the committed file and its provenance stay);
- the figures `results/img/<study>/audit_<dataset>.png` (--figures), drawn from epsilon.csv as written;
- with --recheck (a run of the `audit_recheck` study: some of the audit's cells again, with more test fits on
  shadow fits of another seed): only `recheck.csv`, each re-run cell's committed epsilon.csv row beside this
  run's (test fits, shadow seed, the per-target AUCs, the audited and the largest provable ε);
- with --one-run (a run of the `audit_one_run` study: some of the audit's cells again under the one-run bound):
  only `one_run.csv`, each cell's committed epsilon.csv row (per-target bound) beside this run's (targets,
  right guesses of all guesses, AUCs, the one-run bound and its ceiling, as the cell recorded it; with --merge
  the committed rows of cells this run does not hold are kept);
and adds their entries to provenance.json (run `docs/gen/export_results.py` first: it writes the
leaderboard and the provenance file these join). With --merge, the committed rows of cells this run
does not hold are kept (as `export_results.py --merge` keeps the leaderboard's): a run of a few cells
adds to the tables instead of replacing them; the rows are ordered as the study's config lists them.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd
from holdbench.benchmark.config import available, group_config, synthesizer_config
from holdbench.benchmark.outputs.leaderboard import provenance
from holdbench.benchmark.outputs.plots._base import safe
from holdbench.benchmark.outputs.plots.audit import CEILING, FIGURE, TABLE_COLUMNS, draw_audit, table_points
from holdbench.benchmark.outputs.results import load_results
from holdbench.metrics.audit.bounds import largest_provable, per_target_confidence

_LINE = re.compile(r"^(?P<dataset>\S+) (?P<synthesizer>\S+)\s+rows (?P<rows>\d+) cols (?P<cols>\d+): fit\+sample "
                   r"median (?P<median>[\d.]+) s, max (?P<max>[\d.]+) s over (?P<repeats>\d+)$")


def _fmt(v, digits: int = 3) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(f) else f"{f:.{digits}f}"


KEY = ["dataset", "synthesizer"]


def _bound_of(res) -> dict[tuple[str, str], dict]:
    """Per audited cell of a run: the bound it used, its targets, the ceiling it recorded and, for a one-run
    cell, its right guesses and guesses (summed over its audit_targets.csv)."""
    out = {}
    for cell in res.cells:
        m = cell.metrics
        if m.get("audit_epsilon_lower") is None:
            continue
        rec = {"bound": m.get("audit_bound") or "per_target", "targets": m.get("audit_n_targets"),
               "provable": m.get("audit_epsilon_provable"), "delta": m.get("audit_delta")}
        path = cell.path / "audit_targets.csv"
        if rec["bound"] == "one_run" and path.is_file():
            t = pd.read_csv(path)
            rec["guesses"], rec["correct"] = int(t["guesses"].sum()), int(t["correct"].sum())
        out[(cell.dataset, cell.synthesizer)] = rec
    return out


def _rows(res) -> tuple[list[dict], list[dict]]:
    generators = {(r["dataset"], r["synthesizer"]): r["generator"] for _, r in res.table.iterrows()}
    eps_rows, target_rows = [], []
    for cell in res.cells:
        m = cell.metrics
        if cell.status.get("status") != "ok" or m.get("audit_epsilon_lower") is None and not m.get("audit_na_reason"):
            continue
        conf = m.get("audit_epsilon_configured")
        gen = generators.get((cell.dataset, cell.synthesizer))
        eps_rows.append({"dataset": cell.dataset, "synthesizer": cell.synthesizer,
                         TABLE_COLUMNS["generator"]: gen.rsplit(".", 1)[-1] if isinstance(gen, str) else "",
                         TABLE_COLUMNS["epsilon"]: "" if conf is None else f"{conf:g}",
                         TABLE_COLUMNS["audited"]: _fmt(m.get("audit_epsilon_lower"), 2),
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
    return eps_rows, target_rows


def _target_counts(rows: pd.DataFrame) -> list[tuple[int, int, int, int]]:
    """Per target row of targets.csv: (TP, members, FP, non-members) from its 'TP/members' and 'FP/non-members'."""
    def pair(text) -> tuple[int, int]:
        k, n = str(text).split("/")
        return int(k), int(n)

    return [(*pair(a), *pair(b)) for a, b in zip(rows["TP/members"], rows["FP/non-members"], strict=True)]


def with_ceilings(eps: pd.DataFrame, targets: pd.DataFrame, confidence: float,
                  bounds: dict[tuple[str, str], dict] | None = None) -> pd.DataFrame:
    """`eps` with the column CEILING after the audited bound: per cell, the largest of its targets' bounds
    under a perfect attack (all members called member, no non-member), each target at confidence
    1 − (1 − confidence)/n_targets as the audit tests it, δ = 0; a cell `bounds` names as one-run: the ceiling
    it recorded (its canaries are not per-target counts)."""
    out = eps.drop(columns=[CEILING], errors="ignore")
    value = {}
    for key, rows in targets.groupby(KEY, sort=False):
        rec = (bounds or {}).get((str(key[0]), str(key[1])))
        if rec and rec["bound"] == "one_run":
            value[tuple(key)] = float(rec["provable"])
            continue
        per_target = per_target_confidence(confidence, len(rows))
        value[tuple(key)] = max(largest_provable(members, others, per_target)
                                for _, members, _, others in _target_counts(rows))
    col = [_fmt(value.get((str(d), str(s)), math.nan), 2) for d, s in out[KEY].astype(str).to_numpy()]
    out.insert(list(out.columns).index(TABLE_COLUMNS["audited"]) + 1, CEILING, col)
    return out


#: epsilon.csv's column of the audit's own gate per cell, as `holdbench check` judges it ("<gate>: <verdict>")
VERDICT = "audit gate"


def with_verdicts(eps: pd.DataFrame, targets: pd.DataFrame, confidence: float,
                  bounds: dict[tuple[str, str], dict] | None = None) -> pd.DataFrame:
    """`eps` (with CEILING) with the column VERDICT after it: per cell, the audit's gate as `holdbench check`
    judges it (holdbench.benchmark.outputs.gates.audit_row: `audited_epsilon` for a DP cell, n/a when its ε is
    at or above the largest provable one; `audited_membership` for a generator without ε), on the cell's bound
    and ceiling recomputed from targets.csv's counts (each target at confidence 1 - (1 - confidence)/n_targets,
    the δ the cell recorded in `bounds`, else the one its config states), as the audit computed them. The
    recomputed bound must equal the table's audited ε at its two digits (else the counts are not the bound's: SystemExit naming the cell). The holdout reference
    row, a cell without targets and a one-run cell (`bounds`) get none."""
    from types import SimpleNamespace

    from holdbench.benchmark.outputs.gates import audit_row, metric_names
    from holdbench.benchmark.outputs.plots._base import REFERENCE_NAME
    from holdbench.metrics.audit.bounds import epsilon_lower_bound
    from holdbench.metrics.audit.game import AuditResult
    from holdbench.metrics.registry import specs_of

    by_name = metric_names(specs_of(AuditResult))
    out = eps.drop(columns=[VERDICT], errors="ignore")
    groups = {tuple(map(str, k)): rows for k, rows in targets.groupby(KEY, sort=False)}
    col = []
    for _, r in out.iterrows():
        key = (str(r["dataset"]), str(r["synthesizer"]))
        rows = groups.get(key)
        if rows is None or key[1] == REFERENCE_NAME or ((bounds or {}).get(key) or {}).get("bound") == "one_run":
            col.append("")
            continue
        configured = None if str(r[TABLE_COLUMNS["epsilon"]]) in ("", "nan") else float(r[TABLE_COLUMNS["epsilon"]])
        recorded = ((bounds or {}).get(key) or {}).get("delta")  # what the cell used; else what its config states
        delta = float(recorded if recorded is not None else synthesizer_config(key[1]).get("delta") or 0.0)
        per_target = per_target_confidence(confidence, len(rows))
        lower = provable = 0.0
        for tp, members, fp, others in _target_counts(rows):
            lower = max(lower, epsilon_lower_bound(tp, members - tp, fp, others - fp, per_target, delta).epsilon)
            provable = max(provable, largest_provable(members, others, per_target, delta))
        if _fmt(lower, 2) != str(r[TABLE_COLUMNS["audited"]]):
            raise SystemExit(f"{key[0]}/{key[1]}: targets.csv's counts give an ε bound of {lower:.4f}, the table "
                             f"says {r[TABLE_COLUMNS['audited']]}")
        metrics = {"audit_epsilon_lower": lower, "audit_epsilon_provable": provable,
                   "audit_epsilon_configured": configured, "audit_confidence": confidence, "audit_delta": delta,
                   "audit_n_targets": len(rows), "audit_n_fits_test": r.get("test fits"),
                   "audit_epsilon_excess": math.nan if configured is None else lower - configured}
        cell = SimpleNamespace(cell_id=f"{key[0]}/{key[1]}", dataset=key[0], synthesizer=key[1], seed=0,
                               metrics=metrics, status={"status": "ok"})
        row = audit_row(cell, by_name)
        col.append(f"{row['target']}: {row['verdict']}" if row else "")
    out.insert(list(out.columns).index(CEILING) + 1, VERDICT, col)
    return out


def _confidence(res) -> float:
    """The audit confidence this run's cells used (one for all of them)."""
    seen = {float(c.metrics["audit_confidence"]) for c in res.cells if c.metrics.get("audit_confidence") is not None}
    if len(seen) != 1:
        raise SystemExit(f"the run's cells hold {len(seen)} audit confidences {sorted(seen)}: need exactly one")
    return seen.pop()


def _generator_of(name: str) -> str:
    """A kept row's generator when the committed table predates the column: its config's `_target_`."""
    target = synthesizer_config(name).get("_target_")
    return str(target).rsplit(".", 1)[-1] if target else ""


def _shipped_study(name: str) -> dict:
    """The shipped study config of that name ({} when there is none)."""
    return dict(group_config("study", name)) if name in available("study") else {}


def _study_of(res) -> dict:
    """The run's study config: the shipped one of its name, else what the run recorded."""
    return _shipped_study(res.name) or res.study


def merged(new: pd.DataFrame, path: Path, study: dict) -> pd.DataFrame:
    """`new` plus the rows of the committed table at `path` whose cell (dataset, synthesizer) `new` does not
    hold, in the study config's order of datasets and synthesizers (then first seen)."""
    old = pd.read_csv(path, dtype=str, keep_default_na=False).drop(columns=[CEILING, VERDICT],
                                                                      errors="ignore")  # recomputed
    if "synthesizer" in old and TABLE_COLUMNS["generator"] in new and TABLE_COLUMNS["generator"] not in old:
        old.insert(2, TABLE_COLUMNS["generator"], [_generator_of(n) for n in old["synthesizer"]])
    if list(old.columns) != list(new.columns):
        raise SystemExit(f"{path}: columns {list(old.columns)} differ from this run's {list(new.columns)}; "
                         f"regenerate the whole table instead of --merge")
    ran = set(map(tuple, new[KEY].astype(str).to_numpy()))
    kept = old[[tuple(k) not in ran for k in old[KEY].to_numpy()]]
    both = pd.concat([kept, new.astype(str)], ignore_index=True)
    order = {}
    for col, listed in (("dataset", study.get("datasets") or []), ("synthesizer", study.get("synthesizers") or [])):
        seen = list(dict.fromkeys([*map(str, listed), *both[col]]))
        order[col] = both[col].map(seen.index)
    rank = order["dataset"] * 10_000 + order["synthesizer"]
    if "rank" in both:  # targets.csv: a cell's targets in their rank order
        rank = rank * 1_000 + both["rank"].astype(int)
    return both.iloc[np.argsort(rank.to_numpy(), kind="stable")].reset_index(drop=True)


RECHECK_SIDES = ("first run", "re-check")


def recheck_table(committed: pd.DataFrame, eps: pd.DataFrame, shadow_seeds: tuple[int, int]) -> pd.DataFrame:
    """Per cell of `eps` (this run, with ceilings): its committed row of epsilon.csv beside it, side by side."""
    first = committed.set_index(KEY)
    rows = []
    for _, r in eps.iterrows():
        key = (str(r["dataset"]), str(r["synthesizer"]))
        if key not in first.index:
            raise SystemExit(f"--recheck: {key[0]}/{key[1]} has no row in the committed epsilon.csv to re-check")
        old = first.loc[key]
        row = {"dataset": key[0], "synthesizer": key[1], TABLE_COLUMNS["generator"]: r[TABLE_COLUMNS["generator"]],
               TABLE_COLUMNS["epsilon"]: r[TABLE_COLUMNS["epsilon"]]}
        for side, src, seed in zip(RECHECK_SIDES, (old, r), shadow_seeds, strict=True):
            row.update({f"{side}: test fits": src["test fits"], f"{side}: shadow seed": seed,
                        f"{side}: audit AUC max": src["audit AUC max"], f"{side}: audit AUC mean": src["audit AUC mean"],
                        f"{side}: {TABLE_COLUMNS['audited']}": src[TABLE_COLUMNS["audited"]],
                        f"{side}: {CEILING}": src[CEILING]})
        rows.append(row)
    return pd.DataFrame(rows)


ONE_RUN_SIDES = ("per target", "one run")


def one_run_table(committed: pd.DataFrame, eps: pd.DataFrame, bounds: dict[tuple[str, str], dict]) -> pd.DataFrame:
    """Per one-run cell of `eps` (this run, with ceilings): its committed per-target row of epsilon.csv beside it."""
    first = committed.set_index(KEY)
    rows = []
    for _, r in eps.iterrows():
        key = (str(r["dataset"]), str(r["synthesizer"]))
        rec = bounds.get(key) or {}
        if rec.get("bound") != "one_run":
            raise SystemExit(f"--one-run: {key[0]}/{key[1]} was audited with the {rec.get('bound')} bound")
        if key not in first.index:
            raise SystemExit(f"--one-run: {key[0]}/{key[1]} has no row in the committed epsilon.csv to compare with")
        old = first.loc[key]
        if str(old["test fits"]) != str(r["test fits"]):
            raise SystemExit(f"--one-run: {key[0]}/{key[1]} ran {r['test fits']} test fits, the committed row "
                             f"{old['test fits']}: compare like with like")
        row = {"dataset": key[0], "synthesizer": key[1], TABLE_COLUMNS["generator"]: r[TABLE_COLUMNS["generator"]],
               TABLE_COLUMNS["epsilon"]: r[TABLE_COLUMNS["epsilon"]], "test fits": r["test fits"]}
        for side, src in zip(ONE_RUN_SIDES, (old, r), strict=True):
            if side == "one run":
                row.update({f"{side}: targets": rec["targets"],
                            f"{side}: right guesses": f"{rec.get('correct', 0)}/{rec.get('guesses', 0)}"})
            row.update({f"{side}: audit AUC max": src["audit AUC max"],
                        f"{side}: {TABLE_COLUMNS['audited']}": src[TABLE_COLUMNS["audited"]],
                        f"{side}: {CEILING}": src[CEILING]})
        rows.append(row)
    return pd.DataFrame(rows)


def _shadow_seed(metrics: str | dict) -> int:
    """The audit family's seed in a metrics config, named or as a run saved it (defaults filled by the family)."""
    from holdbench.benchmark.workflow.audit import family

    cfg = group_config("metrics", metrics) if isinstance(metrics, str) else metrics
    return family(cfg["families"]["audit"]).seed


#: the side-by-side tables and the columns of the committed epsilon.csv their first side repeats (with --refresh
#: they follow a re-published epsilon.csv row; their other side is the run that made them)
SIDE_TABLES = {"recheck.csv": (RECHECK_SIDES[0], ("test fits", "audit AUC max", "audit AUC mean",
                                                   TABLE_COLUMNS["audited"], CEILING)),
               "one_run.csv": (ONE_RUN_SIDES[0], ("audit AUC max", TABLE_COLUMNS["audited"], CEILING))}


def refresh_sides(out_dir: Path, eps: pd.DataFrame) -> list[str]:
    """Rewrite the first side of out_dir's side-by-side tables (SIDE_TABLES) from `eps` (epsilon.csv as
    written); returns what changed, as 'file dataset/synthesizer column: old -> new'."""
    committed = eps.astype(str).set_index(KEY)
    changed = []
    for name, (side, fields) in SIDE_TABLES.items():
        path = out_dir / name
        if not path.is_file():
            continue
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
        for i, r in table.iterrows():
            key = (r["dataset"], r["synthesizer"])
            if key not in committed.index:
                raise SystemExit(f"{path}: {key[0]}/{key[1]} has no row in epsilon.csv to take its {side!r} side from")
            for field in fields:
                col, new = f"{side}: {field}", committed.loc[key, field]
                if table.at[i, col] != new:
                    changed.append(f"{name} {key[0]}/{key[1]} {col}: {table.at[i, col]} -> {new}")
                    table.at[i, col] = new
        table.to_csv(path, index=False)
    return changed


def refresh(out_dir: Path) -> int:
    """Rewrite the committed epsilon.csv's derived columns (CEILING, VERDICT) from it and targets.csv, at the
    confidence of the audit study's metrics config (its provenance entry's command says so), the side-by-side
    tables' side that repeats epsilon.csv (refresh_sides), and redraw the figures from it."""
    from holdbench.benchmark.workflow.audit import family

    eps, targets = committed_epsilon(out_dir), pd.read_csv(out_dir / "targets.csv", dtype=str, keep_default_na=False)
    confidence = family(group_config("metrics", group_config("study", "audit")["metrics"])["families"]["audit"]) \
        .confidence
    eps = with_verdicts(with_ceilings(eps, targets, confidence), targets, confidence)
    eps.to_csv(out_dir / "epsilon.csv", index=False)
    changed = refresh_sides(out_dir, eps)
    prov_path = out_dir / "provenance.json"
    doc = json.loads(prov_path.read_text())
    step = f"python scripts/bench/audit_tables.py --refresh {out_dir}"
    touched = {"epsilon.csv"} | {c.split(" ", 1)[0] for c in changed}
    for t in doc["tables"]:
        if t["file"] in touched and step not in t["command"]:
            t["command"] = f"{t['command']}; {step}"
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    drawn = draw_figures(out_dir)
    print(f"{out_dir}: epsilon.csv's {CEILING!r} and {VERDICT!r} from its counts ({len(eps)} cells); "
          f"{', '.join(SIDE_TABLES)}: {len(changed)} value(s) taken from it{''.join(chr(10) + '  ' + c for c in changed)}; "
          f"figures: {[str(p) for p in drawn if p]}")
    return 0


def committed_epsilon(out_dir: Path) -> pd.DataFrame:
    """The committed epsilon.csv, as text (what a side-by-side table compares a run with)."""
    return pd.read_csv(out_dir / "epsilon.csv", dtype=str, keep_default_na=False)


def write_beside(res, table: pd.DataFrame, out_dir: Path, study_dir: Path, flag: str, title: str, sides: str,
                 merge: bool = False) -> int:
    """Write `table` (a run's cells beside their committed epsilon.csv rows) as <flag>.csv and its provenance
    entry: the command that ran the study and this script with --<flag>; `sides` says where its columns come from.
    With `merge`, the committed table's rows of cells this run does not hold are kept (`merged`) and the entry
    names both runs' commands and commits."""
    name = f"{flag.replace('-', '_')}.csv"
    prov_path = out_dir / "provenance.json"
    doc = json.loads(prov_path.read_text())
    previous = next((t for t in doc["tables"] if t["file"] == name), None)
    if merge:
        if previous is None or not (out_dir / name).is_file():
            raise SystemExit(f"--merge: {out_dir / name} and its provenance entry do not exist (nothing to merge with)")
        table = merged(table, out_dir / name, _study_of(res))
    table.to_csv(out_dir / name, index=False)
    base = next(t for t in doc["tables"] if t["file"] == "epsilon.csv")
    command = f"python scripts/bench/audit_tables.py {study_dir} {out_dir} --{flag}" + (" --merge" if merge else "")
    commits = [c[:7] for c in provenance(res)[2]]
    entry = {"file": name, "title": title, "command": f"holdbench run {res.name}; {command}",
             "source": f"{sides} from the {res.name} study's cells (metrics.json, audit_targets.csv), by "
                       f"scripts/bench/audit_tables.py --{flag}",
             "run_commit": ", ".join(commits) or None, "machine": base.get("machine"),
             "date": datetime.now(timezone.utc).strftime("%Y-%m-%d")}
    if merge:
        before = [c.strip() for c in str(previous.get("run_commit") or "").split(",") if c.strip()]
        shipped = _shipped_study(res.name)
        narrowed = "".join(f" --{key} {' '.join(map(str, res.study[key]))}" for key in ("datasets", "synthesizers")
                           if res.study.get(key) and res.study.get(key) != shipped.get(key))
        entry.update(command=f"{previous['command']}; then holdbench run {res.name}{narrowed}; {command} (its "
                             f"cells replace the rows of the same dataset and synthesizer)",
                     run_commit=", ".join(dict.fromkeys([*before, *commits])) or None)
    doc["tables"] = [t for t in doc["tables"] if t["file"] != name] + [entry]
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"{out_dir}: {name} ({len(table)} cells)")
    return 0


def _require(out_dir: Path, *names: str) -> None:
    """Stop, naming them, when out_dir lacks files this run reads (before any is written)."""
    missing = [n for n in names if not (out_dir / n).is_file()]
    if missing:
        raise SystemExit(f"{out_dir}: no {', '.join(missing)} (run docs/gen/export_results.py into it first: it "
                         f"writes the leaderboard and provenance.json; --recheck, --one-run and --refresh read the "
                         f"committed epsilon.csv)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study_dir", type=Path, nargs="?")
    ap.add_argument("out_dir", type=Path, nargs="?")
    ap.add_argument("--refresh", type=Path, metavar="OUT_DIR",
                    help="recompute only the columns derived from the committed epsilon.csv and targets.csv (the "
                         "largest provable ε and the audit gate) and the side of recheck.csv and one_run.csv that repeats "
                         "epsilon.csv, at the audit study's confidence, and redraw the figures; no run needed")
    ap.add_argument("--merge", action="store_true",
                    help="keep the committed rows of cells this run does not hold (run export_results.py --merge first; "
                         "with --one-run: of one_run.csv)")
    ap.add_argument("--figures", type=Path, help="where the figures go (default: results/img/<study> beside out_dir's "
                    "results/published)")
    ap.add_argument("--recheck", action="store_true",
                    help="write only recheck.csv: this run's cells beside their committed epsilon.csv rows")
    ap.add_argument("--one-run", action="store_true",
                    help="write only one_run.csv: this run's one-run cells beside their committed epsilon.csv rows")
    ap.add_argument("--fit-times", nargs="*", type=Path, default=[])
    ap.add_argument("--fit-times-command", default="python scripts/bench/audit_fit_times.py --dataset adult")
    a = ap.parse_args()
    if a.refresh:
        if a.study_dir or a.out_dir or a.recheck or a.one_run or a.merge or a.fit_times:
            raise SystemExit("--refresh rewrites the committed tables' derived columns; it takes no other argument")
        _require(a.refresh, "epsilon.csv", "targets.csv", "provenance.json")
        return refresh(a.refresh)
    if not (a.study_dir and a.out_dir):
        raise SystemExit("give STUDY_DIR OUT_DIR (a run's tables) or --refresh OUT_DIR")
    _require(a.out_dir, "provenance.json", *(("epsilon.csv",) if a.recheck or a.one_run else ()))
    res = load_results(a.study_dir)
    eps_rows, target_rows = _rows(res)
    if not eps_rows:
        raise SystemExit(f"{a.study_dir}: no cell with the audit's metrics (status ok)")
    eps = pd.DataFrame(eps_rows)
    targets = pd.DataFrame(target_rows)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    bounds = _bound_of(res)
    if a.recheck and a.one_run:
        raise SystemExit("--recheck and --one-run write different tables: give one")
    if a.recheck and a.merge:
        raise SystemExit("--recheck writes recheck.csv whole (the re-checked cells beside their first run): no --merge")
    if a.recheck or a.one_run:
        eps = with_ceilings(eps, targets, _confidence(res), bounds).astype(str)
    if a.recheck:
        seeds = (_shadow_seed(group_config("study", "audit")["metrics"]), _shadow_seed(res.study["metrics"]))
        return write_beside(res, recheck_table(committed_epsilon(a.out_dir), eps, seeds), a.out_dir, a.study_dir,
                            "recheck", "Cells re-audited with more test fits on another shadow seed",
                            "the first run's columns from epsilon.csv, the re-check's")
    if a.one_run:
        return write_beside(res, one_run_table(committed_epsilon(a.out_dir), eps, bounds), a.out_dir, a.study_dir,
                            "one-run", "The audit's cells under the one-run bound, beside the per-target bound",
                            "the per-target columns from epsilon.csv, the one-run columns", merge=a.merge)
    if a.merge:
        study = _study_of(res)
        for name in ("epsilon.csv", "targets.csv"):
            if not (a.out_dir / name).is_file():
                raise SystemExit(f"--merge: {a.out_dir / name} does not exist (nothing to merge with)")
        eps = merged(eps, a.out_dir / "epsilon.csv", study)
        targets = merged(targets, a.out_dir / "targets.csv", study)
    eps = with_verdicts(with_ceilings(eps, targets, _confidence(res), bounds), targets, _confidence(res), bounds)
    prov_path = a.out_dir / "provenance.json"
    doc = json.loads(prov_path.read_text())
    base = next(t for t in doc["tables"] if t["file"] == "leaderboard.csv")
    replaced = ("epsilon.csv", "targets.csv") + (("fit_times.csv",) if a.fit_times else ())
    tables = [t for t in doc["tables"] if t["file"] not in replaced]
    command = f"python scripts/bench/audit_tables.py {a.study_dir} {a.out_dir}" + (" --merge" if a.merge else "")
    source = (f"from the audit study's cells (metrics.json, audit_targets.csv) by scripts/bench/audit_tables.py; "
              f"regenerate with `holdbench run audit` + `python docs/gen/export_results.py` + `{command}`")
    common = {k: base.get(k) for k in ("run_commit", "run_date", "machine", "date", "group_by")}
    run = base["command"] if a.merge else "holdbench run audit"
    eps.to_csv(a.out_dir / "epsilon.csv", index=False)
    tables.append({"file": "epsilon.csv", "title": "Audited against configured ε, beside the population panel",
                   "command": f"{run}; {command}", "source": source, **common})
    targets.to_csv(a.out_dir / "targets.csv", index=False)
    tables.append({"file": "targets.csv", "title": "Per target: the shadow-model attack on each vulnerable record",
                   "command": f"{run}; {command}", "source": source, **common})
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
    order = {name: i for i, name in enumerate(("leaderboard.csv", "epsilon.csv", "targets.csv", "fit_times.csv"))}
    doc["tables"] = sorted(tables, key=lambda t: order.get(t["file"], len(order)))
    prov_path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    drawn = draw_figures(a.out_dir, a.figures)
    print(f"{a.out_dir}: epsilon.csv ({len(eps)} cells), targets.csv ({len(targets)} rows)"
          + (", fit_times.csv" if a.fit_times else "") + f"; figures: {[str(p) for p in drawn if p]}")
    return 0


def draw_figures(out_dir: Path, figures: Path | None = None) -> list:
    """The audit figure of each dataset of out_dir's epsilon.csv, in `figures` (default: results/img/<study> beside
    out_dir's results/published)."""
    figures = figures or out_dir.parent.parent / "img" / out_dir.name
    table = pd.read_csv(out_dir / "epsilon.csv")
    return [draw_audit(table_points(table, d), d, figures / FIGURE.format(dataset=safe(d)))
            for d in dict.fromkeys(table["dataset"].astype(str))]


if __name__ == "__main__":
    raise SystemExit(main())

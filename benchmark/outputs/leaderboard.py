"""The study leaderboard: one row per cell, and the per-synthesizer summary over seeds.

Rendered from `holdbench.benchmark.outputs.results.StudyResults` (read once by the collect job); its metric
columns are the registry's entries (holdbench.metrics.registry), in the order the families declare them.

Interval convention of `aggregate` (per dataset x synthesizer, over the ok cells; the kind is in
the summary's `interval` column and named under every table, see INTERVAL_NOTES):
- three or more values: mean +- t(0.975, n-1) * sd / sqrt(n), the t-interval over seeds ("t95");
- exactly two: the lowest and highest of the two seeds ("range"): a t interval with one degree of
  freedom (t = 12.7) spans most of the metric's scale and says nothing, the range says what was seen;
- exactly one value: a metric that carries its own interval (dcr_share's Wilson interval, an
  attack AUC's bootstrap interval) shows that cell's interval ("cell95"); every other interval is
  NaN, since a single seed says nothing about the spread over splits;
- no value: everything NaN.
A metric with fewer values than the row's ok cells (an n/a family in one seed) gets an interval
only when its own count calls for the same kind, so the row's label is never wrong.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from holdbench.benchmark.layout import canonical
from holdbench.benchmark.outputs.results import SETTING_PREFIX, STATUSES, TIMINGS, StudyResults, _number
from holdbench.contracts.io import clean_line, write_csv, write_text

IDENTITY = ("dataset", "synthesizer", "seed", "status", "reason")
#: timings shown in leaderboard.md, (header, column, digits)
_MD_TIMINGS = (("fit s", "fit_seconds", 1), ("sample s", "sample_seconds", 1),
               ("eval s", "evaluate_seconds", 1), ("peak MB", "peak_rss_mb", 0))


def leaderboard_columns(specs: list) -> list[str]:
    """Columns of leaderboard.csv, in order: identity, every registry metric (with its interval), timings."""
    cols = list(IDENTITY)
    for spec in specs:
        cols.append(spec.name)
        if spec.interval:
            cols += list(spec.interval)
    return cols + [t for t in TIMINGS if t not in cols]


def metric_columns(cells: pd.DataFrame, specs: list) -> list[str]:
    """Columns worth a mean over seeds: the registry metrics, then the other numeric results
    (reference values such as F1_holdout, timings); never identities, counts of rows or intervals."""
    skip = {"seed", "n_synthetic", "holdout_rule", "overhead_seconds"}
    skip |= {c for spec in specs if spec.interval for c in spec.interval}
    cols = [spec.name for spec in specs if spec.name in cells.columns]
    for col in cells.columns:
        if col in skip or col in cols or col.endswith(("_ci_low", "_ci_high", "_pvalue")) \
                or col.startswith(SETTING_PREFIX):
            continue
        if pd.api.types.is_numeric_dtype(cells[col]) and not pd.api.types.is_bool_dtype(cells[col]):
            cols.append(col)
    return cols


#: the interval kinds of `aggregate`, as the tables' footnotes name them
INTERVAL_NOTES = {
    "t95": "[a, b]: 95% t interval of the mean over the seeds",
    "range": "a–b: lowest and highest of the 2 seeds (too few seeds for a t interval: with one degree of "
             "freedom it would span most of the scale)",
    "cell95": "[a, b]: the one seed's own 95% interval (Wilson for the DCR share, bootstrap for an attack AUC)",
}


def interval_kind(n: int) -> str:
    """The interval `aggregate` shows for n values: t95 (n >= 3), range (n = 2), cell95 (n = 1), '' (none)."""
    return "t95" if n >= 3 else "range" if n == 2 else "cell95" if n == 1 else ""


def _interval(values: np.ndarray) -> tuple[float, float, float]:
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(values.mean())
    if n == 1:
        return mean, math.nan, math.nan
    if n == 2:
        return mean, float(values.min()), float(values.max())
    from scipy import stats

    half = float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


class MixedConfigError(ValueError):
    """Cells of one dataset x synthesizer were made under different configs: no mean over them."""


def check_same_config(cells: pd.DataFrame) -> None:
    """Raise MixedConfigError, listing the cells, when the cells of a dataset x synthesizer that
    record a config digest do not all record the same one (their seeds ran different configs)."""
    if "config_digest" not in cells.columns:
        return
    problems = []
    known = cells[cells["config_digest"].map(lambda v: isinstance(v, str) and bool(v))]
    for (dataset, synth), group in known.groupby(["dataset", "synthesizer"], sort=False):
        if group["config_digest"].nunique() > 1:
            listed = ", ".join(f"seed{s} ({d})" for s, d in zip(group["seed"], group["config_digest"]))
            problems.append(f"{dataset}/{synth}: {listed}")
    if problems:
        raise MixedConfigError(
            "refusing to average cells made under different configs (config digests differ): "
            + "; ".join(problems) + ". Run the study again: the workflow recomputes the cells whose config "
            "differs from the study's")


def aggregate(cells: pd.DataFrame, specs: list) -> pd.DataFrame:
    """Per dataset x synthesizer: n_seeds, n_ok, statuses, interval (its kind), `<m>_mean/_ci_low/_ci_high`.

    Only ok cells enter the means (a pass/fail metric becomes its pass rate). See the module
    docstring for the interval convention (`_ci_low/_ci_high` hold a range with two seeds).
    """
    check_same_config(cells)
    metrics = metric_columns(cells, specs)
    own_interval = {spec.name: spec.interval for spec in specs if spec.interval}
    rows = []
    for (dataset, synth), group in cells.groupby(["dataset", "synthesizer"], sort=False):
        ok = group[group["status"] == "ok"]
        counts = group["status"].value_counts()
        row: dict[str, Any] = {
            "dataset": dataset, "synthesizer": synth, "n_seeds": len(group), "n_ok": len(ok),
            "statuses": ", ".join(f"{counts[s]} {s}" for s in STATUSES if s in counts),
            "interval": interval_kind(len(ok)),
        }
        for m in metrics:
            values = ok[m].map(lambda v: float(v) if isinstance(v, bool) else _number(v)).dropna().to_numpy(dtype=float)
            mean, low, high = _interval(values)
            if interval_kind(len(values)) != row["interval"]:
                low = high = math.nan
            elif len(values) == 1 and m in own_interval:
                only = ok[ok[m].notna()].iloc[0]
                low, high = (_number(only.get(c)) for c in own_interval[m])
            row[f"{m}_mean"], row[f"{m}_ci_low"], row[f"{m}_ci_high"] = mean, low, high
        for col in _settings_columns(group):  # what the cells ran with (one config: check_same_config)
            known = group[col].dropna()
            row[col] = known.iloc[0] if len(known) else None
        rows.append(row)
    return pd.DataFrame(rows, columns=None if rows else ["dataset", "synthesizer", "n_seeds", "n_ok", "interval"])


def _settings_columns(cells: pd.DataFrame) -> list[str]:
    return [c for c in cells.columns if c.startswith(SETTING_PREFIX) or c in ("generator", "name_conflict")]


def ran_with(row: Any) -> str:
    """What a cells-table or summary row recorded it ran with, as shown beside its name: its ε (read from
    the cell's recorded config, never from the name) and a warning when the name states another setting."""
    parts = []
    eps = _number(row.get(SETTING_PREFIX + "epsilon"))
    if not math.isnan(eps):
        dom, fit = (_number(row.get(f"{SETTING_PREFIX}spent_epsilon_{k}")) for k in ("domain", "fit"))
        spent = f" = domain {dom:.3g} + fit {fit:.3g}" if not (math.isnan(dom) or math.isnan(fit)) else ""
        parts.append(f"ε {eps:g}{spent}")
    conflict = row.get("name_conflict")
    if isinstance(conflict, str) and conflict:
        parts.append(f"WARNING: {conflict}")
    return ", ".join(parts)


def synthesizer_label(row: Any) -> str:
    """A row's synthesizer name with `ran_with` in brackets when there is something to say."""
    extra = ran_with(row)
    return f"{row['synthesizer']} ({extra})" if extra else str(row["synthesizer"])


def interval_text(row: Any, metric: str, digits: int) -> str:
    """A summary row's interval of a metric as shown beside its mean: ' [a, b]' or ' (a–b)' for a range."""
    low, high = _fmt(row.get(f"{metric}_ci_low"), digits), _fmt(row.get(f"{metric}_ci_high"), digits)
    if not low or not high:
        return ""
    return f" ({low}–{high})" if row.get("interval") == "range" else f" [{low}, {high}]"


def interval_notes(summary: pd.DataFrame) -> list[str]:
    """The footnotes naming the interval kinds a summary's rows use, in INTERVAL_NOTES order."""
    used = set(summary["interval"]) if "interval" in summary else set()
    return [note for kind, note in INTERVAL_NOTES.items() if kind in used]


def _fmt(value: Any, digits: int) -> str:
    v = _number(value)
    return "" if math.isnan(v) else f"{v:.{digits}f}"


def value_text(spec, value: Any) -> str:
    """A table's text for a value of a metric: rounded to its digits; a pass/fail metric (spec.flag) as
    pass or fail (a cell's True/False, also as leaderboard.csv's text), its mean over seeds strictly
    between as a pass rate ('67% pass')."""
    if not spec.flag:
        return _fmt(value, spec.digits)
    value = {"True": True, "False": False}.get(value, value) if isinstance(value, str) else value
    v = float(value) if isinstance(value, bool) else _number(value)
    if math.isnan(v):
        return ""
    return "pass" if v == 1 else "fail" if v == 0 else f"{v:.0%} pass"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~])")


def _md_text(text: Any) -> str:
    """Cell text for a markdown table: one printable line; markdown and HTML characters
    backslash-escaped (CommonMark renders them literally), so no HTML entity is ever written."""
    return _MD_SPECIAL.sub(r"\\\1", clean_line(text, 2000))


def legend(specs: list) -> list[str]:
    """One markdown line per registry metric: label, which way is better, what it means."""
    return [f"- **{_md_text(sp.label)}** (`{sp.name}`, {sp.better}): {_md_text(sp.meaning)}" for sp in specs]


def arrow(spec) -> str:
    """A metric's direction for a column header: ↓ lower is better, ↑ higher is better, →x x is ideal."""
    return {"lower": "↓", "higher": "↑"}.get(spec.direction) or f"→{spec.ideal:g}"


def references(cells: pd.DataFrame) -> set[str]:
    """The synthesizers whose every cell is the holdout reference row (S = H): never marked best."""
    if "holdout_rule" not in cells:
        return set()
    ref = cells.groupby("synthesizer")["holdout_rule"].agg(lambda v: bool(len(v)) and all(x is True for x in v))
    return set(ref[ref].index)


def best_synthesizers(rows: pd.DataFrame, spec, exclude: set[str] = frozenset()) -> set[str]:
    """The synthesizers of `rows` (one dataset's summary rows) with the best `<metric>_mean` by the
    metric's direction (ties all count); none when fewer than two synthesizers have a value."""
    col = f"{spec.name}_mean"
    if col not in rows:
        return set()
    scores = {r["synthesizer"]: spec.badness(_number(r[col])) for _, r in rows.iterrows()
              if r["synthesizer"] not in exclude}
    scores = {k: v for k, v in scores.items() if not math.isnan(v)}
    if len(scores) < 2:
        return set()
    top = min(scores.values())
    return {k for k, v in scores.items() if v == top}


def render_markdown(results: StudyResults, summary: pd.DataFrame) -> str:
    """leaderboard.md: per dataset a table of the headline metrics and timings (every metric is in
    leaderboard.csv), then every cell that is not ok with its reason, then how to read it."""
    cells = results.table
    heads = [sp for sp in results.shown if not sp.flag]  # the columns with a best mean (pass/fail: none)
    shown = [(f"{sp.label} {arrow(sp)}", sp.name, sp.digits, sp.interval, sp) for sp in results.shown]
    shown += [(h, c, d, None, None) for h, c, d in _MD_TIMINGS]
    lines = [f"# Leaderboard: {_md_text(results.name)}", "",
             ("Means over the ok seeds; a metric with an interval shows it beside the mean (which interval is "
              "said under each table). "
              "↓ lower is better, ↑ higher is better, →x: x is ideal; the best mean of a column is in bold "
              "(the holdout reference row is never marked). "
              "Every metric of every cell is in leaderboard.csv; how to read them is at the end."), ""]
    refs = references(cells)
    for dataset in dict.fromkeys(cells["dataset"]):
        lines += [f"## {_md_text(dataset)}", ""]
        header = ["synthesizer", "status"] + [_md_text(h) for h, _, _, _, _ in shown]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        rows = summary[summary["dataset"] == dataset]
        best = {sp.name: best_synthesizers(rows, sp, refs) for sp in heads}
        for _, row in rows.iterrows():
            status = "ok" if row["n_ok"] == row["n_seeds"] else row["statuses"]
            vals = []
            for _, metric, digits, interval, spec in shown:
                text = value_text(spec, row.get(f"{metric}_mean")) if spec is not None else \
                    _fmt(row.get(f"{metric}_mean"), digits)
                if text and spec is not None and row["synthesizer"] in best.get(metric, ()):
                    text = f"**{text}**"
                if interval and text:
                    text += interval_text(row, metric, digits)
                vals.append(text)
            lines.append("| " + " | ".join([_md_text(synthesizer_label(row)), _md_text(status)] + vals) + " |")
        notes = interval_notes(rows)
        if notes and any(interval for _, _, _, interval, _ in shown):
            lines += ["", "Intervals: " + "; ".join(_md_text(n) for n in notes) + "."]
        failed = cells[(cells["dataset"] == dataset) & (cells["status"] != "ok")]
        if len(failed):
            lines += ["", "Cells that are not ok:", ""]
            for _, c in failed.iterrows():
                has_stage = isinstance(c.get("stage"), str) and c["stage"]
                stage = f" at {_md_text(c['stage'])}" if has_stage else ""
                lines.append(f"- {_md_text(canonical(c['dataset'], c['synthesizer'], c['seed']))}: **{_md_text(c['status'])}**"
                             f"{stage} — {_md_text(c['reason']) or '(no reason given)'}")
        lines += _na_lines(cells[(cells["dataset"] == dataset) & (cells["status"] == "ok")])
        lines.append("")
    if cells.empty:
        lines.append("No cells found.")
    lines += provenance_lines(results)
    lines += ["## How to read the metrics", "", *legend(results.specs)]
    return "\n".join(lines) + "\n"


def _na_lines(cells: pd.DataFrame) -> list[str]:
    """The ok cells whose numbers are not meaningful (too few rows) and their metric families that
    reported n/a (their values are empty above), with why."""
    from holdbench.metrics.result import NA_SUFFIX

    out = []
    for _, c in cells.iterrows():
        if isinstance(c.get("not_meaningful_reason"), str) and c["not_meaningful_reason"]:
            out.append(f"- {_md_text(canonical(c['dataset'], c['synthesizer'], c['seed']))}: **not meaningful**, "
                       f"{_md_text(c['not_meaningful_reason'])}")
        for col in (k for k in cells.columns if k.endswith(NA_SUFFIX)):
            if isinstance(c.get(col), str) and c[col]:
                out.append(f"- {_md_text(canonical(c['dataset'], c['synthesizer'], c['seed']))}: {_md_text(col[:-len(NA_SUFFIX)])} "
                           f"is n/a — {_md_text(c[col])}")
    return ["", "Values to read with care (the cell is ok): n/a families, tables too small to mean much:", "",
            *out] if out else []


def provenance(results: StudyResults) -> tuple[dict[str, str], dict[str, dict[str, str]], list[str]]:
    """(versions every cell that recorded them shares, {synthesizer: its other versions, e.g. R and
    its packages for synthpop}, git commits) from the cells' status.json."""
    per_synth: dict[str, dict[str, set]] = {}
    commits: list[str] = []
    for cell in results.cells:
        v = cell.status.get("versions")
        if isinstance(v, dict):
            for k, val in v.items():
                per_synth.setdefault(cell.synthesizer, {}).setdefault(str(k), set()).add(str(val))
        commit = cell.status.get("git_commit")
        if isinstance(commit, str) and commit not in commits:
            commits.append(commit)
    keys = [set(d) for d in per_synth.values()]
    shared_keys = set.intersection(*keys) if keys else set()
    common = {}
    for k in sorted(shared_keys):
        vals = set().union(*(d[k] for d in per_synth.values()))
        if len(vals) == 1:
            common[k] = vals.pop()
    own = {s: {k: " / ".join(sorted(v)) for k, v in sorted(d.items()) if k not in common}
           for s, d in per_synth.items()}
    return common, {s: d for s, d in own.items() if d}, commits


def provenance_lines(results: StudyResults) -> list[str]:
    """leaderboard.md's provenance section (empty when no cell recorded versions)."""
    common, own, commits = provenance(results)
    if not common and not own:
        return []
    lines = ["## Provenance", "", "Versions: " + (", ".join(f"{_md_text(k)} {_md_text(v)}" for k, v in common.items())
                                                  or "(none shared by every cell)")
             + f"; git commit: {_md_text(', '.join(commits) or 'unknown')}.", ""]
    lines += [f"- {_md_text(s)}: " + ", ".join(f"{_md_text(k)} {_md_text(v)}" for k, v in d.items())
              for s, d in own.items()]
    return [*lines, ""] if own else lines


#: cells_table columns that locate a cell rather than describe its result
_NOT_RESULTS = ("cell_id", "path", "stage", "config_digest", "overhead_seconds")


def leaderboard_table(results: StudyResults) -> pd.DataFrame:
    """The leaderboard.csv view of the cells, one row per cell: identity, the registry metrics (with
    their intervals), then every other scalar of metrics.json (reference values such as F1_holdout,
    dcr_train_mean, row counts) in the order the cells give them, then the timings."""
    out = results.table.copy()
    cols = leaderboard_columns(results.specs)
    for col in cols:
        if col not in out.columns:
            out[col] = math.nan
    extra = [c for c in out.columns if c not in cols and c not in _NOT_RESULTS]
    timings = [c for c in cols if c in TIMINGS]
    return out[[c for c in cols if c not in TIMINGS] + extra + timings]


def write_leaderboard(results: StudyResults) -> dict[str, Path]:
    """Write leaderboard.csv, leaderboard_summary.csv and leaderboard.md atomically; returns the paths."""
    lay = results.layout
    summary = aggregate(results.table, results.specs)
    paths = {"csv": lay.leaderboard_csv, "summary": lay.leaderboard_summary, "md": lay.leaderboard_md}
    write_csv(paths["csv"], leaderboard_table(results))
    write_csv(paths["summary"], summary)
    write_text(paths["md"], render_markdown(results, summary))
    return paths

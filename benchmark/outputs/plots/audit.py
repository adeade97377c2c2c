"""The privacy audit, one figure per dataset (audit_<dataset>.png): configured ε (x, log) against the audited
ε lower bound (`audit_epsilon_lower`, y) with the diagonal y = x drawn: a DP generator's point above the
diagonal audits above its configured ε (its implementation or preprocessing leaks). The points of one DP
generator (same `_target_`, its recorded ε) are joined in order of ε; generators without an ε (cart,
synthpop, the flips, the holdout) stand in a column of their own at the right ("no ε"), labelled. ε and
the generator come from what the cells recorded (status.json's config), never from a name. Drawn only
when the study has the audit's metric.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from holdbench.benchmark.outputs.plots._base import (
    REF_COLOR,
    display,
    metric_rows,
    new_figure,
    place_labels,
    reference_synths,
    safe,
    save,
)
from holdbench.benchmark.outputs.plots.frontier import recorded_settings

FIGURE = "audit_{dataset}.png"
CAPTION = ("Privacy audit: configured ε (x, log) against the audited ε lower bound (y; Clopper-Pearson from the "
           "per-target shadow-model attack); the diagonal is y = x: a DP generator above it leaks more than its ε "
           "allows. Generators without an ε stand in the right-hand column.")
ORDER = 85
METRIC = "audit_epsilon_lower"


def tasks(study) -> list:
    """make_plots' tasks for the audit figures of a study (_inputs.StudyInputs); none without the metric."""
    from holdbench.benchmark.outputs.plots._inputs import study_key

    if f"{METRIC}_mean" not in study.summary:
        return []
    out = []
    for dataset in dict.fromkeys(study.cells["dataset"]):
        path = study.plot_dir / FIGURE.format(dataset=safe(dataset))
        out.append((study_key(study.code, plot_audit, study.cells, study.summary, dataset), path,
                    (plot_audit, study.cells, study.summary, dataset, path)))
    return out


def plot_audit(cells: pd.DataFrame, summary: pd.DataFrame, dataset: str, path: Path) -> Path | None:
    rows = metric_rows(summary, dataset, [METRIC])
    y = rows[f"{METRIC}_mean"].to_numpy(float)
    if not np.isfinite(y).any():
        return None
    names = list(rows["synthesizer"])
    ran = recorded_settings(cells, dataset)
    eps = np.array([(ran.get(n) or {}).get("epsilon", np.nan) for n in names], float)
    dp = np.isfinite(eps) & np.isfinite(y)
    fig = new_figure(6.4, 5.2)
    ax = fig.subplots()
    lo = min([0.05, *eps[dp]]) if dp.any() else 0.05
    hi = max([10.0, *eps[dp]]) if dp.any() else 10.0
    free = hi * 4  # the column of generators without an ε
    top = max(1.0, float(np.nanmax(y)) * 1.15)
    line = np.geomspace(lo / 1.5, hi * 1.5, 50)
    ax.plot(line, line, color="0.55", linestyle="--", linewidth=1, zorder=0, label="audited = configured ε")
    points = []
    groups: dict[str, list[int]] = {}
    for i, n in enumerate(names):
        if dp[i]:
            groups.setdefault(ran[n]["generator"], []).append(i)
    for gen, idx in sorted(groups.items()):
        idx.sort(key=lambda i: eps[i])
        drawn = ax.plot(eps[idx], y[idx], marker="o", markersize=5, linewidth=1.2, zorder=2,
                        label=gen.rsplit(".", 1)[-1])
        above = [i for i in idx if y[i] > eps[i]]
        if above:
            ax.plot(eps[above], y[above], marker="o", markersize=11, markerfacecolor="none", color="tab:red",
                    linestyle="none", zorder=3)
        points += [(eps[i], y[i], f"{eps[i]:g}", drawn[0].get_color()) for i in idx]
    refs = reference_synths(cells)
    for i, n in enumerate(names):
        if dp[i] or not np.isfinite(y[i]):
            continue
        ref = n in refs
        ax.plot([free], [y[i]], marker="D" if ref else "s", color=REF_COLOR if ref else "0.25", markersize=5,
                linestyle="none", zorder=3)
        points.append((free, y[i], display(n, "", 18), REF_COLOR if ref else "0.15"))
    place_labels(ax, points)
    ax.axvline(hi * 2, color="0.85", linewidth=0.8)
    ax.set_xscale("log")
    ticks = [t for t in (0.1, 0.3, 1, 3, 10, 30, 100) if lo / 1.5 <= t <= hi * 1.5]
    ax.set_xticks([*ticks, free], [*(f"{t:g}" for t in ticks), "no ε"])
    ax.set_xlim(lo / 1.6, free * 1.8)
    ax.set_ylim(-0.05 * top, top)
    ax.set_xlabel("configured ε (log scale)")
    ax.set_ylabel("audited ε lower bound")
    missing = [n for n, v in zip(names, y, strict=True) if not np.isfinite(v)]
    ax.set_title(f"{dataset}: audited against configured ε"
                 + (f"  (no audit: {', '.join(missing)})" if missing else ""), loc="left", fontsize=9)
    if groups:
        ax.legend(loc="upper left", fontsize=7, frameon=False)
    return save(fig, path)


def plot_audit_targets(cell, path: Path | None = None) -> Path | None:
    """A cell's vulnerable targets as the audit saw them (its audit_targets table): the masked record, the
    per-target attack's AUC, TPR at low FPR and ε bound, and the counts at the threshold."""
    table = cell.artifacts.get("audit_targets")
    if not isinstance(table, pd.DataFrame) or table.empty or "auc" not in table:
        return None
    values = [c for c in table.columns if c.startswith("value:")]
    header = ["#", *(c.removeprefix("value:") for c in values), "AUC", "TPR@low FPR", "ε bound", "TP/m", "FP/n"]
    rows = []
    for _, r in table.iterrows():
        rows.append([str(int(r["rank"])), *(display(r[c], "", 16) for c in values), f"{r['auc']:.2f}",
                     f"{r['tpr_at_low_fpr']:.2f}", f"{r['epsilon_lower']:.2f}",
                     f"{int(r['tp'])}/{int(r['tp'] + r['fn'])}", f"{int(r['fp'])}/{int(r['fp'] + r['tn'])}"])
    fig = new_figure(max(6.0, 1.1 * len(header)), 0.9 + 0.32 * len(rows))
    ax = fig.subplots()
    ax.axis("off")
    grid = ax.table(cellText=rows, colLabels=header, loc="center", cellLoc="center")
    grid.auto_set_font_size(False)
    grid.set_fontsize(7)
    eps = cell.metrics.get("audit_epsilon_lower")
    conf = cell.metrics.get("audit_epsilon_configured")
    fig.suptitle(f"{display(cell.cell_id, '', 60)}: vulnerable targets (masked); audited ε ≥ "
                 f"{eps if eps is None else format(eps, '.2f')}" + ("" if conf is None else f", configured ε {conf:g}"),
                 fontsize=8)
    return save(fig, path)

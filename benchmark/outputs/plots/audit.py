"""The privacy audit, one figure per dataset (audit_<dataset>.png): configured ε (x, log) against the audited
ε lower bound (`audit_epsilon_lower`, y) with the diagonal y = x drawn: a DP generator's point above the
diagonal audits above its configured ε (its implementation or preprocessing leaks), and is ringed, as is a
generator without an ε whose bound is above 0: the cells that fail the audit's gate in `holdbench check`. The
points of one DP
generator (same `_target_`, its recorded ε) are joined in order of ε, set slightly apart from the other
generators' on x; generators without an ε (cart, synthpop, the flips, the holdout) each have a slot at the
right, named on the axis. ε and the generator come from what the cells recorded (status.json's config),
never from a name: in a study's plots directly, in the docs' figures through the committed epsilon.csv
that scripts/bench/audit_tables.py writes from the same records (`table_points`). Drawn only when the
study has the audit's metric.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from holdbench.benchmark.outputs.gates import AUDIT_TARGET, MEMBERSHIP_TARGET
from holdbench.benchmark.outputs.plots._base import (
    REF_COLOR,
    REFERENCE_NAME,
    display,
    metric_rows,
    new_figure,
    reference_synths,
    safe,
    save,
)
from holdbench.benchmark.outputs.plots.frontier import recorded_settings

FIGURE = "audit_{dataset}.png"
CAPTION = ("Privacy audit: configured ε (x, log) against the audited ε lower bound (y; Clopper-Pearson from the "
           "per-target shadow-model attack); the diagonal is y = x: a DP generator above it leaks more than its ε "
           "allows. Each generator without an ε has a slot of its own at the right.")
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


#: epsilon.csv's columns the figure reads (scripts/bench/audit_tables.py writes them under these labels)
TABLE_COLUMNS = {"generator": "generator", "epsilon": "configured ε", "audited": "audited ε (lower bound)"}
#: epsilon.csv's column of the largest ε the cell's audit could prove (a perfect attack's bound)
CEILING = "largest provable ε"


def audit_points(cells: pd.DataFrame, summary: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The figure's points of one dataset from a study's cells: synthesizer, generator (the class name of
    its recorded `_target_`), epsilon (recorded; NaN without one), audited (the audit's ε bound),
    reference (the holdout row)."""
    rows = metric_rows(summary, dataset, [METRIC])
    names = [str(n) for n in rows["synthesizer"]]
    ran = recorded_settings(cells, dataset)
    refs = reference_synths(cells)
    return pd.DataFrame({
        "synthesizer": names,
        "generator": [str((ran.get(n) or {}).get("generator") or "").rsplit(".", 1)[-1] for n in names],
        "epsilon": [float((ran.get(n) or {}).get("epsilon", np.nan)) for n in names],
        "audited": rows[f"{METRIC}_mean"].to_numpy(float),
        "reference": [n in refs for n in names]})


def table_points(table: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The figure's points of one dataset from the committed epsilon.csv (TABLE_COLUMNS)."""
    missing = [c for c in ("dataset", "synthesizer", *TABLE_COLUMNS.values()) if c not in table.columns]
    if missing:
        raise ValueError(f"the audit table has no column(s) {missing}")
    mine = table[table["dataset"].astype(str) == dataset]
    return pd.DataFrame({
        "synthesizer": mine["synthesizer"].astype(str).to_numpy(),
        "generator": mine[TABLE_COLUMNS["generator"]].fillna("").astype(str).to_numpy(),
        "epsilon": pd.to_numeric(mine[TABLE_COLUMNS["epsilon"]], errors="coerce").to_numpy(float),
        "audited": pd.to_numeric(mine[TABLE_COLUMNS["audited"]], errors="coerce").to_numpy(float),
        "ceiling": pd.to_numeric(mine[CEILING], errors="coerce").to_numpy(float) if CEILING in mine
        else np.full(len(mine), np.nan),
        "reference": (mine["synthesizer"].astype(str) == REFERENCE_NAME).to_numpy()})


def plot_audit(cells: pd.DataFrame, summary: pd.DataFrame, dataset: str, path: Path) -> Path | None:
    return draw_audit(audit_points(cells, summary, dataset), dataset, path)


def draw_audit(points: pd.DataFrame, dataset: str, path: Path) -> Path | None:
    """Configured ε (x, log) against the audited ε (y), the diagonal drawn. The DP generators' points
    are joined by generator and set slightly apart on x (a dodge) so that equal values stay visible;
    each generator without an ε has a slot of its own at the right, named on the axis."""
    y = points["audited"].to_numpy(float)
    if not np.isfinite(y).any():
        return None
    names = list(points["synthesizer"])
    eps = points["epsilon"].to_numpy(float)
    dp = np.isfinite(eps) & np.isfinite(y)
    free_idx = [i for i in range(len(names)) if not dp[i] and np.isfinite(y[i])]
    fig = new_figure(6.4 + 0.25 * len(free_idx), 5.2)
    ax = fig.subplots()
    lo = min([0.05, *eps[dp]]) if dp.any() else 0.05
    hi = max([10.0, *eps[dp]]) if dp.any() else 10.0
    top = max(1.0, float(np.nanmax(y)) * 1.15)
    line = np.geomspace(lo / 1.5, hi * 1.5, 50)
    ax.plot(line, line, color="0.55", linestyle="--", linewidth=1, zorder=0, label="audited = configured ε")
    ceilings = points["ceiling"].to_numpy(float) if "ceiling" in points else np.array([])
    for k, c in enumerate(np.unique(ceilings[np.isfinite(ceilings)])):  # what a perfect attack would prove
        ax.axhline(c, color="tab:purple", linestyle=":", linewidth=1, zorder=0,
                   label="largest ε this audit can prove" if k == 0 else None)
        top = max(top, c * 1.15)
    groups: dict[str, list[int]] = {}
    ringed: list[tuple[float, float]] = []  # (x, y) of the cells that fail the audit's gate
    for i in np.flatnonzero(dp):
        groups.setdefault(str(points["generator"].iloc[i]) or names[i], []).append(int(i))
    for k, (gen, idx) in enumerate(sorted(groups.items())):
        idx.sort(key=lambda i: eps[i])
        x = eps[idx] * 1.12 ** (k - (len(groups) - 1) / 2)
        ax.plot(x, y[idx], marker="o", markersize=5, linewidth=1.2, zorder=2, label=gen)
        ringed += [(float(x[j]), float(y[i])) for j, i in enumerate(idx) if not AUDIT_TARGET.admits(y[i] - eps[i])]
    slots = [hi * 3 * 1.45 ** j for j in range(len(free_idx))]
    for x, i in zip(slots, free_idx, strict=True):
        ref = bool(points["reference"].iloc[i])
        ax.plot([x], [y[i]], marker="D" if ref else "s", color=REF_COLOR if ref else "0.25", markersize=5,
                linestyle="none", zorder=3)
        if not ref and not MEMBERSHIP_TARGET.admits(y[i]):  # no DP guarantee, a bound above 0
            ringed.append((x, float(y[i])))
    if ringed:
        ax.plot(*zip(*ringed, strict=True), marker="o", markersize=11, markerfacecolor="none", color="tab:red",
                linestyle="none", zorder=3, label="fails the audit gate (holdbench check)")
    if slots:
        ax.axvline(hi * 2, color="0.85", linewidth=0.8)
    ax.set_xscale("log")
    ticks = [t for t in (0.1, 0.3, 1, 3, 10, 30, 100) if lo / 1.5 <= t <= hi * 1.5]
    ax.set_xticks([*ticks, *slots], [*(f"{t:g}" for t in ticks), *(display(names[i], "", 18) for i in free_idx)])
    ax.minorticks_off()
    for label in ax.get_xticklabels()[len(ticks):]:
        label.set_rotation(40)
        label.set_horizontalalignment("right")
        label.set_fontsize(7)
    ax.set_xlim(lo / 1.6, (slots[-1] * 1.3) if slots else hi * 2)
    ax.set_ylim(-0.05 * top, top)
    ax.set_xlabel("configured ε (log scale); at the right, generators without an ε")
    ax.set_ylabel("audited ε lower bound")
    missing = [n for n, v in zip(names, y, strict=True) if not np.isfinite(v)]
    ax.set_title(f"{dataset}: audited against configured ε"
                 + (f"  (no audit: {', '.join(missing)})" if missing else ""), loc="left", fontsize=9)
    if groups or ringed:
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

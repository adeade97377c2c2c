"""Per-cell figures, one per artifact table a cell's metric families wrote (`<artifact>.png`).

Each function takes a `holdbench.benchmark.outputs.results.Cell` and the path to write, reads only
`cell.artifacts` and `cell.metrics`, and returns None (drawing nothing) when its table is
absent or unusable: a figure whose inputs are missing is simply not drawn.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.outputs.plots._base import H_COLOR, REF_COLOR, SYNTH_COLOR, T_COLOR, fmt, new_figure, save, short


def _table(cell, name: str, columns: set[str]) -> pd.DataFrame | None:
    table = cell.artifacts.get(name)
    if not isinstance(table, pd.DataFrame) or not columns <= set(table.columns) or table.empty:
        return None
    return table


def _num(table: pd.DataFrame, col: str) -> np.ndarray:
    return pd.to_numeric(table[col], errors="coerce").to_numpy(float)


def _title(fig, cell, what: str) -> None:
    fig.suptitle(f"{short(cell.cell_id, 70)}: {what}", fontsize=9)


def plot_cell_marginals(cell, path: Path | None = None) -> Path | None:
    """Histograms of the k-way TVDs of S (vs T) and of H (vs T), one panel per k."""
    marg = _table(cell, "marginals", {"k", "tvd_synthetic", "tvd_holdout"})
    if marg is None:
        return None
    k_values = pd.to_numeric(marg["k"], errors="coerce").dropna()
    ks = sorted({int(k) for k in k_values})
    if not ks:
        return None
    fig = new_figure(3.3 * len(ks) + 0.4, 2.9, layout=None)
    axes = fig.subplots(1, len(ks), squeeze=False).ravel()
    k_col = pd.to_numeric(marg["k"], errors="coerce")
    for ax, k in zip(axes, ks):
        sub = marg[k_col == k]
        s, h = _num(sub, "tvd_synthetic"), _num(sub, "tvd_holdout")
        s, h = s[np.isfinite(s)], h[np.isfinite(h)]
        edges = np.histogram_bin_edges(np.concatenate([s, h, [0.0]]), bins=20)
        for values, color, who, filled in ((h, H_COLOR, "H", True), (s, SYNTH_COLOR, "S", False)):
            mean = fmt(float(values.mean()), 2) if len(values) else "n/a"
            ax.stairs(np.histogram(values, edges)[0], edges, fill=filled, alpha=0.45 if filled else 1.0,
                      color=color, linewidth=1.6, label=f"{who} vs T (mean {mean})")
        ax.set_title(f"{k}-way marginals (n = {len(sub):,})", loc="left")
        ax.set_xlabel("total variation distance to T")
        ax.legend()
    axes[0].set_ylabel("marginals")
    _title(fig, cell, "TVD of every marginal, S against the holdout H")
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.2, top=0.8, wspace=0.28)
    return save(fig, path or cell.path / "marginals.png", tight=False)


def plot_dcr_histogram(cell, path: Path) -> Path | None:
    """S's distance to its closest record in T against in H (Clearbox's picture): the share of S at
    each Hamming distance. The two bars should match; more mass on the left for T = S copies T."""
    hist = _table(cell, "dcr_histogram", {"distance", "to_train", "to_holdout"})
    if hist is None:
        return None
    d = _num(hist, "distance")
    series = [("S to T (training)", _num(hist, "to_train"), SYNTH_COLOR),
              ("S to H (holdout)", _num(hist, "to_holdout"), H_COLOR)]
    if "holdout_to_train" in hist.columns:
        series.append(("H to T (reference)", _num(hist, "holdout_to_train"), T_COLOR))
    total = [np.nansum(c) for _, c, _ in series]
    if not all(t > 0 for t in total) or not np.isfinite(d).all():
        return None
    fig = new_figure(6.4, 3.1)
    ax = fig.subplots()
    width = 0.8 / len(series)
    for i, ((label, counts, color), n) in enumerate(zip(series, total)):
        ax.bar(d + (i - (len(series) - 1) / 2) * width, np.nan_to_num(counts) / n, width=width, color=color,
               label=f"{label}, mean {fmt(float(np.nansum(d * counts) / n), 3)}")
    ax.set_xticks(d[:: max(1, math.ceil(len(d) / 16))])
    ax.set_xlabel("Hamming distance to the closest record (columns that differ)")
    ax.set_ylabel("share of synthetic records")
    ax.legend()
    share, low, high = (cell.metrics.get(k) for k in ("dcr_share", "dcr_share_ci_low", "dcr_share_ci_high"))
    note = ""
    if isinstance(share, (int, float)) and not isinstance(share, bool):
        note = f"DCR share {share:.3f}"
        if isinstance(low, (int, float)) and isinstance(high, (int, float)):
            note += f" [{low:.3f}, {high:.3f}]"
    _title(fig, cell, "distance to closest record" + (f" ({note})" if note else ""))
    return save(fig, path)


def plot_nndr(cell, path: Path) -> Path | None:
    """Distribution (ECDF) of the nearest/second-nearest distance ratio to T, for S and for H (ANITA
    D2.2): S's curve above H's at small ratios = synthetic records with one distinctly close T record."""
    dist = _table(cell, "nndr_distribution", {"quantile", "synthetic", "holdout"})
    if dist is None:
        return None
    q = _num(dist, "quantile")
    s, h = _num(dist, "synthetic"), _num(dist, "holdout")
    if not (np.isfinite(s).any() or np.isfinite(h).any()):
        return None
    fig = new_figure(5.4, 3.3)
    ax = fig.subplots()
    ax.plot(h, q, color=H_COLOR, linewidth=1.8, drawstyle="steps-post", label="H (holdout) to T")
    ax.plot(s, q, color=SYNTH_COLOR, linewidth=1.4, drawstyle="steps-post", label="S (synthetic) to T")
    ax.axhline(0.05, color="0.6", linestyle=":", linewidth=1)
    ax.text(0.0, 0.05, " 5th percentile", va="bottom", fontsize=6.5, color="0.4")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1)
    ax.set_xlabel("NNDR: distance to nearest / to 2nd-nearest T record (Gower)")
    ax.set_ylabel("share of records at or below")
    ax.legend(loc="upper left")
    _title(fig, cell, "NNDR distribution")
    return save(fig, path)


def plot_mia_roc(cell, path: Path) -> Path | None:
    """ROC curve of every membership-inference attack (linear and log FPR); the diagonal is ideal."""
    roc = _table(cell, "mia_roc", {"attack", "fpr", "tpr"})
    if roc is None:
        return None
    fig = new_figure(9.0, 3.4)
    axes = fig.subplots(1, 2)
    colors = ["tab:blue", "tab:green", "tab:purple", "tab:red", "tab:brown", "tab:olive"]
    for i, (attack, group) in enumerate(roc.groupby("attack", sort=False)):
        fpr, tpr = _num(group, "fpr"), _num(group, "tpr")
        auc = cell.metrics.get(f"mia_{attack}_auc")
        label = f"{attack}" + (f" (AUC {auc:.3f})" if isinstance(auc, (int, float)) and math.isfinite(auc) else "")
        for ax in axes:
            ax.plot(fpr, tpr, color=colors[i % len(colors)], linewidth=1.3, label=label)
    for ax, log in zip(axes, (False, True)):
        grid = np.logspace(-3, 0, 50) if log else np.array([0.0, 1.0])
        ax.plot(grid, grid, color="0.5", linestyle="--", linewidth=1, label="random guess" if not log else None)
        ax.set_xlabel("false positive rate" + (" (log)" if log else ""))
        ax.set_ylabel("true positive rate" + (" (log)" if log else ""))
        if log:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(1e-3, 1)
            ax.set_ylim(1e-3, 1)
    axes[0].legend(loc="lower right")
    _title(fig, cell, "membership inference ROC (members = T records, non-members = H records)")
    return save(fig, path)


def plot_disclosure(cell, path: Path) -> Path | None:
    """Attribute disclosure per radius: the largest and mean ratio for targets drawn from T against
    targets drawn from H (what the population itself reveals)."""
    curve = _table(cell, "disclosure_curve", {"delta", "targets", "max_ratio", "mean_ratio"})
    if curve is None:
        return None
    panels = [("max_ratio", "largest ratio over targets"), ("mean_ratio", "mean ratio over targets")]
    if "share_above_c" in curve.columns:
        panels.append(("share_above_c", "share of targets above c"))
    fig = new_figure(3.3 * len(panels) + 0.4, 3.1)
    axes = fig.subplots(1, len(panels))
    for ax, (col, label) in zip(axes, panels):
        for who, color, marker in (("train", SYNTH_COLOR, "o"), ("holdout", REF_COLOR, "s")):
            sub = curve[curve["targets"].astype(str) == who]
            if len(sub):
                ax.plot(_num(sub, "delta"), _num(sub, col), marker=marker, markersize=3.5, color=color,
                        label=f"targets from {'T' if who == 'train' else 'H'}")
        ax.set_xlabel("radius δ (standardised quasi-identifiers)")
        ax.set_title(label, loc="left")
    axes[0].legend()
    _title(fig, cell, "attribute disclosure, T against H")
    return save(fig, path)


def plot_tuning_trace(cell, path: Path) -> Path | None:
    """The synthesizer's tuning: the objective per evaluation and the best so far, per optimiser seed."""
    trace = _table(cell, "tuning_trace", {"iteration", "objective"})
    if trace is None:
        return None
    seeds = trace["optimizer_seed"] if "optimizer_seed" in trace.columns else pd.Series(0, index=trace.index)
    panels = [("objective", "objective (higher is better)")]
    if "mean_pmse_ratio" in trace.columns:
        panels.append(("mean_pmse_ratio", "mean pMSE ratio (1 ideal)"))
    fig = new_figure(4.4 * len(panels) + 0.4, 3.1)
    axes = np.atleast_1d(fig.subplots(1, len(panels)))
    colors = ["tab:blue", "tab:green", "tab:purple", "tab:red"]
    for i, seed in enumerate(dict.fromkeys(seeds)):
        sub = trace[seeds == seed]
        it = _num(sub, "iteration")
        for ax, (col, _) in zip(axes, panels):
            values = _num(sub, col)
            ax.plot(it, values, "o", markersize=3, color=colors[i % len(colors)], alpha=0.7,
                    label=f"optimiser seed {seed}")
            if col == "objective":
                ax.plot(it, np.fmax.accumulate(np.nan_to_num(values, nan=-np.inf)), color=colors[i % len(colors)],
                        linewidth=1.2, drawstyle="steps-post")
    for ax, (_, label) in zip(axes, panels):
        ax.set_xlabel("evaluation")
        ax.set_title(label, loc="left")
    axes[0].legend()
    _title(fig, cell, "tuning trace (line: best so far)")
    return save(fig, path)


def plot_audit_targets(cell, path: Path | None = None) -> Path | None:
    """The audit's targets table (holdbench.benchmark.outputs.plots.audit.plot_audit_targets)."""
    from holdbench.benchmark.outputs.plots.audit import plot_audit_targets as plot

    return plot(cell, path)


#: artifact name -> (figure function, caption for the report)
CELL_FIGURES = {
    "marginals": (plot_cell_marginals, ("TVD of every k-way marginal: S against T (blue) and the holdout H "
                                       "against T (orange). S's histogram far right of H's = poor fidelity.")),
    "dcr_histogram": (plot_dcr_histogram, ("Distance of each synthetic record to its closest record in T and in H. "
                                          "The bars should match; more S mass at small distances to T = S "
                                          "copies training records.")),
    "nndr_distribution": (plot_nndr, ("NNDR (nearest / 2nd-nearest distance to T) of S and of H (ANITA D2.2). "
                                     "S's curve above H's at small ratios = records with one distinctly close "
                                     "T record.")),
    "mia_roc": (plot_mia_roc, "Membership inference: ROC of each attack; the diagonal (AUC 0.5) is ideal."),
    "disclosure_curve": (plot_disclosure, ("Attribute disclosure per radius, targets from T against targets from "
                                          "H; T above H = leakage of training records.")),
    "tuning_trace": (plot_tuning_trace, "The synthesizer's own parameter tuning: objective per evaluation."),
    "audit_targets": (plot_audit_targets, ("Privacy audit: the cell's most vulnerable records of T (masked) and the "
                                           "shadow-model attack on each: AUC, TPR at low FPR, ε lower bound, member "
                                           "and non-member test fits called member.")),
}

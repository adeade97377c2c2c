"""The privacy-utility frontier, one figure per dataset (frontier_<dataset>.png).

Two panels share the x axis, the F3 ratio (log; 1 = as close to T as the holdout is): best
membership-inference AUC (`mia_auc_max`, 0.5 ideal) and DCR share (0.5 ideal) on y. One point per
synthesizer (mean over seeds); the epsilon variants of one DP generator (`<name>_eps<ε>`) are joined
in order of ε and labelled with it; the holdout and the flip baselines are reference marks (orange
diamond, grey crosses joined by a dashed line). Drawn only when the study has both metrics.
"""

from __future__ import annotations

import re
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

FIGURE = "frontier_{dataset}.png"
CAPTION = ("Privacy-utility frontier: F3 ratio (x, log, 1 ideal) against the best membership-inference AUC and the "
           "DCR share (0.5 ideal both); DP generators' points are joined along epsilon (labels: ε), the holdout "
           "(orange diamond) and the flips (grey crosses, dashed) are the references.")
METRICS = ("F3_ratio", "mia_auc_max", "dcr_share")
_EPS = re.compile(r"^(?P<base>.+)_eps(?P<eps>[0-9.]+)$")
_FLIP = re.compile(r"^flip(?P<p>\d+)$")


def epsilon_of(name: str) -> tuple[str, float] | None:
    """(generator, ε) of an ε variant's name (`mst_eps0.3` -> ('mst', 0.3)), else None."""
    m = _EPS.match(name)
    return (m["base"], float(m["eps"])) if m else None


def frontier_tasks(code: str, cells: pd.DataFrame, summary: pd.DataFrame, plot_dir: Path, key) -> list:
    """make_plots' tasks (key, path, (fn, *args)) for the frontier figures; none without the metrics."""
    if not all(f"{m}_mean" in summary for m in METRICS):
        return []
    out = []
    for dataset in dict.fromkeys(cells["dataset"]):
        path = plot_dir / FIGURE.format(dataset=safe(dataset))
        out.append((key(code, plot_frontier, cells, summary, dataset), path,
                    (plot_frontier, cells, summary, dataset, path)))
    return out


def plot_frontier(cells: pd.DataFrame, summary: pd.DataFrame, dataset: str, path: Path) -> Path | None:
    rows = metric_rows(summary, dataset, list(METRICS))
    x = rows["F3_ratio_mean"].to_numpy(float)
    if not np.isfinite(x).any():
        return None
    refs = reference_synths(cells)
    names = list(rows["synthesizer"])
    fig = new_figure(7.0, 7.6)
    axes = fig.subplots(2, 1, sharex=True)
    for ax, metric, label in ((axes[0], "mia_auc_max", "best membership-inference AUC (0.5 ideal)"),
                              (axes[1], "dcr_share", "DCR share (0.5 ideal)")):
        y = rows[f"{metric}_mean"].to_numpy(float)
        good = np.isfinite(x) & np.isfinite(y) & (x > 0)
        ax.axhline(0.5, color="0.7", linestyle=":", zorder=0)
        ax.axvline(1, color="0.7", linestyle=":", zorder=0)
        flips = sorted((int(_FLIP.match(n)["p"]), i) for i, n in enumerate(names) if _FLIP.match(n) and good[i])
        if flips:
            idx = [i for _, i in flips]
            ax.plot(x[idx], y[idx], color="0.6", linestyle="--", marker="x", linewidth=1, zorder=1, label="flips")
        groups: dict[str, list[tuple[float, int]]] = {}
        for i, n in enumerate(names):
            if good[i] and epsilon_of(n):
                base, eps = epsilon_of(n)
                groups.setdefault(base, []).append((eps, i))
        points = []
        for base, members in sorted(groups.items()):
            members.sort()
            idx = [i for _, i in members]
            line = ax.plot(x[idx], y[idx], marker="o", markersize=4.5, linewidth=1.2, zorder=2, label=f"{base} (ε)")
            points += [(x[i], y[i], f"{eps:g}", line[0].get_color()) for eps, i in members]
        for i, n in enumerate(names):
            if not good[i] or epsilon_of(n) or _FLIP.match(n):
                continue
            ref = n in refs
            ax.plot([x[i]], [y[i]], marker="D" if ref else "s", color=REF_COLOR if ref else "0.25",
                    markersize=6 if ref else 4.5, linestyle="none", zorder=3)
            points.append((x[i], y[i], display(n, "", 18), REF_COLOR if ref else "0.15"))
        place_labels(ax, points)
        ax.set_xscale("log")
        ax.set_ylabel(label)
        ax.legend(loc="best", frameon=False)
    missing = [display(n, "", 16) for i, n in enumerate(names) if not np.isfinite(x[i])]
    axes[0].set_title(f"{display(dataset)}: privacy-utility frontier"
                      + (f"  (no result: {', '.join(missing)})" if missing else ""), loc="left")
    axes[1].set_xlabel("fidelity: F3 ratio = F3(T,S) / F3(T,H)   (1 ideal, log scale)")
    return save(fig, path)

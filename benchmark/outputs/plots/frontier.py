"""The privacy-utility frontier, one figure per dataset (frontier_<dataset>.png).

Two panels share the x axis, the F3 ratio (log; 1 = as close to T as the holdout is): best
membership-inference AUC (`mia_auc_max`, 0.5 ideal) and DCR share (0.5 ideal) on y. One point per
synthesizer (mean over seeds). Every setting comes from what the cells recorded they ran with (the
cells table's `generator` and `setting_<key>` columns, read from status.json), never from a name: the
points of one DP generator (same `_target_`, a recorded ε) are joined in order of ε and labelled with
it; the flips (holdbench.synthesizers.flip.Flip) are joined in order of their recorded p, grey crosses
on a dashed line; the holdout is the orange diamond. A synthesizer whose name states another setting
than its cells ran with (`mst_eps3` run at ε 1e-300) is labelled with both and named in the title.
Drawn only when the study has both metrics.
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

FIGURE = "frontier_{dataset}.png"
CAPTION = ("Privacy-utility frontier: F3 ratio (x, log, 1 ideal) against the best membership-inference AUC and the "
           "DCR share (0.5 ideal both); DP generators' points are joined along epsilon (labels: ε), the holdout "
           "(orange diamond) and the flips (grey crosses, dashed) are the references.")
METRICS = ("F3_ratio", "mia_auc_max", "dcr_share")
FLIP_TARGET = "holdbench.synthesizers.flip.Flip"


def recorded_settings(cells: pd.DataFrame, dataset: str) -> dict[str, dict]:
    """synthesizer -> {generator, epsilon, p, conflict} of `dataset`'s cells, as they recorded them (the
    first cell that recorded a config; the seeds of one synthesizer share it)."""
    out: dict[str, dict] = {}
    mine = cells[cells["dataset"] == dataset]
    for _, c in mine.iterrows():
        gen = c.get("generator")
        if out.get(c["synthesizer"]) or not isinstance(gen, str):
            continue
        conflict = c.get("name_conflict")
        out[c["synthesizer"]] = {"generator": gen, "epsilon": _num(c.get("setting_epsilon")),
                                 "p": _num(c.get("setting_p")),
                                 "conflict": conflict if isinstance(conflict, str) and conflict else ""}
    return out


def _num(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


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
    ran = recorded_settings(cells, dataset)
    ran = {n: ran.get(n) or {} for n in names}
    fig = new_figure(7.0, 7.6)
    axes = fig.subplots(2, 1, sharex=True)
    for ax, metric, label in ((axes[0], "mia_auc_max", "best membership-inference AUC (0.5 ideal)"),
                              (axes[1], "dcr_share", "DCR share (0.5 ideal)")):
        y = rows[f"{metric}_mean"].to_numpy(float)
        good = np.isfinite(x) & np.isfinite(y) & (x > 0)
        ax.axhline(0.5, color="0.7", linestyle=":", zorder=0)
        ax.axvline(1, color="0.7", linestyle=":", zorder=0)
        flips = sorted((ran[n]["p"], i) for i, n in enumerate(names)
                       if good[i] and ran[n].get("generator") == FLIP_TARGET and np.isfinite(ran[n]["p"]))
        if flips:
            idx = [i for _, i in flips]
            ax.plot(x[idx], y[idx], color="0.6", linestyle="--", marker="x", linewidth=1, zorder=1, label="flips")
        in_line = {i for _, i in flips}
        groups: dict[str, list[tuple[float, int]]] = {}
        for i, n in enumerate(names):
            if good[i] and i not in in_line and np.isfinite(ran[n].get("epsilon", np.nan)):
                groups.setdefault(ran[n]["generator"], []).append((ran[n]["epsilon"], i))
        points = []
        for gen, members in sorted(groups.items()):
            members.sort()
            idx = [i for _, i in members]
            in_line |= set(idx)
            line = ax.plot(x[idx], y[idx], marker="o", markersize=4.5, linewidth=1.2, zorder=2,
                           label=f"{gen.rsplit('.', 1)[-1].lower()} (ε)")
            points += [(x[i], y[i], f"{eps:g}" + (f" (name: {display(names[i], '', 16)})" if ran[names[i]]["conflict"]
                                                  else ""), line[0].get_color()) for eps, i in members]
        for i, n in enumerate(names):
            if not good[i] or i in in_line:
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
    conflicts = [display(n, "", 16) for n in names if ran[n].get("conflict")]
    axes[0].set_title(f"{display(dataset)}: privacy-utility frontier"
                      + (f"  (no result: {', '.join(missing)})" if missing else "")
                      + (f"  (ran at another setting than the name states: {', '.join(conflicts)})"
                         if conflicts else ""), loc="left")
    axes[1].set_xlabel("fidelity: F3 ratio = F3(T,S) / F3(T,H)   (1 ideal, log scale)")
    return save(fig, path)


#: the study figure's place in the report (a figure module: FIGURE, CAPTION, ORDER, tasks; see _inputs.py)
ORDER = 80


def tasks(study) -> list:
    """make_plots' tasks for the frontier figures of a study (_inputs.StudyInputs)."""
    from holdbench.benchmark.outputs.plots._inputs import study_key

    return frontier_tasks(study.code, study.cells, study.summary, study.plot_dir, study_key)

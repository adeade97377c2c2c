"""Study figures after Platzer & Reutterer (2021) Figures 9-11, plus one per further metric group.

All read the per dataset x synthesizer summary (`holdbench.benchmark.outputs.leaderboard.aggregate`): means over
the ok seeds with their intervals. A synthesizer without a result keeps its row, marked
"no result", and its tick label says how many seeds were ok.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from holdbench.benchmark.outputs.plots._base import (
    REF_COLOR,
    SYNTH_COLOR,
    T_COLOR,
    common_prefix,
    display,
    err,
    fmt,
    metric_rows,
    new_figure,
    place_labels,
    reference_synths,
    row_text,
    save,
    tick,
)
from holdbench.benchmark.outputs.plots.frontier import FLIP_TARGET

_LOG_FORMAT = FuncFormatter(lambda v, _: f"{v:g}")


def _datasets(cells: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(cells["dataset"]))


def _rows_per_panel(summary: pd.DataFrame, datasets: list[str]) -> int:
    return max([int((summary["dataset"] == d).sum()) for d in datasets] or [1])


def _log_axis(ax, lo: float, hi: float) -> None:
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(_LOG_FORMAT)
    ax.xaxis.set_minor_formatter(NullFormatter())


def dots(ax, rows: pd.DataFrame, metric: str, refs: set[str], prefix: str, digits: int = 3,
         log: bool = False, labels: bool = True, window: tuple[float, float] | None = None) -> None:
    """One row per synthesizer (study order, top to bottom): the mean as a dot, its interval as a
    whisker, the value printed beside it; the holdout reference as an orange diamond. With a
    `window`, a value outside it is drawn as an arrowhead at the window's edge with its value."""
    y = np.arange(len(rows))
    values = rows[f"{metric}_mean"].to_numpy(float)
    high = np.fmax(values, rows[f"{metric}_ci_high"].to_numpy(float))
    errors = err(rows, metric)
    for yi in y:
        ax.axhline(yi, color="0.93", linewidth=0.8, zorder=0)
    for yi, v, synth, e_lo, e_hi, top in zip(y, values, rows["synthesizer"], errors[0], errors[1], high):
        if not math.isfinite(v) or (log and v <= 0):
            row_text(ax, yi, "not defined for the reference" if synth in refs else "no result")
            continue
        if window is not None and not window[0] <= v <= window[1]:
            right = v > window[1]
            edge = window[1] if right else window[0]
            ax.plot([edge], [yi], ">" if right else "<", color=SYNTH_COLOR, markersize=6, clip_on=False, zorder=3)
            ax.annotate(f"{fmt(v, digits)} (off scale)", (edge, yi), xytext=(-8 if right else 8, 0),
                        textcoords="offset points", va="center", ha="right" if right else "left", fontsize=6.5,
                        color="0.25")
            continue
        ref = synth in refs
        ax.errorbar([v], [yi], xerr=[[e_lo], [e_hi]], fmt="D" if ref else "o", color=REF_COLOR if ref else SYNTH_COLOR,
                    ecolor="0.35", elinewidth=1, capsize=2, markersize=5 if ref else 4.5, zorder=3)
        if labels:
            ax.annotate(fmt(v, digits), (top, yi), xytext=(4, 0), textcoords="offset points", va="center",
                        fontsize=6.5, color="0.25")
    ax.set_yticks(y, [tick(r, prefix) for _, r in rows.iterrows()])
    ax.set_ylim(len(rows) - 0.5, -0.5)


def _span(rows: pd.DataFrame, metrics: list[str], positive: bool) -> tuple[float, float]:
    vals = np.concatenate([rows[f"{m}_{s}"].to_numpy(float) for m in metrics for s in ("mean", "ci_low", "ci_high")])
    vals = vals[np.isfinite(vals) & ((vals > 0) if positive else True)]
    return (float(vals.min()), float(vals.max())) if len(vals) else (math.nan, math.nan)


def plot_fidelity(cells: pd.DataFrame, summary: pd.DataFrame, path: Path, datasets: list[str] | None = None) -> Path:
    """Figure 9: F1, F2, F3 per synthesizer on a log axis (so the holdout's and synthpop's few
    thousandths are as readable as the SDV generators' tenths); dashed line = F(T,H). One row of
    panels per dataset (all of them, or `datasets`)."""
    datasets = datasets or _datasets(cells)
    refs = reference_synths(cells)
    prefix = common_prefix(list(summary["synthesizer"]))
    n = _rows_per_panel(summary, datasets)
    # F4 (ANITA D2.2's sampled 4-way marginals) gets a panel when the study computed it
    ks = [1, 2, 3] + ([4] if "F4_mean" in summary and summary["F4_mean"].notna().any() else [])
    fig = new_figure(4.3 * len(ks) + 0.1, (0.22 * n + 1.1) * max(len(datasets), 1) + 0.5)
    axes = fig.subplots(max(len(datasets), 1), len(ks), squeeze=False)
    for i, dataset in enumerate(datasets):
        rows = metric_rows(summary, dataset, [f"F{k}{s}" for k in ks for s in ("", "_holdout")])
        for k in ks:
            ax = axes[i][k - 1]
            dots(ax, rows, f"F{k}", refs, prefix, digits=2, log=True)
            lo, hi = _span(rows, [f"F{k}", f"F{k}_holdout"], positive=True)
            if math.isfinite(lo):
                _log_axis(ax, lo / 1.6, hi * 2.4)
            ref = rows[f"F{k}_holdout_mean"].dropna()
            note = ""
            if len(ref):  # the reference value goes under the axis: a legend box could hide a label
                ax.axvline(float(ref.mean()), color=REF_COLOR, linestyle="--", linewidth=1, zorder=1)
                note = f"\ndashed: holdout F{k}(T,H) = {fmt(float(ref.mean()), 2)}"
            ax.set_title(f"{display(dataset)}: F{k} ({k}-way marginals)", loc="left")
            ax.set_xlabel(f"mean TVD to T (log scale; lower = closer to T){note}")
            if k > 1:
                ax.tick_params(labelleft=False)
    note = f" Names without the prefix '{prefix}'." if prefix else ""
    f4 = " (F4: a seeded sample of 4-way marginals)" if 4 in ks else ""
    fig.suptitle(f"Fidelity: mean total variation distance of S's k-way marginals to T's{f4}.\nThe holdout H "
                 "(orange) is what fresh real data scores: far below it = S copies T." + note, fontsize=9)
    return save(fig, path)


def plot_privacy(cells: pd.DataFrame, summary: pd.DataFrame, path: Path, datasets: list[str] | None = None) -> Path:
    """Figure 10: DCR share with its interval on an axis zoomed around 0.5, and the mean distance
    of S to its closest record in T and in H. One row of panels per dataset (all, or `datasets`)."""
    datasets = datasets or _datasets(cells)
    refs = reference_synths(cells)
    prefix = common_prefix(list(summary["synthesizer"]))
    n = _rows_per_panel(summary, datasets)
    fig = new_figure(12, (0.22 * n + 1.2) * max(len(datasets), 1) + 0.5)
    axes = fig.subplots(max(len(datasets), 1), 2, squeeze=False, gridspec_kw={"width_ratios": [1.4, 1]})
    for i, dataset in enumerate(datasets):
        rows = metric_rows(summary, dataset, ["dcr_share", "dcr_train_mean", "dcr_holdout_mean"])
        ax = axes[i][0]
        lo, hi = _zoom(rows)
        dots(ax, rows, "dcr_share", refs, prefix, digits=3, window=(lo, hi))
        ax.set_xlim(lo, hi)
        ax.axvspan(0.5, hi, color="tab:red", alpha=0.05, zorder=0)
        ax.axvline(0.5, color="0.2", linestyle="--", linewidth=1)
        ax.text(0.5, 1.0, " closer to T →", transform=ax.get_xaxis_transform(), ha="left", va="bottom",
                fontsize=7, color="tab:red")
        ax.text(0.5, 1.0, "← closer to H ", transform=ax.get_xaxis_transform(), ha="right", va="bottom",
                fontsize=7, color="0.3")
        ax.set_title(f"{display(dataset)}: DCR share, 95% interval (0.5 ideal)", loc="left", pad=12)
        ax.set_xlabel("share of S closer to T than to H")
        ax = axes[i][1]
        y = np.arange(len(rows))
        t, h = rows["dcr_train_mean_mean"].to_numpy(float), rows["dcr_holdout_mean_mean"].to_numpy(float)
        for yi in y:
            ax.axhline(yi, color="0.93", linewidth=0.8, zorder=0)
        ax.hlines(y, np.fmin(t, h), np.fmax(t, h), color="0.7", linewidth=1.5, zorder=1)
        ax.plot(t, y, "o", color=SYNTH_COLOR, markersize=4.5, label="to T (training)", zorder=3)
        ax.plot(h, y, "s", color=T_COLOR, markersize=4, label="to H (holdout)", zorder=3)
        for yi, a in zip(y, t):
            if not math.isfinite(a):
                row_text(ax, yi, "no result")
        ax.set_yticks(y, [])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        top = np.nanmax(np.concatenate([t, h, [0.0]]))
        ax.set_xlim(0, top * 1.12 if top > 0 else 1)
        ax.legend(loc="lower right", frameon=True, framealpha=0.9)
        ax.set_title(f"{display(dataset)}: mean distance to the closest record", loc="left", pad=12)
        ax.set_xlabel("Hamming distance (columns that differ)")
    fig.suptitle("Privacy: above 0.5 = S sits closer to its training records than to unseen ones "
                 "(interval: Wilson for one seed, t over seeds)", fontsize=9)
    return save(fig, path)


def _zoom(rows: pd.DataFrame) -> tuple[float, float]:
    """The DCR share window: 0.5 and every interval of the synthesizers, but not the flip
    baselines (which run up to 1 by design and are drawn off scale)."""
    real = rows[~rows["synthesizer"].isin(_flip_order(rows))]
    lo, hi = _span(real if len(real) else rows, ["dcr_share"], positive=False)
    lo, hi = (0.5, 0.5) if not math.isfinite(lo) else (min(lo, 0.5), max(hi, 0.5))
    pad = max(0.004, 0.08 * (hi - lo))
    return lo - pad, hi + 3 * pad


def _flip_order(rows: pd.DataFrame) -> list[str]:
    """The flip baselines among summary rows, in order of the p their cells recorded they ran with
    (the `generator` and `setting_p` columns, never read from a name)."""
    if not {"generator", "setting_p"} <= set(rows.columns):
        return []
    flips = rows[(rows["generator"] == FLIP_TARGET) & pd.to_numeric(rows["setting_p"], errors="coerce").notna()]
    return [n for _, n in sorted(zip(flips["setting_p"].astype(float), flips["synthesizer"]))]


def plot_tradeoff(cells: pd.DataFrame, summary: pd.DataFrame, path: Path) -> Path:
    """Figure 11: the fidelity-privacy trade-off, F3 ratio (log) against DCR share; the flip
    baselines drawn as the curve they trace; the holdout at (1, 0.5) is the target."""
    datasets = _datasets(cells)
    refs = reference_synths(cells)
    prefix = common_prefix(list(summary["synthesizer"]))
    ncols = min(max(len(datasets), 1), 2)
    nrows = max(math.ceil(len(datasets) / ncols), 1)
    fig = new_figure(6.6 * ncols, 5.0 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, dataset in zip(axes, datasets):
        rows = metric_rows(summary, dataset, ["F3_ratio", "dcr_share"])
        x, y = rows["F3_ratio_mean"].to_numpy(float), rows["dcr_share_mean"].to_numpy(float)
        good = np.isfinite(x) & np.isfinite(y) & (x > 0)
        ax.axvline(1, color="0.7", linestyle=":", zorder=0)
        ax.axhline(0.5, color="0.7", linestyle=":", zorder=0)
        flips = _flip_order(rows[good])
        if len(flips) > 1:
            idx = [int(np.flatnonzero(rows["synthesizer"] == s)[0]) for s in flips]
            ax.plot(x[idx], y[idx], color="0.6", linestyle="--", linewidth=1, zorder=1, label="flip baselines")
        ex, ey = err(rows, "F3_ratio"), err(rows, "dcr_share")
        points = []
        for j in np.flatnonzero(good):
            synth = rows["synthesizer"][j]
            ref = synth in refs
            ax.errorbar([x[j]], [y[j]], xerr=ex[:, [j]], yerr=ey[:, [j]], fmt="D" if ref else "o",
                        color=REF_COLOR if ref else SYNTH_COLOR, ecolor="0.55", elinewidth=0.8, capsize=1.5,
                        markersize=6 if ref else 4.5, zorder=3)
            points.append((x[j], y[j], display(synth, prefix, 20), REF_COLOR if ref else "0.15"))
        xs = np.append(x[good], 1.0)
        lo, hi = float(xs.min()), float(xs.max())
        _log_axis(ax, lo / 1.35, hi * 1.35)
        ys = np.concatenate([y[good], rows["dcr_share_ci_low"].to_numpy(float)[good],
                             rows["dcr_share_ci_high"].to_numpy(float)[good], [0.5]])
        ys = ys[np.isfinite(ys)]
        pad = max(0.01, 0.08 * (ys.max() - ys.min()))
        ax.set_ylim(ys.min() - pad, ys.max() + pad)
        missing = [display(s, prefix, 16) for s in rows["synthesizer"][~good]]
        ax.set_title(f"{display(dataset)}" + (f"  (no result: {', '.join(missing)})" if missing else ""), loc="left")
        ax.set_xlabel("fidelity: F3 ratio = F3(T,S) / F3(T,H)   (1 ideal, log scale)")
        ax.set_ylabel("privacy: DCR share   (0.5 ideal)")
        if len(flips) > 1:
            ax.legend(loc="upper right", frameon=True, framealpha=0.9)
        place_labels(ax, points)
    for ax in axes[len(datasets):]:
        ax.set_visible(False)
    fig.suptitle("Fidelity-privacy trade-off: the holdout (orange) at ratio 1 and share 0.5 is what a perfect "
                 "generator reaches; up = closer to T, right = less faithful", fontsize=9)
    return save(fig, path)


def plot_group(cells: pd.DataFrame, summary: pd.DataFrame, specs: list, title: str, path: Path) -> Path | None:
    """Dot plots of some registry metrics (a metric group such as utility or attack), one panel per
    dataset x metric, the ideal value as a dashed line. None when no metric has a value."""
    datasets = _datasets(cells)
    specs = [sp for sp in specs if f"{sp.name}_mean" in summary and summary[f"{sp.name}_mean"].notna().any()]
    if not specs or not datasets:
        return None
    refs = reference_synths(cells)
    prefix = common_prefix(list(summary["synthesizer"]))
    n = _rows_per_panel(summary, datasets)
    panels = [(d, sp) for d in datasets for sp in specs]
    ncols = len(specs) if len(specs) > 1 else min(len(datasets), 3)
    nrows = math.ceil(len(panels) / ncols)
    fig = new_figure(min(4.4 * ncols + 1.5, 14), (0.22 * n + 1.1) * nrows + 0.5)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    first_of_row: list = []
    for j, (dataset, sp) in enumerate(panels):
        rows = metric_rows(summary, dataset, [sp.name])
        ax = axes[j]
        dots(ax, rows, sp.name, refs, prefix, digits=3)
        if sp.ideal is not None:
            ax.axvline(sp.ideal, color="0.2", linestyle="--", linewidth=1)
        lo, hi = _span(rows, [sp.name], positive=False)
        if math.isfinite(lo):
            lo, hi = (min(lo, sp.ideal), max(hi, sp.ideal)) if sp.ideal is not None else (lo, hi)
            pad = max(0.005, 0.06 * (hi - lo))
            ax.set_xlim(lo - pad, hi + 3 * pad)
        ax.set_title(f"{display(dataset)}: {sp.label}", loc="left")
        ax.set_xlabel(sp.better)
        names = list(rows["synthesizer"])
        if j % ncols == 0:
            first_of_row = names
        elif names == first_of_row:  # same rows as the panel on its left: no repeated names
            ax.tick_params(labelleft=False)
    fig.suptitle(title, fontsize=9)
    return save(fig, path)


def group_tasks(study, group: str, title: str, path: Path) -> list:
    """make_plots' task for a plot_group figure of one registry group: its headline metrics, else its first
    three; none when the study has no metric of the group."""
    in_group = [sp for sp in study.results.specs if sp.group == group]
    specs = [sp for sp in in_group if sp.headline] or in_group[:3]
    if not specs:
        return []
    return [(study.study_key(plot_group, specs, title), path,
             (plot_group, study.cells, study.summary, specs, title, path))]

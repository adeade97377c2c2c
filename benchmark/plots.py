"""The study's figures, after Platzer & Reutterer (2021) Figures 6-11, as PNG files.

Plots are drawn on bare `Figure` objects with the Agg canvas and matplotlib's default
style, so they never touch pyplot's global state, do not depend on a user's matplotlibrc,
and come out byte-identical for the same inputs. A failed or skipped cell never breaks a
plot: it simply has no bar, and the synthesizer's tick label says how many seeds were ok.
"""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import rc_context, style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

from benchmark.io import atomic_path
from benchmark.leaderboard import Cell, aggregate, collect_cells, read_cells, read_study

REFERENCE_NAME = "holdout"
REF_COLOR, SYNTH_COLOR, T_COLOR, H_COLOR = "tab:orange", "tab:blue", "0.55", "tab:orange"
MAX_DRILLDOWN_SYNTHS = 6
DRILLDOWN_BINS = 10
_RC = {"font.size": 8, "axes.titlesize": 9}


def _save(fig: Figure, path: Path, tight: bool = True) -> Path:
    """Atomic PNG write; `tight=False` skips the second layout pass (per-cell plots: many)."""
    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight" if tight else None)
    return path


def _new_figure(width: float, height: float, layout: str | None = "constrained") -> Figure:
    return Figure(figsize=(width, height), layout=layout)


def _short(name: Any, width: int = 28) -> str:
    """Label text from user data: shortened, and `$` escaped so it is never read as mathtext."""
    text = str(name)
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("$", r"\$")


def _reference_synths(cells: pd.DataFrame) -> set[str]:
    """Synthesizers that are the holdout reference row (by name or by the holdout rule flag)."""
    refs = {REFERENCE_NAME}
    if "holdout_rule" in cells:
        refs |= set(cells.loc[cells["holdout_rule"].map(lambda v: v is True), "synthesizer"])
    return refs


def _tick(row: pd.Series) -> str:
    label = _short(row["synthesizer"])
    if row["n_ok"] < row["n_seeds"]:
        label += f" ({int(row['n_ok'])}/{int(row['n_seeds'])} ok)"
    return label


def _err(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """2 x n asymmetric error bars from the summary interval (0 where there is none)."""
    mean = rows[f"{metric}_mean"].to_numpy(float)
    low = np.nan_to_num(mean - rows[f"{metric}_ci_low"].to_numpy(float), nan=0.0)
    high = np.nan_to_num(rows[f"{metric}_ci_high"].to_numpy(float) - mean, nan=0.0)
    return np.vstack([np.clip(low, 0, None), np.clip(high, 0, None)])


def _barh(ax, rows: pd.DataFrame, metric: str, refs: set[str]) -> None:
    """Horizontal bars of `metric` per synthesizer in study order (top to bottom)."""
    y = np.arange(len(rows))
    values = rows[f"{metric}_mean"].to_numpy(float)
    colors = [REF_COLOR if s in refs else SYNTH_COLOR for s in rows["synthesizer"]]
    ax.barh(y, np.nan_to_num(values), xerr=_err(rows, metric), color=colors, ecolor="0.3", capsize=2)
    for yi, v, (_, row) in zip(y, values, rows.iterrows()):
        if math.isnan(v):
            ax.text(0, yi, " no result", va="center", ha="left", color="0.4", fontsize=7)
    ax.set_yticks(y, [_tick(r) for _, r in rows.iterrows()])
    ax.set_ylim(len(rows) - 0.5, -0.5)


def _metric_rows(summary: pd.DataFrame, dataset: str, metrics: list[str]) -> pd.DataFrame:
    rows = summary[summary["dataset"] == dataset].copy()
    for m in metrics:
        for suffix in ("_mean", "_ci_low", "_ci_high"):
            if m + suffix not in rows:
                rows[m + suffix] = np.nan
    return rows


def plot_fidelity(cells: pd.DataFrame, summary: pd.DataFrame, path: Path) -> Path:
    """Figure 9: F1, F2, F3 per synthesizer, one panel per dataset x k, holdout highlighted."""
    datasets = list(dict.fromkeys(cells["dataset"]))
    refs = _reference_synths(cells)
    n_max = max([int((summary["dataset"] == d).sum()) for d in datasets] or [1])
    fig = _new_figure(12, max(2.0, 0.28 * n_max + 1.2) * max(len(datasets), 1))
    axes = fig.subplots(max(len(datasets), 1), 3, squeeze=False)
    for i, dataset in enumerate(datasets):
        rows = _metric_rows(summary, dataset, ["F1", "F2", "F3", "F1_holdout", "F2_holdout", "F3_holdout"])
        for k in (1, 2, 3):
            ax = axes[i][k - 1]
            _barh(ax, rows, f"F{k}", refs)
            ref = rows[f"F{k}_holdout_mean"].dropna()
            if len(ref):
                ax.axvline(float(ref.mean()), color=REF_COLOR, linestyle="--", linewidth=1,
                           label="F(T,H) holdout")
                ax.legend(loc="lower right", fontsize=7)
            ax.set_title(f"{_short(dataset)}: F{k}, {k}-way marginals")
            if k > 1:
                ax.set_yticklabels([])
    fig.suptitle("Fidelity: mean TVD between T and S (lower = closer to T); "
                 "orange = holdout reference F(T,H)")
    return _save(fig, path)


def plot_privacy(cells: pd.DataFrame, summary: pd.DataFrame, path: Path) -> Path:
    """Figure 10: dcr_share (0.5 ideal) and the mean DCR to T and to H per synthesizer."""
    datasets = list(dict.fromkeys(cells["dataset"]))
    refs = _reference_synths(cells)
    n_max = max([int((summary["dataset"] == d).sum()) for d in datasets] or [1])
    fig = _new_figure(10, max(2.0, 0.28 * n_max + 1.2) * max(len(datasets), 1))
    axes = fig.subplots(max(len(datasets), 1), 2, squeeze=False)
    for i, dataset in enumerate(datasets):
        rows = _metric_rows(summary, dataset, ["dcr_share", "dcr_train_mean", "dcr_holdout_mean"])
        ax = axes[i][0]
        _barh(ax, rows, "dcr_share", refs)
        ax.axvline(0.5, color="0.2", linestyle="--", linewidth=1)
        ax.set_xlim(0, 1)
        ax.set_title(f"{_short(dataset)}: DCR share (0.5 ideal)")
        ax = axes[i][1]
        y = np.arange(len(rows))
        ax.barh(y - 0.2, np.nan_to_num(rows["dcr_train_mean_mean"].to_numpy(float)), height=0.4,
                color=SYNTH_COLOR, label="mean DCR to T")
        ax.barh(y + 0.2, np.nan_to_num(rows["dcr_holdout_mean_mean"].to_numpy(float)), height=0.4,
                color=T_COLOR, label="mean DCR to H")
        ax.set_yticks(y, [])
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.legend(loc="lower right", fontsize=7)
        ax.set_title(f"{_short(dataset)}: mean distance to closest record")
    fig.suptitle("Privacy: share of S closer to T than to H (above 0.5 = too close to T); "
                 "mean Hamming DCR to T and to H")
    return _save(fig, path)


def _fidelity_ratio(rows: pd.DataFrame) -> np.ndarray:
    """F2 ratio, else the mean of whichever ratios a row has (NaN when it has none)."""
    f2 = rows["F2_ratio_mean"].to_numpy(float)
    ratios = rows[["F1_ratio_mean", "F2_ratio_mean", "F3_ratio_mean"]].to_numpy(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fallback = np.nanmean(ratios, axis=1)
    return np.where(np.isnan(f2), fallback, f2)


def plot_tradeoff(cells: pd.DataFrame, summary: pd.DataFrame, path: Path) -> Path:
    """Figure 11: fidelity ratio (log x) against dcr_share; the holdout row is the target."""
    datasets = list(dict.fromkeys(cells["dataset"]))
    refs = _reference_synths(cells)
    ncols = min(max(len(datasets), 1), 2)
    nrows = max(math.ceil(len(datasets) / ncols), 1)
    fig = _new_figure(6 * ncols, 4.5 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax, dataset in zip(axes, datasets):
        rows = _metric_rows(summary, dataset, ["F1_ratio", "F2_ratio", "F3_ratio", "dcr_share"])
        x, y = _fidelity_ratio(rows), rows["dcr_share_mean"].to_numpy(float)
        good = ~np.isnan(x) & ~np.isnan(y) & (x > 0)
        ax.axvline(1, color="0.6", linestyle=":")
        ax.axhline(0.5, color="0.6", linestyle=":")
        ax.plot([1], [0.5], marker="*", markersize=18, markerfacecolor="none", markeredgecolor=REF_COLOR,
                linestyle="none")
        ax.annotate("ideal (holdout)", (1, 0.5), textcoords="offset points", xytext=(6, -12),
                    fontsize=7, color=REF_COLOR)
        for xi, yi, synth in zip(x[good], y[good], rows["synthesizer"][good]):
            ref = synth in refs
            ax.plot([xi], [yi], marker="*" if ref else "o", color=REF_COLOR if ref else SYNTH_COLOR,
                    markersize=10 if ref else 6, linestyle="none")
            ax.annotate(_short(synth, 20), (xi, yi), textcoords="offset points", xytext=(4, 3), fontsize=7)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        lo, hi = np.nanmin(np.append(x[good], 1.0)), np.nanmax(np.append(x[good], 1.0))
        ax.set_xlim(lo / 1.5, hi * 1.5)
        missing = [_short(s, 16) for s in rows["synthesizer"][~good]]
        ax.set_title(f"{_short(dataset)}" + (f" (no result: {', '.join(missing)})" if missing else ""))
        ax.set_xlabel("fidelity ratio F2(T,S) / F2(T,H)  (1 ideal, log scale)")
        ax.set_ylabel("DCR share (0.5 ideal)")
    for ax in axes[len(datasets):]:
        ax.set_visible(False)
    return _save(fig, path)


def _bins(train: pd.Series) -> tuple[str, Any]:
    """How to bucket a column, learned on T: ("cat", top values) or ("num", quantile edges)."""
    numeric = pd.api.types.is_numeric_dtype(train) and not pd.api.types.is_bool_dtype(train)
    if numeric and train.nunique() > DRILLDOWN_BINS:
        edges = np.unique(np.quantile(train.dropna().to_numpy(float), np.linspace(0, 1, DRILLDOWN_BINS + 1)))
        if len(edges) > 1:
            return "num", edges
    top = train.dropna().astype(str).value_counts().sort_index(kind="stable")
    top = top.sort_values(ascending=False, kind="stable").index[:DRILLDOWN_BINS]
    return "cat", list(top)


def _frequencies(values: pd.Series, how: tuple[str, Any]) -> pd.Series:
    """Relative frequency per bucket; out-of-range/rare values go to `_other_`, missing to `nan`."""
    kind, spec = how
    if kind == "num":
        nums = pd.to_numeric(values, errors="coerce")
        labels = [f"({spec[i]:.4g}, {spec[i + 1]:.4g}]" for i in range(len(spec) - 1)]
        if len(set(labels)) < len(labels):  # edges too close for 4 digits: number the buckets
            labels = [f"{i + 1}: {lbl}" for i, lbl in enumerate(labels)]
        binned = pd.cut(nums, spec, labels=labels, include_lowest=True).astype(object)
        binned[nums.notna() & binned.isna()] = "_other_"
        order = labels
    else:
        binned = values.astype(object).where(values.isna(), values.astype(str))
        binned = binned.where(binned.isin(spec) | binned.isna(), "_other_")
        order = list(spec)
    binned = binned.where(binned.notna(), "nan")
    freq = binned.value_counts(normalize=True)
    return freq.reindex(list(dict.fromkeys(order + ["_other_", "nan"])), fill_value=0.0)


def _read_column(path: Path, column: str) -> pd.Series | None:
    try:
        return pd.read_parquet(path, columns=[column])[column]
    except (OSError, ValueError, KeyError):  # a missing or corrupt file only drops that bar group
        return None


def plot_drilldown(study_dir: Path, dataset: str, column: str, cells: list[Cell], path: Path) -> Path | None:
    """Figures 6-8: one column's binned distribution in T, H and S, one panel per synthesizer."""
    seeds = sorted({c.seed for c in cells if c.dataset == dataset and c.ok})
    if not seeds:
        return None
    seed_dir = study_dir / dataset / f"seed{seeds[0]}"
    train = _read_column(seed_dir / "train.parquet", column)
    holdout = _read_column(seed_dir / "holdout.parquet", column)
    if train is None or holdout is None:
        return None
    how = _bins(train)
    f_t, f_h = _frequencies(train, how), _frequencies(holdout, how)
    keep = (f_t > 0) | (f_h > 0)
    panels = []
    candidates = [c for c in cells if c.dataset == dataset and c.seed == seeds[0] and c.ok
                  and c.synthesizer != REFERENCE_NAME and not c.status.get("holdout_rule")]
    for c in candidates:
        s = _read_column(c.path / "synthetic.parquet", column)
        if s is not None and len(panels) < MAX_DRILLDOWN_SYNTHS:
            f_s = _frequencies(s, how)
            panels.append((c.synthesizer, f_s))
            keep |= f_s > 0
    panels = panels or [("(no synthetic data)", None)]
    labels = list(f_t.index[keep.to_numpy()])
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    fig = _new_figure(max(4.5, 0.45 * len(labels) + 1.5) * ncols, 3.2 * nrows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    x = np.arange(len(labels))
    for ax, (synth, f_s) in zip(axes, panels):
        ax.bar(x - 0.27, f_t[labels], width=0.27, color=T_COLOR, label="T (training)")
        ax.bar(x, f_h[labels], width=0.27, color=H_COLOR, label="H (holdout)")
        if f_s is not None:
            ax.bar(x + 0.27, f_s[labels], width=0.27, color=SYNTH_COLOR, label="S (synthetic)")
        ax.set_xticks(x, [_short(lbl, 18) for lbl in labels], rotation=60, ha="right")
        ax.set_title(f"{_short(synth)}")
        ax.set_ylabel("share of records")
        ax.legend(fontsize=7)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"{dataset} / seed{seeds[0]}: distribution of {column!s} in T, H and S")
    return _save(fig, path)


def plot_cell_marginals(cell: Cell, path: Path | None = None) -> Path | None:
    """Per ok cell: histograms of the k-way TVDs of S (vs T) and of H (vs T), k = 1, 2, 3."""
    try:
        marg = pd.read_csv(cell.path / "marginals.csv")
        ks = sorted(int(k) for k in marg["k"].dropna().unique())
        marg[["tvd_synthetic", "tvd_holdout"]].astype(float)
    except (OSError, ValueError, KeyError):  # no or unreadable marginals.csv: nothing to draw
        return None
    if not ks:
        return None
    fig = _new_figure(4 * len(ks), 3, layout=None)
    axes = fig.subplots(1, len(ks), squeeze=False).ravel()
    for ax, k in zip(axes, ks):
        sub = marg[marg["k"] == k]
        s, h = sub["tvd_synthetic"].dropna().to_numpy(float), sub["tvd_holdout"].dropna().to_numpy(float)
        edges = np.histogram_bin_edges(np.concatenate([s, h, [0.0]]), bins=20)
        for values, color, who in ((h, H_COLOR, "H"), (s, SYNTH_COLOR, "S")):
            mean = f"{values.mean():.3f}" if len(values) else "n/a"
            ax.stairs(np.histogram(values, edges)[0], edges, fill=True, alpha=0.6, color=color,
                      label=f"{who} vs T (mean {mean})")
        ax.set_title(f"{k}-way marginals (n = {len(sub)})")
        ax.set_xlabel("total variation distance")
        ax.legend(fontsize=7)
    fig.suptitle(_short(cell.cell_id, 80))
    fig.subplots_adjust(left=0.06, right=0.98, bottom=0.17, top=0.82, wspace=0.25)
    return _save(fig, path or cell.path / "marginals.png", tight=False)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "x"


def drilldown_columns(study_dir: Path, study: dict[str, Any], dataset: str) -> list[str]:
    """Columns to drill into: study.json's `drilldown[dataset]`, else T's first two columns."""
    chosen = (study.get("drilldown") or {}).get(dataset)
    if chosen:
        return [str(c) for c in chosen]
    for seed_dir in sorted((study_dir / dataset).glob("seed*")):
        columns = _parquet_columns(seed_dir / "train.parquet")
        if columns:
            return columns[:2]
    return []


def _parquet_columns(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (OSError, ValueError):  # no readable split here
        return []


def _draw(fn, *args) -> Path | None:
    """Run one plot function under the module's style (in a joblib worker or in-process)."""
    with rc_context(), style.context("default"), rc_context(_RC):
        return fn(*args)


def make_plots(study_dir: str | Path, n_jobs: int = 1) -> list[Path]:
    """Write every figure of a study; returns the paths written (study plots first).

    The figures are independent, so joblib draws them in `n_jobs` worker processes.
    """
    from joblib import Parallel, delayed

    study_dir = Path(study_dir)
    plot_dir = study_dir / "plots"
    cell_list = read_cells(study_dir)
    cells = collect_cells(study_dir)
    if cells.empty:
        return []
    summary = aggregate(cells)
    study = read_study(study_dir)
    tasks = [
        (plot_fidelity, cells, summary, plot_dir / "fidelity.png"),
        (plot_privacy, cells, summary, plot_dir / "privacy.png"),
        (plot_tradeoff, cells, summary, plot_dir / "tradeoff.png"),
    ]
    for dataset in dict.fromkeys(cells["dataset"]):
        for column in drilldown_columns(study_dir, study, dataset):
            out = plot_dir / f"drilldown_{_safe(dataset)}_{_safe(column)}.png"
            tasks.append((plot_drilldown, study_dir, dataset, column, cell_list, out))
    tasks += [(plot_cell_marginals, cell) for cell in cell_list if cell.ok]
    if n_jobs == 1:
        drawn = [_draw(*t) for t in tasks]
    else:
        drawn = Parallel(n_jobs=n_jobs)(delayed(_draw)(*t) for t in tasks)
    return [p for p in drawn if p]

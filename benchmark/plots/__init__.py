"""The study's figures as PNG files: `make_plots(results, n_jobs)` draws every one of them.

Study figures (results/<study>/plots/), after Platzer & Reutterer (2021):
    fidelity_<dataset>.png   Figure 9: F1-F3 per synthesizer, log axis, the holdout's F(T,H) as reference
    privacy_<dataset>.png    Figure 10: DCR share with its interval around 0.5; mean DCR to T and to H
    tradeoff.png   Figure 11: F3 ratio against DCR share, the flip baselines as a curve
    utility.png, attacks.png, disclosure.png: the headline metrics of those groups, when computed
    drilldown_<dataset>_<column>.png   Figures 6-8: a column in T, H and S per synthesizer
Per cell (in the cell directory), one figure per artifact table: marginals.png,
dcr_histogram.png, nndr_distribution.png, mia_roc.png, disclosure_curve.png, tuning_trace.png.

Plots are drawn on bare `Figure` objects with the Agg canvas and matplotlib's default style, so
they never touch pyplot's global state, do not depend on a user's matplotlibrc, and come out
byte-identical for the same inputs. A failed or skipped cell never breaks a plot: it simply
has no point, and the synthesizer's tick label says how many seeds were ok. A figure whose
inputs are absent is not drawn.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib import rc_context, style

from benchmark.plots._base import RC, safe
from benchmark.plots.cell import (
    CELL_FIGURES,
    plot_cell_marginals,
    plot_dcr_histogram,
    plot_disclosure,
    plot_mia_roc,
    plot_nndr,
    plot_tuning_trace,
)
from benchmark.plots.drilldown import bucket_labels, drilldown_columns, plot_drilldown
from benchmark.plots.study import plot_fidelity, plot_group, plot_privacy, plot_tradeoff

__all__ = [
    "CELL_FIGURES", "STUDY_FIGURES", "bucket_labels", "cell_figures", "drilldown_columns", "make_plots",
    "plot_cell_marginals", "plot_dcr_histogram", "plot_disclosure", "plot_drilldown", "plot_fidelity",
    "plot_group", "plot_mia_roc", "plot_nndr", "plot_privacy", "plot_tradeoff", "plot_tuning_trace",
    "study_figures",
]

#: study figure files ({dataset}: one per dataset, in study order) and their captions, in report order
STUDY_FIGURES = (
    ("fidelity_{dataset}.png", ("Fidelity (paper Figure 9): F1, F2, F3 per synthesizer on a log axis; the orange "
                               "diamond and the dashed line are the holdout reference F(T,H). Lower is closer to T; "
                               "far below the holdout means S copies T.")),
    ("privacy_{dataset}.png", ("Privacy (paper Figure 10): DCR share with its 95% interval, zoomed around the ideal "
                              "0.5 (values beyond the window are marked off scale), and the mean distance of "
                              "synthetic records to their closest record in T and in H.")),
    ("tradeoff.png", ("Trade-off (paper Figure 11): F3 ratio against DCR share; the holdout at ratio 1 and share 0.5 "
                     "is where a perfect generator sits, the flip baselines trace the trade-off curve.")),
    ("utility.png", "Utility: the headline utility metrics (pMSE ratio, TSTR AUC ratio) per synthesizer."),
    ("attacks.png", "Attacks: the headline membership-inference metrics per synthesizer (AUC 0.5 ideal)."),
    ("disclosure.png", "Attribute disclosure: the disclosure metrics per synthesizer."),
    ("drilldown_{dataset}_*.png", ("Marginal drill-down: share of records per bucket in T, H and S (paper Figures "
                                  "6-8); the first numeric bucket includes its left edge.")),
)
_GROUP_FIGURES = (("utility", "utility.png", "Utility beyond marginals (dashed: the ideal value)"),
                  ("attack", "attacks.png", "Membership inference (dashed: the ideal value)"),
                  ("disclosure", "disclosure.png", "Attribute disclosure (dashed: the ideal value)"))


def _group_specs(specs: list, group: str) -> list:
    in_group = [sp for sp in specs if sp.group == group]
    return [sp for sp in in_group if sp.headline] or in_group[:3]


def _cell_path(results, cell, artifact: str) -> Path:
    return results.layout.cell_file(cell.dataset, cell.seed, cell.synthesizer, f"{artifact}.png")


def cell_figures(results, cell) -> list[tuple[Path, str]]:
    """(png, caption) of the per-cell figures make_plots drew for this cell, in CELL_FIGURES order."""
    out = []
    for artifact, (_, caption) in CELL_FIGURES.items():
        path = _cell_path(results, cell, artifact)
        if cell.ok and artifact in cell.artifacts and path.is_file():
            out.append((path, caption))
    return out


def study_figures(results) -> list[tuple[Path, str]]:
    """(png, caption) of the study figures on disk, in STUDY_FIGURES order (datasets in study order)."""
    plot_dir = results.layout.plots_dir
    datasets = list(dict.fromkeys(results.table["dataset"])) if len(results.table) else []
    out: list[tuple[Path, str]] = []
    for pattern, caption in STUDY_FIGURES:
        names = [pattern.format(dataset=safe(d)) for d in datasets] if "{dataset}" in pattern else [pattern]
        for name in names:
            paths = sorted(plot_dir.glob(name)) if "*" in name else [plot_dir / name]
            out += [(p, caption) for p in paths if p.is_file() and p not in {q for q, _ in out}]
    return out


def _draw(fn, *args) -> Path | None:
    """Run one plot function under the module's style (in a joblib worker or in-process)."""
    with rc_context(), style.context("default"), rc_context(RC):
        return fn(*args)


def make_plots(results, n_jobs: int = 1) -> list[Path]:
    """Write every figure of a study; returns the paths written (study figures first).

    The figures are independent, so joblib draws them in `n_jobs` worker processes. Study
    figures of an earlier run that this run does not draw are removed from plots/.
    """
    from joblib import Parallel, delayed

    from benchmark.leaderboard import aggregate

    plot_dir = results.layout.plots_dir
    cells = results.table
    if cells.empty:
        return []
    summary = aggregate(cells, results.specs)
    tasks: list[tuple] = []
    for dataset in dict.fromkeys(cells["dataset"]):  # one page per dataset: readable on a laptop screen
        if any(f"F{k}_mean" in summary for k in (1, 2, 3)):
            tasks.append((plot_fidelity, cells, summary, plot_dir / f"fidelity_{safe(dataset)}.png", [dataset]))
        if "dcr_share_mean" in summary:
            tasks.append((plot_privacy, cells, summary, plot_dir / f"privacy_{safe(dataset)}.png", [dataset]))
    if "F3_ratio_mean" in summary and "dcr_share_mean" in summary:
        tasks.append((plot_tradeoff, cells, summary, plot_dir / "tradeoff.png"))
    for group, name, title in _GROUP_FIGURES:
        specs = _group_specs(results.specs, group)
        if specs:
            tasks.append((plot_group, cells, summary, specs, title, plot_dir / name))
    for dataset in dict.fromkeys(cells["dataset"]):
        for column in drilldown_columns(results, dataset):
            out = plot_dir / f"drilldown_{safe(dataset)}_{safe(column)}.png"
            tasks.append((plot_drilldown, results.layout, dataset, column, results.cells, out))
    n_study = len(tasks)
    for cell in results.cells:
        if cell.ok:
            tasks += [(fn, cell, _cell_path(results, cell, artifact))
                      for artifact, (fn, _) in CELL_FIGURES.items() if artifact in cell.artifacts]
    if n_jobs == 1:
        drawn = [_draw(*t) for t in tasks]
    else:
        drawn = Parallel(n_jobs=n_jobs)(delayed(_draw)(*t) for t in tasks)
    written = [p for p in drawn if p]
    if plot_dir.is_dir():
        keep = {p for p in drawn[:n_study] if p}
        for stale in plot_dir.glob("*.png"):
            if stale not in keep:
                stale.unlink()
    return written

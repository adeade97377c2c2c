"""Study figure: the F3 ratio against the DCR share (paper Figure 11), drawn by study.plot_tradeoff."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots.study import plot_tradeoff

FIGURE = "tradeoff.png"
CAPTION = ("Trade-off (paper Figure 11): F3 ratio against DCR share; the holdout at ratio 1 and share 0.5 is where "
           "a perfect generator sits, the flip baselines trace the trade-off curve.")
ORDER = 40


def tasks(study) -> list:
    if "F3_ratio_mean" not in study.summary or "dcr_share_mean" not in study.summary:
        return []
    path = study.plot_dir / FIGURE
    return [(study.study_key(plot_tradeoff), path, (plot_tradeoff, study.cells, study.summary, path))]

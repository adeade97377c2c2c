"""Study figure: privacy per dataset (paper Figure 10), drawn by study.plot_privacy."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots._base import safe
from holdbench.benchmark.outputs.plots.study import plot_privacy

FIGURE = "privacy_{dataset}.png"
CAPTION = ("Privacy (paper Figure 10): DCR share with its 95% interval, zoomed around the ideal 0.5 (values beyond "
           "the window are marked off scale), and the mean distance of synthetic records to their closest record "
           "in T and in H.")
ORDER = 20


def tasks(study) -> list:
    if "dcr_share_mean" not in study.summary:
        return []
    out = []
    for dataset in study.datasets:
        path = study.plot_dir / FIGURE.format(dataset=safe(dataset))
        out.append((study.study_key(plot_privacy, dataset), path,
                    (plot_privacy, study.cells, study.summary, path, [dataset])))
    return out

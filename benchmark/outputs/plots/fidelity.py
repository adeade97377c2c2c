"""Study figure: fidelity per dataset (paper Figure 9), drawn by study.plot_fidelity."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots._base import safe
from holdbench.benchmark.outputs.plots.study import plot_fidelity

FIGURE = "fidelity_{dataset}.png"
CAPTION = ("Fidelity (paper Figure 9): F1, F2, F3 per synthesizer on a log axis; the orange diamond and the dashed "
           "line are the holdout reference F(T,H). Lower is closer to T; far below the holdout means S copies T.")
ORDER = 10


def tasks(study) -> list:
    if not any(f"F{k}_mean" in study.summary for k in (1, 2, 3)):
        return []
    out = []
    for dataset in study.datasets:  # one page per dataset: readable on a laptop screen
        path = study.plot_dir / FIGURE.format(dataset=safe(dataset))
        out.append((study.study_key(plot_fidelity, dataset), path,
                    (plot_fidelity, study.cells, study.summary, path, [dataset])))
    return out

"""Study figure of sequential studies: coherence of subsequent events per dataset (sequential.plot_coherence)."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots._base import safe
from holdbench.benchmark.outputs.plots.sequential import plot_coherence

FIGURE = "coherence_{dataset}.png"
CAPTION = ("Coherence: per event column, the TVD of (value at event t, value at event t+1) of S against T, divided "
           "by the same TVD of the holdout H (1 = as coherent as unseen real sequences; far above 1 = the order of "
           "events is lost). The number after each synthesizer is its coherence ratio (mean over the columns' "
           "TVDs, S over H).")
ORDER = 30


def tasks(study) -> list:
    if "seq_coherence_ratio_mean" not in study.summary:
        return []
    out = []
    for dataset in study.datasets:
        path = study.plot_dir / FIGURE.format(dataset=safe(dataset))
        mine = study.cells_of(dataset)
        out.append((study.artifact_key(plot_coherence, dataset, mine, "seq_coherence"), path,
                    (plot_coherence, mine, dataset, path)))
    return out

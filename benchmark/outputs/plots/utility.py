"""Study figure: the headline metrics of the registry's `utility` group per synthesizer (study.plot_group)."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots.study import group_tasks

FIGURE = "utility.png"
CAPTION = "Utility: the headline utility metrics (pMSE ratio, TSTR AUC ratio) per synthesizer."
ORDER = 50


def tasks(study) -> list:
    return group_tasks(study, "utility", "Utility beyond marginals (dashed: the ideal value)", study.plot_dir / FIGURE)

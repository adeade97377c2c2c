"""Study figure: the headline metrics of the registry's `attack` group per synthesizer (study.plot_group)."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots.study import group_tasks

FIGURE = "attacks.png"
CAPTION = "Attacks: the headline membership-inference metrics per synthesizer (AUC 0.5 ideal)."
ORDER = 60


def tasks(study) -> list:
    return group_tasks(study, "attack", "Membership inference (dashed: the ideal value)", study.plot_dir / FIGURE)

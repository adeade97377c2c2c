"""Study figure: the headline metrics of the registry's `disclosure` group per synthesizer (study.plot_group)."""

from __future__ import annotations

from holdbench.benchmark.outputs.plots.study import group_tasks

FIGURE = "disclosure.png"
CAPTION = "Attribute disclosure: the disclosure metrics per synthesizer."
ORDER = 70


def tasks(study) -> list:
    return group_tasks(study, "disclosure", "Attribute disclosure (dashed: the ideal value)", study.plot_dir / FIGURE)

"""Fidelity, privacy, utility and attack metrics of synthetic tables (docs/definitions/, §3-§11).

Every metric is declared once, as a field of a family's result (holdbench.metrics.registry).
The families are imported when first named (`holdbench.metrics.Fidelity`, `from metrics import DCRShare`),
so `import metrics` stays light: an evaluation imports the libraries of its own families only.
"""

from __future__ import annotations

import importlib

from holdbench.metrics.evaluate import default_families, evaluate, kinds_from_dtypes, paper_families
from holdbench.metrics.registry import EvalData, MetricFamily, MetricSpec
from holdbench.metrics.result import EvaluationResult

#: exported names imported on first use, and their modules
_LAZY = {"Fidelity": "holdbench.metrics.fidelity", "FidelityResult": "holdbench.metrics.fidelity", "PanelScores": "holdbench.metrics.panel",
         "PrivacyPanel": "holdbench.metrics.panel", "DCRShare": "holdbench.metrics.privacy", "PrivacyResult": "holdbench.metrics.privacy"}

__all__ = [
    "DCRShare", "EvalData", "EvaluationResult", "Fidelity", "FidelityResult", "MetricFamily", "MetricSpec",
    "PanelScores", "PrivacyPanel", "PrivacyResult", "default_families", "evaluate", "kinds_from_dtypes",
    "paper_families",
]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'metrics' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""Fidelity, privacy, utility and attack metrics of synthetic tables (SPEC §3-§11).

Every metric is declared once, as a field of a family's result (metrics.registry).
The families are imported when first named (`metrics.Fidelity`, `from metrics import DCRShare`),
so `import metrics` stays light: an evaluation imports the libraries of its own families only.
"""

from __future__ import annotations

import importlib

from metrics.evaluate import default_families, evaluate, kinds_from_dtypes, paper_families
from metrics.registry import EvalData, MetricFamily, MetricSpec
from metrics.result import EvaluationResult

#: exported names imported on first use, and their modules
_LAZY = {"Fidelity": "metrics.fidelity", "FidelityResult": "metrics.fidelity", "PanelScores": "metrics.panel",
         "PrivacyPanel": "metrics.panel", "DCRShare": "metrics.privacy", "PrivacyResult": "metrics.privacy"}

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

"""Fidelity and privacy metrics of Platzer & Reutterer (2021), exact and fast (SPEC §3, §4, §7)."""

from metrics.evaluate import evaluate, kinds_from_dtypes
from metrics.panel import PanelScores
from metrics.result import EvaluationResult, FidelityResult, PrivacyResult

__all__ = [
    "EvaluationResult", "FidelityResult", "PanelScores", "PrivacyResult", "evaluate", "kinds_from_dtypes",
]

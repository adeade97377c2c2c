"""Privacy audit: vulnerable records, a per-target shadow-model membership game and an empirical ε lower
bound (docs/definitions/attacks.md, audit section). The shadow fits themselves run in the workflow
(holdbench.benchmark.workflow.audit); this package holds everything computed from data."""

from holdbench.metrics.audit.bounds import EpsilonBound, clopper_pearson, epsilon_lower_bound
from holdbench.metrics.audit.features import FeatureEncoder
from holdbench.metrics.audit.game import (
    Audit,
    AuditResult,
    membership,
    play_fit,
    read_fits,
    save_fit,
    settings_digest,
)
from holdbench.metrics.audit.targets import masked, select_targets, vulnerability_scores

__all__ = ["Audit", "AuditResult", "EpsilonBound", "FeatureEncoder", "clopper_pearson", "epsilon_lower_bound",
           "masked", "membership", "play_fit", "read_fits", "save_fit", "select_targets", "settings_digest", "vulnerability_scores"]

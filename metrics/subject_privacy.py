"""The flat privacy families on one vector per subject of a sequential dataset, as sequential families.

`SubjectPanel`, `SubjectLegal` and `SubjectAttacks` run holdbench.metrics.panel.PrivacyPanel,
holdbench.metrics.legal.LegalCriteria and holdbench.metrics.attacks.MembershipInference unchanged on the subject vectors
(holdbench.metrics.sequential.subject_vectors: attributes, sequence length, first m events; members = T's
subjects, non-members = H's). Their metrics are the flat ones renamed `subject_<name>` and labelled
"Subject <label>" (holdbench.metrics.registry.renamed_result_type): one declaration, so a sequential study's
leaderboard, report, MLflow runs and gates read them like any other registry metric. Options are the
flat family's own (conf/metrics/sequential.yaml).
"""

from __future__ import annotations

from typing import Any, ClassVar

from holdbench.metrics.attacks import MembershipInference
from holdbench.metrics.legal import LegalCriteria
from holdbench.metrics.panel import PrivacyPanel
from holdbench.metrics.registry import MetricFamily, rename_result, renamed_result_type
from holdbench.metrics.sequential import SequentialEvalData, SequentialFamily

PREFIX = "subject_"


class _OnSubjects(SequentialFamily):
    """A flat family run on the subject vectors; subclasses set `inner`."""

    inner: ClassVar[type[MetricFamily]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.name = PREFIX + cls.inner.name
        cls.definition = cls.inner.definition  # the flat family's metrics, on other vectors
        cls.reference = (
            f"The flat {cls.inner.name} family's code, unchanged (its own reference holds), on one vector per "
            "subject: the vectors equal ones built row by row in tests/sequential/test_sequential_metrics.py, "
            "and tests/sequential/test_sequential_subject_privacy.py checks on baseball and nlswork samples that "
            "copied subjects are caught, new sequences are not flagged like copies and the holdout row's S-side "
            "values equal its H-side ones.")
        cls.result_type = renamed_result_type(cls.inner.result_type, PREFIX, "Subject",
                                              "measured on one vector per subject (attributes, length, first m events)")

    def __init__(self, **options: Any) -> None:
        """options: the flat family's constructor arguments."""
        self.family = self.inner(**options)

    def unavailable(self) -> str | None:
        return self.family.unavailable()

    def compute(self, data: SequentialEvalData) -> Any:
        return rename_result(self.family.compute(data.subject_data()), self.result_type)


class SubjectPanel(_OnSubjects):
    """IMS, DCR/NNDR percentiles against H and the Gower DCR share, per subject."""

    inner = PrivacyPanel


class SubjectLegal(_OnSubjects):
    """Bale & Quick's legal criteria, per subject."""

    inner = LegalCriteria


class SubjectAttacks(_OnSubjects):
    """The membership-inference panel, per subject (members = T's subjects)."""

    inner = MembershipInference

"""Metric families that cannot run or fail on purpose (test-only; configs made by the tests)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from holdbench.metrics.registry import EvalData, MetricFamily, metric

#: while this environment variable is "1", Toggle cannot run (as anonymeter without its venv)
MISSING_ENV = "HOLDBENCH_TEST_TOGGLE_MISSING"


@dataclass(frozen=True)
class ToggleResult:
    toggle_rows: float = metric("rows of S", "fidelity", direction="higher", meaning="rows of S (test only)")


class Toggle(MetricFamily):
    """|S|, when it can run: unavailable while $HOLDBENCH_TEST_TOGGLE_MISSING is 1."""

    name = "toggle"
    result_type = ToggleResult

    def unavailable(self) -> str | None:
        return "the toggle library is not installed (test)" if os.environ.get(MISSING_ENV) == "1" else None

    def compute(self, data: EvalData) -> ToggleResult:
        return ToggleResult(float(len(data.synthetic)))


@dataclass(frozen=True)
class BrokenResult:
    broken_value: float = metric("never computed", "fidelity", direction="higher", meaning="always fails (test)")


class Broken(MetricFamily):
    """Always raises, as a family given an option that does not fit the table."""

    name = "broken"
    result_type = BrokenResult

    def compute(self, data: EvalData) -> BrokenResult:
        raise ValueError("broken option n_cols=3 exceeds the table's columns (test)")

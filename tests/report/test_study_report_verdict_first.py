"""The study report opens with the gates' verdicts and never marks a value best in a row that fails the gates
without saying so (issue 33 item 3)."""

from __future__ import annotations

import re

from holdbench.benchmark.outputs.gates import parse_gates, verdicts
from holdbench.benchmark.outputs.report import render_report
from holdbench.benchmark.outputs.results import load_results
from tests.benchmark.conftest import build_study


def test_best_in_a_failing_row_says_so_and_the_verdict_comes_first(tmp_path):
    results = load_results(build_study(tmp_path).path)
    every_cell_fails = parse_gates({"targets": {"f1": {"metric": "F1_ratio", "max": 0}}})
    none_fails = parse_gates({"targets": {"f1": {"metric": "F1_ratio", "min": 0}}})
    failing = render_report(results, verdicts(results, every_cell_fails), "fails.yaml")
    best = re.findall(r'<td data-v="[^"]*" class="best"[^>]*>([^<]*)</td>', failing)
    assert best and all(text.endswith("(best, but fails the gates)") for text in best)
    passing = render_report(results, verdicts(results, none_fails), "passes.yaml")
    marked = re.findall(r'<td data-v="[^"]*" class="best"[^>]*>([^<]*)</td>', passing)
    assert len(marked) == len(best) and not any("fails the gates" in t for t in marked)
    assert passing.index("<h2>Quality gates</h2>") < passing.index("<h2>Leaderboard")

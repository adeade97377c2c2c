"""How the file report orders S that fail the gates: by how far their worst gate is from passing, in times the
deviation it allows (verdicts.gate_excess), not by the headline metrics a leaky S is good at.

The four candidates mirror what `holdbench report` measured on adult's T and H with a 10,000-row sample of
the published synthpop file (good), the same with 300 rows replaced by T's records (leaky), T with age moved
by one year (near-copy) and T with every column permuted on its own (shuffled): all four fail the default gates,
and the leaky and near-copy ones have the best headline fidelity."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from holdbench.benchmark.outputs.filereport.verdicts import gate_excess, ranking, ranking_caveat
from holdbench.benchmark.outputs.gates import FAIL, NA, PASS, Target
from holdbench.metrics.fidelity import FidelityResult
from holdbench.metrics.privacy import PrivacyResult
from holdbench.metrics.registry import specs_of

SPECS = specs_of(FidelityResult) + specs_of(PrivacyResult)
SPEC = {sp.name: sp for sp in SPECS} | {"tstr_auc": SimpleNamespace(direction="higher", ideal=None)}
DCR_TEST = Target("dcr_distribution", test="dcr", max_effect=0.02)
SHARE_LOW = Target("dcr_share_interval", metric="dcr_share", use="ci_low", max=0.52)
ACCURACY = Target("accuracy", metric="F3_ratio", max=2)


@pytest.mark.parametrize(("target", "value", "expected"), [
    (DCR_TEST, 0.038, 1.9),                   # effect 0.038 of 0.02 allowed
    (DCR_TEST, -0.01, 0.0),                   # S farther from T than the reference: no deviation
    (SHARE_LOW, 0.570, 3.5),                  # 0.07 above the ideal 0.5, 0.02 allowed
    (SHARE_LOW, 0.936, 21.8),
    (SHARE_LOW, 0.51, 0.5),                   # within the bound
    (ACCURACY, 6.81, 5.81),                   # 5.81 above the ideal 1, 1 allowed
    (Target("low", metric="F3_ratio", min=0.5), 0.2, 1.6),   # 0.8 below the ideal, 0.5 allowed
    (Target("auc", metric="tstr_auc", min=0.5), 0.25, 2.0),  # a 'higher' metric: min / value
])
def test_excess_is_the_deviation_in_units_of_the_allowed_one(target, value, expected):
    assert gate_excess(target, value, SPEC.get(target.metric)) == pytest.approx(expected)


def test_excess_of_a_zero_tolerance_and_of_no_value():
    strict = Target("strict", test="dcr", max_effect=0.0)
    assert gate_excess(strict, 0.01) == math.inf and gate_excess(strict, 0.0) == 0.0
    assert gate_excess(DCR_TEST, None) is None and gate_excess(None, 0.3) is None


def _judged(verdict: str, worst: float | None, failed: tuple = ("dcr_share_interval",)) -> dict:
    return {"verdict": verdict, "failed": list(failed) if verdict == FAIL else [], "worst": worst, "rows": []}


def test_failing_candidates_rank_by_their_worst_gate_not_by_their_fidelity():
    # headline values as measured: the leaky and near-copy S are the most faithful, the shuffled one the least
    metrics = {"good": {"F1_ratio": 1.72, "F2_ratio": 1.86, "F3_ratio": 1.98, "dcr_share": 0.574},
               "leaky": {"F1_ratio": 1.70, "F2_ratio": 1.83, "F3_ratio": 1.95, "dcr_share": 0.585},
               "nearcopy": {"F1_ratio": 1.05, "F2_ratio": 1.10, "F3_ratio": 1.12, "dcr_share": 0.940},
               "shuffled": {"F1_ratio": 1.01, "F2_ratio": 4.51, "F3_ratio": 6.81, "dcr_share": 0.500},
               "clean": {"F1_ratio": 2.50, "F2_ratio": 2.60, "F3_ratio": 2.70, "dcr_share": 0.501}}
    evaluations = [SimpleNamespace(name=n, metrics=m) for n, m in metrics.items()]
    judged = {"good": _judged(FAIL, 3.5, ("dcr_distribution", "nndr_distribution", "dcr_share_interval")),
              "leaky": _judged(FAIL, 4.05, ("dcr_distribution", "nndr_distribution", "dcr_share_interval")),
              "nearcopy": _judged(FAIL, 21.8, ("dcr_distribution", "nndr_distribution", "dcr_share_interval")),
              "shuffled": _judged(FAIL, 5.81, ("accuracy",)),
              "clean": _judged(PASS, None)}
    rk = ranking(evaluations, SPECS, judged)
    assert rk["order"] == ["clean", "good", "leaky", "shuffled", "nearcopy"]
    # the headline ranks alone would have put the near-copy and the leaky S first
    assert rk["mean_rank"]["nearcopy"] < rk["mean_rank"]["good"] and rk["mean_rank"]["leaky"] < rk["mean_rank"]["good"]
    assert "times the deviation the gate allows" in rk["aggregation"]


def test_a_failed_gate_without_a_measure_ranks_last_among_the_failing():
    evaluations = [SimpleNamespace(name=n, metrics={"F3_ratio": f}) for n, f in (("a", 1.1), ("b", 3.0))]
    judged = {"a": _judged(FAIL, None, ("cell status",)), "b": _judged(FAIL, 1.5)}
    assert ranking(evaluations, SPECS, judged)["order"] == ["b", "a"]


def _rep(*verdicts: str) -> dict:
    return {"synthetic": {f"S{i}": {"verdict": {"verdict": v}} for i, v in enumerate(verdicts)}}


@pytest.mark.parametrize(("verdicts", "words"), [
    ((FAIL, FAIL), "No S passes every gate: each fails at least one"),
    ((FAIL, NA), "No S passes every gate: each fails or is not judged on at least one"),
    ((FAIL, PASS), ""),
    ((FAIL,), ""),  # one S: no ranking to qualify
])
def test_the_ranking_says_when_no_candidate_may_be_released(verdicts, words):
    caveat = ranking_caveat(_rep(*verdicts))
    assert caveat.startswith(words) if words else caveat == ""
    if words:
        assert "none is fit to release under these gates" in caveat


def test_a_gate_guards_its_metric_group_and_a_distribution_test_privacy():
    from holdbench.benchmark.outputs.filereport.verdicts import failed_groups_text, gate_group

    assert gate_group(DCR_TEST) == "privacy"
    assert gate_group(SHARE_LOW, SPEC["dcr_share"]) == "privacy"
    assert gate_group(ACCURACY, SPEC["F3_ratio"]) == "fidelity"
    assert gate_group(None) is None
    assert failed_groups_text({"failed_groups": ["fidelity", "privacy"]}) == \
        "fidelity (S less like T than H is); privacy (S nearer to T than H is)"
    assert failed_groups_text({"failed_groups": []}) == ""


def test_every_metric_group_has_words_for_what_a_failing_s_fails_on():
    from holdbench.benchmark.outputs.filereport.verdicts import GROUP_WORDS
    from holdbench.metrics.registry import GROUPS

    assert set(GROUP_WORDS) == set(GROUPS)
    assert all(words.startswith(f"{group} (") for group, words in GROUP_WORDS.items())

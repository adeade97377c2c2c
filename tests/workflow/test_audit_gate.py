"""`holdbench check`'s audit gate (holdbench.benchmark.outputs.gates.AUDIT_TARGET): a DP cell whose audited
ε lower bound exceeds its configured ε fails, with the attack's counts as evidence; a DP cell within its ε
passes; a cell without a configured ε (audit_epsilon_excess absent) gets no audit row."""

from __future__ import annotations

from types import SimpleNamespace

from holdbench.benchmark.outputs.gates import FAIL, PASS, Gates, judge_cell
from holdbench.metrics.audit import AuditResult
from holdbench.metrics.registry import specs_of


def cell(metrics: dict) -> SimpleNamespace:
    return SimpleNamespace(cell_id="audit/adult/seed0/x", dataset="adult", synthesizer="x", seed=0,
                           status={"status": "ok"}, metrics=metrics)


def rows(metrics: dict) -> dict:
    out = judge_cell(cell(metrics), Gates(source="<test>", targets=()), specs_of(AuditResult))
    return {r["target"]: r for r in out}


def test_dp_cell_over_its_epsilon_fails_with_the_evidence():
    got = rows({"audit_epsilon_lower": 1.3, "audit_epsilon_excess": 1.2,
                "audit_evidence": "target 1: 20 of 20 member fits and 0 of 20 non-member fits called member"})
    assert got["audited_epsilon"]["verdict"] == FAIL
    assert "20 of 20 member fits" in got["audited_epsilon"]["detail"]


def test_dp_cell_within_its_epsilon_passes():
    got = rows({"audit_epsilon_lower": 0.0, "audit_epsilon_excess": -1.0, "audit_epsilon_configured": 1.0})
    assert got["audited_epsilon"]["verdict"] == PASS and "audited_membership" not in got


def test_a_non_dp_cell_fails_when_the_audit_proves_a_membership():
    """A generator without a DP guarantee (no configured ε, excess NaN as the audit writes it) is judged on the
    bound itself: above 0 the attack told a vulnerable record's membership beyond chance, with the counts."""
    evidence = "target 1: 19 of 20 member fits and 1 of 20 non-member fits called member"
    got = rows({"audit_epsilon_lower": 0.46, "audit_epsilon_excess": float("nan"), "audit_epsilon_configured": None,
                "audit_confidence": 0.95, "audit_evidence": evidence})
    assert set(got) == {"audited_membership"}
    row = got["audited_membership"]
    assert row["verdict"] == FAIL and evidence in row["detail"]
    assert ("audited_membership, audited ε (lower bound) 0.46 > 0 allowed: the audit's attack tells whether a "
            "vulnerable record of T was in the generator's training data beyond chance with probability >= 0.95") \
        in row["why"]
    clean = rows({"audit_epsilon_lower": 0.0, "audit_epsilon_excess": float("nan"), "audit_evidence": "no guess"})
    assert clean["audited_membership"]["verdict"] == PASS
    assert rows({"audit_epsilon_lower": float("nan"), "audit_epsilon_excess": float("nan")}) == {}  # audit n/a


def test_dp_cell_configured_above_what_the_audit_can_prove_is_untested_not_passed():
    from holdbench.benchmark.outputs.gates import NA

    base = {"audit_epsilon_lower": 0.0, "audit_epsilon_provable": 1.19, "audit_n_fits_test": 40}
    row = rows({**base, "audit_epsilon_configured": 10.0, "audit_epsilon_excess": -10.0})["audited_epsilon"]
    assert row["verdict"] == NA
    assert "untested" in row["why"] and "at most ε 1.19" in row["why"] and "configured ε 10" in row["why"]
    assert rows({**base, "audit_epsilon_configured": 1.0, "audit_epsilon_excess": -1.0})["audited_epsilon"]["verdict"] == PASS
    over = rows({**base, "audit_epsilon_lower": 1.1, "audit_epsilon_configured": 0.1, "audit_epsilon_excess": 1.0,
                 "audit_evidence": "target 1: 20 of 20"})["audited_epsilon"]
    assert over["verdict"] == FAIL and "20 of 20" in over["detail"]
    # a cell evaluated before the field existed is judged as before
    assert rows({"audit_epsilon_lower": 0.0, "audit_epsilon_configured": 10.0,
                 "audit_epsilon_excess": -10.0})["audited_epsilon"]["verdict"] == PASS


def test_an_untested_cell_says_how_many_test_fits_would_test_it():
    from holdbench.benchmark.outputs.gates import NA

    base = {"audit_epsilon_lower": 0.0, "audit_epsilon_provable": 1.19, "audit_n_fits_test": 40,
            "audit_confidence": 0.95, "audit_n_targets": 5, "audit_delta": 0.0}
    row = rows({**base, "audit_epsilon_configured": 10.0, "audit_epsilon_excess": -10.0, "audit_delta": 1e-9})
    # δ > 0 only makes a bound harder to prove: the same counts of members, a few more canaries
    assert "n_fits_test >= 233,412 (with `bound: one_run`, 13,2" in row["audited_epsilon"]["why"]
    row = rows({**base, "audit_epsilon_configured": 10.0, "audit_epsilon_excess": -10.0})["audited_epsilon"]
    assert row["verdict"] == NA
    # 5 targets at 0.95 together: each at 0.99, a = 0.005; a perfect attack on m members and m non-members
    # proves log(a^(1/m) / (1 - a^(1/m))), above 10 from m = floor(log(a) / log(sigmoid(10))) + 1 = 116,706
    # the one-run bound on the same 5 targets: 65,987 canaries (below), 13,198 test fits
    assert row["why"].endswith("; proving it needs n_fits_test >= 233,412 (with `bound: one_run`, 13,198 at these "
                               "targets)"), row["why"]
    row = rows({**base, "audit_epsilon_configured": 3.0, "audit_epsilon_excess": -3.0})["audited_epsilon"]
    # one run: from m > log(0.05) / log(sigmoid(3)) = 61.65 canaries: 62, 13 test fits of 5 targets
    assert row["why"].endswith("; proving it needs n_fits_test >= 220 (with `bound: one_run`, 13 at these targets)"), \
        row["why"]


def test_an_untested_one_run_cell_counts_its_canaries_over_all_targets():
    from holdbench.benchmark.outputs.gates import NA

    base = {"audit_epsilon_lower": 0.0, "audit_epsilon_provable": 4.19, "audit_n_fits_test": 40, "audit_bound": "one_run",
            "audit_confidence": 0.95, "audit_n_targets": 5, "audit_delta": 0.0}
    row = rows({**base, "audit_epsilon_configured": 10.0, "audit_epsilon_excess": -10.0})["audited_epsilon"]
    assert row["verdict"] == NA and "at most ε 4.19" in row["why"]
    # every one of m canaries guessed right proves log(q / (1 - q)) at q = 0.05^(1/m): above 10 from
    # m = floor(log(0.05) / log(sigmoid(10))) + 1 = 65,987 canaries, 13,198 test fits of 5 targets
    assert row["why"].endswith("; proving it needs n_fits_test >= 13,198"), row["why"]
    assert rows({**base, "audit_epsilon_configured": 3.0,
                 "audit_epsilon_excess": -3.0})["audited_epsilon"]["verdict"] == PASS  # 3 < 4.19: tested

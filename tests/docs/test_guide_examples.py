"""Examples and counts the guides show, against the code that produces them.

The reading-results guide's example of a cell's verdict in words (`holdbench check --out`'s `why`, the
report's verdict column): its numbers are an illustration, its wording is the gates' own. The test reads the
numbers off the example, judges them with the default gates' targets through the functions `holdbench check`
uses, and requires the guide to show exactly the text they write (fails when the wording, a target's name,
its threshold or the default gates change and the guide does not)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
from holdbench.benchmark.outputs import gates as g

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "reading-results.md"


def _example() -> str:
    text = GUIDE.read_text()
    start = text.index("```text", text.index("## Why a cell passes or fails"))
    return " ".join(text[start + len("```text"):text.index("```", start + 7)].split())


def _number(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    assert m, f"the example lost {pattern!r}: update this test with it"
    return float(m.group(1))


def test_the_verdict_example_is_what_the_default_gates_write_for_its_numbers():
    shown = _example()
    share = _number(r"DCR share ([\d.]+),", shown)
    metrics = {"F3_ratio": _number(r"F3 ratio ([\d.]+)", shown), "dcr_share": share,
               "dcr_share_ci_low": _number(r"DCR share [\d.]+, 95% interval from ([\d.]+)", shown),
               "exact_copy_excess": _number(r"beyond H's rate (-?[\d.]+),", shown),
               "exact_copy_excess_ci_low": _number(r"beyond H's rate -?[\d.]+, 95% interval from (-?[\d.]+)", shown)}
    cell = SimpleNamespace(metrics=metrics)
    specs = g.metrics_of_every_family()
    rows = []
    for t in g.load_gates("default").targets:
        if t.test is not None:
            a = _number(rf"{t.name}, [^:]+: A = ([\d.]+)", shown)
            p = _number(rf"{t.name}, [^:]+: A = [\d.]+ \S+ [\d.]+ allowed \(p = ([\d.e+-]+)\)", shown)
            res = g.ShiftTest(a - 0.5, p, 50_000, 24_421)
            fails = t.shift_fails(res)
            rows.append({"verdict": g.FAIL if fails else g.PASS, "why": g._why_test(cell, t, res, fails)})
        else:
            value, _ = g._metric_value(cell, t, specs)
            ok = t.admits(value)
            rows.append({"verdict": g.PASS if ok else g.FAIL,
                         "why": g._why_metric(cell, t, specs[t.metric], value, ok)})
    table = pd.DataFrame(rows)
    assert set(table["verdict"]) == {g.PASS, g.FAIL}, "the example should show a failing and a passing target"
    assert shown == g.explain_cell(table)


def test_the_audit_guides_test_fit_counts_are_the_bound_at_the_audits_defaults():
    """docs/guides/audit.md names the n_fits_test that would test ε 3 and ε 10 at the audit study's targets
    and confidence: recomputed here from its metrics config (fails when a setting or the bound moves)."""
    from holdbench.benchmark.config import group_config
    from holdbench.benchmark.workflow.audit import family
    from holdbench.metrics.audit.bounds import per_target_confidence, trials_needed

    audit = family(group_config("metrics", "audit")["families"]["audit"])  # the audit study's, defaults filled
    level = per_target_confidence(audit.confidence, audit.settings["n_targets"])
    text = " ".join((REPO / "docs" / "guides" / "audit.md").read_text().split())
    for epsilon in (3, 10):
        fits = 2 * trials_needed(float(epsilon), level)
        assert f"ε {epsilon} needs {fits:,}" in text, (epsilon, fits)


def test_the_audit_guides_one_run_fit_counts_are_the_bound_at_its_config():
    """docs/guides/audit.md names the test fits on which a perfect attack's one-run bound tests ε 3 and ε 10 with
    the `audit_one_run` config's targets: recomputed here (canaries = targets x test fits)."""
    from holdbench.benchmark.config import group_config
    from holdbench.benchmark.workflow.audit import family
    from holdbench.metrics.audit.bounds import one_run_canaries_needed

    audit = family(group_config("metrics", "audit_one_run")["families"]["audit"])
    assert audit.settings["bound"] == "one_run"
    targets = audit.settings["n_targets"]
    text = " ".join((REPO / "docs" / "guides" / "audit.md").read_text().split())
    assert f"With the config's {targets} targets" in text
    for epsilon, word in ((3, "ε 3 on"), (10, "ε 10 on")):
        fits = -(-one_run_canaries_needed(float(epsilon), audit.confidence) // targets)
        assert f"{word} {fits:,} test fits" in text or f"{word} {fits:,}" in text, (epsilon, fits)

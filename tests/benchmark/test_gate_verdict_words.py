"""Every gate verdict explained in words beside it (issue 24): which target decided it, the measured
value and what is allowed; the report shows it beside each cell's verdict."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.outputs.gates import FAIL, PASS, cell_verdicts, judge_cell, load_gates
from holdbench.benchmark.layout import canonical
from holdbench.benchmark.outputs.report import render_report
from holdbench.benchmark.outputs.results import Cell, load_results
from holdbench.metrics import default_families
from holdbench.metrics.registry import specs_of

SPECS = [sp for f in default_families() for sp in specs_of(f.result_type)]
GATES = load_gates("default")


def _cell(synth: str, to_train: list[int], reference: list[int], share: float, low: float) -> Cell:
    hist = pd.DataFrame({"distance": range(len(to_train)), "to_train": to_train, "holdout_to_train": reference})
    return Cell("st", "demo", synth, 0, Path("."), {"status": "ok", "reason": ""},
                {"dcr_share": share, "dcr_share_ci_low": low, "dcr_share_ci_high": 2 * share - low},
                {"dcr_histogram": hist})


def _a(to_train, reference) -> float:
    """P(S's distance < H's) + P(equal)/2, counted pair by pair."""
    s = np.repeat(np.arange(len(to_train)), to_train)
    r = np.repeat(np.arange(len(reference)), reference)
    return float(np.mean([(x < y) + 0.5 * (x == y) for x in s for y in r]))


def test_crowding_synthesizer_fails_d22_and_the_words_say_why():
    # like the tvae: S bunched at small distances to T, yet no nearer T than H (share 0.515)
    to_t, ref = [40, 160, 0, 0], [20, 100, 60, 20]
    rows = {r["target"]: r for r in judge_cell(_cell("tvae", to_t, ref, 0.515, 0.493), GATES, SPECS)}
    dcr, share = rows["dcr_distribution"], rows["dcr_share_interval"]
    assert dcr["verdict"] == FAIL and share["verdict"] == PASS
    assert f"A = {_a(to_t, ref):.3f} > 0.52 allowed" in dcr["why"]
    assert "DCR share 0.515, 95% interval from 0.493" in dcr["why"] and "crowding" in dcr["why"]
    assert share["why"] == "dcr_share_interval, DCR share 0.515, 95% interval from 0.493 <= 0.52 allowed"
    whole = cell_verdicts(pd.DataFrame(list(rows.values())))
    why = whole.iloc[0]["why"]
    assert whole.iloc[0]["verdict"] == FAIL and why.startswith("fails: dcr_distribution")
    assert "passes: dcr_share_interval" in why and why.index("fails") < why.index("passes")


def test_a_share_above_tolerance_names_the_broken_bound():
    to_t, ref = [50, 50, 50, 50], [50, 50, 50, 50]  # same distribution: the D2.2 test passes
    rows = {r["target"]: r for r in judge_cell(_cell("copy", to_t, ref, 0.58, 0.558), GATES, SPECS)}
    assert rows["dcr_distribution"]["verdict"] == PASS
    assert "A = 0.500, not significant" in rows["dcr_distribution"]["why"]
    assert rows["dcr_share_interval"]["verdict"] == FAIL
    assert rows["dcr_share_interval"]["why"].endswith("95% interval from 0.558 > 0.52 allowed")


def test_report_puts_the_words_beside_each_verdict_and_uses_canonical_names(study):
    results = load_results(study.path)
    page = html.unescape(render_report(results))
    from holdbench.benchmark.outputs.report import default_verdicts

    table, _ = default_verdicts(results)
    judged = cell_verdicts(table)
    assert len(judged) and all(isinstance(w, str) and w for w in judged["why"])
    for _, r in judged.iterrows():
        assert r["why"] in page, r["cell_id"]
    for c in results.cells:
        assert f">{canonical(c.dataset, c.synthesizer, c.seed)} · " in page
        assert c.cell_id not in page  # never study/dataset/seedK/synth

"""The leaderboard and the report mark the best mean of each headline metric column, with the
metric's direction in the header (issue 24)."""

from __future__ import annotations

import math
import re

import pytest

from holdbench.benchmark.outputs.leaderboard import aggregate, render_markdown
from holdbench.benchmark.outputs.report import render_report
from holdbench.benchmark.outputs.results import load_results

_ARROW = {"lower": "↓", "higher": "↑"}


def _expected_best(s, specs):
    """{(dataset, metric): set of synthesizers} from the fabricated metrics, re-derived plainly:
    the mean over ok seeds, the holdout reference row left out, the best by the declared direction."""
    out = {}
    for dataset in s.datasets:
        for sp in specs:
            means = {}
            for synth in s.synthesizers:
                if synth == "holdout":
                    continue
                vals = [float(s.metrics[(dataset, synth, k)][sp.name]) for k in s.seeds
                        if s.is_ok((dataset, synth, k)) and s.metrics[(dataset, synth, k)].get(sp.name) is not None]
                if vals:
                    means[synth] = sum(vals) / len(vals)
            if len(means) < 2:
                out[(dataset, sp.name)] = set()
                continue
            if sp.direction == "lower":
                key = means
            elif sp.direction == "higher":
                key = {k: -v for k, v in means.items()}
            else:
                key = {k: abs(v - sp.ideal) for k, v in means.items()}
            top = min(key.values())
            out[(dataset, sp.name)] = {k for k, v in key.items() if math.isclose(v, top, rel_tol=0, abs_tol=0)}
    return out


@pytest.fixture(scope="module")
def rendered(study):
    results = load_results(study.path)
    heads = [sp for sp in results.specs if sp.headline]
    summary = aggregate(results.table, results.specs)
    return study, heads, render_markdown(results, summary), render_report(results)


def test_markdown_headers_carry_direction_and_best_is_bold(rendered):
    s, heads, md, _ = rendered
    best = _expected_best(s, heads)
    assert any(best.values())
    for dataset in s.datasets:
        section = md.split(f"## {dataset}\n", 1)[1].split("\n## ", 1)[0]
        table = [ln for ln in section.splitlines() if ln.startswith("|")]
        header = [c.strip() for c in table[0].strip("|").split("|")]
        for sp in heads:
            want = f"{sp.label} {_ARROW.get(sp.direction) or f'→{sp.ideal:g}'}"
            assert want in [h.replace("\\", "") for h in header], (want, header)
        for line in table[2:]:
            cols = [c.strip() for c in line.strip("|").split("|")]
            synth = cols[0].replace("\\", "")
            for sp in heads:
                col = [h.replace("\\", "") for h in header].index(f"{sp.label} {_ARROW.get(sp.direction) or f'→{sp.ideal:g}'}")
                assert cols[col].startswith("**") == (synth in best[(dataset, sp.name)]), (dataset, synth, sp.name)


def test_report_marks_the_same_best_cells(rendered):
    s, heads, _, page = rendered
    best = _expected_best(s, heads)
    n_marked = len(re.findall(r'<td data-v="[^"]*" class="best"', page))
    assert n_marked == sum(len(v) for v in best.values()) > 0
    assert "↓ means lower is better" in page

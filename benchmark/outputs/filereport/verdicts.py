"""The verdict of a file report: each S judged by the gates (holdbench.benchmark.outputs.gates, the same
judgement as `holdbench check`), the registry's pass/fail metrics listed as information beside them,
and several S ranked on the headline metrics."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from holdbench.benchmark.outputs.gates import FAIL, NA, PASS, verdict_name


def file_results(evaluations: list, specs: list, kind: str = "flat", dataset: str | None = None):
    """A StudyResults with one cell per evaluated S (named after it), for the gates and the study report's code."""
    from holdbench.benchmark.layout import StudyLayout
    from holdbench.benchmark.outputs.results import Cell, StudyResults, cells_table

    cells = [Cell("files", dataset or "files", ev.name, 0, Path("."), {"status": "ok", "reason": "",
                                                                      "holdout_rule": False},
                  ev.metrics, ev.artifacts) for ev in evaluations]
    study = {"name": "files", "datasets": [dataset or "files"], "synthesizers": [ev.name for ev in evaluations],
             "seeds": [0], "kind": kind}
    return StudyResults(StudyLayout(Path(".")), study, cells, cells_table(cells), specs)


def judge(evaluations: list, specs: list, gates, kind: str = "flat") -> dict:
    """{S name: {"verdict", "failed", "rows": [...]}} of the gates; each row names what it tests."""
    from holdbench.benchmark.outputs.gates import verdicts

    table = verdicts(file_results(evaluations, specs, kind), gates)
    by_target = {t.name: t for t in gates.targets}
    out = {}
    for ev in evaluations:
        sub = table[table["synthesizer"] == ev.name]
        rows = [{"gate": r["target"], "tests": verdict_name(by_target[r["target"]], specs)
                 if r["target"] in by_target else r["target"],
                 "value": _num(r["value"]), "threshold": r["threshold"], "pvalue": _num(r["pvalue"]),
                 "verdict": r["verdict"], "why": r["why"]} for _, r in sub.iterrows()]
        v = sub["verdict"]
        out[ev.name] = {"verdict": FAIL if (v == FAIL).any() else PASS if (v == PASS).any() else NA,
                        "failed": [r["gate"] for r in rows if r["verdict"] == FAIL], "rows": rows}
    return out


def informational(ev, specs: list) -> list[dict]:
    """The registry's pass/fail metrics (bools) of one S: named by their label, which says the reference;
    none of them decides the gates unless a gates file names it."""
    rows = []
    for sp in specs:
        value = ev.metrics.get(sp.name)
        if isinstance(value, bool) or (sp.digits == 0 and value in (0, 1)):
            rows.append({"metric": sp.name, "tests": sp.label, "verdict": PASS if value else FAIL,
                         "meaning": sp.meaning})
    return rows


def _num(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def headline(specs: list) -> list:
    return [sp for sp in specs if sp.headline]


def ranking(evaluations: list, specs: list, judged: dict) -> dict:
    """Several S side by side: per headline metric each S's value and rank (1 = best by the metric's
    direction, ties share the mean rank), the best marked, and the overall order: S that pass the gates
    before those that fail, then by mean rank over the headline metrics each S has a value of."""
    names = [ev.name for ev in evaluations]
    rows, ranks = [], {n: [] for n in names}
    for sp in headline(specs):
        values = {ev.name: ev.metrics.get(sp.name) for ev in evaluations}
        bad = pd.Series({n: sp.badness(v) for n, v in values.items()}, dtype=float)
        if bad.isna().all():
            continue
        r = bad.rank(method="average")
        for n in names:
            if not math.isnan(r[n]):
                ranks[n].append(float(r[n]))
        best = [n for n in names if bad[n] == bad.min()]
        lo, hi = sp.interval or (None, None)
        rows.append({"metric": sp.name, "label": sp.label, "better": sp.better, "meaning": sp.meaning,
                     "values": {n: _num(values[n]) for n in names},
                     "intervals": {n: [_num(next(e for e in evaluations if e.name == n).metrics.get(lo)),
                                       _num(next(e for e in evaluations if e.name == n).metrics.get(hi))]
                                   for n in names} if lo else None,
                     "ranks": {n: (None if math.isnan(r[n]) else float(r[n])) for n in names},
                     "best": best, "best_fails_gates": [n for n in best if judged[n]["verdict"] == FAIL]})
    mean_rank = {n: (sum(v) / len(v) if v else math.nan) for n, v in ranks.items()}
    order = sorted(names, key=lambda n: (judged[n]["verdict"] == FAIL, judged[n]["verdict"] == NA,
                                         math.inf if math.isnan(mean_rank[n]) else mean_rank[n], n))
    return {"rows": rows, "mean_rank": {n: _num(v) for n, v in mean_rank.items()}, "order": order,
            "aggregation": "S that pass every gate come first, then those with a gate n/a, then those that fail; "
                           "within each, by the mean of their ranks over the headline metrics shown (rank 1 = "
                           "best by the metric's direction: closest to the ideal value, or lowest/highest; "
                           "tied values share the mean rank)"}

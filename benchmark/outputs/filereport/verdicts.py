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
    """{S name: {"verdict", "failed", "worst", "rows": [...], "not_judged"}} of the gates (`not_judged`: the gates
    that are n/a for S, which a pass says nothing about); each row names what it tests and
    says how many times the allowed deviation its value is (`excess`, see gate_excess; None when it cannot
    be said or is infinite); `worst` is the largest excess over the gates S fails (None when none fails or
    a failed gate has no excess: such an S ranks last among those that fail)."""
    from holdbench.benchmark.outputs.gates import metric_names, verdicts

    table = verdicts(file_results(evaluations, specs, kind), gates)
    by_target = {t.name: t for t in gates.targets}
    known = metric_names(specs)
    out = {}
    for ev in evaluations:
        sub = table[table["synthesizer"] == ev.name]
        rows = []
        for _, r in sub.iterrows():
            target = by_target.get(r["target"])
            value = _num(r["value"])
            spec = known.get(target.metric) if target is not None and target.metric else None
            rows.append({"gate": r["target"], "tests": verdict_name(target, specs) if target else r["target"],
                         "group": gate_group(target, spec),
                         "value": value, "threshold": r["threshold"], "pvalue": _num(r["pvalue"]),
                         "verdict": r["verdict"], "why": r["why"], "excess": _finite(gate_excess(target, value, spec))})
        v = sub["verdict"]
        failed = [r for r in rows if r["verdict"] == FAIL]
        excess = [r["excess"] for r in failed]
        worst = None if not excess or None in excess else max(excess)
        out[ev.name] = {"verdict": FAIL if (v == FAIL).any() else PASS if (v == PASS).any() else NA,
                        "failed": [r["gate"] for r in failed], "worst": worst, "rows": rows,
                        "failed_groups": list(dict.fromkeys(r["group"] for r in failed if r["group"])),
                        "not_judged": [r["gate"] for r in rows if r["verdict"] == NA]}
    return out


def gate_group(target, spec=None) -> str | None:
    """What a gate guards, in the registry's groups: a distribution test (S's distances to T against H's)
    guards privacy; a metric bound, its metric's group (F3_ratio: fidelity); None for a row of no gate."""
    if target is None:
        return None
    if target.test is not None:
        return "privacy"
    return spec.group if spec is not None else None


#: what an S failing gates of a group is, in words (the report's overview)
GROUP_WORDS = {"fidelity": "fidelity (S less like T than H is)", "privacy": "privacy (S nearer to T than H is)",
               "utility": "utility (S serves an analysis of T worse than H does)",
               "attack": "attack (an attack tells T's records from H's)",
               "disclosure": "disclosure (S reveals T's sensitive values more than H's)"}


def failed_groups_text(verdict: dict) -> str:
    """The groups of the gates an S fails, in words ('' when none fails)."""
    return "; ".join(GROUP_WORDS.get(g, g) for g in verdict.get("failed_groups") or [])


#: the label of each S's `worst` in the report's headline table and summary.md
WORST_LABEL = "worst failed gate, times the deviation it allows"


def worst_text(verdict: dict, unit: str = "") -> str:
    """An S's `worst` as text: '3.47' + unit, 'not measurable' (a failed gate without a finite excess), ''
    (no gate failed)."""
    if not verdict["failed"]:
        return ""
    worst = verdict.get("worst")
    return "not measurable" if worst is None else f"{worst:.2f}{unit}"


def ranking_caveat(rep: dict) -> str:
    """What the ranking of several S cannot say: '' when one S passes every gate (or there is one S), else a
    sentence that no S is fit to release under these gates and what the order then means."""
    judged = [s["verdict"]["verdict"] for s in rep["synthetic"].values()]
    if len(judged) < 2 or PASS in judged:
        return ""
    what = "fails" if all(v == FAIL for v in judged) else "fails or is not judged on"
    return (f"No S passes every gate: each {what} at least one, so none is fit to release under these gates; "
            "the order below only says which comes nearest to passing")


def gate_excess(target, value: float | None, spec=None) -> float | None:
    """How many times the allowed deviation a gate's value deviates (> 1 beyond the bound, 1 at it); None when
    it cannot be said (no value, or no reference point to measure a deviation from).

    A distribution test: the effect A - 0.5 over `max_effect` (no difference is 0). A metric bound: the
    distance of the value from the metric's reference point over the distance of the bound from it; the
    reference is the registry's ideal value for an 'ideal' metric (e.g. 1 for a ratio, 0.5 for the DCR share)
    and 0 for a 'lower' or 'higher' one (a 'higher' metric under its `min` deviates by min / value)."""
    if target is None or value is None or math.isnan(value):
        return None
    if target.test is not None:
        return _ratio(value, target.max_effect)
    if spec is not None and spec.direction == "higher":
        if target.min is None or target.max is not None:
            return None
        return _ratio(target.min, value) if value > 0 else (math.inf if target.min > 0 else None)
    ref = float(spec.ideal) if spec is not None and spec.direction == "ideal" else 0.0
    # the bound on the value's side of the reference (a one-sided target has only one)
    if target.min is None or (target.max is not None and value > ref):
        bound = target.max
    else:
        bound = target.min
    if (bound - ref) * (value - ref) < 0:
        return 0.0  # on the other side of the reference: no deviation toward the bound
    return _ratio(abs(value - ref), abs(bound - ref))


def _ratio(num: float, den: float) -> float:
    if den == 0:
        return 0.0 if num <= 0 else math.inf
    return max(num, 0.0) / den


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


def _finite(x) -> float | None:
    v = _num(x)
    return v if v is not None and math.isfinite(v) else None


def headline(specs: list) -> list:
    return [sp for sp in specs if sp.headline]


def ranking(evaluations: list, specs: list, judged: dict) -> dict:
    """Several S side by side: per headline metric each S's value and rank (1 = best by the metric's
    direction, ties share the mean rank), the best marked, and the overall order: S that pass the gates
    before those that fail; S that fail by their worst failed gate's excess (times the allowed deviation,
    gate_excess); then by mean rank over the headline metrics each S has a value of."""
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

    def key(n):
        fails = judged[n]["verdict"] == FAIL
        worst = judged[n].get("worst")
        return (fails, judged[n]["verdict"] == NA, (math.inf if worst is None else worst) if fails else 0,
                math.inf if math.isnan(mean_rank[n]) else mean_rank[n], n)

    order = sorted(names, key=key)
    return {"rows": rows, "mean_rank": {n: _num(v) for n, v in mean_rank.items()}, "order": order,
            "aggregation": "S that pass every gate come first, then those with a gate n/a, then those that fail; "
                           "those that fail are ordered by how far their worst gate is from passing, in times "
                           "the deviation the gate allows (a test's effect over its largest tolerated effect, a "
                           "metric's distance from its ideal value over the bound's); within each group, and as "
                           "the last tie-break, by the mean of their ranks over the headline metrics shown "
                           "(rank 1 = best by the metric's direction: closest to the ideal value, or "
                           "lowest/highest; tied values share the mean rank)"}


def ranked_names(rep: dict) -> list[str]:
    """The S of a report, best first when there are several (the report's ranking), else as given."""
    names = list(rep["synthetic"])
    order = (rep.get("ranking") or {}).get("order") or []
    return list(order) if len(names) > 1 and sorted(order) == sorted(names) else names

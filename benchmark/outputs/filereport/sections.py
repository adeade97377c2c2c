"""The parts of the file report, verdict first; each one a function from the report's data to HTML, each
opening with the one plain sentence saying what it means."""

from __future__ import annotations

import numpy as np

import holdbench.benchmark.outputs.filereport.figures as figures  # noqa: PLR0402 - by module path: no import circle
from holdbench.benchmark.outputs.filereport.html import badge, esc, figure, means, num, pct, table, verdict_html
from holdbench.benchmark.outputs.filereport.verdicts import (
    WORST_LABEL,
    failed_groups_text,
    ranked_names,
    ranking_caveat,
    worst_text,
)


def verdict(rep: dict, specs: list) -> str:
    names = list(rep["synthetic"])
    ranked = ranked_names(rep)  # several S: best first
    out = ['<h2 id="verdict">Verdict</h2>',
           means("Each synthetic file S is judged by the gates below and passes only when every gate passes"
                 + (f" ({rep['gates']['description']})." if rep["gates"].get("description") else "."))]
    out.append(f'<p>Gates: <code>{esc(rep["gates"]["source"])}</code>. Only these gates decide the verdict and the '
               "exit status; the pass/fail metrics listed under &ldquo;Other pass/fail metrics&rdquo; are "
               "information and decide nothing.</p>")
    if len(names) > 1:  # the overview first: every S in rank order, its verdict and what failed, linked to its gates
        overview = []
        for rank, name in enumerate(ranked, start=1):
            j = rep["synthetic"][name]["verdict"]
            overview.append([str(rank), f'<a href="#verdict-s{names.index(name)}">{esc(name)}</a>',
                             verdict_html(j["verdict"]), esc(", ".join(j["failed"]) or "none"),
                             esc(failed_groups_text(j) or "none"),
                             esc(", ".join(j.get("not_judged") or []) or "none"), worst_text(j, "×")])
        out.append(table(["rank", "S", "verdict", "gates failed", "fails on", "gates not judged (n/a)", WORST_LABEL],
                         overview, "tbl-verdict-overview", {0}))
        caveat = ranking_caveat(rep)
        if caveat:
            out.append(f'<p id="verdict-caveat"><b>{esc(caveat)}.</b></p>')
        out.append('<p class="small">Ranked as <a href="#ranking">the ranking under the headline metrics</a> '
                   "says; each S's gates follow in this order.</p>")
    for name in ranked:
        i = names.index(name)
        j = rep["synthetic"][name]["verdict"]
        rows = [[esc(r["tests"]), esc(r["gate"]), num(r["value"], 4), esc(r["threshold"]),
                 (num(r["pvalue"], 3) if r["pvalue"] is not None else "n/a"), verdict_html(r["verdict"]),
                 esc(r["why"])] for r in j["rows"]]
        out.append(f'<h3 id="verdict-s{i}">S {esc(name)}: {badge(j["verdict"])}</h3>')
        if j["failed"]:
            out.append(f"<p>Fails: {esc(', '.join(j['failed']))}.</p>")
        if j.get("not_judged"):
            out.append(f"<p>Not judged (n/a, the reason in words below): {esc(', '.join(j['not_judged']))}; "
                       "the verdict says nothing about these.</p>")
        out.append(table(["what it tests (reference)", "gate", "value", "threshold", "p", "verdict", "in words"],
                         rows, f"tbl-gates-s{i}", {2, 4}))
    out.append(_comparison(rep, ranked))
    info = [[esc(n), esc(r["tests"]), esc(r["metric"]), verdict_html(r["verdict"]), esc(r["meaning"])]
            for n in names for r in rep["synthetic"][n]["informational"]]
    if info:
        out.append('<h3 id="other-verdicts">Other pass/fail metrics (information, not gates)</h3>')
        out.append(table(["S", "what it tests (reference)", "metric", "result", "meaning"], info, "tbl-informational"))
    return "\n".join(out)


def _comparison(rep: dict, names: list[str]) -> str:
    rk = rep["ranking"]
    head = ["metric", "better"] + [f"S {n}" for n in names]
    rows = []
    for r in rk["rows"]:
        row = [esc(r["label"]), esc(r["better"])]
        for n in names:
            text = num(r["values"][n])
            if r["intervals"] and r["intervals"][n][0] is not None:
                lo, hi = r["intervals"][n]
                text += f' <span class="small">[{num(lo)}, {num(hi)}]</span>'
            cls = ""
            if n in r["best"] and len(names) > 1:
                if n in r["best_fails_gates"]:
                    cls, text = "best-fails", text + " <b>best, but S fails the gates</b>"
                else:
                    cls, text = "best", text + " <b>best</b>"
            row.append((text, cls))
        rows.append(row)
    if len(names) > 1:
        rows.append([("mean rank", ""), ("", "")] + [num(rk["mean_rank"][n], 2) for n in names])
        failed = {n: rep["synthetic"][n]["verdict"]["failed"] for n in names}
        if any(failed.values()):
            rows.append([("gates failed", ""), ("fewer", "")] + [str(len(failed[n])) for n in names])
            rows.append([(WORST_LABEL, ""), ("lower", "")]
                        + [worst_text(rep["synthetic"][n]["verdict"], "×") for n in names])
    out = ['<h3 id="headline">Headline metrics</h3>',
           means("The headline numbers of each S with their 95% intervals where the metric has one; "
                 "a ratio compares S with H (1 = S as close to T as unseen data).")]
    out.append(table(head, rows, "tbl-headline", set(range(2, 2 + len(names)))))
    if len(names) > 1:
        order = ", ".join(f"{i + 1}. {n}" + (" (fails the gates)" if rep["synthetic"][n]["verdict"]["verdict"] == "FAIL"
                                             else "") for i, n in enumerate(rk["order"]))
        caveat = ranking_caveat(rep)
        if caveat:
            out.append(f'<p id="ranking-caveat"><b>{esc(caveat)}.</b></p>')
        out.append(f'<p id="ranking"><b>Ranking:</b> {esc(order)}.<br><span class="small">{esc(rk["aggregation"])}. '
                   "A value marked best in a column whose S fails the gates says so.</span></p>")
    return "\n".join(out)


def column_shapes(rep: dict, data: dict) -> str:
    names = list(rep["synthetic"])
    out = ['<h2 id="columns">Column shapes</h2>',
           means("How far each column's distribution in S is from T's (total variation distance, 0 = identical), "
                 "beside the same distance for the unseen records H: a TVD well above H's is a column S gets wrong.")]
    first = rep["synthetic"][names[0]]["views"]
    if not first["columns"]:
        return "\n".join([*out, "<p>Not computed: the fidelity family did not run (see Not computed).</p>"])
    cols = [c["columns"] for c in first["columns"]]
    tvd = {n: {c["columns"]: c for c in rep["synthetic"][n]["views"]["columns"]} for n in names}
    cols.sort(key=lambda c: -max(tvd[n].get(c, {}).get("tvd_synthetic") or 0 for n in names))
    rows = [[esc(c), num(next(iter(tvd.values()))[c]["tvd_holdout"], 4)]
            + [num(tvd[n].get(c, {}).get("tvd_synthetic"), 4) for n in names] for c in cols]
    out.append(table(["column", "TVD H"] + [f"TVD S {n}" for n in names], rows, "tbl-columns",
                     set(range(1, 2 + len(names)))))
    order = list(data["columns"])
    kinds = data["kinds"]
    for c in cols:
        j = order.index(c)
        svg = figures.column(c, kinds[c], data["labels"][j], data["train"][j], data["holdout"][j],
                             {n: data["synthetic"][n][j] for n in names})
        tvds = ", ".join(f"S {n} {num(tvd[n].get(c, {}).get('tvd_synthetic'), 4)}" for n in names)
        how = ("on T's 100 quantile buckets" if kinds[c] == "numeric"
               else f"by T's categories (the {figures.MAX_BARS} most frequent drawn)")
        out.append(figure(f"fig-col-{j}", svg, f"{c} ({kinds[c]}): share of rows of T, H and each S {how}; all rows, "
                                               f"no sampling. TVD to T: {tvds}; H "
                                               f"{num(next(iter(tvd.values()))[c]['tvd_holdout'], 4)}."))
    return "\n".join(out)


def trends(rep: dict, data: dict) -> str:
    names = list(rep["synthetic"])
    out = ['<h2 id="trends">Pair and triple trends</h2>',
           means("Whether S keeps how columns go together: the association of every pair of columns in T and in "
                 "S (Cramér's V on the binned values, 0 = unrelated, 1 = one determines the other), and the 2- and "
                 "3-way combinations whose distribution S gets most wrong compared with H.")]
    for i, n in enumerate(names):
        a = rep["synthetic"][n]["views"]["association"]
        out.append(f'<h3 id="trends-s{i}">S {esc(n)}</h3>')
        out.append(f"<p>Mean |V(S) &minus; V(T)| over the pairs: {num(a['mean_abs_diff_synthetic'])} "
                   f"(H&rsquo;s: {num(a['mean_abs_diff_holdout'])}).</p>")
        svg = figures.association(a["columns"], np.asarray(a["train"], dtype=float), np.asarray(a["synthetic"], dtype=float), n)
        out.append(figure(f"fig-assoc-s{i}", svg, "Cramér's V of every pair of columns on T's 10 buckets per "
                                                   "column (the 2-way marginals' buckets): T, S and their difference."))
        v = rep["synthetic"][n]["views"]
        for key, what in (("pairs", "2-way"), ("triples", "3-way")):
            rows = [[esc(m["columns"]), num(m["tvd_synthetic"], 4), num(m["tvd_holdout"], 4), num(m["excess"], 4)]
                    for m in v.get(key, [])]
            if rows:
                out.append(f"<p>Most distorted {what} marginals ({v.get(f'n_{key}_worse_than_h', 0):,} of "
                           f"{v.get(f'n_{key}', 0):,} worse than H):</p>")
                out.append(table(["columns", "TVD S", "TVD H", "excess over H"], rows, f"tbl-{key}-s{i}", {1, 2, 3}))
    return "\n".join(out)


def diagnostics(rep: dict) -> str:
    out = ['<h2 id="diagnostics">Diagnostics</h2>',
           means("Plain validity checks of S, with H's count beside S's as the yardstick: values T never has, "
                 "missing values, repeated rows and rows identical to a record of T.")]
    for i, n in enumerate(rep["synthetic"]):
        d = rep["synthetic"][n]["views"]["diagnostics"]
        out.append(f'<h3 id="diagnostics-s{i}">S {esc(n)}</h3>')
        out.append("<ul>"
                   f"<li>rows: {d['n_rows']:,}; duplicated rows: {d['duplicated_rows_synthetic']:,} "
                   f"(H: {d['duplicated_rows_holdout']:,})</li>"
                   f"<li>rows identical to a record of T: {d['copies_of_train_synthetic']:,} "
                   f"({pct(d['share_copies_of_train_synthetic'])}; H: {d['copies_of_train_holdout']:,}, "
                   f"{pct(d['share_copies_of_train_holdout'])})</li></ul>")
        rows = [[esc(c["column"]), esc(c["kind"]), pct(c["missing_rate_train"]), pct(c["missing_rate_holdout"]),
                 pct(c["missing_rate_synthetic"]), num(c["outside_range_holdout"], 0), num(c["outside_range_synthetic"], 0),
                 num(c["unseen_holdout"], 0), num(c["unseen_synthetic"], 0),
                 esc(", ".join(c["unseen_examples_synthetic"]))] for c in d["columns"]]
        out.append(table(["column", "kind", "missing T", "missing H", "missing S", "outside T's range H",
                          "outside T's range S", "categories unseen in T, H", "unseen in T, S", "examples (S)"],
                         rows, f"tbl-diagnostics-s{i}", set(range(2, 9))))
        if d["changed_types"]:
            rows = [[esc(c["column"]), esc(c["train_dtype"]), esc(c["synthetic_dtype"]),
                     esc(", ".join(f"{k} {v:,}" for k, v in c["value_types"].items())), num(c["read_as_missing"], 0)]
                    for c in d["changed_types"]]
            out.append("<p>Columns whose type in S differs from T's:</p>")
            out.append(table(["column", "T's type", "S's type as read", "value types in S", "read as missing"],
                             rows, f"tbl-types-s{i}", {4}))
        else:
            out.append("<p>Every column of S has T's type.</p>")
    return "\n".join(out)

"""The privacy, utility, sequential and every-number parts of the file report."""

from __future__ import annotations

import math

import pandas as pd

import holdbench.benchmark.outputs.filereport.figures as figures  # noqa: PLR0402 - by module path: no import circle
from holdbench.benchmark.outputs.filereport.html import esc, figure, means, num, pct, table, verdict_html


def _metric_rows(ev_metrics: dict, specs: list, names: list[str], rep: dict, groups: tuple[str, ...]) -> list[list]:
    rows = []
    for sp in specs:
        if sp.group not in groups:
            continue
        vals = [rep["synthetic"][n]["metrics"].get(sp.name) for n in names]
        if all(v is None for v in vals):
            continue
        rows.append([esc(sp.label), esc(sp.name)] + [(verdict_html("pass" if v else "FAIL") if isinstance(v, bool)
                                                      else num(v, sp.digits)) for v in vals] + [esc(sp.better)])
    return rows


def privacy(rep: dict, specs: list, artifacts: dict) -> str:
    names = list(rep["synthetic"])
    out = ['<h2 id="privacy">Privacy</h2>',
           means("Whether S reveals its training records: S should be no nearer to T than to unseen records H "
                 "(S\u2192T beside S\u2192H and H\u2192T), no attack should tell T's records from H's by looking at S, "
                 "and no record of T should have an S neighbour far nearer than unseen records get.")]
    for i, n in enumerate(names):
        art, m = artifacts[n], rep["synthetic"][n]["metrics"]
        out.append(f'<h3 id="privacy-s{i}">S {esc(n)}</h3>')
        grid = []
        hist = art.get("dcr_histogram")
        if hist is not None:
            grid.append(figure(f"fig-dcr-s{i}", figures.dcr(hist, n),
                               f"DCR: share of S's records by Hamming distance to their nearest T and H record, and of "
                               f"H's records to T; all {m.get('n_privacy') or 0:,} rows of S"
                               + (" (a seeded sample of S: privacy_sample)" if m.get("privacy_sampled") else "") + "."))
        nndr = art.get("nndr_distribution")
        if nndr is not None:
            grid.append(figure(f"fig-nndr-s{i}", figures.quantiles(nndr, n, "NNDR d1/d2 (Gower)"),
                               "NNDR: quantiles of the ratio of the nearest to the second nearest T record's Gower "
                               "distance, for S and for H; S below H = S sits on T's records."))
        roc = art.get("mia_roc")
        if roc is not None and len(roc):
            grid.append(figure(f"fig-roc-s{i}", figures.roc(roc, n),
                               f"Membership-inference attacks' ROC curves ({m.get('mia_n_members') or 'seeded'} "
                               "targets of T and of H; curves thinned to about 200 points each for drawing)."))
        if grid:
            out.append('<div class="grid">' + "".join(grid) + "</div>")
        out.append(_tpr_table(m, i, "subject_" if "subject_mia_auc_max" in m else ""))
        legal = art.get("legal_criteria")
        if legal is not None and len(legal):
            out.append("<p>Bale &amp; Quick legal criteria (each row: S's value against the reference's):</p>")
            cols = list(legal.columns)
            rows = [[num(r[c], 4) if isinstance(r[c], float) else esc(r[c]) for c in cols] for _, r in legal.iterrows()]
            out.append(table(cols, rows, f"tbl-legal-s{i}"))
        out.append(_exposed(rep["synthetic"][n].get("views", {}).get("exposure"), i))
    rows = _metric_rows({}, specs, names, rep, ("privacy", "attack", "disclosure"))
    out.append('<h3 id="privacy-all">Every privacy, attack and disclosure metric</h3>')
    out.append(table(["metric", "key"] + [f"S {n}" for n in names] + ["better"], rows, "tbl-privacy-metrics",
                     set(range(2, 2 + len(names)))))
    return "\n".join(out)


def _tpr_table(m: dict, i: int, prefix: str = "") -> str:
    rows = []
    for attack in ("dcr", "dcr_diff", "density", "classifier"):
        key = f"{prefix}mia_{attack}"
        if m.get(f"{key}_auc") is None:
            continue
        rows.append([esc(attack), num(m.get(f"{key}_auc")), num(m.get(f"{key}_auc_ci_low")),
                     num(m.get(f"{key}_auc_ci_high")), num(m.get(f"{key}_tpr_at_fpr_1pct")),
                     num(m.get(f"{key}_tpr_at_fpr_01pct"))])
    if not rows:
        return ""
    return table(["attack", "AUC", "AUC low 95%", "AUC high 95%", "TPR at FPR 1%", "TPR at FPR 0.1%"], rows,
                 f"tbl-attacks-s{i}", {1, 2, 3, 4, 5})


def _exposed(exp: dict | None, i: int) -> str:
    if not exp:
        return ""
    out = ["<p><b>Most exposed training records</b>: the records of T whose nearest S record is nearer than "
           "nearly every unseen record's (percentile = share of H records with an S neighbour at most as near; "
           f"near 0 = exposed). {exp['n_train_below_1pct']:,} of {exp['n_train']:,} records of T are below the 1st "
           f"percentile. Exact copies (identical in every value): {pct(exp['train_exact_copy_rate'])} of T's records "
           f"have one in S, against {pct(exp['holdout_exact_copy_rate'])} of H's; at Hamming distance 0 (the same bin "
           f"of every column, as the DCR counts): {pct(exp['train_zero_distance_rate'])} of T's, "
           f"{pct(exp['holdout_zero_distance_rate'])} of H's."
           + (" Values are masked; <code>--unmask</code> shows them." if exp["masked"] else "") + "</p>"]
    recs = exp["records"]
    if not recs:
        return "\n".join(out)
    cols = list(recs[0]["values"])
    rows = [[num(r["row"], 0), num(r["percentile"], 4), num(r["d_synthetic"], 0), num(r["n_copies"], 0),
             num(r["d_holdout"], 0)] + [esc(r["values"][c]) for c in cols] for r in recs]
    out.append(table(["T row (first = 0)", "percentile", "distance to S", "S records at distance 0", "distance to H"] + cols, rows,
                     f"tbl-exposed-s{i}", {0, 1, 2, 3, 4}))
    return "\n".join(out)


def utility(rep: dict, specs: list, target: str | None) -> str:
    names = list(rep["synthetic"])
    out = ['<h2 id="utility">Utility</h2>',
           means("Whether S can stand in for T in an analysis: a model trained on S and tested on H (TSTR) beside "
                 "one trained on T (TRTR), and how well a classifier tells S from T (pMSE ratio, 1 = no better "
                 "than between two samples of the same data).")]
    if not target:
        out.append("<p>TSTR needs a target column (<code>--target COL</code>); the pMSE ratio below needs none.</p>")
    rows = _metric_rows({}, specs, names, rep, ("utility",))
    out.append(table(["metric", "key"] + [f"S {n}" for n in names] + ["better"], rows, "tbl-utility",
                     set(range(2, 2 + len(names)))))
    return "\n".join(out)


def every_metric(rep: dict, specs: list) -> str:
    names = list(rep["synthetic"])
    rows = _metric_rows({}, specs, names, rep, ("fidelity", "privacy", "utility", "attack", "disclosure"))
    out = ['<h2 id="all">Every metric</h2>',
           means("Every number the metric families computed, group by group; report.json holds the same and more.")]
    out.append(table(["metric", "key"] + [f"S {n}" for n in names] + ["better"], rows, "tbl-all",
                     set(range(2, 2 + len(names)))))
    reasons = [[esc(n), esc(k), esc(v)] for n in names for k, v in sorted(rep["synthetic"][n]["metrics"].items())
               if k.endswith("_reason") and v]
    reasons += [[esc(n), esc(k), esc(v)] for n in names for k, v in rep["synthetic"][n].get("not_computed", {}).items()]
    out.append('<h3 id="not-computed">Not computed, and why</h3>')
    out.append(table(["S", "what", "why"], reasons, "tbl-not-computed") if reasons else "<p>Everything was computed.</p>")
    return "\n".join(out)


def sequential(rep: dict, artifacts: dict) -> str:
    names = list(rep["synthetic"])
    out = ['<h2 id="sequential">Sequences</h2>',
           means("Whether S's subjects have sequences like T's: how many events a subject has, and how each event "
                 "column moves from one event to the next (coherence), each beside H's.")]
    for i, n in enumerate(names):
        art = artifacts[n]
        out.append(f'<h3 id="sequential-s{i}">S {esc(n)}</h3>')
        hist = art.get("seq_length_histogram")
        if hist is not None and len(hist):
            series = {"T": _share(hist["train"]), "H": _share(hist["holdout"]), f"S {n}": _share(hist["synthetic"])}
            out.append(figure(f"fig-seq-length-s{i}", figures.bars(list(hist["length"]), series, "events per subject",
                                                                     "share of subjects"),
                              "Sequence lengths: share of subjects by number of events in T, H and S (all subjects)."))
        coh = art.get("seq_coherence")
        if coh is not None and len(coh):
            series = {"H": coh["tvd_holdout"].to_numpy(float), f"S {n}": coh["tvd_synthetic"].to_numpy(float)}
            out.append(figure(f"fig-seq-coherence-s{i}", figures.bars(list(coh["column"]), series, "event column",
                                                                        "TVD of (t, t+1) to T"),
                              "Coherence: TVD of each event column's consecutive-pair distribution to T's, S beside H."))
    return "\n".join(out)


def _share(s: pd.Series):
    v = s.to_numpy(dtype=float)
    total = v.sum()
    return v / total if total and not math.isnan(total) else v

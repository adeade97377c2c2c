"""The report's data (report.json: every number) and its two renderings: report.html and summary.md."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench import __version__


def jsonable(x):
    """numpy, pandas and NaN made plain JSON (NaN and infinities -> null)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, pd.DataFrame):
        return jsonable(x.to_dict(orient="list"))
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        v = float(x)
        return v if math.isfinite(v) else None
    if isinstance(x, Path):
        return str(x)
    return x


def assemble(data, shared, evaluations: list, specs: list, gates, cfg: dict, settings: dict) -> tuple[dict, dict]:
    """(report.json's content, what the HTML needs beyond it: artifact tables and bucket counts)."""
    from holdbench.benchmark.outputs.filereport.verdicts import informational, judge, ranking

    judged = judge(evaluations, specs, gates)
    rep = {"holdbench_version": __version__, "settings": settings, "n_jobs": cfg.get("n_jobs"), "seed": cfg.get("seed"),
           "n_train": len(data.train), "n_holdout": len(data.holdout), "kinds": data.kinds,
           "identifier_columns": data.identifiers, "datetime_columns": data.datetimes,
           "gates": {"source": gates.source, "description": gates.description,
                     "targets": [t.name for t in gates.targets]},
           "synthetic": {}, "ranking": ranking(evaluations, specs, judged)}
    extra = {"artifacts": {}, "columns": shared.columns, "kinds": data.kinds,
             "labels": shared.bucket_labels(), "train": shared.counts["train"], "holdout": shared.counts["holdout"],
             "synthetic": {}}
    for ev in evaluations:
        views = dict(ev.views)
        hist = views.pop("histograms")
        extra["synthetic"][ev.name] = hist["synthetic"]
        extra["artifacts"][ev.name] = ev.artifacts
        views["column_buckets"] = {c: {"labels": lab, "train": t, "holdout": h, "synthetic": s}
                                   for c, lab, t, h, s in zip(shared.columns, hist["labels"], hist["train"],
                                                              hist["holdout"], hist["synthetic"], strict=True)}
        rep["synthetic"][ev.name] = {"path": data.paths[ev.name], "n_rows": len(data.synthetic[ev.name]),
                                     "verdict": judged[ev.name], "informational": informational(ev, specs),
                                     "metrics": ev.metrics, "views": views, "cpu_seconds": ev.seconds,
                                     "artifacts": {k: v for k, v in ev.artifacts.items()}}
    return jsonable(rep), extra


def html_report(rep: dict, extra: dict, specs: list) -> str:
    import holdbench.benchmark.outputs.filereport.sections as sections  # noqa: PLR0402 - no import circle
    import holdbench.benchmark.outputs.filereport.sections_privacy as sections_privacy  # noqa: PLR0402
    from holdbench.benchmark.outputs.filereport.html import esc, page

    from holdbench.benchmark.data.sequential_values import dates_text
    from holdbench.benchmark.outputs.filereport.diagnostics import identifier_text

    names = list(rep["synthetic"])
    s = rep["settings"]
    ids = identifier_text(rep.get("identifier_columns") or [])
    files = "".join(f"<li>S <b>{esc(n)}</b>: <code>{esc(rep['synthetic'][n]['path'])}</code>, "
                    f"{rep['synthetic'][n]['n_rows']:,} rows</li>" for n in names)
    head = (f"<h1>Synthetic data report</h1><p class=\"small\">holdbench {esc(rep['holdbench_version'])}; "
            f"metrics config <code>{esc(s['metrics'])}</code>, seed {esc(rep['seed'])}; target "
            f"<code>{esc(s['target'] or 'none')}</code>.</p>"
            f"<ul><li>T (training): <code>{esc(s['train'])}</code>, {rep['n_train']:,} rows</li>"
            f"<li>H (holdout, never seen by the generator): <code>{esc(s['holdout'])}</code>, {rep['n_holdout']:,} rows"
            f"</li>{files}</ul>"
            "<p>Every part measures S against T and sets the same measure of H against T beside it: H is what "
            "a perfect generator's output looks like, so S should look like H, not like T.</p>"
            + (f'<p id="dropped-columns">Left out of T, H and every S (--drop): {esc(", ".join(s["drop"]))}.</p>'
               if s.get("drop") else "")
            + (f'<p id="datetime-columns">{esc(dates_text(rep["datetime_columns"]))}.</p>'
               if rep.get("datetime_columns") else "")
            + (f'<p id="identifier-columns"><b>{esc(ids)}.</b></p>' if ids else "")
            + '<nav class="toc"><a href="#verdict">Verdict</a><a href="#columns">Column shapes</a>'
            '<a href="#trends">Pair and triple trends</a><a href="#diagnostics">Diagnostics</a>'
            '<a href="#privacy">Privacy</a><a href="#utility">Utility</a><a href="#all">Every metric</a></nav>')
    col_data = {**{k: extra[k] for k in ("columns", "kinds", "labels", "train", "holdout")},
                "synthetic": extra["synthetic"]}
    parts = [head, sections.verdict(rep, specs), sections.column_shapes(rep, col_data), sections.trends(rep, col_data),
             sections.diagnostics(rep), sections_privacy.privacy(rep, specs, extra["artifacts"]),
             sections_privacy.utility(rep, specs, s["target"]), sections_privacy.every_metric(rep, specs)]
    return page("holdbench report: " + ", ".join(names), "\n".join(parts))


def summary_md(rep: dict) -> str:
    """summary.md: the verdict, the gates in words and the ranking, as Markdown (cells formula-neutral)."""
    from holdbench.benchmark.outputs.filereport.html import neutral
    from holdbench.benchmark.outputs.filereport.diagnostics import identifier_text
    from holdbench.benchmark.outputs.filereport.verdicts import (
        WORST_LABEL,
        failed_groups_text,
        ranked_names,
        ranking_caveat,
        worst_text,
    )

    def cell(x) -> str:
        return neutral(x).replace("|", "\\|").replace("\n", " ")

    names = ranked_names(rep)  # several S: best first
    unit = "subjects" if rep.get("kind") == "sequential" else "rows"
    ranked = len(names) > 1
    lines = ["# Synthetic data report", "",
             (f"T `{cell(rep['settings']['train'])}` ({rep['n_train']:,} {unit}), H `{cell(rep['settings']['holdout'])}` "
              f"({rep['n_holdout']:,} {unit}); gates `{cell(rep['gates']['source'])}`."), "",
             ("| rank " if ranked else "") + f"| S | verdict | failed gates | fails on | {WORST_LABEL} |",
             ("| --- " if ranked else "") + "| --- | --- | --- | --- | --- |"]
    ids = identifier_text(rep.get("identifier_columns") or [])
    if ids:
        lines[4:4] = [f"**{cell(ids)}.**", ""]
    for i, n in enumerate(names):
        v = rep["synthetic"][n]["verdict"]
        unjudged = v.get("not_judged")
        failed = (', '.join(v['failed']) or 'none') + (f"; not judged (n/a): {', '.join(unjudged)}" if unjudged else "")
        lines.append((f"| {i + 1} " if ranked else "") + f"| {cell(n)} | {v['verdict']} | {cell(failed)} | "
                     f"{cell(failed_groups_text(v) or 'none')} | {worst_text(v)} |")
    if ranked:
        lines += ["", "Ranked as the section *Headline metrics* below says."]
    for n in names:
        lines += ["", f"## {cell(n)}", ""]
        lines += [f"- {r['verdict']}: {cell(r['tests'])}: {cell(r['why'])}" for r in rep["synthetic"][n]["verdict"]["rows"]]
        exp = (rep["synthetic"][n].get("views") or {}).get("exposure")
        if exp:
            rows = ", ".join(str(r["row"]) for r in exp["records"][:10])
            lines += ["", (f"Exposure: {100 * exp['train_exact_copy_rate']:.2f}% of T's records have an exact copy in S "
                           f"(identical in every value; H's records: {100 * exp['holdout_exact_copy_rate']:.2f}%), "
                           f"{100 * exp['train_zero_distance_rate']:.2f}% an S record at Hamming distance 0 (the same bin "
                           f"of every column; H's: {100 * exp['holdout_zero_distance_rate']:.2f}%); {exp['n_train_below_1pct']:,} of "
                           f"{exp['n_train']:,} T records have an S neighbour nearer than 99% of H's records have. "
                           + (f"Most exposed T rows (the first data row is 0): {rows}; their values are in report.html"
                              + (" (masked)." if exp["masked"] else ".") if rows else ""))]
    rk = rep["ranking"]
    if rk["rows"]:
        lines += ["", "## Headline metrics", "", "| metric | " + " | ".join(cell(n) for n in names) + " |",
                  "| --- |" + " --- |" * len(names)]
        for r in rk["rows"]:
            vals = []
            for n in names:
                v = r["values"][n]
                text = "n/a" if v is None else f"{v:.4g}"
                if n in r["best"] and len(names) > 1:
                    text += " (best, but S fails the gates)" if n in r["best_fails_gates"] else " (best)"
                vals.append(text)
            lines.append(f"| {cell(r['label'])} | " + " | ".join(vals) + " |")
        if len(names) > 1:
            caveat = ranking_caveat(rep)
            lines += [""] + ([f"**{cell(caveat)}.**", ""] if caveat else [])
            lines += ["Ranking: " + ", ".join(f"{i + 1}. {cell(n)}" for i, n in enumerate(rk["order"])) + ".",
                      "", cell(rk["aggregation"]) + "."]
    lines += ["", f"Exit status: {rep['exit_code']} (0 = every S passes the gates, 1 = a gate fails).", ""]
    return "\n".join(lines)


def write(out: Path, rep: dict, extra: dict, specs: list) -> tuple[Path, Path, Path]:
    """Write the three files (each atomically) and return their paths."""
    from holdbench.contracts.io import atomic_path

    paths = (out / "report.html", out / "report.json", out / "summary.md")
    texts = (html_report(rep, extra, specs), json.dumps(rep, indent=1, allow_nan=False, ensure_ascii=False),
             summary_md(rep))
    for path, text in zip(paths, texts, strict=True):
        with atomic_path(path) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    return paths

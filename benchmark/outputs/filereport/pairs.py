"""The file report for sequential data: T, H and S as subject + event pairs or event files, read and
scored by holdbench.benchmark.cli._pairs exactly as `holdbench evaluate` does (the sequential families),
judged by the sequential gates; the page shows the verdict, sequence lengths, coherence and subject-level
privacy."""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def build_pair_report(args: argparse.Namespace, log=None):
    """Evaluate the pair options of `args` (add_pair_arguments) and write DIR/report.html, report.json and
    summary.md to args.out; the Outcome of holdbench.benchmark.outputs.filereport."""
    from holdbench.benchmark.cli._pairs import check_pair_args, evaluate_pairs, pair_files, pair_record
    from holdbench.benchmark.outputs.filereport import Outcome, _specs, exit_code, prepare_out, render
    from holdbench.benchmark.outputs.filereport.compute import Evaluation, metrics_config
    from holdbench.benchmark.outputs.filereport.verdicts import informational, judge, ranking
    from holdbench.benchmark.outputs.gates import DEFAULT_GATES, check_metrics, load_gates

    say = log or (lambda msg: None)
    started = time.process_time()
    check_pair_args(args, ("train", "holdout", "synthetic"))
    flat = [f"--{o.replace('_', '-')}" for o in ("target", "from_json", "unmask", "max_rows", "sep")
            if getattr(args, o, None) not in (None, False, [])]
    if flat:
        raise ValueError(f"{', '.join(flat)} apply to flat tables; sequential data takes none of them")
    files = pair_files(args)
    out = Path(args.out)
    prepare_out(out, files)
    cfg, families = metrics_config(args.metrics, list(args.skip), list(args.set), args.n_jobs, args.seed, True)
    specs = _specs(families)
    gates = load_gates(args.gates or DEFAULT_GATES["sequential"])
    check_metrics(gates, specs)
    say(f"sequential data: metric families {', '.join(f.name for f in families)}")
    spec, res = evaluate_pairs(args, families, cfg)
    name = Path(str(args.synthetic_events)).name
    ev = Evaluation(name, res.to_dict(), res.artifacts())
    judged = judge([ev], specs, gates, "sequential")
    rep = render.jsonable({
        "holdbench_version": render.__version__, "kind": "sequential", "settings": {
            **pair_record(args), "dataset": args.dataset, "metrics": args.metrics or "sequential",
            "key": spec.key, "order": spec.order_label},
        "seed": cfg.get("seed"), "gates": {"source": gates.source, "description": gates.description,
                                           "targets": [t.name for t in gates.targets]},
        "synthetic": {name: {"path": args.synthetic_events, "verdict": judged[name],
                             "informational": informational(ev, specs), "metrics": ev.metrics,
                             "artifacts": dict(ev.artifacts)}},
        "ranking": ranking([ev], specs, judged)})
    rep["exit_code"] = exit_code(rep, getattr(args, "strict", False))
    rep["cpu_seconds"] = time.process_time() - started
    paths = write(out, rep, {name: ev.artifacts}, specs)
    return Outcome(rep["exit_code"], *paths, {name: judged[name]})


def html_report(rep: dict, artifacts: dict, specs: list) -> str:
    import holdbench.benchmark.outputs.filereport.sections as sections  # noqa: PLR0402 - no import circle
    import holdbench.benchmark.outputs.filereport.sections_privacy as sections_privacy  # noqa: PLR0402
    from holdbench.benchmark.outputs.filereport.html import esc, page

    s, m = rep["settings"], next(iter(rep["synthetic"].values()))["metrics"]
    head = (f"<h1>Synthetic sequence report</h1><p class=\"small\">holdbench {esc(rep['holdbench_version'])}; "
            f"metrics config <code>{esc(s['metrics'])}</code>; key <code>{esc(s['key'])}</code>.</p><ul>"
            + "".join(f"<li>{esc(k.replace('_', ' '))}: <code>{esc(v)}</code></li>" for k, v in s.items()
                      if k.endswith(("_subjects", "_events")) and v)
            + f"</ul><p>Subjects: T {m.get('n_subjects_train') or 0:,}, H {m.get('n_subjects_holdout') or 0:,}, "
              f"S {m.get('n_subjects_synthetic') or 0:,}.</p>")
    subject = {n: {**a, "dcr_histogram": a.get("seq_dcr_histogram"),
                   "nndr_distribution": a.get("subject_nndr_distribution"), "mia_roc": a.get("subject_mia_roc"),
                   "legal_criteria": a.get("subject_legal_criteria")} for n, a in artifacts.items()}
    parts = [head, sections.verdict(rep, specs), sections_privacy.sequential(rep, artifacts),
             sections_privacy.privacy(rep, specs, subject).replace("<h2 id=\"privacy\">Privacy</h2>",
                                                                   "<h2 id=\"privacy\">Subject-level privacy</h2>"),
             sections_privacy.every_metric(rep, specs)]
    return page("holdbench sequence report: " + ", ".join(rep["synthetic"]), "\n".join(parts))


def write(out: Path, rep: dict, artifacts: dict, specs: list):
    import json

    from holdbench.benchmark.outputs.filereport.render import summary_md
    from holdbench.contracts.io import atomic_path

    paths = (out / "report.html", out / "report.json", out / "summary.md")
    rep_md = {**rep, "settings": {**rep["settings"], "train": rep["settings"].get("train_events"),
                                  "holdout": rep["settings"].get("holdout_events")},
              "n_train": rep["synthetic"][next(iter(rep["synthetic"]))]["metrics"].get("n_subjects_train") or 0,
              "n_holdout": rep["synthetic"][next(iter(rep["synthetic"]))]["metrics"].get("n_subjects_holdout") or 0}
    texts = (html_report(rep, artifacts, specs), json.dumps(rep, indent=1, allow_nan=False, ensure_ascii=False),
             summary_md(rep_md))
    for path, text in zip(paths, texts, strict=True):
        with atomic_path(path) as tmp:
            Path(tmp).write_text(text, encoding="utf-8")
    return paths

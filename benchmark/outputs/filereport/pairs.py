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
    summary.md to args.out; the Outcome of holdbench.benchmark.outputs.filereport.

    args.synthetic_events (and args.synthetic_subjects with subject attributes) is one file or a list of
    [NAME=]FILE, one S each (holdbench.benchmark.cli._pairs.synthetic_pairs); several S are judged one by one
    against the same T and H and ranked as the flat report ranks them (verdicts.ranking)."""
    from holdbench.benchmark.cli._pairs import check_pair_args, evaluate_each_pair, pair_files, synthetic_pairs
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
    pairs = synthetic_pairs(args)
    out = Path(args.out)
    prepare_out(out, pair_files(args))
    cfg, families = metrics_config(args.metrics, list(args.skip), list(args.set), args.n_jobs, args.seed, True)
    specs = _specs(families)
    gates = load_gates(args.gates or DEFAULT_GATES["sequential"])
    check_metrics(gates, specs)
    say(f"sequential data: reading T, H and {len(pairs)} synthetic pair(s)")
    spec, results = evaluate_each_pair(  # every file read and checked before any metric runs
        args, families, cfg, lambda name: say(f"S {name}: metric families {', '.join(f.name for f in families)}"))
    evaluations = [Evaluation(name, res.to_dict(), res.artifacts()) for name, res in results.items()]
    judged = judge(evaluations, specs, gates, "sequential")
    settings = {f"{r}_{p}": getattr(args, f"{r}_{p}", None) for r in ("train", "holdout")
                for p in ("subjects", "events")}
    rep = render.jsonable({
        "holdbench_version": render.__version__, "kind": "sequential", "settings": {
            **settings, "synthetic": {n: {"subjects": s, "events": e} for n, (s, e) in pairs.items()},
            "dataset": args.dataset, "metrics": args.metrics or "sequential", "key": spec.key,
            "order": spec.order_label},
        "seed": cfg.get("seed"), "gates": {"source": gates.source, "description": gates.description,
                                           "targets": [t.name for t in gates.targets]},
        "synthetic": {ev.name: {"path": pairs[ev.name][1], "subjects_path": pairs[ev.name][0],
                                "verdict": judged[ev.name], "informational": informational(ev, specs),
                                "metrics": ev.metrics, "artifacts": dict(ev.artifacts)} for ev in evaluations},
        "ranking": ranking(evaluations, specs, judged)})
    rep["exit_code"] = exit_code(rep, getattr(args, "strict", False))
    rep["cpu_seconds"] = time.process_time() - started
    paths = write(out, rep, {ev.name: ev.artifacts for ev in evaluations}, specs)
    return Outcome(rep["exit_code"], *paths, {n: judged[n] for n in pairs})


def build_sequence_report(train_events: str, holdout_events: str, synthetic: dict, out: str | Path, *,
                          train_subjects: str | None = None, holdout_subjects: str | None = None,
                          dataset: str | None = None, key: str | None = None, order: list[str] | None = None,
                          datetime: tuple[str, ...] = (), time_column: str | None = None, n_events_privacy: int = 3,
                          metrics: str | None = None, gates: str | None = None, skip: tuple[str, ...] = (),
                          overrides: tuple[str, ...] = (), n_jobs: int | None = None, seed: int | None = None,
                          strict: bool = False, log=None):
    """build_pair_report from keywords, as `holdbench report --train-events ... --out DIR` takes them.

    synthetic: {S name: event file} for sequences without subject attributes (with key and order, or a
    no-context dataset), {S name: (subject file, event file)} for subject + event pairs (with train_subjects,
    holdout_subjects and a sequential dataset). datetime, time_column, n_events_privacy: --datetime, --time and
    --n-events-privacy."""
    if not isinstance(synthetic, dict) or not synthetic:
        raise ValueError("synthetic: give {S name: event file} or {S name: (subject file, event file)}")
    pairs = {str(n): ((None, str(v)) if isinstance(v, (str, Path)) else tuple(map(str, v)))
             for n, v in synthetic.items()}
    if any(len(v) != 2 for v in pairs.values()):
        raise ValueError(f"synthetic: each S is an event file or a (subject file, event file) pair, got {synthetic}")
    with_subjects = [n for n, (sub, _) in pairs.items() if sub is not None]
    if with_subjects and len(with_subjects) != len(pairs):
        raise ValueError(f"synthetic: S {with_subjects} have a subject file and the others not; give every S as a "
                         "(subject file, event file) pair or every S as an event file")
    args = argparse.Namespace(
        train_subjects=train_subjects, train_events=str(train_events), holdout_subjects=holdout_subjects,
        holdout_events=str(holdout_events),
        synthetic_subjects=[f"{n}={sub}" for n, (sub, _) in pairs.items()] if with_subjects else None,
        synthetic_events=[f"{n}={ev}" for n, (_, ev) in pairs.items()], dataset=dataset, key=key,
        order=list(order) if order else None, datetime=list(datetime), time=time_column,
        n_events_privacy=n_events_privacy, out=str(out), metrics=metrics, gates=gates, skip=list(skip),
        set=list(overrides), n_jobs=n_jobs, seed=seed, strict=strict)
    return build_pair_report(args, log)


def html_report(rep: dict, artifacts: dict, specs: list) -> str:
    import holdbench.benchmark.outputs.filereport.sections as sections  # noqa: PLR0402 - no import circle
    import holdbench.benchmark.outputs.filereport.sections_privacy as sections_privacy  # noqa: PLR0402
    from holdbench.benchmark.outputs.filereport.html import esc, page

    s, m = rep["settings"], next(iter(rep["synthetic"].values()))["metrics"]

    def files(subjects, events) -> str:
        return " + ".join(f"<code>{esc(f)}</code>" for f in (subjects, events) if f)

    head = (f"<h1>Synthetic sequence report</h1><p class=\"small\">holdbench {esc(rep['holdbench_version'])}; "
            f"metrics config <code>{esc(s['metrics'])}</code>; key <code>{esc(s['key'])}</code>.</p><ul>"
            f"<li>T (training): {files(s['train_subjects'], s['train_events'])}, "
            f"{m.get('n_subjects_train') or 0:,} subjects</li>"
            f"<li>H (holdout, never seen by the generator): {files(s['holdout_subjects'], s['holdout_events'])}, "
            f"{m.get('n_subjects_holdout') or 0:,} subjects</li>"
            + "".join(f"<li>S <b>{esc(n)}</b>: {files(v['subjects_path'], v['path'])}, "
                      f"{v['metrics'].get('n_subjects_synthetic') or 0:,} subjects</li>"
                      for n, v in rep["synthetic"].items()) + "</ul>")
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

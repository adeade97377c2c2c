"""The work of one cell, as run inside an isolated child process (holdbench.benchmark.cell._child).

`generate` fits the synthesizer on T and samples; `evaluate` computes the metrics.
Both take a JSON payload of paths and settings and return a JSON-safe result dict.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pandas as pd

from holdbench.benchmark.layout import artifact_file
from holdbench.contracts.io import read_parquet, write_csv, write_parquet
from holdbench.contracts.schema import Schema

log = logging.getLogger("holdbench.cell")


def _setup() -> None:
    """Logging to the job log. Thread caps come from the environment (OMP_NUM_THREADS & co.,
    set by the supervisor); torch-based synthesizers cap torch themselves, so the cheap
    stages never pay torch's import time."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")


def _schema(path: str) -> Schema:
    return Schema.from_dict(json.loads(Path(path).read_text()))


def generate(p: dict) -> dict:
    """Fit on T, sample n rows, check them against the schema, write synthetic.parquet."""
    _setup()
    if p.get("sequential"):
        return _generate_sequential(p)
    from holdbench.benchmark.cell.checks import check_output
    from holdbench.benchmark.config import build_synthesizer
    from holdbench.synthesizers.base import FitContext

    schema = _schema(p["schema"])
    name = p["synthesizer"]
    t0 = time.perf_counter()
    synth = build_synthesizer(p["config"])  # imports the synthesizer's library (torch, sklearn, ...)
    load_s = time.perf_counter() - t0
    train = read_parquet(p["train"])
    holdout = read_parquet(p["holdout"]) if synth.needs_holdout else None
    ctx = FitContext(schema=schema, seed=int(p["seed"]), dataset=p["dataset"], holdout=holdout)
    log.info("fitting %s on %s (%d x %d), seed %d", name, p["dataset"], *train.shape, p["seed"])
    t0 = time.perf_counter()
    synth.fit(train, ctx)
    fit_s = time.perf_counter() - t0
    log.info("fitted in %.2f s; sampling %d rows", fit_s, p["n_synthetic"])
    t0 = time.perf_counter()
    out = synth.sample(int(p["n_synthetic"]), seed=int(p["seed"]))
    sample_s = time.perf_counter() - t0
    expected = len(holdout) if synth.holdout_rule and holdout is not None else int(p["n_synthetic"])
    values = getattr(synth, "output_values", "strict")
    out = check_output(out, schema, expected, name, values=values)
    write_parquet(p["synthetic"], out)
    log.info("sampled %d rows in %.2f s", len(out), sample_s)
    for name, table in synth.artifacts().items():
        write_csv(Path(p["cell_dir"]) / artifact_file(name), table)
    return {
        "status": "ok",
        "load_seconds": round(load_s, 4),
        "fit_seconds": round(fit_s, 4),
        "sample_seconds": round(sample_s, 4),
        "n_synthetic": len(out),
        "holdout_rule": bool(synth.holdout_rule),
        "synthesizer_info": synth.info(),
        "synthesizer_versions": synth.versions(),
        "values": values,
        "mixed_types": out.attrs.get("mixed_types", {}),
        "read_as_missing": out.attrs.get("unparseable_to_missing", {}),
    }


def evaluate(p: dict) -> dict:
    """Every metric family of the study on S against T and H; writes the artifact tables
    (marginals.csv and the like) into the cell dir and returns the scalar metrics."""
    _setup()
    if p.get("sequential"):
        return _evaluate_sequential(p)
    from holdbench.benchmark.config import build_metric_families
    from holdbench.metrics import evaluate as run_metrics

    schema = _schema(p["schema"])
    train = read_parquet(p["train"])
    holdout = read_parquet(p["holdout"])
    synthetic = read_parquet(p["synthetic"])
    opts = p["metrics"]
    families = build_metric_families(opts)
    t0 = time.perf_counter()
    res = run_metrics(
        train, holdout, synthetic, schema.kinds, families=families,
        holdout_row=bool(p.get("holdout_rule")), n_jobs=int(opts.get("n_jobs", 1)),
        seed=int(opts.get("seed", 0)), target=schema.target, sensitive=schema.sensitive,
        quasi_identifiers=schema.quasi_identifiers, on_error="na",
    )
    return _evaluated(res, families, time.perf_counter() - t0, Path(p["cell_dir"]))


def _spec(path: str):
    from holdbench.benchmark.data.sequential import spec_from_dict

    return spec_from_dict(json.loads(Path(path).read_text())["sequential"])


def _pair(files: dict | list) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A (subjects, events) pair from its two parquet files ({subjects, events} or [subjects, events])."""
    paths = (files["subjects"], files["events"]) if isinstance(files, dict) else files
    return read_parquet(paths[0]), read_parquet(paths[1])


def _generate_sequential(p: dict) -> dict:
    """Fit a sequential synthesizer on T's pair, sample |T| subjects (H's for the holdout row), check them
    (columns, key, dtypes), write synthetic_subjects.parquet and synthetic_events.parquet."""
    from holdbench.benchmark.config import build_synthesizer
    from holdbench.benchmark.data.sequential import check_synthetic_pair, synthesizer_context

    spec = _spec(p["schema"])
    name = p["synthesizer"]
    t0 = time.perf_counter()
    synth = build_synthesizer(p["config"])
    load_s = time.perf_counter() - t0
    train = _pair(p["train"])
    holdout = _pair(p["holdout"]) if synth.needs_holdout else None
    ctx = synthesizer_context(spec, int(p["seed"]), holdout)
    log.info("fitting %s on %s (%d subjects, %d events), seed %d", name, p["dataset"], len(train[0]),
             len(train[1]), p["seed"])
    t0 = time.perf_counter()
    synth.fit(train[0], train[1], ctx)
    fit_s = time.perf_counter() - t0
    n = len(train[0])
    log.info("fitted in %.2f s; sampling %d subjects", fit_s, n)
    t0 = time.perf_counter()
    subjects, events = synth.sample(n, seed=int(p["seed"]))
    sample_s = time.perf_counter() - t0
    expected = len(holdout[0]) if synth.holdout_rule and holdout is not None else n
    subjects, events = check_synthetic_pair(spec, subjects, events, f"{name}'s output", expected)
    write_parquet(p["synthetic"][0], subjects)
    write_parquet(p["synthetic"][1], events)
    log.info("sampled %d subjects, %d events in %.2f s", len(subjects), len(events), sample_s)
    return {
        "status": "ok", "load_seconds": round(load_s, 4), "fit_seconds": round(fit_s, 4),
        "sample_seconds": round(sample_s, 4), "n_synthetic": len(subjects), "n_synthetic_events": len(events),
        "holdout_rule": bool(synth.holdout_rule), "synthesizer_info": synth.info(),
        "synthesizer_versions": synth.versions(), "values": "strict",
    }


def _evaluate_sequential(p: dict) -> dict:
    """Every sequential metric family of the study on S's pair against T's and H's."""
    from holdbench.benchmark.config import build_metric_families
    from holdbench.benchmark.data.sequential import metric_layout
    from holdbench.metrics.sequential import evaluate_families

    spec = _spec(p["schema"])
    opts = p["metrics"]
    families = build_metric_families(opts)
    holdout_row = bool(p.get("holdout_rule"))
    t0 = time.perf_counter()
    res = evaluate_families(_pair(p["train"]), _pair(p["holdout"]), None if holdout_row else _pair(p["synthetic"]),
                            metric_layout(spec), families=families, holdout_row=holdout_row,
                            n_jobs=int(opts.get("n_jobs", 1)), seed=int(opts.get("seed", 0)), on_error="na")
    return _evaluated(res, families, time.perf_counter() - t0, Path(p["cell_dir"]))


def _evaluated(res, families: list, secs: float, cell: Path) -> dict:
    """The evaluate job's result of a flat or sequential evaluation; its artifact tables written into `cell`."""
    from holdbench.metrics.registry import specs_of

    for name, table in res.artifacts().items():
        write_csv(cell / artifact_file(name), table)
    headline = [(m.name, m.label, m.digits) for f in families for m in specs_of(f.result_type) if m.headline]
    return {"status": "ok", "metrics": res.to_dict(), "evaluate_seconds": round(secs, 4), "headline": headline,
            "na": res.na, "unavailable": list(res.unavailable)}

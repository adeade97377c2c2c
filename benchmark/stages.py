"""The work of one cell, as run inside an isolated child process (benchmark._child).

`generate` fits the synthesizer on T and samples; `evaluate` computes the metrics.
Both take a JSON payload of paths and settings and return a JSON-safe result dict.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pandas as pd

from benchmark.layout import artifact_file
from contracts.io import write_csv, write_parquet
from contracts.schema import Schema

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
    from benchmark.checks import check_output
    from benchmark.config import build_synthesizer
    from synthesizers.base import FitContext

    schema = _schema(p["schema"])
    name = p["synthesizer"]
    t0 = time.perf_counter()
    synth = build_synthesizer(p["config"])  # imports the synthesizer's library (torch, sklearn, ...)
    load_s = time.perf_counter() - t0
    train = pd.read_parquet(p["train"])
    holdout = pd.read_parquet(p["holdout"]) if synth.needs_holdout else None
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
    from benchmark.config import build_metric_families
    from metrics import evaluate as run_metrics
    from metrics.registry import specs_of

    schema = _schema(p["schema"])
    train = pd.read_parquet(p["train"])
    holdout = pd.read_parquet(p["holdout"])
    synthetic = pd.read_parquet(p["synthetic"])
    opts = p["metrics"]
    families = build_metric_families(opts)
    t0 = time.perf_counter()
    res = run_metrics(
        train, holdout, synthetic, schema.kinds, families=families,
        holdout_row=bool(p.get("holdout_rule")), n_jobs=int(opts.get("n_jobs", 1)),
        seed=int(opts.get("seed", 0)), target=schema.target, sensitive=schema.sensitive,
        quasi_identifiers=schema.quasi_identifiers, on_error="na",
    )
    secs = time.perf_counter() - t0
    cell = Path(p["cell_dir"])
    for name, table in res.artifacts().items():
        write_csv(cell / artifact_file(name), table)
    headline = [(m.name, m.label, m.digits) for f in families for m in specs_of(f.result_type) if m.headline]
    return {"status": "ok", "metrics": res.to_dict(), "evaluate_seconds": round(secs, 4), "headline": headline,
            "na": res.na, "unavailable": list(res.unavailable)}

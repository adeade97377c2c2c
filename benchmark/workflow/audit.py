"""The shadow fits of the privacy audit (holdbench.metrics.audit): `python -m holdbench.benchmark.workflow.audit
fits --study-dir D --dataset X --seed K --synthesizer S --chunk C`, run by benchmark/workflow/rules/audit.smk.

A cell's fits j = 0 … n_fits_train + n_fits_test − 1 are cut into chunks of `fits_per_job`; a chunk job
runs its fits in one process (a plug-in generator still starts its worker per fit) and writes

    results/<study>/<dataset>/seed<k>/<synth>/audit/fit<j>.npz    one per fit: labels, features, identity
    results/<study>/<dataset>/seed<k>/<synth>/audit/chunk<c>.json  the chunk's marker (its declared output)

and the split's targets once for all its cells (the first chunk to need them selects them; the
evaluation reads them too), with the identity of the T and settings they were selected for:

    <the split's directory>/audit_targets.json                    rows of T, their scores, identity

A fit file whose stored identity (cell, fit index, targets, the fit settings' digest, the generator
config's digest) matches is kept, so an interrupted or re-run chunk computes only its missing fits and
nothing crosses cells. Fit j draws its reference set, inclusion bits and generator seed from
SeedSequence([audit seed, split seed, j]): the same reference sets for every generator of a split.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from holdbench.benchmark.layout import StudyLayout
from holdbench.contracts.io import clean_line, read_parquet, write_json

AUDIT_DIR = "audit"
FAMILY = "audit"


def settings_of(metrics_cfg: dict) -> dict | None:
    """The audit family's options of a metrics config (None: the study runs no audit)."""
    return (metrics_cfg.get("families") or {}).get(FAMILY)


def family(settings: dict):
    """The audit family built from its options (holdbench.metrics.audit.Audit): its defaults fill the rest."""
    from holdbench.metrics.audit import Audit

    return Audit(**{k: v for k, v in settings.items() if k not in ("_target_", "cell")})


def n_fits(settings: dict) -> int:
    f = family(settings)
    return f.n_fits_train + f.n_fits_test


def n_chunks(settings: dict) -> int:
    return math.ceil(n_fits(settings) / family(settings).fits_per_job)


def fits_key(metrics_cfg: dict) -> str:
    """What the fit jobs depend on of a metrics config: the audit's fit settings and chunking ('' without an
    audit)."""
    s = settings_of(metrics_cfg)
    if s is None:
        return ""
    from holdbench.metrics.audit import settings_digest

    return f"{settings_digest(family(s).settings)}-{family(s).fits_per_job}"


def fit_file(lay: StudyLayout, dataset: str, seed, synth: str, j: int) -> Path:
    return lay.cell_dir(dataset, seed, synth) / AUDIT_DIR / f"fit{j:04d}.npz"


def chunk_marker(lay: StudyLayout, dataset: str, seed, synth: str, chunk) -> Path:
    return lay.cell_dir(dataset, seed, synth) / AUDIT_DIR / f"chunk{chunk}.json"


def chunk_markers(lay: StudyLayout, metrics_cfg: dict, dataset: str, seed, synth: str) -> list[Path]:
    """The chunk markers a cell's evaluation waits for (none when the study runs no audit)."""
    s = settings_of(metrics_cfg)
    return [] if s is None else [chunk_marker(lay, dataset, seed, synth, c) for c in range(n_chunks(s))]


def targets_file(lay: StudyLayout, dataset: str, seed) -> Path:
    """T's audit targets of one split, shared by every cell of it (they depend on T and the settings only)."""
    return lay.split_dir(dataset, seed) / "audit_targets.json"


def _targets_identity(lay: StudyLayout, dataset: str, seed, settings: dict, columns: list[str]) -> dict:
    from holdbench.benchmark.workflow.cellconfig import file_record
    from holdbench.metrics.audit.targets import SCORE

    return {"train": file_record(lay.train(dataset, seed)), "score": SCORE, "columns": list(columns),
            "k_neighbours": settings["k_neighbours"], "n_targets": settings["n_targets"],
            "seed": settings["seed"] + int(seed)}


def stored_targets(lay: StudyLayout, dataset: str, seed, settings: dict, columns: list[str]) -> dict | None:
    """{"rows", "scores"} from the split's targets file when it was written for this T and these settings."""
    from holdbench.contracts.io import read_json_object

    rec = read_json_object(targets_file(lay, dataset, seed))
    if rec.get("identity") != _targets_identity(lay, dataset, seed, settings, columns):
        return None
    return {"rows": rec.get("rows"), "scores": rec.get("scores")}


def cell_targets(lay: StudyLayout, dataset: str, seed, settings: dict, train, kinds: dict) -> list[int]:
    """The positions in T of its audit targets: read from the split's targets file, else selected (Meeus
    et al.'s score, holdbench.metrics.audit.select_targets) and written there for the split's other cells
    and the evaluation. Jobs that race write the same content, each atomically."""
    cols = list(train.columns)
    have = stored_targets(lay, dataset, seed, settings, cols)
    if have is not None:
        return [int(r) for r in have["rows"]]
    from holdbench.metrics.audit import select_targets

    rows, scores = select_targets(train, kinds, settings["k_neighbours"], settings["n_targets"],
                                  settings["seed"] + int(seed))
    write_json(targets_file(lay, dataset, seed), {
        "identity": _targets_identity(lay, dataset, seed, settings, cols),
        "rows": [int(r) for r in rows], "scores": [float(v) for v in scores]})
    return [int(r) for r in rows]


def audit_schema(schema, columns: list[str]):
    """The schema restricted to the audit's columns (in the given order); an unknown column is an error."""
    from holdbench.contracts.schema import Schema

    by_name = {c.name: c for c in schema.columns}
    unknown = [c for c in columns if c not in by_name]
    if unknown:
        raise ValueError(f"audit: columns {unknown} are not columns of dataset {schema.name!r} "
                         f"(it has {list(by_name)})")
    return Schema(schema.name, tuple(by_name[c] for c in columns))


def _configured(synth_cfg: dict) -> tuple[float | None, float]:
    """(ε, δ) a DP generator's config states (None, 0 for a generator without ε)."""
    eps = synth_cfg.get("epsilon")
    return (None if eps is None else float(eps)), float(synth_cfg.get("delta") or 0.0)


def identity(lay: StudyLayout, dataset: str, seed, synth: str, settings: dict, synth_cfg: dict) -> dict:
    """What a shadow fit was made for: the cell, the fit settings, the generator's config and the audited
    columns' schema (kinds and any public levels or bounds, which change what a DP generator does)."""
    from holdbench.benchmark.workflow.cellconfig import digest
    from holdbench.contracts.io import read_json_object
    from holdbench.metrics.audit import settings_digest

    st = family(settings).settings
    cols = (st["columns"] or {}).get(dataset) or []
    spec = {c.get("name"): c for c in read_json_object(lay.schema(dataset, seed)).get("columns") or []
            if isinstance(c, dict)}
    return {"cell": f"{dataset}/seed{seed}/{synth}", "settings": settings_digest(st),
            "generator": digest(synth_cfg), "columns": digest([spec.get(c) for c in cols])}


def with_audit(metrics_cfg: dict, lay: StudyLayout, dataset: str, seed, synth: str) -> dict:
    """The metrics config with the audit family told its cell: the fit files, the configured (ε, δ), and the
    failure of any chunk (the evaluate job's payload; the snapshot itself is unchanged)."""
    s = settings_of(metrics_cfg)
    if s is None:
        return metrics_cfg
    snap = json.loads(lay.synth_config(synth).read_text())
    eps, delta = _configured(snap["config"])
    failed = []
    for c in range(n_chunks(s)):
        try:
            rec = json.loads(chunk_marker(lay, dataset, seed, synth, c).read_text())
        except (OSError, ValueError):
            failed.append(f"chunk {c}: no marker")
            continue
        if rec.get("failed"):
            failed.append(f"chunk {c}: {rec['failed']}")
    cell = {"dataset": dataset, "seed": int(seed), "epsilon": eps, "delta": delta,
            "fits": [str(fit_file(lay, dataset, seed, synth, j)) for j in range(n_fits(s))],
            "identity": identity(lay, dataset, seed, synth, s, snap["config"]), "failed": "; ".join(failed)}
    cols = (family(s).settings["columns"] or {}).get(dataset)
    targets = stored_targets(lay, dataset, seed, family(s).settings, cols) if cols else None
    if targets is not None:  # the chunks' selection, so the evaluation does not select again
        cell["targets"] = targets
    return {**metrics_cfg, "families": {**metrics_cfg["families"], FAMILY: {**s, "cell": cell}}}


def _valid(path: Path, want: dict) -> bool:
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(str(npz["meta"]))
            npz["labels"], npz["features"]
    except Exception:  # noqa: BLE001 - missing, truncated or foreign: recompute
        return False
    return all(meta.get(k) == v for k, v in want.items())


def do_fits(study_dir: Path, dataset: str, seed: int, synth: str, chunk: int) -> dict:
    """Run the missing fits of one chunk; write the chunk marker (always, a failure recorded in it)."""
    lay = StudyLayout(study_dir)
    metrics_cfg = json.loads(lay.metrics_config.read_text())
    s = settings_of(metrics_cfg)
    if s is None:
        raise SystemExit(f"study {lay.name}: its metrics config has no `audit` family")
    snap = json.loads(lay.synth_config(synth).read_text())
    t0 = time.perf_counter()
    fam = family(s)
    st = fam.settings
    lo, hi = chunk * fam.fits_per_job, min(n_fits(s), (chunk + 1) * fam.fits_per_job)
    record = {"cell": f"{dataset}/seed{seed}/{synth}", "chunk": chunk, "fits": [lo, hi], "computed": [],
              "kept": [], "fit_seconds": {}, "failed": ""}
    try:
        from holdbench.benchmark.config import build_synthesizer
        from holdbench.contracts.schema import Schema
        from holdbench.metrics.audit import FeatureEncoder, membership, play_fit, save_fit
        from holdbench.synthesizers.base import FitContext

        schema = Schema.from_dict(json.loads(lay.schema(dataset, seed).read_text()))
        cols = st["columns"].get(dataset)
        if not cols:
            raise ValueError(f"audit: `columns` names no columns for dataset {dataset!r}")
        sub = audit_schema(schema, cols)
        train = read_parquet(lay.train(dataset, seed))[cols]
        pool = read_parquet(lay.holdout(dataset, seed))[cols]
        n_targets, ref_rows = st["n_targets"], st["reference_rows"]
        rows = cell_targets(lay, dataset, seed, st, train, sub.kinds)
        targets = train.iloc[rows].reset_index(drop=True)
        enc = FeatureEncoder.fit(pool, sub.kinds, st["bins"], st["n_closest"])
        base = {**identity(lay, dataset, seed, synth, s, snap["config"]), "targets": [int(r) for r in rows]}
        member = membership(fam.n_fits_train, fam.n_fits_test, n_targets, st["seed"] + int(seed), st["bound"])
        for j in range(lo, hi):
            path = fit_file(lay, dataset, seed, synth, j)
            want = {**base, "fit": j}
            if _valid(path, want):
                record["kept"].append(j)
                continue

            def fit_sample(data, other, fit_seed):
                gen = build_synthesizer(snap["config"])
                gen.fit(data, FitContext(schema=sub, seed=fit_seed, dataset=dataset,
                                         holdout=other if gen.needs_holdout else None))
                return gen.sample(ref_rows, seed=fit_seed)

            t1 = time.perf_counter()
            out = play_fit(pool, targets, member[j], ref_rows, [st["seed"], int(seed), j], fit_sample)
            record["fit_seconds"][j] = round(time.perf_counter() - t1, 3)
            save_fit(path, member[j], enc.features(targets, out[cols]), want)
            record["computed"].append(j)
    except Exception as exc:  # noqa: BLE001 - recorded for the cell's evaluation (its audit is n/a, with this reason)
        record["failed"] = clean_line(f"{type(exc).__name__}: {exc}", 500)
    record["seconds"] = round(time.perf_counter() - t0, 3)
    write_json(chunk_marker(lay, dataset, seed, synth, chunk), record)
    return record


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m holdbench.benchmark.workflow.audit")
    ap.add_argument("job", choices=["fits"])
    ap.add_argument("--study-dir", required=True, type=Path)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--synthesizer", required=True)
    ap.add_argument("--chunk", type=int, required=True)
    a = ap.parse_args(argv)
    import os

    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rec = do_fits(a.study_dir, a.dataset, a.seed, a.synthesizer, a.chunk)
    where = f"{a.dataset}/seed{a.seed}/{a.synthesizer}"
    if rec["failed"]:
        print(f"[holdbench] {where}: audit chunk {a.chunk} failed: {rec['failed']}", file=sys.stderr, flush=True)
    else:
        print(f"[holdbench] {where}: audit chunk {a.chunk}: {len(rec['computed'])} fits computed, "
              f"{len(rec['kept'])} kept, {rec['seconds']:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The jobs Snakemake runs: `python -m holdbench.benchmark.workflow.runner {split,generate,evaluate_shard,evaluate,collect,track}`.

generate and evaluate supervise an isolated child (holdbench.benchmark.cell.isolation) and ALWAYS
write their outputs, so one failed cell never stops the others and the leaderboard
shows it with its status. The supervisor imports no heavy library: it starts fast.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from holdbench.benchmark.cell.isolation import (Interrupted, cell_attempt, disk_problem, failure, one_numeric_thread,
                                                run_isolated)
from holdbench.benchmark.layout import (
    GENERATE_JSON,
    MARGINALS,
    METRICS_JSON,
    STATUS_JSON,
    STOP_NOTE,
    SYNTHETIC,
    StudyLayout,
    cell_id,
    synthetic_files,
)
from holdbench.benchmark.workflow.audit import with_audit
from holdbench.benchmark.workflow.cellconfig import cell_config, digest, file_problem, file_record, is_sequential_split
from holdbench.benchmark.workflow.integrity import environment_state, generator_plugin
from holdbench.contracts.io import clean_line, read_parquet, write_json, write_text

VERSIONED = ("holdbench", "sdv", "torch", "pandas", "numpy", "scikit-learn", "snakemake", "mlflow")


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for pkg in VERSIONED:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def git_commit() -> str | None:
    try:
        res = subprocess.run(["git", "rev-parse", "HEAD"], check=False, cwd=Path(__file__).resolve().parents[2],
                             capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return res.stdout.strip() or None if res.returncode == 0 else None


def do_split(study_dir: Path, dataset: str, seed: int) -> None:
    """Write train/holdout parquet and schema.json (with the two files' checksums) for one (dataset, seed)."""
    from holdbench.benchmark.data.tables import dataset_schema, load_dataset_and_schema
    from holdbench.benchmark.data.split import provided_split, random_split
    from holdbench.contracts.io import write_parquet

    lay = StudyLayout(study_dir)
    study = _load(lay.split_config(dataset))
    if is_sequential_split(study):
        _split_sequential(lay, dataset, seed, study)
        return
    if study["split"] == "provided":
        schema = dataset_schema(dataset)
        files = {k: v.format(dataset=dataset) for k, v in study["split_files"].items()}
        train, holdout = provided_split(schema, files["train"], files["holdout"])
        how = f"provided files {files['train']} / {files['holdout']}"
    else:
        table, schema = load_dataset_and_schema(dataset)
        train, holdout = random_split(table, seed)
        how = f"random 50/50 split, seed {seed}"
    write_parquet(lay.train(dataset, seed), train)
    write_parquet(lay.holdout(dataset, seed), holdout)
    record = schema.to_dict()
    record["files"] = {p.name: file_record(p) for p in (lay.train(dataset, seed), lay.holdout(dataset, seed))}
    write_json(lay.schema(dataset, seed), record)
    print(f"[holdbench] split {dataset}/seed{seed}: {how}; T {len(train):,} rows, H {len(holdout):,} rows")
    from holdbench.metrics.evaluate import size_warning

    small = size_warning(len(train), len(holdout))
    if small:
        print(f"[holdbench] WARNING {dataset}/seed{seed}: {small}", file=sys.stderr)


def _split_sequential(lay: StudyLayout, dataset: str, seed: int, split: dict) -> None:
    """A sequential dataset's seeded 50/50 split over subjects: T's and H's subject and event tables, and
    schema.json holding the dataset's spec (key, order, both tables' schemas) and the files' checksums."""
    from holdbench.benchmark.data.sequential import from_frames, load_tables, parse_spec, spec_to_dict, split_by_subject
    from holdbench.contracts.io import write_parquet

    spec = parse_spec(dataset, split["dataset"])
    train, holdout = split_by_subject(from_frames(spec, *load_tables(spec)), seed)
    files = {}
    for role, part in (("train", train), ("holdout", holdout)):
        paths = lay.pair(dataset, seed, role)
        write_parquet(paths["subjects"], part.subjects)
        write_parquet(paths["events"], part.events)
        files.update({p.name: file_record(p) for p in paths.values()})
    write_json(lay.schema(dataset, seed), {"sequential": spec_to_dict(spec), "files": files})
    print(f"[holdbench] split {dataset}/seed{seed}: random 50/50 split over subjects, seed {seed}; "
          f"T {train.n_subjects:,} subjects ({train.n_events:,} events), "
          f"H {holdout.n_subjects:,} subjects ({holdout.n_events:,} events)")
    from holdbench.metrics.evaluate import size_warning

    small = size_warning(train.n_subjects, holdout.n_subjects)
    if small:
        print(f"[holdbench] WARNING {dataset}/seed{seed}: {small}", file=sys.stderr)


def _limits(lay: StudyLayout) -> dict:
    run = _load(lay.run_config)
    return {"timeout_seconds": run["timeout_seconds"], "memory_gb": run["memory_gb"]}


def do_generate(study_dir: Path, dataset: str, seed: int, synth: str) -> None:
    """Fit and sample in an isolated child; always writes generate.json (unless the run was killed).

    The child writes into the attempt's private scratch dir; synthetic.parquet is moved into the
    cell, and generate.json (with its checksum, the config digest and the limits) written last.
    """
    t0 = time.perf_counter()
    lay = StudyLayout(study_dir)
    limits = _limits(lay)
    snap = _load(lay.synth_config(synth))
    split = _load(lay.split_config(dataset))
    cfg = snap["config"]
    cdir = lay.cell_dir(dataset, seed, synth)
    sequential = is_sequential_split(split)
    names = synthetic_files(sequential)
    with cell_attempt(cdir) as attempt:
        payload = {
            "dataset": dataset, "seed": seed, "synthesizer": synth, "config": cfg,
            "n_synthetic": snap["n_synthetic"], "schema": str(lay.schema(dataset, seed)),
            "cell_dir": str(attempt.scratch), "sequential": sequential,
            **_inputs(lay, dataset, seed, sequential),
            "synthetic": [str(attempt.scratch / n) for n in names] if sequential else str(attempt.scratch / SYNTHETIC),
        }
        result = run_isolated("generate", payload, attempt, limits["timeout_seconds"], limits["memory_gb"],
                              threads=1)
        absent = [n for n in names if not (attempt.scratch / n).exists()]
        if result["status"] == "ok" and absent:
            result = failure("error", f"generate reported ok but wrote no {', '.join(absent)}")
        if result["status"] == "ok":
            result["outputs"] = {}
            for n in names:
                os.replace(attempt.scratch / n, cdir / n)
                result["outputs"][n] = file_record(cdir / n)
            # the synthesizer's own tables (Synthesizer.artifacts(), e.g. a tuning trace)
            for table in sorted(attempt.scratch.glob("*.csv")):
                os.replace(table, cdir / table.name)
                result["outputs"][table.name] = file_record(cdir / table.name)
        else:
            for n in names:
                (cdir / n).unlink(missing_ok=True)
            env = generator_plugin(cfg)
            if env is not None:  # a later run retries the cell once this environment changed (integrity)
                try:
                    result["plugin_environment"] = environment_state(env)
                except Exception as exc:  # noqa: BLE001 - the cell's own failure is what to report
                    print(f"[holdbench] {dataset}/seed{seed}/{synth}: cannot record the {env.name} plug-in's "
                          f"state ({clean_line(str(exc), 200)})", file=sys.stderr)
        result.update(
            stage="generate", config=cfg, generate_digest=digest(cell_config(split, snap)), limits=limits,
            versions={**versions(), **(result.pop("synthesizer_versions", None) or {})}, git_commit=git_commit(),
            job_wall_seconds=round(time.perf_counter() - t0, 3),
        )
        write_json(cdir / GENERATE_JSON, result)
    if result["status"] != "ok":
        print(f"[holdbench] {dataset}/seed{seed}/{synth}: generate {result['status']}: {result['reason']}",
              file=sys.stderr)


def _inputs(lay: StudyLayout, dataset: str, seed: int, sequential: bool) -> dict:
    """The payload keys of T and H: a file each (flat), or {subjects, events} files each (sequential)."""
    if sequential:
        return {role: {part: str(p) for part, p in lay.pair(dataset, seed, role).items()}
                for role in ("train", "holdout")}
    return {"train": str(lay.train(dataset, seed)), "holdout": str(lay.holdout(dataset, seed))}


def do_evaluate(study_dir: Path, dataset: str, seed: int, synth: str, shards: int = 1) -> None:
    """Evaluate an ok cell in an isolated child; always writes metrics.json, marginals.csv, status.json
    (status.json last: it records the checksums of the others and the cell's full resolved config).
    With shards > 1 the shardable families merge the evaluate_shard jobs' partial results."""
    t0 = time.perf_counter()
    lay = StudyLayout(study_dir)
    limits = _limits(lay)
    run = _load(lay.run_config)
    cdir = lay.cell_dir(dataset, seed, synth)
    metrics_cfg = _load(lay.metrics_config)
    split = _load(lay.split_config(dataset))
    config = cell_config(split, _load(lay.synth_config(synth)), metrics_cfg)
    sequential = is_sequential_split(split)
    names = synthetic_files(sequential)
    with cell_attempt(cdir) as attempt:
        gen = _load(cdir / GENERATE_JSON)
        metrics: dict = {}
        ev: dict = {}
        synthetic_records = {n: (gen.get("outputs") or {}).get(n) for n in names}
        retry = None
        if gen["status"] == "ok":
            bad = next(filter(None, (file_problem(cdir / n, r) for n, r in synthetic_records.items())), None)
            shard_files = lay.shard_files(dataset, seed, synth, shards)
            if bad:
                bad = f"{bad}; rerun the study to regenerate it"
            else:
                bad = retry = _verified_shards(lay, dataset, seed, synth, shards, gen)
            if bad:
                ev = failure("error", bad)
            else:
                payload = {
                    "schema": str(lay.schema(dataset, seed)), **_inputs(lay, dataset, seed, sequential),
                    "synthetic": [str(cdir / n) for n in names] if sequential else str(cdir / SYNTHETIC),
                    "cell_dir": str(attempt.scratch), "holdout_rule": gen.get("holdout_rule", False),
                    "metrics": with_audit(_with_partials(metrics_cfg, shard_files), lay, dataset, seed, synth),
                    "sequential": sequential,
                }
                # one BLAS thread: a product's rounding depends on how many threads split it, and
                # the metrics must not change in the last digit with the machine (parallelism
                # comes from the metrics' joblib workers, which inherit the cap)
                ev = run_isolated("evaluate", payload, attempt, limits["timeout_seconds"], limits["memory_gb"],
                                  threads=1)
                metrics = ev.pop("metrics", {}) if ev["status"] == "ok" else {}
                if ev["status"] == "ok" and not metrics:
                    ev = failure("error", "the evaluation returned no metrics")
        headline = ev.pop("headline", [])
        # timings vary run to run: they go to status.json, so metrics.json is reproducible to the byte
        timings = {k: metrics.pop(k) for k in list(metrics) if k.startswith("seconds_")}
        generated = {name for name in (gen.get("outputs") or {}) if name.endswith(".csv")}
        outputs = _place_artifacts(attempt.scratch, cdir, keep=bool(metrics), generated=generated)
        write_json(cdir / METRICS_JSON, metrics)
        outputs[METRICS_JSON] = file_record(cdir / METRICS_JSON)
        outputs.update({n: r for n, r in synthetic_records.items() if r})
        # the stage that decided the cell's fate: generation if it failed, else the evaluation
        final, stage = (gen, "generate") if gen["status"] != "ok" else (ev, "evaluate")
        wall = gen.get("job_wall_seconds", 0) + (time.perf_counter() - t0)
        # the harness's own overhead: all but loading the synthesizer's library, fit, sample, evaluate
        spent = sum(x or 0 for x in (gen.get("load_seconds"), gen.get("fit_seconds"), gen.get("sample_seconds"),
                                     ev.get("evaluate_seconds")))
        status = {
            "cell_id": cell_id(run["name"], dataset, seed, synth), "study": run["name"],
            "dataset": dataset, "synthesizer": synth, "seed": seed,
            "status": final["status"], "stage": None if final["status"] == "ok" else stage,
            "reason": clean_line(final.get("reason", "")), "traceback_tail": final.get("traceback_tail", ""),
            "load_seconds": gen.get("load_seconds"), "fit_seconds": gen.get("fit_seconds"),
            "sample_seconds": gen.get("sample_seconds"),
            "evaluate_seconds": ev.get("evaluate_seconds"), "metric_seconds": timings, "wall_seconds": round(wall, 3),
            # CPU (user + system) of the isolated generate / evaluate processes and their descendants
            "generate_cpu_seconds": gen.get("stage_cpu_seconds"), "evaluate_cpu_seconds": ev.get("stage_cpu_seconds"),
            "overhead_seconds": round(wall - spent, 3), "peak_rss_mb": gen.get("peak_rss_mb"),
            "evaluate_peak_rss_mb": ev.get("peak_rss_mb"), "n_synthetic": gen.get("n_synthetic"),
            "holdout_rule": gen.get("holdout_rule", False), "config": config, "config_digest": digest(config),
            # which files the dataset, synthesizer and metrics configs came from (study.json's config_files)
            "config_files": _config_files(lay, dataset, synth),
            "limits": limits, "generate_limits": gen.get("limits"), "values": gen.get("values"),
            "mixed_types": gen.get("mixed_types") or {}, "read_as_missing": gen.get("read_as_missing") or {},
            "outputs": outputs, "versions": gen.get("versions"), "git_commit": gen.get("git_commit"),
            # metric families that reported n/a, and why; those that could not run here at all are
            # re-evaluated by a later run once they can (holdbench.benchmark.workflow.integrity)
            "na": {k: clean_line(v) for k, v in (ev.get("na") or {}).items()},
            "unavailable": list(ev.get("unavailable") or []),
            # a failure that is not a property of the cell's inputs: the next run tries again
            "retry": retry,
            # T or H below holdbench.metrics.evaluate.MIN_MEANINGFUL_ROWS: the numbers are flagged not meaningful
            "not_meaningful": metrics.get("not_meaningful_reason"),
        }
        write_json(cdir / STATUS_JSON, status)
    print(summary_line(status, metrics, headline), flush=True)


def _config_files(lay: StudyLayout, dataset: str, synth: str) -> dict:
    """The files a cell's dataset, synthesizer and metrics configs came from, as the study recorded them
    (empty for a study.json written before it recorded them)."""
    try:
        files = json.loads(lay.study_json.read_text()).get("config_files") or {}
    except (OSError, ValueError, AttributeError):
        return {}
    return {"dataset": (files.get("datasets") or {}).get(dataset),
            "synthesizer": (files.get("synthesizers") or {}).get(synth), "metrics": files.get("metrics")}


def _with_partials(metrics_cfg: dict, shard_files: list[Path]) -> dict:
    """The metrics config with every shardable family told to merge the shards' partial results."""
    if not shard_files:
        return metrics_cfg
    from holdbench.benchmark.config import PARTIALS_KEY, metric_family_classes

    families = dict(metrics_cfg["families"])
    for name, cls in metric_family_classes(metrics_cfg).items():
        if cls.shardable:
            families[name] = {**families[name], PARTIALS_KEY: [str(f) for f in shard_files]}
    return {**metrics_cfg, "families": families}


_SHARD_FAILED = "_failed"
#: the key of a shard file holding its identity (JSON): which cell, synthetic table, shard and metric options
_SHARD_META = "_meta"


def _shard_identity(lay: StudyLayout, dataset: str, seed: int, synth: str, shard: int, of: int, gen: dict) -> dict:
    """What a shard file must say about itself to be merged into this cell's evaluation now."""
    record = (gen.get("outputs") or {}).get(SYNTHETIC) or {}
    return {"cell": f"{dataset}/seed{seed}/{synth}", "synthetic_sha256": record.get("sha256"),
            "shard": shard, "of": of, "metrics_digest": digest(_load(lay.metrics_config))}


def _shard_problem(path: Path, want: dict) -> str | None:
    """Why the shard file at `path` cannot be merged as the shard `want` describes, or None.

    Every array is read (a truncated or damaged archive fails its CRC here, not in the merge)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as npz:
            if _SHARD_META not in npz.files:
                return f"{path.name} does not say which cell, table and shard it holds"
            meta = json.loads(str(npz[_SHARD_META]))
            for key, value in want.items():
                if meta.get(key) != value:
                    return f"{path.name} holds {key} {meta.get(key)!r}, this shard is {key} {value!r}"
            if _SHARD_FAILED in npz.files:
                return f"the shard job failed: {npz[_SHARD_FAILED].item()}"
            for key in npz.files:
                npz[key]
    except FileNotFoundError:
        return f"{path.name} is missing"
    except Exception as exc:  # noqa: BLE001 - BadZipFile, EOFError, ValueError, zlib.error...: unreadable
        return f"{path.name} is unreadable ({type(exc).__name__}: {clean_line(str(exc), 200)})"
    return None


def _verified_shards(lay: StudyLayout, dataset: str, seed: int, synth: str, of: int, gen: dict) -> str | None:
    """Check every shard file of the cell before any merge; recompute (here) each one that is damaged,
    missing, failed, another cell's or another shard's; return why one still cannot be merged, or None."""
    for i, path in enumerate(lay.shard_files(dataset, seed, synth, of)):
        want = _shard_identity(lay, dataset, seed, synth, i, of, gen)
        bad = _shard_problem(path, want)
        if bad:
            print(f"[holdbench] {dataset}/seed{seed}/{synth}: evaluate shard {i} of {of}: {bad}; recomputing it",
                  file=sys.stderr, flush=True)
            _write_shard(lay, dataset, seed, synth, i, of, gen)
            bad = _shard_problem(path, want)
            if bad:
                return f"evaluate shard {i} of {of}: {bad}"
    return None


def do_evaluate_shard(study_dir: Path, dataset: str, seed: int, synth: str, shard: int, of: int) -> None:
    """Partial results of shard `shard` of `of` of every shardable family of an ok cell, in one .npz
    (keys `<family>.<array>`, and `_meta`: the shard's identity, see _shard_identity); always written:
    a failure is recorded in it (key `_failed`, or `<family>._failed` for one family) for the cell's
    evaluate job to report. Nothing to compute (generation failed): only the identity."""
    t0 = time.perf_counter()
    lay = StudyLayout(study_dir)
    gen = _load(lay.cell_dir(dataset, seed, synth) / GENERATE_JSON)
    arrays = _write_shard(lay, dataset, seed, synth, shard, of, gen)
    print(f"[holdbench] {dataset}/seed{seed}/{synth}: evaluate shard {shard} of {of} "
          f"{'failed: ' + str(arrays[_SHARD_FAILED]) if _SHARD_FAILED in arrays else 'done'} "
          f"in {time.perf_counter() - t0:.1f}s", flush=True)


def _write_shard(lay: StudyLayout, dataset: str, seed: int, synth: str, shard: int, of: int, gen: dict) -> dict:
    import numpy as np

    cdir = lay.cell_dir(dataset, seed, synth)
    arrays: dict = {}
    if gen["status"] == "ok" and not file_problem(cdir / SYNTHETIC, (gen.get("outputs") or {}).get(SYNTHETIC)):
        try:
            with one_numeric_thread():  # as the evaluate child
                arrays = _shard_arrays(lay, dataset, seed, cdir, gen, shard, of)
        except Exception as exc:  # noqa: BLE001 - recorded for the cell, like the evaluate child's failures
            arrays = {_SHARD_FAILED: np.array(clean_line(f"{type(exc).__name__}: {exc}"))}
    arrays[_SHARD_META] = np.array(json.dumps(_shard_identity(lay, dataset, seed, synth, shard, of, gen),
                                              sort_keys=True))
    out = lay.shard_file(dataset, seed, synth, shard, of)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(tmp, out)
    return arrays


def _shard_arrays(lay: StudyLayout, dataset: str, seed: int, cdir: Path, gen: dict, shard: int, of: int) -> dict:
    """The cell's inputs read as the evaluate child reads them (holdbench.benchmark.cell.stages.evaluate), then the
    shardable families' partials."""
    from holdbench.benchmark.config import build_metric_families
    from holdbench.contracts.schema import Schema
    from holdbench.metrics.evaluate import evaluate_shard

    schema = Schema.from_dict(_load(lay.schema(dataset, seed)))
    opts = _load(lay.metrics_config)
    parts = evaluate_shard(
        read_parquet(lay.train(dataset, seed)), read_parquet(lay.holdout(dataset, seed)),
        read_parquet(cdir / SYNTHETIC), schema.kinds, families=build_metric_families(opts), shard=shard, of=of,
        holdout_row=bool(gen.get("holdout_rule")), n_jobs=int(opts.get("n_jobs", 1)), seed=int(opts.get("seed", 0)),
        target=schema.target, sensitive=schema.sensitive, quasi_identifiers=schema.quasi_identifiers,
        on_error="na",
    )
    return {f"{family}.{key}": value for family, arrays in parts.items() for key, value in arrays.items()}


def _place_artifacts(scratch: Path, cdir: Path, keep: bool, generated: set[str] = frozenset()) -> dict:
    """Move the artifact tables the evaluation wrote into the cell (replacing the old ones, removing
    stale ones but not the tables `generated` by the current generate stage); returns {file: record}
    of every table in the cell. Without metrics, marginals.csv is a header only."""
    made = {p.name: p for p in scratch.glob("*.csv")} if keep else {}
    for old in cdir.glob("*.csv"):
        if old.name not in made and old.name not in generated:
            old.unlink(missing_ok=True)
    for name, path in made.items():
        os.replace(path, cdir / name)
    if MARGINALS not in made:
        write_text(cdir / MARGINALS, "columns,k,tvd_synthetic,tvd_holdout\n")
    return {p.name: file_record(p) for p in sorted(cdir.glob("*.csv"))}


def summary_line(status: dict, metrics: dict, headline: list) -> str:
    """One line per cell for the job log; `headline` is [(name, label, digits)] of the registry's
    headline metrics, as the evaluation child reported them."""
    head = f"[holdbench] {status['dataset']}/seed{status['seed']}/{status['synthesizer']}: {status['status']}"
    if status["status"] != "ok":
        return f"{head} ({status['stage']}): {status['reason']}"
    shown = []
    for name, label, digits in headline:
        v = metrics.get(name)
        shown.append(f"{label} {'n/a' if v is None else format(v, f'.{digits}f')}")
    warn = f" | WARNING not meaningful: {status['not_meaningful']}" if status.get("not_meaningful") else ""
    return (f"{head}  fit {status['fit_seconds']:.1f}s sample {status['sample_seconds']:.1f}s "
            f"eval {status['evaluate_seconds']:.1f}s | " + " | ".join(shown) + warn)


def do_collect(study_dir: Path, n_jobs: int = 1) -> None:
    """Leaderboard, figures (only those whose inputs changed are drawn again) and report, each file
    replaced atomically, so the previous report stays readable until the new one is written; then
    the collect marker, the collect job's one declared output (Snakemake deletes declared outputs
    before a job runs)."""
    t0 = time.perf_counter()
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.plots import make_plots
    from holdbench.benchmark.outputs.report import write_report
    from holdbench.benchmark.outputs.results import load_results

    results = load_results(study_dir)
    written = write_leaderboard(results)
    stats: dict = {}
    plots = make_plots(results, n_jobs=n_jobs, stats=stats)
    report = write_report(results)
    seconds = round(time.perf_counter() - t0, 2)
    write_json(results.layout.collect_marker, {"leaderboard": str(written["csv"]), "report": str(report),
                                               "figures": len(plots), **stats, "seconds": seconds})
    print(f"[holdbench] leaderboard: {written['csv']}; {len(plots)} figures ({stats.get('drawn', 0)} drawn, "
          f"{stats.get('kept', 0)} unchanged); report: {report}; collected in {seconds:.1f} s")


def do_track(study_dir: Path, uri: str, out: Path) -> int:
    """Log the study to MLflow. On failure every result stays on disk, the job fails
    loudly and writes no marker, so the next run (or `holdbench track`) retries it."""
    from holdbench.benchmark.outputs.tracking import TrackingError, log_study

    try:
        info = log_study(study_dir, uri)
    except TrackingError as exc:
        print(f"[holdbench] MLflow logging FAILED: {exc}. All results are on disk under {study_dir}; "
              f"once the reason above is dealt with, rerun the workflow or `holdbench track {study_dir.name}`.",
              file=sys.stderr)
        print(f"[holdbench] MLflow logging FAILED: {exc}", flush=True)
        return 1
    from holdbench.benchmark.outputs.tracking import resolve_uri, where_to_look

    write_json(out, {"uri": uri, **info})
    print(f"[holdbench] MLflow: logged {len(info.get('runs', {}))} cell runs of {study_dir.name} to {uri}")
    for line in where_to_look(resolve_uri(uri), info["experiment_id"]):
        print(f"[holdbench] MLflow: {line}", flush=True)
    return 0


def _stop_on_signals(study_dir: Path) -> None:
    """SIGTERM/SIGINT/SIGHUP (Snakemake cancelling, a user's Ctrl-C) raise Interrupted in the
    supervisor, which then kills everything the cell started and writes nothing. `holdbench run` passes
    any signal on as a SIGINT and notes the one it got in the study's STOP_NOTE: the reason names both."""
    import signal

    def handler(signum, frame):
        name = signal.Signals(signum).name
        try:
            got = (study_dir / STOP_NOTE).read_text().strip()
        except OSError:
            got = ""
        passed = f" (holdbench passing on the {got} it received)" if got and got != name else ""
        raise Interrupted(f"received {name}{passed}")

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m holdbench.benchmark.workflow.runner")
    ap.add_argument("job", choices=["split", "generate", "evaluate_shard", "evaluate", "collect", "track"])
    ap.add_argument("--study-dir", required=True, type=Path)
    ap.add_argument("--dataset")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--synthesizer")
    ap.add_argument("--uri", default=os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///results/mlflow.db"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--n-jobs", type=int, default=1, help="collect: processes drawing the plots")
    ap.add_argument("--shards", type=int, default=1, help="evaluate, evaluate_shard: the study's evaluate_shards")
    ap.add_argument("--shard", type=int, default=0, help="evaluate_shard: which shard (0-based)")
    a = ap.parse_args(argv)
    try:
        return _run_job(a)
    except OSError as exc:
        problem = disk_problem(exc)
        if problem is None:
            raise
        where = f"{a.dataset}/seed{a.seed}/{a.synthesizer}" if a.synthesizer else a.study_dir.name
        print(f"[holdbench] {where}: {a.job} failed: {problem}", file=sys.stderr, flush=True)
        return 1


def _run_job(a: argparse.Namespace) -> int:
    if a.job in ("generate", "evaluate", "evaluate_shard"):
        _stop_on_signals(a.study_dir)
        try:
            if a.job == "generate":
                do_generate(a.study_dir, a.dataset, a.seed, a.synthesizer)
            elif a.job == "evaluate":
                do_evaluate(a.study_dir, a.dataset, a.seed, a.synthesizer, a.shards)
            else:
                do_evaluate_shard(a.study_dir, a.dataset, a.seed, a.synthesizer, a.shard, a.shards)
        except Interrupted as exc:
            print(f"[holdbench] {a.dataset}/seed{a.seed}/{a.synthesizer}: {a.job} stopped, nothing written: {exc}",
                  file=sys.stderr, flush=True)
            return 1
        return 0
    if a.job == "split":
        do_split(a.study_dir, a.dataset, a.seed)
    elif a.job == "collect":
        do_collect(a.study_dir, a.n_jobs)
    else:
        return do_track(a.study_dir, a.uri, a.out or a.study_dir / "mlflow.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())

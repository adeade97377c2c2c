"""Run mostlyai-qa's report; executed by the ISOLATED interpreter, never imported by holdbench.

Usage: <venv python> -I worker.py WORKDIR   (the `mostlyai_qa` plug-in; see contracts/plugin_env.py)

Inputs. WORKDIR holds `config.json` and the tables, either as `train.parquet` (T, mostlyai-qa's
`trn_tgt_data`), `holdout.parquet` (H, `hol_tgt_data`, optional) and `synthetic.parquet` (S,
`syn_tgt_data`), or named in config.json's `files` ({"train": path, "holdout": path, "synthetic": path},
CSV, CSV.gz, TSV or parquet: then reading them is part of the measured cost). Sequential data (mostlyai-qa's
two-table setup): `train_ctx`, `holdout_ctx`, `synthetic_ctx` (parquet in WORKDIR or in `files`) with
config keys `ctx_primary_key` and `tgt_context_key`; or only `tgt_context_key` (events without a subject
table). Other config keys: `seed` (required; mostlyai-qa's `set_random_state`), `n_jobs` (default 1: joblib's
workers for mostlyai-qa's per-column loops), `report` (the HTML path; default WORKDIR/report.html: mostlyai-qa always
writes one), and `max_sample_size_accuracy`, `max_sample_size_coherence`, `max_sample_size_embeddings` (default null:
mostlyai-qa's default, all rows).

Output. `WORKDIR/result.json`: `versions`, `metrics` (mostlyai-qa's ModelMetrics: accuracy, similarity,
distances), the per-column accuracies `univariate` [{column, accuracy, accuracy_max}], `bivariate`
[{column_1, column_2, type, accuracy, accuracy_max}] (each unordered pair once), `trivariate` (the same with
column_3), `coherence` (sequential data: the per-column accuracies of both coherence parts), `report`, and
the worker's own `seconds` / `cpu_seconds` for the report call. Column names are the input's, without
mostlyai-qa's `tgt::` / `ctx::` / `nxt::` prefixes (`type` keeps which pair it was). Exit 3 with
{"missing": ...}: mostlyai-qa cannot be imported here; exit 4 with {"error": ...}: mostlyai-qa refused the
input (it exits early below 100 synthetic, 90 training or 10 holdout rows).

Offline. mostlyai-qa ships both models it uses inside its wheel: the potion-base-8M model2vec embedder
(`mostlyai/qa/assets/embedders/`, loaded with `StaticModel.from_pretrained(<that folder>)`) and the GPT-2
tokenizer (`assets/tokenizers/`, for text-like columns); nothing is downloaded. To make that a fact rather
than a hope, this worker sets HF_HUB_OFFLINE=1 and TRANSFORMERS_OFFLINE=1 before importing it and makes
every IPv4/IPv6 `socket.connect` raise (`_block_network`): a run that tried to reach a hub would fail
naming the address, not hang or quietly fetch.

Determinism: mostlyai-qa draws from Python's and numpy's global RNGs (row sampling, text tokens, the
discriminator's folds); `set_random_state(seed)` seeds both before the report.

This file imports only mostlyai-qa (and what it loads), pandas, numpy and the standard library: nothing of
holdbench's, whose environment has other pins.
"""

import json
import os
import socket
import sys
import time
from pathlib import Path

MISSING_EXIT = 3
SETTINGS_EXIT = 4
ROLES = ("train", "holdout", "synthetic")
SEQUENTIAL_ROLES = ("train_ctx", "holdout_ctx", "synthetic_ctx")
KNOWN_KEYS = {"seed", "n_jobs", "report", "files", "ctx_primary_key", "tgt_context_key",
              "max_sample_size_accuracy", "max_sample_size_coherence", "max_sample_size_embeddings"}


def _block_network() -> None:
    """Every IPv4/IPv6 connection attempt raises, naming the address (Unix sockets stay usable)."""
    connect = socket.socket.connect

    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"mostlyai_qa worker: network access blocked (tried to connect to {address!r}); "
                          "mostlyai-qa must run offline on its bundled models")
        return connect(self, address)

    socket.socket.connect = guarded


def _read(path: Path):
    import pandas as pd

    name = path.name.lower()
    if name.endswith(".parquet"):
        return pd.read_parquet(path, pre_buffer=False)
    if name.endswith((".tsv", ".tsv.gz")):
        return pd.read_csv(path, sep="\t")
    if name.endswith((".csv", ".csv.gz")):
        return pd.read_csv(path)
    raise ValueError(f"{path}: not a CSV, CSV.gz, TSV or parquet file")


def _tables(workdir: Path, cfg: dict) -> dict:
    files = cfg.get("files") or {}
    unknown = sorted(set(files) - set(ROLES) - set(SEQUENTIAL_ROLES))
    if unknown:
        raise ValueError(f"config.json: unknown table role(s) {unknown} in files (known: "
                         f"{', '.join(ROLES + SEQUENTIAL_ROLES)})")
    out = {}
    for role in ROLES + SEQUENTIAL_ROLES:
        path = Path(files[role]) if role in files else workdir / f"{role}.parquet"
        if path.exists():
            out[role] = _read(path)
        elif role in files:
            raise ValueError(f"config.json: files.{role} = {path} does not exist")
    for role in ("train", "synthetic"):
        if role not in out:
            raise ValueError(f"no {role} table: {workdir / (role + '.parquet')} is missing and config.json's "
                             f"files names none")
    return out


def _strip(name: str) -> tuple[str, str]:
    """('tgt', 'age') from mostlyai-qa's 'tgt::age'."""
    kind, sep, col = str(name).partition("::")
    return (kind, col) if sep else ("", str(name))


def _accuracies(statistics) -> dict:
    uni = statistics.load_univariate_accuracies()
    biv = statistics.load_bivariate_accuracies()
    triv = statistics.load_trivariate_accuracies()
    univariate = [{"column": _strip(r.column)[1], "type": _strip(r.column)[0], "accuracy": float(r.accuracy),
                   "accuracy_max": float(r.accuracy_max)} for r in uni.itertuples()]
    bivariate, seen = [], set()
    for r in biv.itertuples():
        (k1, c1), (k2, c2) = _strip(r.col1), _strip(r.col2)
        key = frozenset([(k1, c1), (k2, c2)])
        if key in seen:  # mostlyai-qa lists every pair in both orders with the same numbers
            continue
        seen.add(key)
        bivariate.append({"column_1": c1, "column_2": c2, "type": f"{k1}:{k2}",
                          "accuracy": float(r.accuracy), "accuracy_max": float(r.accuracy_max)})
    trivariate = [{"column_1": _strip(r.col1)[1], "column_2": _strip(r.col2)[1], "column_3": _strip(r.col3)[1],
                   "accuracy": float(r.accuracy), "accuracy_max": float(r.accuracy_max)}
                  for r in triv.itertuples()]
    coherence = {}
    for part, loader in (("distinct_categories_per_sequence", "load_distinct_categories_per_sequence_accuracy"),
                         ("sequences_per_distinct_category", "load_sequences_per_distinct_category_accuracy")):
        try:
            df = getattr(statistics, loader)()
        except (OSError, FileNotFoundError):
            continue
        coherence[part] = [{"column": _strip(r.column)[1], "accuracy": float(r.accuracy),
                            "accuracy_max": float(r.accuracy_max)} for r in df.itertuples()]
    return {"univariate": univariate, "bivariate": bivariate, "trivariate": trivariate, "coherence": coherence}


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: worker.py WORKDIR", file=sys.stderr)
        return 2
    workdir = Path(argv[1])
    cfg = json.loads((workdir / "config.json").read_text())
    unknown = sorted(set(cfg) - KNOWN_KEYS)
    if unknown or "seed" not in cfg:
        msg = f"config.json: unknown key(s) {unknown}" if unknown else "config.json: `seed` is required"
        (workdir / "result.json").write_text(json.dumps({"error": f"{msg} (known: {sorted(KNOWN_KEYS)})"}))
        return SETTINGS_EXIT
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    _block_network()
    try:
        from importlib.metadata import version

        from joblib import parallel_config
        from mostlyai import qa
        from mostlyai.qa._filesystem import Statistics
    except ImportError as exc:
        (workdir / "result.json").write_text(json.dumps({"missing": f"{type(exc).__name__}: {exc}"}))
        return MISSING_EXIT
    try:
        tables = _tables(workdir, cfg)
    except ValueError as exc:
        (workdir / "result.json").write_text(json.dumps({"error": str(exc)}))
        return SETTINGS_EXIT
    report_path = Path(cfg.get("report") or workdir / "report.html")
    stats_path = workdir / "statistics"
    qa.set_random_state(int(cfg["seed"]))
    start, cpu_start = time.perf_counter(), time.process_time()
    with parallel_config(n_jobs=int(cfg.get("n_jobs", 1))):
        _, metrics = qa.report(
            syn_tgt_data=tables["synthetic"], trn_tgt_data=tables["train"], hol_tgt_data=tables.get("holdout"),
            syn_ctx_data=tables.get("synthetic_ctx"), trn_ctx_data=tables.get("train_ctx"),
            hol_ctx_data=tables.get("holdout_ctx"), ctx_primary_key=cfg.get("ctx_primary_key"),
            tgt_context_key=cfg.get("tgt_context_key"), report_path=report_path, statistics_path=stats_path,
            max_sample_size_accuracy=cfg.get("max_sample_size_accuracy"),
            max_sample_size_coherence=cfg.get("max_sample_size_coherence"),
            max_sample_size_embeddings=cfg.get("max_sample_size_embeddings"))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    if metrics is None:
        n = {role: len(df) for role, df in tables.items()}
        (workdir / "result.json").write_text(json.dumps({
            "error": f"mostlyai-qa exited early (it needs at least 100 synthetic, 90 training and 10 holdout "
                     f"rows, and columns): rows {n}"}))
        return SETTINGS_EXIT
    payload = {
        "versions": {p: version(p) for p in ("mostlyai-qa", "model2vec", "transformers", "numpy", "pandas")},
        "metrics": json.loads(metrics.model_dump_json()),
        **_accuracies(Statistics(path=stats_path)),
        "report": str(report_path), "seconds": seconds, "cpu_seconds": cpu,
        "rows": {role: len(df) for role, df in tables.items()},
    }
    (workdir / "result.json").write_text(json.dumps(payload, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

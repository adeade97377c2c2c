"""`holdbench evaluate`: score one synthetic table (or the holdout reference row) from files.

The metric families and their options come from a metrics config (`conf/metrics/<name>.yaml`,
default `default`), exactly as a study's cells are scored; the printed summary is rendered
from the metric registry, group by group.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import sys
import time
import warnings
from pathlib import Path

from holdbench.benchmark.cli._pairs import (
    add_pair_arguments,
    check_pair_args,
    evaluate_pairs,
    pair_files,
    pair_header,
    pair_mode,
    pair_record,
)
from holdbench.contracts.io import TABLE_TYPES, read_table, write_json

#: families each --no-<x> flag drops
_SKIP_FLAGS = {"no_extended": "panel", "no_utility": "utility"}


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "evaluate",
        help="every metric of one synthetic table: fidelity, privacy, utility, attacks",
        description="Score a synthetic table S against its training table T and holdout H "
                    "(Platzer & Reutterer 2021 and beyond; definitions: docs/definitions/, §3-§11).",
    )
    p.add_argument("--train", help=f"training table T ({TABLE_TYPES})")
    p.add_argument("--holdout", help="holdout table H, never seen by the synthesizer")
    p.add_argument("--synthetic", help="synthetic table S (optional with --holdout-row)")
    add_pair_arguments(p)
    p.add_argument("--out", help="write all metrics as JSON to this file")
    p.add_argument("--holdout-row", action="store_true",
                   help="evaluate S = H: the reference row every synthesizer is compared with")
    p.add_argument("--dataset", help="take column kinds and roles (target, sensitive attribute, "
                                     "quasi-identifiers) from this dataset's config instead of T's dtypes")
    p.add_argument("--target", help="the prediction target column (utility metrics); overrides --dataset's")
    p.add_argument("--metrics", help="metrics config conf/metrics/<name>.yaml (default: default; sequential for "
                                     "subject + event pairs)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override the metrics config, e.g. families.fidelity.max_combinations=100 (repeatable)")
    p.add_argument("--skip", action="append", default=[], metavar="FAMILY",
                   help="leave out a metric family of the config (repeatable)")
    p.add_argument("--no-extended", action="store_true", help="skip the IMS/NNDR/Gower panel (= --skip panel)")
    p.add_argument("--no-utility", action="store_true", help="skip pMSE, TSTR and CI overlap (= --skip utility)")
    p.add_argument("--max-combinations", type=int, default=None,
                   help="cap k-way marginals per k by seeded sampling (= --set families.fidelity.max_combinations=N)")
    p.add_argument("--privacy-sample", type=int, default=None,
                   help="privacy on a seeded subsample of S of this size (= --set families.privacy.privacy_sample=N)")
    p.add_argument("--n-jobs", type=int, default=None, help="worker threads (-1 = all cores; default: the config's)")
    p.add_argument("--seed", type=int, default=None, help="seed of every sampling choice (default: the config's)")
    p.add_argument("--values", choices=("pandas", "lenient", "strict"), default="pandas",
                   help="how values of H and S that are not of T's column type are read: pandas (default, "
                        "the paper's reading: pandas' read_csv, bools as 0/1, text in a numeric column as "
                        "missing), lenient (coerced where possible, e.g. the text 'True' as true: NOT the "
                        "paper's reading) or strict (an error)")
    p.add_argument("--sep", help="csv field separator (default: detected from the header line)")
    add_drop_argument(p)
    add_max_rows_argument(p)
    p.set_defaults(func=run)
    return p


#: options that set flat families' settings (refused for subject + event pairs)
_FLAT_ONLY = ("max_combinations", "privacy_sample", "no_extended", "no_utility", "target", "sep")


def _check_set_keys(metrics: str, overrides: list[str]) -> None:
    """A --set key that starts with a family's name (legal.k=3) is refused with the key it meant
    (families.legal.k=3) before the config is composed."""
    from holdbench.benchmark.config import METRICS_KEYS, group_config

    heads = {o.split("=", 1)[0].lstrip("+~").split(".", 1)[0]: o for o in overrides}
    stray = {h: o for h, o in heads.items() if h not in METRICS_KEYS and h != "defaults"}
    if not stray:
        return
    families = group_config("metrics", metrics).get("families") or {}
    for head, o in stray.items():
        if head in families:
            raise ValueError(f"--set {o}: {head!r} is a metric family of metrics config {metrics!r}; "
                             f"write --set families.{o.lstrip('+~')}")


def _metrics_config(args: argparse.Namespace) -> tuple[dict, list]:
    """The metrics config with the skipped families left out, and the families it builds."""
    from holdbench.benchmark.config import check_metrics_config, did_you_mean, group_config

    sequential = pair_mode(args)
    if sequential:
        flat = [f"--{o.replace('_', '-')}" for o in _FLAT_ONLY if getattr(args, o, None) not in (None, False)]
        if flat:
            raise ValueError(f"{', '.join(flat)} set flat-table options; they do not apply to subject + event pairs")
    if args.metrics is None:
        args.metrics = "sequential" if sequential else "default"
    overrides = list(args.set)
    _check_set_keys(args.metrics, overrides)
    if args.max_combinations is not None:
        overrides.append(f"families.fidelity.max_combinations={args.max_combinations}")
    if args.privacy_sample is not None:
        overrides += [f"families.{f}.privacy_sample={args.privacy_sample}" for f in ("privacy", "panel")]
    for key in ("n_jobs", "seed"):
        if getattr(args, key) is not None:
            overrides.append(f"{key}={getattr(args, key)}")
    cfg = group_config("metrics", args.metrics, overrides, add_keys=True)
    skip = set(args.skip) | {fam for flag, fam in _SKIP_FLAGS.items() if getattr(args, flag)}
    families = cfg.get("families") if isinstance(cfg.get("families"), dict) else {}
    unknown = sorted(skip - set(families) - set(_SKIP_FLAGS.values()))
    if unknown:
        raise ValueError(f"--skip: no metric family {unknown} in metrics config {args.metrics!r}"
                         f"{did_you_mean(unknown, families)} (has: {sorted(families)})")
    if families and all(k in skip or v is None for k, v in families.items()):
        raise ValueError("every metric family was skipped: nothing to compute")
    built = check_metrics_config(args.metrics, cfg, skip=skip)
    check_family_kinds(args.metrics, built, sequential)
    cfg["families"] = {k: v for k, v in families.items() if k not in skip}
    return cfg, built


def check_family_kinds(metrics: str, families: list, sequential: bool) -> None:
    """Sequential families for subject + event pairs, flat ones for tables: anything else is refused."""
    from holdbench.metrics.sequential import SequentialFamily

    wrong = [f.name for f in families if isinstance(f, SequentialFamily) != sequential]
    if wrong:
        raise ValueError(f"metrics config {metrics!r}: famil(ies) {wrong} are "
                         f"{'flat' if sequential else 'sequential'}; "
                         + ("subject + event pairs are scored with sequential families (--metrics sequential)"
                            if sequential else "flat tables are scored with flat families (--metrics default)"))


def run(args: argparse.Namespace) -> int:
    from holdbench.metrics.evaluate import evaluate

    if pair_mode(args):
        flat = [o for o, v in (("--drop", args.drop), ("--max-rows", args.max_rows)) if v]
        if flat:
            raise ValueError(f"{' and '.join(flat)} appl{'ies' if len(flat) == 1 else 'y'} to flat tables (--train, "
                             "--holdout, --synthetic), not to subject + event pairs")
        return _run_pairs(args)
    if not (args.train and args.holdout):
        raise ValueError("give --train and --holdout (flat tables), or the subject + event pairs "
                         "(--train-subjects, --train-events, --holdout-subjects, --holdout-events, ...)")
    if not args.holdout_row and not args.synthetic:
        raise ValueError("--synthetic is required unless --holdout-row is given")
    inputs = [args.train, args.holdout] + ([args.synthetic] if args.synthetic else [])
    check_out(args.out, inputs)
    check_max_rows(args.max_rows)
    from holdbench.benchmark.cli._files import check_files

    # unreadable or empty files, columns that differ, a --target T has not, an S over --max-rows: before any work
    check_files(args.train, args.holdout,
                {} if args.holdout_row else {Path(args.synthetic).name: args.synthetic}, args.sep, args.max_rows,
                args.target, list(args.drop), args.dataset)
    cfg, families = _metrics_config(args)
    train, holdout, synthetic, schema, notes = read_inputs(args)
    roles = {"target": schema.target, "sensitive": schema.sensitive,
             "quasi_identifiers": tuple(schema.quasi_identifiers)}
    if args.target:
        roles["target"] = args.target
    from holdbench.benchmark.outputs.filereport.diagnostics import identifier_columns, identifier_text

    ids = identifier_text(identifier_columns(train, schema.kinds, schema.dates))
    if ids:
        print(f"[holdbench] {ids}", file=sys.stderr, flush=True)
    for family in families:
        _announce(family)
    res = evaluate(train, holdout, synthetic, schema.kinds, families=families, holdout_row=args.holdout_row,
                   n_jobs=int(cfg.get("n_jobs", 1)), seed=int(cfg.get("seed", 0)), on_error="na", **roles)
    out = res.to_dict()
    out["train"], out["holdout"] = str(args.train), str(args.holdout)
    out["synthetic"] = None if args.holdout_row else str(args.synthetic)
    out["dataset"] = args.dataset
    out.update(notes)
    print(summary(out, [spec for f in families for spec in _specs(f)]))
    if args.out:
        write_json(args.out, with_artifacts(out, res))
        print(f"\nwrote {args.out}")
    return 0


def with_artifacts(out: dict, res) -> dict:
    """The evaluation JSON with its artifact tables under "artifacts" ({name: {column: values}}, NaN as null):
    what `holdbench check --from-json` and `holdbench report --from-json` judge without recomputing."""
    from holdbench.metrics.registry import json_scalar

    return {**out, "artifacts": {k: {c: [json_scalar(v) for v in t[c].tolist()] for c in t.columns}
                                 for k, t in res.artifacts().items()}}


def _run_pairs(args: argparse.Namespace) -> int:
    """`holdbench evaluate` on subject + event pairs (a sequential --dataset names the columns)."""
    check_pair_args(args, ("train", "holdout", "synthetic"), args.holdout_row)
    files = pair_files(args, args.holdout_row)
    check_out(args.out, files)
    cfg, families = _metrics_config(args)
    spec, res = evaluate_pairs(args, families, cfg, args.holdout_row, announce=_announce)
    out = res.to_dict()
    out.update(pair_record(args, args.holdout_row))
    out["dataset"] = args.dataset
    print(pair_header(spec, out))
    print(summary(out, [spec for f in families for spec in _specs(f)]))
    if args.out:
        write_json(args.out, with_artifacts(out, res))
        print(f"\nwrote {args.out}")
    return 0


def _announce(family) -> None:
    """Make `family.compute` say on stderr which family is being computed and how long it took:
    `[holdbench] utility ... 12.3 s` (the name first, the time appended when it is done), then each warning
    the family raised on a line of its own, `[holdbench] utility: warning: ...` (the message only: what a
    warning says is also in the family's reason fields, and Python's format would print our source line)."""
    compute = family.compute

    def timed(data):
        print(f"[holdbench] {family.name} ...", end="", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            try:
                result = compute(data)
            except BaseException:
                print(f" failed after {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
                _say_warnings(family.name, caught)
                raise
        print(f" {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        _say_warnings(family.name, caught)
        return result

    family.compute = timed


def _say_warnings(name: str, caught: list[warnings.WarningMessage]) -> None:
    for message in dict.fromkeys(str(w.message) for w in caught):
        print(f"[holdbench] {name}: warning: {message}", file=sys.stderr, flush=True)


def check_out(out: str | None, inputs: list[str], what: str = "JSON file") -> None:
    """Refuse an --out that cannot take the file (`what`), before any work is done."""
    if not out:
        return
    path = Path(out)
    if out.endswith(("/", os.sep)) or path.is_dir():
        raise ValueError(f"--out {out} is a directory; name the {what} to write")
    if path.exists() and not path.is_file():
        raise ValueError(f"--out {out} exists and is not a regular file")
    if path.exists() and any(path.resolve() == Path(i).resolve() for i in inputs):
        raise ValueError(f"--out {out} is one of the input tables; name another file")
    from holdbench.contracts.io import probe_directory

    try:  # what the write at the end will do there, tried before the evaluation whose work it would lose
        probe_directory(path.parent)
    except NotADirectoryError as exc:
        raise ValueError(f"--out {out}: {exc.filename} is not a directory") from exc
    except OSError as exc:
        raise ValueError(f"--out {out}: directory {exc.filename or path.parent} is not writable "
                         f"({exc.strerror or exc})") from exc


def read_inputs(args: argparse.Namespace):
    """T, H and S read with one schema: T's (pandas' default read_csv dtypes, docs/definitions/paper.md §1), or the
    dataset's kinds with --dataset. H and S are read into it value by value (holdbench.benchmark.cell.checks,
    `--values`), so a column that is text in T and numbers in S holds the same values in both.
    Returns (T, H, S or None, schema, notes for the output)."""
    import logging

    from holdbench.benchmark.cell.checks import LOG, MIXED_ATTR, UNPARSEABLE_ATTR, check_output
    from holdbench.contracts.dates import dates_to_days, datetime_columns
    from holdbench.contracts.schema import SchemaError

    if not LOG.handlers and not logging.getLogger().handlers:
        LOG.addHandler(logging.NullHandler())  # the summary reports it; no duplicate on stderr

    from holdbench.benchmark.cli._files import check_drop

    drop = list(getattr(args, "drop", None) or [])
    train = read_table(args.train, sep=args.sep)
    check_drop(drop, [str(c) for c in train.columns], args.train)
    train = drop_columns(train, drop)
    try:
        dataset = None
        if args.dataset:
            from holdbench.benchmark.data.tables import dataset_schema

            dataset = dataset_schema(args.dataset)
    except SchemaError as exc:
        raise ValueError(str(exc)) from None
    if dataset is not None:  # the dataset config's `drop` leaves its columns out of T, H and S too
        drop += [c for c in dataset.drop if c not in drop]
        train = drop_columns(train, drop)
    # columns of T holding dates (datetime64, or text of ISO 8601 dates or times only; with --dataset, its date
    # columns) are numbers (days since 1970-01-01) in T, H and S
    dates = list(dataset.dates) if dataset is not None else datetime_columns(train)
    train = dates_to_days(train, dates, f"train {args.train}")
    empty = [str(c) for c in train.columns if train[c].isna().all()]
    if empty:
        raise ValueError(f"train {args.train}: column(s) {empty} are entirely missing; no metric can "
                         "use them. Leave them out (--drop " + " ".join(map(shlex.quote, empty)) + ") or fill them, and "
                         "evaluate again")
    try:
        schema = _schema(args, train, dataset, dates)
        train = schema.coerce(train, f"train {args.train}")
    except SchemaError as exc:
        raise ValueError(str(exc)) from None
    holdout_raw = dates_to_days(drop_columns(read_table(args.holdout, sep=args.sep), drop), dates,
                                f"holdout {args.holdout}")
    holdout = check_output(holdout_raw, schema, len(holdout_raw), "holdout", values=args.values,
                           who=f"holdout {args.holdout}")
    notes: dict = {"values": args.values, "datetimes": dates, "dropped": drop}
    synthetic = None
    if args.synthetic and not args.holdout_row:
        who = f"synthetic {args.synthetic}"
        synthetic, s_notes = read_synthetic(raw_synthetic(args.synthetic, notes, args.sep, who), schema, args.values,
                                            who)
        notes.update({f"synthetic_{k}": v for k, v in s_notes.items()})
    notes["holdout_mixed_types"] = holdout.attrs.get(MIXED_ATTR, {})
    notes["holdout_read_as_missing"] = holdout.attrs.get(UNPARSEABLE_ATTR, {})
    return train, holdout, synthetic, schema, notes


def add_drop_argument(p: argparse.ArgumentParser) -> None:
    """--drop COLUMN [COLUMN ...] (repeatable too), for the commands that read T, H and S files (evaluate, check,
    report)."""
    p.add_argument("--drop", nargs="+", action="extend", default=[], metavar="COLUMN",
                   help="flat tables: leave these columns of T out of T, H and every S before anything is measured "
                        "(e.g. a record identifier); --drop a b and --drop a --drop b are the same")


def add_max_rows_argument(p: argparse.ArgumentParser) -> None:
    """--max-rows N, for the commands that read T, H and S files (evaluate, check, report)."""
    from holdbench.benchmark.cli._files import MAX_SYNTHETIC_ROWS

    p.add_argument("--max-rows", type=int, default=None,
                   help=f"flat tables: refuse an S with more rows than this (default {MAX_SYNTHETIC_ROWS:,}) before "
                        "reading it")


def check_max_rows(value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"--max-rows must be a positive number of rows, got {value}")


def drop_columns(frame, drop: list[str]):
    """frame without the --drop columns it has (H or S may lack one: nothing to leave out there)."""
    present = [c for c in drop if c in frame.columns]
    return frame.drop(columns=present) if present else frame


def raw_synthetic(path: str, notes: dict, sep: str | None, who: str):
    """A synthetic table as read_inputs reads S before typing it (read_synthetic): the file, without the columns
    `notes["dropped"]` leaves out, its `notes["datetimes"]` columns as days; `notes` is read_inputs'."""
    from holdbench.contracts.dates import dates_to_days

    return dates_to_days(drop_columns(read_table(path, sep=sep), notes["dropped"]), notes["datetimes"], who)


def read_synthetic(raw, schema, values: str, who: str):
    """(S in T's schema, {"mixed_types": {column: {type: count}}, "read_as_missing": {column: count}}):
    a raw synthetic table read value by value into T's column types (`--values`)."""
    from holdbench.benchmark.cell.checks import MIXED_ATTR, UNPARSEABLE_ATTR, check_output

    synthetic = check_output(raw, schema, len(raw), "synthetic", values=values, who=who)
    return synthetic, {"mixed_types": synthetic.attrs.get(MIXED_ATTR, {}),
                       "read_as_missing": synthetic.attrs.get(UNPARSEABLE_ATTR, {})}


def _schema(args: argparse.Namespace, train, ds=None, dates: list[str] = ()):
    """T's inferred schema (T's date columns, `dates`, already days), with the kinds and roles of --dataset's
    config (its schema `ds`) when given."""
    import dataclasses

    from holdbench.contracts.schema import Schema

    inferred = Schema.infer("train", train)
    if ds is None:
        return dataclasses.replace(inferred, dates=tuple(dates))
    kinds = dict(ds.kinds)
    unknown = sorted(set(kinds) ^ set(inferred.names))
    if unknown:
        raise ValueError(f"train {args.train}: columns differ from dataset {args.dataset!r}: {unknown}")
    spec = {}
    for col in inferred.columns:
        kind = kinds[col.name]
        dtype = "str" if kind == "categorical" else (col.dtype if col.dtype != "str" else "float")
        spec[col.name] = {"kind": kind, "dtype": dtype}
    return Schema.from_mapping(args.dataset, spec, getattr(ds, "target", None), None,
                               getattr(ds, "sensitive", None), tuple(getattr(ds, "quasi_identifiers", ()) or ()),
                               ds.dates, ds.drop)


_READINGS = {"pandas": "pandas' default read_csv, the paper's reading: booleans count as 0/1, text in a "
                       "numeric column as missing",
             "lenient": "LENIENT, not the paper's reading: values coerced to T's column types where possible",
             "strict": "strict: every value of T's column type"}


def values_heading(values: str | None) -> str:
    """The heading of value_notes' lines: how values not of T's column type were read (`--values`)."""
    return f"Values ({_READINGS.get(values, values)}):"


def value_notes(d: dict, labels: dict[str, str] | None = None, heading: bool = True) -> list[str]:
    """Lines naming every column of H and S that mixes value types, and the values read as missing; `labels`
    names a table ("synthetic", "holdout") otherwise than by that word, `heading` puts a blank line and
    values_heading before them."""
    lines = []
    for table in ("synthetic", "holdout"):
        name = (labels or {}).get(table, table)
        for col, counts in sorted((d.get(f"{table}_mixed_types") or {}).items()):
            lines.append(f"  {name} column {col!r} mixes types: "
                         + ", ".join(f"{n:,} {t}" for t, n in counts.items()))
        missing = d.get(f"{table}_read_as_missing") or {}
        if missing:
            lines.append(f"  {name}: values not of T's column type read as missing: "
                         + ", ".join(f"{c} {n:,}" for c, n in sorted(missing.items())))
    if d.get("datetimes"):
        from holdbench.benchmark.data.sequential_values import dates_text

        lines.append(f"  {dates_text(d['datetimes'])}")
    if d.get("dropped"):
        lines.append(f"  left out of T, H and S (--drop): {', '.join(d['dropped'])}")
    if lines and heading:
        lines = ["", values_heading(d.get("values"))] + lines
    return lines


def _specs(family) -> list:
    from holdbench.metrics.registry import specs_of

    return specs_of(family.result_type)


def _f(v, digits: int = 4) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def summary(d: dict, specs: list) -> str:
    """A human-readable report of a to_dict() result: every registry metric, group by group."""
    what = "holdout reference row (S = H)" if d["holdout_row"] else "synthetic data"
    lines = [f"{what}: T {d['n_train']:,} rows, H {d['n_holdout']:,}, S {d['n_synthetic']:,}, "
             f"{d['n_columns']} columns" if "n_train" in d else what]
    width = max((len(sp.label) for sp in specs), default=10)
    group = None
    for sp in specs:
        if sp.group != group:
            group = sp.group
            lines += ["", f"{group.capitalize()}"]
        value = d.get(sp.name)
        text = sp.format(value)
        if sp.interval and d.get(sp.interval[0]) is not None:
            lo, hi = (d.get(c) for c in sp.interval)
            text += f"  95% CI [{_f(lo, sp.digits)}, {_f(hi, sp.digits)}]"
        lines.append(f"  {sp.label:<{width}}  {text:<28} ({sp.better})")
    if any(isinstance(d.get(sp.name), bool) for sp in specs):
        lines += ["", ("The pass/FAIL rows above are information, each named by its reference; the quality "
                       "gates decide (holdbench check; their targets are in conf/gates/default.yaml)")]
    reasons = {k: v for k, v in d.items() if k.endswith("_reason") and v}
    if reasons:
        lines += ["", "Not computed / notes:"] + [f"  {k}: {v}" for k, v in sorted(reasons.items())]
    lines += value_notes(d)
    if d.get("dcr_share_ci_low") is not None and d["dcr_share_ci_low"] > 0.5:
        lines += ["", "reading: S is significantly closer to T than to H: records of T may be leaking"]
    secs = {k.removeprefix("seconds_"): v for k, v in d.items() if k.startswith("seconds_") and v is not None}
    lines += ["", "time: " + ", ".join(f"{k} {v:.1f}s" for k, v in secs.items())]
    return "\n".join(lines)

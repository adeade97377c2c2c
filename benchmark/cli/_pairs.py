"""Sequential (subject + event) inputs of `holdbench evaluate` and `holdbench check`: T, H and S each as
a pair of files (subjects, events), read and checked against a sequential dataset's config (--dataset)
before any metric runs; every problem names the file and the column."""

from __future__ import annotations

import argparse

ROLES = ("train", "holdout", "synthetic")
PARTS = ("subjects", "events")
_WHAT = {"train": "training", "holdout": "holdout", "synthetic": "synthetic"}


def add_pair_arguments(p: argparse.ArgumentParser) -> None:
    """--train-subjects, --train-events, --holdout-subjects, ... (the sequential inputs)."""
    for role in ROLES:
        for part in PARTS:
            p.add_argument(f"--{role}-{part}", metavar="FILE",
                           help=f"sequential data: the {_WHAT[role]} {part} table (.csv, .csv.gz, .parquet; "
                                "with --dataset naming a sequential dataset config)")


def option(role: str, part: str) -> str:
    return f"--{role}-{part}"


def pair_mode(args: argparse.Namespace) -> bool:
    """True when any pair option is given."""
    return any(getattr(args, f"{role}_{part}", None) for role in ROLES for part in PARTS)


def check_pair_args(args: argparse.Namespace, flat_options: tuple[str, ...], holdout_row: bool = False) -> None:
    """Every pair option the mode needs, none of the flat table options, and a sequential --dataset."""
    given = [f"--{o.replace('_', '-')}" for o in flat_options if getattr(args, o, None)]
    if given:
        raise ValueError(f"{', '.join(given)} take flat tables; sequential data is given as pairs "
                         "(--train-subjects/--train-events, ...): use one or the other")
    roles = ROLES[:2] if holdout_row else ROLES
    missing = [option(r, p) for r in roles for p in PARTS if not getattr(args, f"{r}_{p}", None)]
    if missing:
        only_s = all(m.startswith("--synthetic") for m in missing)
        raise ValueError(f"sequential data needs {', '.join(missing)}" + (" (or --holdout-row)" if only_s else ""))
    if holdout_row and (args.synthetic_subjects or args.synthetic_events):
        raise ValueError("--holdout-row evaluates S = H: give no --synthetic-subjects/--synthetic-events")
    if not args.dataset:
        raise ValueError("sequential data needs --dataset: the sequential dataset config (conf/dataset/<name>.yaml, "
                         "`source: sequential`) that names the key, the order and every column's kind")


def pair_files(args: argparse.Namespace, holdout_row: bool = False) -> list[str]:
    roles = ROLES[:2] if holdout_row else ROLES
    return [getattr(args, f"{r}_{p}") for r in roles for p in PARTS]


def read_pairs(args: argparse.Namespace, holdout_row: bool = False):
    """(spec, T, H, S or None) from the pair options: T and H checked as a dataset's own files are
    (key, orphans, order columns, ties), S as a synthetic pair (its columns are T's, its key unique)."""
    from holdbench.benchmark.config import ConfigError
    from holdbench.benchmark.data.tables import dataset_config
    from holdbench.benchmark.data.sequential import read_pair, read_synthetic_pair, sequential_spec

    if dataset_config(args.dataset)["source"] != "sequential":
        raise ConfigError(f"--dataset {args.dataset!r} is not a sequential dataset (`source: sequential`); "
                          "flat tables go through --train, --holdout and --synthetic")
    spec = sequential_spec(args.dataset)
    train, holdout = (read_pair(spec, getattr(args, f"{r}_subjects"), getattr(args, f"{r}_events"))
                      for r in ("train", "holdout"))
    synthetic = None if holdout_row else read_synthetic_pair(spec, args.synthetic_subjects, args.synthetic_events)
    return spec, (train.subjects, train.events), (holdout.subjects, holdout.events), synthetic


def evaluate_pairs(args: argparse.Namespace, families: list, cfg: dict, holdout_row: bool = False, announce=None):
    """Read the pairs and run the sequential families: (spec, EvaluationResult)."""
    from holdbench.benchmark.data.sequential import metric_layout
    from holdbench.metrics.sequential import evaluate_families

    spec, train, holdout, synthetic = read_pairs(args, holdout_row)
    for family in families:
        if announce:
            announce(family)
    res = evaluate_families(train, holdout, synthetic, metric_layout(spec), families=families, holdout_row=holdout_row,
                            n_jobs=int(cfg.get("n_jobs", 1)), seed=int(cfg.get("seed", 0)), on_error="na")
    return spec, res

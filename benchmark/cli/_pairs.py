"""Sequential inputs of `holdbench evaluate`, `check` and `report`: T, H and S each as a pair of files
(subjects, events) checked against a sequential dataset's config (--dataset), or, for sequences without
subject attributes, as one event file each (--train-events, --holdout-events, --synthetic-events) with
--key and --order (`row` or columns; no config needed, kinds from T's dtypes) or a no-context --dataset.
Everything is read and checked before any metric runs; every problem names the file and the column.

Every subcommand gets the options from `add_pair_arguments` and the data from `read_pairs` /
`evaluate_pairs` (one S) / `evaluate_each_pair` (several); `pair_record` and `pair_header` give what the output
names."""

from __future__ import annotations

import argparse
from pathlib import Path

ROLES = ("train", "holdout", "synthetic")
PARTS = ("subjects", "events")
_WHAT = {"train": "training", "holdout": "holdout", "synthetic": "synthetic"}


def add_pair_arguments(p: argparse.ArgumentParser, several_synthetic: bool = False) -> None:
    """--train-subjects, --train-events, --holdout-subjects, ... (the sequential inputs), and --key,
    --order, --datetime, --n-events-privacy for event files without subject attributes. several_synthetic:
    --synthetic-subjects and --synthetic-events take one or more files each ([NAME=]FILE, a list; see
    synthetic_pairs)."""
    for role in ROLES:
        for part in PARTS:
            what = (f"sequential data: the {_WHAT[role]} {part} table (.csv, .tsv, compressed or not, .parquet; "
                    "with --dataset naming a sequential dataset config"
                    + (", or alone with --key and --order: sequences without subject attributes)"
                       if part == "events" else ")"))
            if several_synthetic and role == "synthetic":
                p.add_argument(f"--{role}-{part}", nargs="+", action="extend", metavar="[NAME=]FILE",
                               help=what.replace("the synthetic", "one or more synthetic")
                               + "; each S named after its event file, or NAME=FILE"
                               + ("; the i-th subject file pairs with the i-th event file" if part == "subjects"
                                  else ""))
            else:
                p.add_argument(f"--{role}-{part}", metavar="FILE", help=what)
    p.add_argument("--key", help="event files without subject attributes: the column naming each sequence")
    p.add_argument("--order", nargs="+", metavar="row|COLUMN",
                   help="event files without subject attributes: `row` (each key's events in file row order) or the "
                        "column(s) ordering them (a datetime column: its inter-event gaps are measured too)")
    p.add_argument("--datetime", action="append", default=[], metavar="COLUMN[=FORMAT]",
                   help="event files without subject attributes: read COLUMN as datetimes (strftime FORMAT; default ISO "
                        "8601; text columns holding only ISO dates are read so anyway) (repeatable)")
    p.add_argument("--time", metavar="COLUMN",
                   help="event files without subject attributes: the numeric or datetime column whose inter-event "
                        "gaps are measured and whose order S must keep (default: a datetime --order column)")
    p.add_argument("--n-events-privacy", type=int, default=3, metavar="M",
                   help="event files without subject attributes: the first M events enter the subject vector "
                        "(default 3)")


def events_only(args: argparse.Namespace) -> bool:
    """True for the no-context form: event files and no subject file."""
    return (any(getattr(args, f"{r}_events", None) for r in ROLES)
            and not any(getattr(args, f"{r}_subjects", None) for r in ROLES))


def pair_record(args: argparse.Namespace, holdout_row: bool = False) -> dict:
    """The input files as the output records them ({train_subjects: file or None, ...})."""
    return {f"{r}_{p}": (None if holdout_row and r == "synthetic" else getattr(args, f"{r}_{p}", None))
            for r in ROLES for p in PARTS}


def pair_header(spec, out: dict) -> str:
    """The output's first line: the data's form, key and order, and the subject counts."""
    form = "subject + event pairs" if spec.has_subjects else "sequences without subject attributes"
    dt = f", datetimes {[c for c, _ in spec.datetimes]}" if spec.datetimes else ""
    tm = f", time {spec.time!r}" if spec.time else ""
    return (f"sequential data, {form} ({spec.name}: key {spec.key!r}, order {spec.order_label}{dt}{tm}): "
            f"T {out.get('n_subjects_train') or 0:,} subjects, H {out.get('n_subjects_holdout') or 0:,}, "
            f"S {out.get('n_subjects_synthetic') or 0:,}")


def option(role: str, part: str) -> str:
    return f"--{role}-{part}"


def pair_mode(args: argparse.Namespace) -> bool:
    """True when any pair option is given."""
    return any(getattr(args, f"{role}_{part}", None) for role in ROLES for part in PARTS)


def check_pair_args(args: argparse.Namespace, flat_options: tuple[str, ...], holdout_row: bool = False) -> None:
    """Every pair option the mode needs, none of the flat table options, and a sequential --dataset (or,
    for event files alone, --key and --order)."""
    given = [f"--{o.replace('_', '-')}" for o in flat_options if getattr(args, o, None)]
    if given:
        raise ValueError(f"{', '.join(given)} take flat tables; sequential data is given as pairs "
                         "(--train-subjects/--train-events, ...) or as event files (--train-events, ...): use one "
                         "or the other")
    roles = ROLES[:2] if holdout_row else ROLES
    parts = ("events",) if events_only(args) else PARTS
    missing = [option(r, p) for r in roles for p in parts if not getattr(args, f"{r}_{p}", None)]
    if missing:
        only_s = all(m.startswith("--synthetic") for m in missing)
        raise ValueError(f"sequential data needs {', '.join(missing)}" + (" (or --holdout-row)" if only_s else ""))
    if holdout_row and (args.synthetic_subjects or args.synthetic_events):
        raise ValueError("--holdout-row evaluates S = H: give no --synthetic-subjects/--synthetic-events")
    from holdbench.contracts.io import NOT_A_HOLDOUT, same_file

    for part in parts:  # H's events (or subjects) given as T's: the same check as for flat tables
        t, h = getattr(args, f"train_{part}"), getattr(args, f"holdout_{part}")
        if same_file(t, h):
            raise ValueError(f"{option('holdout', part)} {h}: the same table as {option('train', part)} {t}; "
                             f"{NOT_A_HOLDOUT}")
    no_context = bool(getattr(args, "key", None) or getattr(args, "order", None) or getattr(args, "datetime", None)
                      or getattr(args, "time", None))
    if not events_only(args):
        if no_context:
            raise ValueError("--key, --order, --datetime and --time describe event files without subject attributes; "
                             "subject + event pairs take them from --dataset")
    elif args.dataset and no_context:
        raise ValueError("--dataset names the key, the order and the kinds; give it or --key/--order, not both")
    elif not args.dataset and not (getattr(args, "key", None) and getattr(args, "order", None)):
        raise ValueError("event files without subject attributes need --key (the column naming each sequence) and "
                         "--order (`row`: each key's events in file row order, or the column(s) ordering them), "
                         "or --dataset naming a sequential dataset config without a `subjects` block")
    if not args.dataset and not events_only(args):
        raise ValueError("sequential data needs --dataset: the sequential dataset config (conf/dataset/<name>.yaml, "
                         "`source: sequential`) that names the key, the order and every column's kind")


def pair_files(args: argparse.Namespace, holdout_row: bool = False) -> list[str]:
    roles = ROLES[:2] if holdout_row else ROLES
    parts = ("events",) if events_only(args) else PARTS
    from holdbench.benchmark.cli._names import split_name

    out = []
    for r in roles:
        for p in parts:
            v = getattr(args, f"{r}_{p}")
            out += [v] if isinstance(v, str) else [split_name(x)[1] for x in v]
    return out


def _items(value) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def synthetic_pairs(args: argparse.Namespace) -> dict[str, tuple[str | None, str]]:
    """{S name: (subject file or None, event file)} of --synthetic-subjects and --synthetic-events (one file
    each, or lists of [NAME=]FILE): the i-th subject file pairs with the i-th event file; an S is named NAME
    (given on either file, the same on both) or after its event file."""
    from holdbench.benchmark.cli._names import check_name, split_name

    events, subjects = _items(args.synthetic_events), _items(args.synthetic_subjects)
    if subjects and len(subjects) != len(events):
        raise ValueError(f"--synthetic-subjects gives {len(subjects)} file(s) and --synthetic-events "
                         f"{len(events)}: the i-th subject file pairs with the i-th event file, so give as many "
                         "of each")
    out: dict[str, tuple[str | None, str]] = {}
    for i, item in enumerate(events):
        name, path = split_name(item)
        s_name, s_path = split_name(subjects[i]) if subjects else (None, None)
        if name is not None and s_name is not None and name != s_name:
            raise ValueError(f"synthetic pair {i + 1}: --synthetic-subjects {subjects[i]!r} is named {s_name!r} "
                             f"but --synthetic-events {item!r} is named {name!r}; the i-th subject and event files "
                             "are one S: give them the same NAME, or name only one")
        if name is not None:
            check_name(name, item, "--synthetic-events")
        elif s_name is not None:
            name = check_name(s_name, subjects[i], "--synthetic-subjects")
        else:
            name = Path(path).name  # as the one S of `holdbench evaluate` is named
        if name in out:
            raise ValueError(f"--synthetic-events: two S are named {name!r} ({out[name][1]} and {path}); name "
                             "them apart with NAME=FILE")
        out[name] = (s_path, path)
    return out


def _datetimes(values: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for v in values:
        column, _, fmt = v.partition("=")
        if not column:
            raise ValueError(f"--datetime {v!r}: name a column (COLUMN or COLUMN=FORMAT)")
        out[column] = fmt or None
    return out


def read_pairs(args: argparse.Namespace, holdout_row: bool = False):
    """(spec, T, H, S or None) from the pair options (S a dict {name: S} when the options hold lists of
    files, see synthetic_pairs): T and H checked as a dataset's own files are
    (key, orphans, order columns, ties, datetimes), S as a synthetic pair (its columns are T's, its key
    unique, its row order kept). Event files alone: a no-context spec from --key/--order and T's dtypes
    (holdbench.benchmark.data.sequential_files.events_spec) or from a no-context --dataset."""
    from holdbench.benchmark.config import ConfigError
    from holdbench.benchmark.data.sequential import sequential_spec
    from holdbench.benchmark.data.sequential_files import events_spec, read_pair, read_synthetic_pair
    from holdbench.benchmark.data.tables import dataset_config

    no_context = events_only(args)
    if args.dataset:
        if dataset_config(args.dataset)["source"] != "sequential":
            raise ConfigError(f"--dataset {args.dataset!r} is not a sequential dataset (`source: sequential`); "
                              "flat tables go through --train, --holdout and --synthetic")
        spec = sequential_spec(args.dataset)
        if no_context and spec.has_subjects:
            raise ValueError(f"--dataset {args.dataset!r} has subject attributes: give its subject files too "
                             "(--train-subjects, --holdout-subjects, --synthetic-subjects)")
        if not no_context and not spec.has_subjects:
            raise ValueError(f"--dataset {args.dataset!r} has no subject attributes: give event files only")
    else:
        if args.n_events_privacy < 1:
            raise ValueError(f"--n-events-privacy must be a positive integer, got {args.n_events_privacy}")
        spec = events_spec(args.train_events, args.key, list(args.order), args.n_events_privacy,
                           _datetimes(args.datetime), args.time)
    subjects = {r: (None if no_context else getattr(args, f"{r}_subjects")) for r in ROLES}
    train, holdout = (read_pair(spec, subjects[r], getattr(args, f"{r}_events")) for r in ("train", "holdout"))
    if holdout_row:
        synthetic = None
    elif isinstance(args.synthetic_events, str):
        synthetic = read_synthetic_pair(spec, subjects["synthetic"], args.synthetic_events)
    else:  # several S (add_pair_arguments(several_synthetic=True)): {name: (subjects, events)}, each checked
        synthetic = {name: read_synthetic_pair(spec, None if no_context else s, e)
                     for name, (s, e) in synthetic_pairs(args).items()}
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


def evaluate_each_pair(args: argparse.Namespace, families: list, cfg: dict, announce=None):
    """(spec, {S name: EvaluationResult}) for --synthetic-events given as a list (add_pair_arguments(
    several_synthetic=True)): T, H and every synthetic pair read and checked first (read_pairs), then each S
    scored against the same T and H as evaluate_pairs scores one; `announce(name)` before each."""
    from holdbench.benchmark.data.sequential import metric_layout
    from holdbench.metrics.sequential import evaluate_families

    spec, train, holdout, synthetic = read_pairs(args)
    layout = metric_layout(spec)
    out = {}
    for name, tables in synthetic.items():
        if announce:
            announce(name)
        out[name] = evaluate_families(train, holdout, tables, layout, families=families,
                                      n_jobs=int(cfg.get("n_jobs", 1)), seed=int(cfg.get("seed", 0)), on_error="na")
    return spec, out

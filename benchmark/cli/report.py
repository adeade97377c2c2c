"""`holdbench report`: a study's report (`holdbench report STUDY`), or a report on your own files.

    holdbench report paper_published                       rebuild a study's leaderboard, plots and report.html
    holdbench report --train T.csv --holdout H.csv --synthetic S1.csv [b=S2.parquet ...] --out DIR
    holdbench report --train-events T.csv --holdout-events H.csv --synthetic-events S1.csv [b=S2.csv ...]
                     --key K --order row --out DIR       (sequences; or the subject + event pairs with --dataset)

The file form writes DIR/report.html, DIR/report.json and DIR/summary.md (holdbench.benchmark.outputs.filereport).
Exit status as `holdbench check`: 0 when every S passes the gates, 1 when a gate of some S fails (with --strict
also when one cannot be judged), 2 for a usage error (nothing written).
"""

from __future__ import annotations

import argparse
import sys

from holdbench.benchmark.cli._pairs import add_pair_arguments, pair_mode
from holdbench.benchmark.cli.evaluate import add_drop_argument, add_max_rows_argument, check_max_rows
from holdbench.contracts.io import TABLE_TYPES


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "report",
        help="a study's report.html (holdbench report STUDY), or a report on your own T, H and S files",
        description="With a study name: rebuild its leaderboard, plots and report.html. With --train, --holdout, "
                    "--synthetic and --out: judge one or more synthetic files against their training and holdout "
                    "tables and write DIR/report.html (self-contained), DIR/report.json (every number) and "
                    "DIR/summary.md. Exit status as holdbench check: 0 every S passes the gates, 1 a gate fails, "
                    "2 a usage error.",
    )
    p.add_argument("study", nargs="?", help="a study name (results/<study>) or a study directory")
    p.add_argument("--train", help=f"training table T ({TABLE_TYPES})")
    p.add_argument("--holdout", help="holdout table H, never seen by the generator")
    p.add_argument("--synthetic", nargs="+", default=[], metavar="[NAME=]FILE",
                   help="one or more synthetic tables S, or folders of them (each table file in it but T and H); named after "
                        "the file, or NAME=FILE")
    add_pair_arguments(p, several_synthetic=True)
    p.add_argument("--out", help="the directory to write report.html, report.json and summary.md to")
    p.add_argument("--target", help="the prediction target column (TSTR); overrides --dataset's")
    p.add_argument("--dataset", help="column kinds and roles from this dataset's config instead of T's dtypes")
    p.add_argument("--metrics", help="metrics config conf/metrics/<name>.yaml (default: default)")
    p.add_argument("--gates", help="gates conf/gates/<name>.yaml or a path (default: default)")
    p.add_argument("--strict", action="store_true", help="a gate that cannot be judged (n/a) fails too")
    p.add_argument("--skip", action="append", default=[], metavar="FAMILY",
                   help="leave out a metric family of the config (repeatable)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override the metrics config, e.g. families.attacks.n_targets=1000 (repeatable)")
    p.add_argument("--from-json", action="append", default=[], metavar="[NAME=]FILE",
                   help="take S NAME's metrics from this `holdbench evaluate --out` JSON instead of computing "
                        "them (repeatable; without NAME= the only S)")
    p.add_argument("--unmask", action="store_true", help="show the values of the most exposed training records "
                                                         "(masked by default)")
    p.add_argument("--n-jobs", type=int, default=None, help="worker threads (default: the metrics config's)")
    p.add_argument("--seed", type=int, default=None, help="seed of every sampling choice (default: the config's)")
    p.add_argument("--values", choices=("pandas", "lenient", "strict"), default="pandas",
                   help="how values of H and S not of T's column type are read (as holdbench evaluate)")
    p.add_argument("--sep", help="csv field separator (default: detected from the header line)")
    add_drop_argument(p)
    add_max_rows_argument(p)
    p.set_defaults(func=run)
    return p


_FILE_OPTIONS = ("train", "holdout", "synthetic", "out", "target", "dataset", "metrics", "gates", "from_json",
                 "unmask", "max_rows", "n_jobs", "seed", "sep", "skip", "set", "drop")


def run(args: argparse.Namespace) -> int:
    given = [f"--{o.replace('_', '-')}" for o in _FILE_OPTIONS if getattr(args, o, None) not in (None, False, [])]
    if args.study:
        if given or pair_mode(args):
            raise ValueError(f"holdbench report {args.study} rebuilds a study's report; {', '.join(given) or 'the pair options'} "
                             "belong to the file form (holdbench report --train T --holdout H --synthetic S --out DIR)")
        from holdbench.benchmark.cli.study import _report

        return _report(args)
    if pair_mode(args):
        if args.drop:
            raise ValueError("--drop applies to flat tables (--train, --holdout, --synthetic), not to subject + "
                             "event pairs")
        return _run_pairs(args)
    missing = [o for o in ("--train", "--holdout", "--synthetic", "--out") if not getattr(args, o[2:].replace("-", "_"))]
    if missing:
        raise ValueError(f"give a study name (holdbench report STUDY) or the files: missing {', '.join(missing)} "
                         "(holdbench report --train T --holdout H --synthetic S [S2 ...] --out DIR)")
    check_max_rows(args.max_rows)
    from holdbench.benchmark.outputs.filereport import build_report
    from holdbench.benchmark.outputs.filereport.inputs import named_paths

    synthetic = named_paths(args.synthetic, (args.train, args.holdout))  # a folder's T and H are not candidates
    outcome = build_report(args.train, args.holdout, synthetic, args.out, target=args.target, dataset=args.dataset,
                           metrics=args.metrics, gates=args.gates, skip=tuple(args.skip), overrides=tuple(args.set),
                           from_json=_from_json(args.from_json, synthetic), unmask=args.unmask, n_jobs=args.n_jobs,
                           seed=args.seed, values=args.values, sep=args.sep, max_rows=args.max_rows,
                           strict=args.strict, drop=tuple(args.drop),
                           log=lambda m: print(f"[holdbench] {m}", file=sys.stderr, flush=True))
    for name, v in outcome.verdicts.items():
        print(verdict_line(name, v))
    print(f"wrote {outcome.html}, {outcome.json.name}, {outcome.summary.name}")
    if outcome.exit_code:
        print("quality gates FAILED", file=sys.stderr)
    return outcome.exit_code


def verdict_line(name: str, verdict: dict) -> str:
    """'S name: FAIL (failed: a, b)' or 'S name: pass (not judged: c)': one S's verdict as the command prints it."""
    notes = [f"{what}: {', '.join(verdict.get(key) or [])}" for key, what in (("failed", "failed"),
                                                                             ("not_judged", "not judged, n/a"))
             if verdict.get(key)]
    return f"S {name}: {verdict['verdict']}" + (f" ({'; '.join(notes)})" if notes else "")


def _from_json(items: list[str], synthetic: dict[str, str]) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, path = item.partition("=")
        if not sep:
            if len(synthetic) != 1:
                raise ValueError(f"--from-json {item}: name the S it belongs to as NAME=FILE (the S are "
                                 f"{list(synthetic)})")
            name, path = next(iter(synthetic)), item
        out[name] = path
    return out


def _run_pairs(args: argparse.Namespace) -> int:
    from holdbench.benchmark.outputs.filereport.pairs import build_pair_report

    if not args.out:
        raise ValueError("give --out DIR: the directory for report.html, report.json and summary.md")
    outcome = build_pair_report(args, log=lambda m: print(f"[holdbench] {m}", file=sys.stderr, flush=True))
    for name, v in outcome.verdicts.items():
        print(verdict_line(name, v))
    print(f"wrote {outcome.html}, {outcome.json.name}, {outcome.summary.name}")
    if outcome.exit_code:
        print("quality gates FAILED", file=sys.stderr)
    return outcome.exit_code

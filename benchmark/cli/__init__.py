"""The `holdbench` command: one argparse subcommand per module, each with `register()`."""

from __future__ import annotations

import argparse
import importlib
import sys

from holdbench import __version__

#: modules exposing register(subparsers); each adds one subcommand with set_defaults(func=...)
_COMMANDS = (
    "holdbench.benchmark.cli.check",
    "holdbench.benchmark.cli.compare",
    "holdbench.benchmark.cli.data",
    "holdbench.benchmark.cli.evaluate",
    "holdbench.benchmark.cli.study",
)


class UserError(Exception):
    """An error whose message is the whole story: printed without a traceback."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="holdbench",
        description="Holdout-based fidelity and privacy benchmark of tabular synthesizers.",
    )
    parser.add_argument("--version", action="version", version=f"holdbench {__version__}",
                        help="print holdbench's version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in _COMMANDS:
        importlib.import_module(mod).register(sub)
    return parser


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line; everything after the first `--` is passed through untouched to a
    command that takes extra arguments (`holdbench run ... -- --config k=v`), whatever came before."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        return parser.parse_args(argv)
    cut = argv.index("--")
    args = parser.parse_args(argv[:cut])
    if not hasattr(args, "snakemake_args"):
        parser.error(f"holdbench {args.command} takes no arguments after --")
    args.snakemake_args = list(args.snakemake_args or []) + argv[cut + 1:]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line, to repeat it (resume)
    try:
        return int(args.func(args) or 0)
    except OSError as exc:
        from holdbench.benchmark.cell.isolation import disk_problem

        problem = disk_problem(exc)
        if problem is None and not isinstance(exc, FileNotFoundError):
            raise
        print(f"holdbench {args.command}: error: {problem or exc}", file=sys.stderr)
        return 2
    except (UserError, ValueError, KeyError) as exc:
        if isinstance(exc, KeyError) or type(exc).__module__.startswith(("pandas", "numpy")):
            raise
        print(f"holdbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


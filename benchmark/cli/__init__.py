"""The `holdbench` command: one argparse subcommand per module, each with `register()`."""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from holdbench import __version__

#: modules exposing register(subparsers); each adds one subcommand with set_defaults(func=...)
_COMMANDS = (
    "holdbench.benchmark.cli.check",
    "holdbench.benchmark.cli.compare",
    "holdbench.benchmark.cli.data",
    "holdbench.benchmark.cli.evaluate",
    "holdbench.benchmark.cli.report",
    "holdbench.benchmark.cli.study",
)


#: the commands that read configs: each takes --config-dir DIR (repeatable), which adds DIR to the
#: config search path (holdbench.benchmark.config.CONFIG_PATH_ENV) for this command and the jobs it starts
CONFIG_COMMANDS = ("run", "validate", "evaluate", "check", "datasets", "load")

#: the commands that compute metrics in this process: BLAS and OpenMP on one thread, as in a study's cells
#: (holdbench.benchmark.cell.isolation.one_numeric_thread), so their numbers equal the cells' on any machine
NUMERIC_COMMANDS = ("evaluate", "check", "report")


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
    for name in CONFIG_COMMANDS:
        sub.choices[name].add_argument(
            "--config-dir", action="append", default=[], metavar="DIR",
            help="a directory laid out like conf/ (dataset/, synthesizer/, metrics/, study/, gates/) whose "
                 "configs join the shipped ones; repeatable; adds to $HOLDBENCH_CONFIG_PATH")
    return parser


def use_config_dirs(dirs: list[str]) -> None:
    """Put --config-dir directories in front of the config search path of this process (and so of
    every process it starts: the Snakemake workflow and its jobs inherit the variable)."""
    import os

    from holdbench.benchmark.config import CONFIG_PATH_ENV, user_config_dirs

    if not dirs:
        return
    old = [p for p in os.environ.get(CONFIG_PATH_ENV, "").split(os.pathsep) if p.strip()]
    os.environ[CONFIG_PATH_ENV] = os.pathsep.join([str(Path(d).expanduser().resolve()) for d in dirs] + old)
    user_config_dirs()  # each directory checked now, named in the error


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
        use_config_dirs(getattr(args, "config_dir", None) or [])
        if args.command not in NUMERIC_COMMANDS:
            return int(args.func(args) or 0)
        from holdbench.benchmark.cell.isolation import one_numeric_thread

        with one_numeric_thread():
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


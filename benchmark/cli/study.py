"""`holdbench run|validate|track|report`: drive a study through the Snakemake workflow."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

from holdbench.benchmark.config import REPO_ROOT

#: Snakemake options holdbench sets itself; passing them after `--` would silently override its own
_OWN_OPTIONS = {"--snakefile": "the Snakefile", "-s": "the Snakefile", "--directory": "the working directory",
                "-d": "the working directory", "--cores": "--cores", "-c": "--cores", "--jobs": "--cores",
                "-j": "--cores"}
#: --config keys holdbench sets; the value the user passes must agree with holdbench's
_CONFIG_FLAGS = ("--config", "-C")


def register(sub) -> None:
    p = sub.add_parser("run", help="run a study with Snakemake (cached, resumable)")
    p.add_argument("study", nargs="?", default=None, help="conf/study/<name>.yaml (default: paper)")
    p.add_argument("--cores", default="all", type=_cores, help="Snakemake --cores: a positive number or 'all' "
                                                                "(default: all)")
    p.add_argument("--no-track", action="store_true", help="do not log to MLflow")
    p.add_argument("--dry-run", "-n", action="store_true", help="show what would run; writes nothing")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="show Snakemake's own output here (default: in results/<study>/logs/snakemake.log)")
    _restrict_options(p)
    p.add_argument("snakemake_args", nargs="*",
                   help="extra Snakemake arguments, after --; a --config there is merged with holdbench's")
    p.set_defaults(func=_run)

    p = sub.add_parser("validate", help="check a study config and list its cells; runs nothing")
    p.add_argument("study", help="conf/study/<name>.yaml")
    _restrict_options(p)
    p.set_defaults(func=_validate)

    p = sub.add_parser("track", help="(re)log a finished study to MLflow; idempotent")
    p.add_argument("study", help="a study name (results/<study>) or a study directory")
    p.add_argument("--uri", default=os.environ.get("MLFLOW_TRACKING_URI", "sqlite:///results/mlflow.db"),
                   help="MLflow tracking URI (default: $MLFLOW_TRACKING_URI, else sqlite:///results/mlflow.db)")
    p.set_defaults(func=_track)

    # `holdbench report STUDY` is registered by holdbench.benchmark.cli.report (beside its file form); it calls _report


def _cores(text: str) -> str:
    """--cores as Snakemake takes it (a positive integer or 'all'), refused by argparse otherwise."""
    import argparse

    if text != "all" and not (text.isdigit() and int(text) > 0):
        raise argparse.ArgumentTypeError(f"must be a positive integer or 'all', got {text!r}")
    return text


def _restrict_options(p) -> None:
    p.add_argument("--datasets", nargs="+", metavar="NAME",
                   help="run only these datasets of the study (a study override: results stay in the study)")
    p.add_argument("--synthesizers", nargs="+", metavar="NAME", help="run only these synthesizers of the study")




def _restriction(args) -> list[str]:
    """Study overrides from --datasets / --synthesizers, each name checked."""
    from holdbench.benchmark.config import check_name

    out = []
    for key, group in (("datasets", "dataset"), ("synthesizers", "synthesizer")):
        names = getattr(args, key, None)
        if names:
            for n in names:
                check_name(group, n)
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"--{key}: {dupes} given more than once")
            out.append(f"{key}=[{','.join(names)}]")
    return out


def snakemake_command(args) -> list[str]:
    """The Snakemake command line of `holdbench run`: holdbench's settings and the user's extra
    arguments, with every --config merged into one (Snakemake keeps only the last --config)."""
    overrides = _restriction(args)
    extra, user_pairs = _split_config(args.snakemake_args)
    named = dict(user_pairs).get("study")
    own = {"study": args.study or named or "paper"}
    if args.no_track:
        own["track"] = "False"
    pairs: dict[str, str] = {}
    for key, value in user_pairs:
        if key in pairs and key != "study_overrides":
            raise ValueError(f"--config {key}= is given twice after --")
        if key == "study_overrides":
            overrides.append(value)
        else:
            pairs[key] = value
    for key, value in own.items():
        if key in pairs and pairs[key] != value and not (key == "track" and pairs[key].lower() == "false"):
            raise ValueError(f"--config {key}={pairs[key]} after -- contradicts holdbench's own {key}={value} "
                             f"({'the study named on the command line' if key == 'study' else '--no-track'})")
        pairs[key] = value
    if overrides:
        _check_overrides_disjoint(overrides)
        pairs["study_overrides"] = ",".join(overrides)
    from holdbench.benchmark.config import CONFIG_PATH_ENV

    if os.environ.get(CONFIG_PATH_ENV, "").strip() and "config_path" not in pairs:
        pairs["config_path"] = os.environ[CONFIG_PATH_ENV]  # --config-dir and the variable, for every job
    cmd = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO_ROOT / "Snakefile"),
           "--directory", os.getcwd(), "--cores", str(args.cores)]
    if args.dry_run:
        cmd.append("--dry-run")
    return cmd + extra + ["--config"] + [f"{k}={v}" for k, v in pairs.items()]


def _split_config(argv: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(the other arguments, the KEY=VALUE pairs of every --config / -C) of the pass-through args."""
    extra, pairs = [], []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if name in _OWN_OPTIONS:
            raise ValueError(f"{arg} after -- would override {_OWN_OPTIONS[name]} holdbench sets; "
                             f"give it to holdbench itself{' (holdbench run --cores N)' if 'core' in _OWN_OPTIONS[name] else ''}")
        if name == "--configfile" or name == "--configfiles":
            raise ValueError(f"{arg} after --: holdbench passes the study as --config; put the settings in "
                             "--config KEY=VALUE after -- (they are merged) or in conf/study/")
        if name in _CONFIG_FLAGS:
            values = [arg.split("=", 1)[1]] if "=" in arg else []
            i += 1
            while i < len(argv) and not argv[i].startswith("-") and "=" in argv[i]:
                values.append(argv[i])
                i += 1
            if not values:
                raise ValueError(f"{arg} after -- needs KEY=VALUE pairs")
            for v in values:
                key, _, value = v.partition("=")
                pairs.append((key.strip(), value))
            continue
        extra.append(arg)
        i += 1
    return extra, pairs


def _check_overrides_disjoint(overrides: list[str]) -> None:
    """Two overrides of the same study key (e.g. --datasets and study_overrides=datasets=[..]) cannot
    both be meant: refuse them."""
    from holdbench.benchmark.config import split_overrides

    seen: dict[str, str] = {}
    for text in overrides:
        for item in split_overrides(text):
            key = item.split("=", 1)[0].strip().lstrip("+~")
            if key in seen and seen[key] != item:
                raise ValueError(f"the study key {key!r} is overridden twice ({seen[key]!r} and {item!r}); "
                                 "give it once")
            seen[key] = item


def _run(args) -> int:
    cmd = snakemake_command(args)
    config = _config_pairs(cmd)
    study = config["study"]
    from holdbench.benchmark.config import ConfigError, available, check_name, config_file, did_you_mean

    known = available("study")
    if check_name("study", study) not in known:  # before its results directory gets a log
        raise ConfigError(f"unknown study {study!r}{did_you_mean([study], known)}: no {config_file('study', study)} "
                          f"(known: {', '.join(known)})")
    for option, group in (("datasets", "dataset"), ("synthesizers", "synthesizer")):  # before Snakemake parses
        names, known = getattr(args, option, None) or [], available(group)
        unknown = [n for n in names if n not in known]
        if unknown:
            raise ConfigError(f"--{option}: unknown {group} {', '.join(map(repr, unknown))}{did_you_mean(unknown, known)} "
                              f"(known: {', '.join(known)})")
    if args.dry_run:
        print("$ " + shlex.join(cmd), flush=True)
        return subprocess.call(cmd)
    from holdbench.benchmark.cli.progress import Progress
    from holdbench.benchmark.layout import STOP_NOTE, StudyLayout
    from holdbench.benchmark.layout import results_root

    root = results_root(config) / study
    log_path = StudyLayout(root).snakemake_log
    again = "holdbench " + shlex.join(getattr(args, "argv", None) or sys.argv[1:])
    log = None
    # another run of the study holds its lock: Snakemake will say so and stop; its log is left alone
    busy = _study_busy(root)
    passthrough = args.verbose or busy
    if passthrough:
        print("$ " + shlex.join(cmd), flush=True)
    else:
        try:
            log_path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            where = ("the workflow config's results_dir" if config.get("results_dir") else
                     "$HOLDBENCH_RESULTS_DIR" if os.environ.get("HOLDBENCH_RESULTS_DIR") else "the default results/")
            raise ValueError(f"the study's results directory {root} ({where}) cannot be created: "
                             f"{exc.strerror or exc}: {exc.filename or root}") from exc
        log = open(log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed below, after Snakemake ends
        log.write("$ " + shlex.join(cmd) + "\n")
        log.flush()
        print(f"[holdbench] running study {study} on {args.cores} core(s); Snakemake's output goes to {log_path} "
              "(--verbose shows it here)", flush=True)
    progress = Progress(root, _core_count(args.cores), sys.stdout, tty=False if passthrough else None)
    follow = _LogLines(log_path) if log is not None else None
    # Snakemake in a process group of its own: a Ctrl-C reaches holdbench only, which passes it on
    # once to Snakemake and every job it started (as Snakemake expects a Ctrl-C: it cancels the jobs;
    # its SIGTERM would wait for the running jobs to finish, hours for a long fit)
    stopped: list[str] = []
    started: list[subprocess.Popen] = []

    def stop(signum, frame):
        stopped.append(signal.Signals(signum).name)
        if len(stopped) == 1 and not busy and root.is_dir():  # the jobs get a SIGINT: they read what holdbench got
            (root / STOP_NOTE).write_text(stopped[0])
        for p in started:
            try:
                os.killpg(p.pid, signal.SIGINT if len(stopped) == 1 else signal.SIGKILL)
            except ProcessLookupError:
                pass

    # the handlers go in before Snakemake starts: a child gets the default action for a signal its parent
    # handles, but keeps one its parent ignores, and a run started in the background by a script (`&`
    # without job control) ignores SIGINT: Snakemake would then ignore the Ctrl-C passed on to it and go
    # on starting jobs
    if not busy:
        (root / STOP_NOTE).unlink(missing_ok=True)  # a note of an earlier stopped run
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        proc = subprocess.Popen(cmd, start_new_session=True,  # its own process group (Python 3.10 has no process_group=)
                                stdout=log, stderr=subprocess.STDOUT if log is not None else None)
        started.append(proc)
        if stopped:  # a signal came while Snakemake was starting
            stop(signal.Signals[stopped.pop()], None)
    except BaseException:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        raise
    try:
        while True:  # poll Snakemake, pass holdbench's own lines of its output on, redraw the progress line
            code = proc.poll()
            for line in follow.new_lines() if follow else []:
                if line.startswith("[holdbench]"):
                    progress.echo(line)
            if code is not None:
                break
            if not stopped:
                progress.poll()
            time.sleep(_POLL_SECONDS)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        progress.close()
        if log is not None:
            log.close()
    results_dir = _results_dir(study, root.parent)
    if stopped:
        print(stop_line(results_dir, stopped[0], again), file=sys.stderr, flush=True)
        return 130 if stopped[0] == "SIGINT" else 143
    if results_dir is not None:
        print("\n".join(closing_summary(results_dir)), flush=True)
    if code != 0 and log is not None:
        print("\n".join(failure_tail(log_path, code)), file=sys.stderr, flush=True)
    return code


_POLL_SECONDS = 1.0
#: lines of Snakemake's log shown when it fails
FAILURE_LINES = 30


def failure_tail(log_path: Path, code: int, n: int = FAILURE_LINES) -> list[str]:
    """What `holdbench run` prints when Snakemake fails: the last `n` lines of its log and the log's path."""
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        lines = [f"(cannot read the log: {exc})"]
    refused = _parse_error(lines)
    if refused:  # the Snakefile's own checks refused the study before any job: their message, without frames
        return [f"[holdbench] Snakemake stopped before any job (exit status {code}): the study was refused:",
                *refused, f"[holdbench] Snakemake's full output: {log_path}"]
    head = (f"[holdbench] Snakemake failed (exit status {code}); the last {min(n, len(lines))} line(s) of its "
            f"output ({log_path}):")
    return [head, *lines[-n:], f"[holdbench] Snakemake's full output: {log_path}"]


#: how Snakemake reports an exception raised while it reads the Snakefile (holdbench's ConfigError, SchemaError...)
_PARSE_ERROR = re.compile(r'^(\w+) in file "?[^"]*Snakefile"?, line \d+:$')


def _parse_error(lines: list[str]) -> list[str]:
    """The message of the last error raised while Snakemake read holdbench's Snakefile, as '<Error>: message'
    lines without Snakemake's Python frames; [] when the log shows no such error."""
    starts = [i for i, line in enumerate(lines) if _PARSE_ERROR.match(line)]
    if not starts:
        return []
    kind = _PARSE_ERROR.match(lines[starts[-1]]).group(1)
    message = []
    for line in lines[starts[-1] + 1:]:
        if line.startswith('  File "'):
            break
        message.append(line)
    return [f"{kind}: {message[0]}", *message[1:]] if message else []


class _LogLines:
    """The complete lines appended to a file since the last call."""

    def __init__(self, path: Path):
        self.path, self.offset, self.rest = path, 0, b""

    def new_lines(self) -> list[str]:
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except OSError:
            return []
        self.offset += len(data)
        *lines, self.rest = (self.rest + data).split(b"\n")
        return [ln.decode("utf-8", errors="replace").rstrip("\r") for ln in lines]


def _study_busy(root: Path) -> bool:
    """Does another invocation hold the study's lock (holdbench.benchmark.workflow.locks.lock_study)?"""
    import fcntl

    try:
        fd = os.open(root / ".lock", os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # conflicts with the holder's exclusive lock
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # and releases the probe
    return False


def _config_pairs(cmd: list[str]) -> dict[str, str]:
    """The --config KEY=VALUE pairs of a Snakemake command line snakemake_command made (they come last)."""
    return dict(p.split("=", 1) for p in cmd[cmd.index("--config") + 1:])


def _core_count(cores: str) -> int:
    try:
        return max(1, int(cores))
    except ValueError:  # "all"
        return os.cpu_count() or 1


def _results_dir(study: str, results: Path) -> Path | None:
    d = results / study
    return d if (d / "study.json").exists() else None


def stop_line(study_dir: Path | None, signame: str, again: str) -> str:
    """The one line printed when a run is stopped: what finished, what was interrupted, how to resume."""
    if study_dir is None:
        return f"[holdbench] stopped ({signame}) before any cell ran; resume with the same command: {again}"
    from holdbench.benchmark.layout import canonical
    from holdbench.benchmark.outputs.results import unfinished_cells
    from holdbench.benchmark.outputs.results import load_results

    results = load_results(study_dir)
    interrupted, never = unfinished_cells(results)
    done = len(results.cells) - len(interrupted)
    names = ", ".join(canonical(c.dataset, c.synthesizer, c.seed) for c in interrupted) or "none"
    return (f"[holdbench] stopped ({signame}): {done} cell(s) finished, {len(interrupted)} interrupted ({names}), "
            f"{len(never)} not started; resume with the same command: {again}")


def closing_summary(study_dir: Path, slowest: int = 3) -> list[str]:
    """The lines closing a run: cells by status, where the report is, the slowest cells, what was
    skipped or failed and why."""
    from holdbench.benchmark.layout import canonical
    from holdbench.benchmark.outputs.results import unfinished_cells
    from holdbench.benchmark.outputs.results import load_results

    results = load_results(study_dir)
    lay = results.layout
    interrupted, never = unfinished_cells(results)
    stopped = {id(c) for c in interrupted}
    counts: dict[str, int] = {}
    for c in results.cells:
        state = "interrupted" if id(c) in stopped else str(c.status.get("status"))
        counts[state] = counts.get(state, 0) + 1
    if never:
        counts["not run"] = len(never)
    total = len(results.cells) + len(never)
    lines = ["", f"[holdbench] {results.name}: {total} cell(s): "
             + ", ".join(f"{n} {state}" for state, n in counts.items())]
    if lay.report.exists():
        lines.append(f"[holdbench] report: {lay.report}")
    elif interrupted or never:
        lines.append("[holdbench] no report yet (it is written once every cell has run)")
    else:
        lines.append(f"[holdbench] no report: every cell ran but the collect job that writes it failed (its "
                     f"reason is above); `holdbench report {results.name}` writes it again")
    timed = [(c.status["wall_seconds"], c) for c in results.cells
             if isinstance(c.status.get("wall_seconds"), (int, float))]
    if timed:
        top = sorted(timed, key=lambda t: -t[0])[:slowest]
        lines.append("[holdbench] slowest: " + ", ".join(
            f"{canonical(c.dataset, c.synthesizer, c.seed)} {w:.1f} s" for w, c in top))
    for c in results.cells:
        state = c.status.get("status")
        if state != "ok" and id(c) not in stopped:
            where = f" ({c.status['stage']})" if c.status.get("stage") else ""
            lines.append(f"[holdbench] {state}{where} {canonical(c.dataset, c.synthesizer, c.seed)}: "
                         f"{c.status.get('reason') or 'no reason recorded'}")
    if interrupted or never:
        lines.append(f"[holdbench] {len(interrupted) + len(never)} cell(s) unfinished; `holdbench check "
                     f"{results.name}` lists them, the same run command finishes them")
    return lines


def _validate(args) -> int:
    from holdbench.benchmark.workflow.study import load_study

    study = load_study(args.study, _restriction(args))
    cells = study.cells()
    print(f"study {study.name!r}: {len(study.datasets)} dataset(s) x {len(study.synthesizers)} "
          f"synthesizer(s) x {len(study.seeds)} seed(s) = {len(cells)} cells, "
          + ("sequential (subject + event) data, S with as many subjects as T, split over subjects at random"
             if study.sequential else f"{study.n_synthetic:,} records each, split {study.split}"))
    for c in cells:
        print(f"  {c.cell_id}")
    return 0


def _track(args) -> int:
    from holdbench.benchmark.outputs.results import study_dir
    from holdbench.benchmark.workflow.runner import do_track

    d = study_dir(args.study)
    return do_track(d, args.uri, d / "mlflow.json")


def _report(args) -> int:
    from holdbench.benchmark.outputs.results import study_dir
    from holdbench.benchmark.workflow.runner import do_collect

    d = study_dir(args.study)
    try:
        do_collect(d)
    except KeyboardInterrupt:  # every file of the collect is written atomically: none is left half-written
        print(f"holdbench report: stopped (Ctrl-C); the files under {d} are each whole (the new or the old "
              f"version); `holdbench report {args.study}` writes them again", file=sys.stderr)
        return 130
    return 0

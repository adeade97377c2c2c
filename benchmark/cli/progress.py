"""The live progress line of `holdbench run`, read from the study's results directory.

The parent process polls the directory every few seconds while Snakemake runs:

- a cell is *done* when its status.json is there and no newer generate.json replaced what it
  describes (a regenerated cell is not done until its evaluation is written again);
- a cell is *running* while a generate or evaluate attempt holds a scratch directory in it
  (holdbench.benchmark.cell.isolation.SCRATCH_PREFIX);
- the time left is estimated from the wall times of done cells (status.json `wall_seconds`),
  per synthesizer where one of its cells is done, else from the mean of all done cells; while
  no cell is done it says "estimating…", and while some synthesizer has no done cell the
  estimate is a lower bound ("at least") that names them.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from holdbench.benchmark.cell.isolation import SCRATCH_PREFIX
from holdbench.benchmark.layout import GENERATE_JSON, STATUS_JSON, StudyLayout
from holdbench.contracts.io import read_json_object

#: seconds between two scans of the results directory; between two lines when stdout is no terminal
SCAN_SECONDS = 3.0
QUIET_SECONDS = 30.0


@dataclass
class Scan:
    """What the results directory says about the study's cells at one moment."""

    total: int
    done: dict[str, tuple[str, float | None]] = field(default_factory=dict)
    """canonical name -> (synthesizer, wall seconds or None)"""
    running: dict[str, tuple[str, float]] = field(default_factory=dict)
    """canonical name -> (synthesizer, seconds the cell has run so far)"""
    pending: list[str] = field(default_factory=list)
    """synthesizers of the cells neither done nor running, one entry per cell"""


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def study_cells(root: Path) -> list[tuple[str, str, int]] | None:
    """(dataset, synthesizer, seed) of every cell study.json declares, or None without one."""
    study = read_json_object(StudyLayout(root).study_json)
    try:
        return [(str(d), str(s), int(k)) for d in study["datasets"] for s in study["synthesizers"]
                for k in study["seeds"]]
    except (KeyError, TypeError, ValueError):
        return None


def scan(root: Path, cells: list[tuple[str, str, int]], now: float | None = None) -> Scan:
    """The state of every cell of `cells` under the study directory `root`."""
    from holdbench.benchmark.layout import canonical

    now = time.time() if now is None else now
    lay = StudyLayout(root)
    out = Scan(total=len(cells))
    for dataset, synth, seed in cells:
        name = canonical(dataset, synth, seed)
        cdir = lay.cell_dir(dataset, seed, synth)
        status_t, gen_t = _mtime(cdir / STATUS_JSON), _mtime(cdir / GENERATE_JSON)
        try:
            scratch = [t for p in os.scandir(cdir) if p.name.startswith(SCRATCH_PREFIX)
                       and (t := _mtime(Path(p.path))) is not None]  # an attempt may end meanwhile
        except OSError:
            scratch = []
        if scratch:
            started = min(scratch)
            elapsed = now - started
            if gen_t is not None and gen_t <= started:  # evaluating: the generate stage counts too
                elapsed += float(read_json_object(cdir / GENERATE_JSON).get("job_wall_seconds") or 0)
            out.running[name] = (synth, max(elapsed, 0.0))
        elif status_t is not None and gen_t is not None and gen_t <= status_t:
            wall = read_json_object(cdir / STATUS_JSON).get("wall_seconds")
            ok = isinstance(wall, (int, float)) and not isinstance(wall, bool) and math.isfinite(wall)
            out.done[name] = (synth, float(wall) if ok else None)
        else:
            out.pending.append(synth)
    return out


def estimate(state: Scan, cores: int) -> tuple[float | None, list[str]]:
    """(seconds left for the cells, the synthesizers no cell of which is done yet) or (None, []) while
    no cell is done. A cell is expected to take its synthesizer's mean wall time, or the mean of all
    done cells when none of its synthesizer is done (then the estimate is a lower bound: cheap cells
    finish first); running cells count what they still need. The work is spread over `cores`, and
    never finishes before the longest single cell."""
    walls: dict[str, list[float]] = {}
    for synth, wall in state.done.values():
        if wall is not None:
            walls.setdefault(synth, []).append(wall)
    if not walls:
        return None, []
    overall = sum(sum(w) for w in walls.values()) / sum(len(w) for w in walls.values())
    untimed: list[str] = []

    def expected(synth: str) -> float:
        if synth in walls:
            return sum(walls[synth]) / len(walls[synth])
        if synth not in untimed:
            untimed.append(synth)
        return overall

    left = [expected(s) for s in state.pending]
    left += [max(expected(s) - elapsed, 0.0) for s, elapsed in state.running.values()]
    if not left:
        return 0.0, []
    return max(sum(left) / max(cores, 1), max(left)), untimed


def duration(seconds: float) -> str:
    """A rough human duration: 40 s, 3 min, 2 h 05 min."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{max(5, 5 * round(seconds / 5)):.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def progress_line(state: Scan, cores: int, with_elapsed: bool = True) -> str:
    """`[holdbench] 7/18 cells done; running demo/seed0/ctgan (1 min); about 3 min left`."""
    head = f"[holdbench] {len(state.done)}/{state.total} cells done"
    if len(state.done) >= state.total:
        return head + "; writing the leaderboard, figures and report"
    parts = [head]
    if state.running:
        parts.append("running " + ", ".join(
            f"{name} ({duration(elapsed)})" if with_elapsed else name
            for name, (_, elapsed) in sorted(state.running.items())))
    seconds, untimed = estimate(state, cores)
    if seconds is None:
        parts.append("time left: estimating…")
    elif untimed:
        names = ", ".join(untimed[:3]) + (f" and {len(untimed) - 3} more" if len(untimed) > 3 else "")
        parts.append(f"at least {duration(seconds)} left (no cell of {names} done yet)")
    else:
        parts.append(f"about {duration(seconds)} left")
    return "; ".join(parts)


class Progress:
    """Prints the progress line: one line rewritten in place on a terminal, else a new line whenever
    the cells done or running change, and at least every QUIET_SECONDS."""

    def __init__(self, root: Path, cores: int, out: TextIO, tty: bool | None = None, since: float | None = None):
        self.root, self.cores, self.out = root, cores, out
        self.tty = out.isatty() if tty is None else tty
        self.since = time.time() if since is None else since
        self.cells: list[tuple[str, str, int]] | None = None
        self.started = False
        self.shown = ""
        self.last_key: tuple | None = None
        self.last_print = 0.0
        self.next_scan = 0.0

    def _jobs_started(self) -> bool:
        """Has a job of this run started (a per-job log written since the run began)? Until then the
        study.json on disk may still describe the previous run's study."""
        own = StudyLayout(self.root).snakemake_log
        for dirpath, _, files in os.walk(own.parent):
            for f in files:
                path = Path(dirpath) / f
                t = None if path == own else _mtime(path)
                if t is not None and t >= self.since:
                    return True
        return False

    def poll(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        if now < self.next_scan:
            return
        self.next_scan = now + SCAN_SECONDS
        if not self.started:
            self.started = self._jobs_started()
            if not self.started:
                return
        if self.cells is None:
            self.cells = study_cells(self.root)
            if self.cells is None:
                return
        try:
            state = scan(self.root, self.cells, now)
        except OSError:  # the directory changing under the scan: try again next time
            return
        if self.tty:
            self._show(progress_line(state, self.cores))
            return
        key = (len(state.done), tuple(sorted(state.running)))
        if key != self.last_key or now - self.last_print >= QUIET_SECONDS:
            self.last_key, self.last_print = key, now
            print(progress_line(state, self.cores, with_elapsed=False), file=self.out, flush=True)

    def _show(self, line: str) -> None:
        width = shutil.get_terminal_size((100, 24)).columns - 1
        if len(line) > width:
            line = line[: width - 1] + "…"
        self.out.write("\r" + line + "\x1b[K")
        self.out.flush()
        self.shown = line

    def echo(self, line: str) -> None:
        """Print a line of holdbench's own above the progress line."""
        if self.tty and self.shown:
            self.out.write("\r\x1b[K")
        print(line, file=self.out, flush=True)
        if self.tty and self.shown:
            self.out.write(self.shown)
            self.out.flush()

    def close(self) -> None:
        """End the rewritten line (the next output starts on a line of its own)."""
        if self.tty and self.shown:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.shown = ""

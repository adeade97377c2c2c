"""Run one stage of a cell in its own process, with a wall-clock and a memory limit, and make
sure nothing it started outlives it.

The supervisor imports no heavy library (psutil at most): it starts fast; the child
(holdbench.benchmark.cell._child) imports pandas, torch and the synthesizer. RLIMIT_AS caps memory,
RLIMIT_FSIZE caps what a runaway child can write (a flooded log), core dumps are off.

Containment, from the strongest mechanism available to the weakest:
- a cgroup v2 per attempt where this process may create one: every process the child starts,
  however it detaches, stays in it and is killed with it;
- the supervisor is a child subreaper (prctl): a grandchild that calls setsid() or
  double-forks is re-parented to the supervisor, not to init, and is killed as its descendant;
- every process of an attempt carries HOLDBENCH_CELL / HOLDBENCH_ATTEMPT in its environment,
  so a later attempt (a rerun after `kill -9`) finds and kills what an earlier one left.
The supervisor dies with Snakemake: it polls its ancestors and, when Snakemake is gone
(SIGKILL) or it receives SIGTERM/SIGINT/SIGHUP, kills the whole cell and exits writing nothing.

`cell_attempt` gives each attempt a private scratch directory and holds the cell's lock, so a
rerun never shares a file with a still-running orphan: it waits for it, then kills it.
Whatever happens, `run_isolated` returns a status dict.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from holdbench.contracts.io import clean_line

STATUSES = ("ok", "error", "timeout", "oom", "skipped")
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
              "NUMEXPR_NUM_THREADS")
CELL_ENV, ATTEMPT_ENV, STUDY_ENV = "HOLDBENCH_CELL", "HOLDBENCH_ATTEMPT", "HOLDBENCH_STUDY"
LOCK_FILE = ".cell.lock"
SCRATCH_PREFIX = ".attempt-"
#: seconds a child may linger after writing its result (a non-daemon thread) before it is killed
EXIT_GRACE = 5.0
_POLL = 0.2


@contextlib.contextmanager
def one_numeric_thread() -> Iterator[None]:
    """BLAS and OpenMP on one thread, in this process and in those it starts meanwhile (joblib's workers
    inherit the environment), as in a cell's evaluate child. A multi-threaded BLAS sums in another order,
    so without this an evaluation's last digits would follow the machine's number of cores; parallel work
    goes through the metric families' `n_jobs` workers instead. The environment is restored afterwards."""
    from threadpoolctl import threadpool_limits

    from holdbench.contracts.environ import environ_set

    with environ_set(dict.fromkeys(THREAD_ENV, "1")), threadpool_limits(limits=1):
        yield


class Interrupted(RuntimeError):
    """The supervisor lost Snakemake or was told to stop: the cell was killed, nothing is written."""


@dataclass(frozen=True)
class Attempt:
    """One run of one stage of a cell: its id, the cell dir and a private scratch dir."""

    cell_dir: Path
    id: str
    scratch: Path

    @property
    def env(self) -> dict[str, str]:
        return {CELL_ENV: str(self.cell_dir.resolve()), ATTEMPT_ENV: self.id}


@contextlib.contextmanager
def cell_attempt(cell_dir: Path, wait_seconds: float = 20.0) -> Iterator[Attempt]:
    """Hold the cell's lock for one attempt; yield its private scratch dir (removed afterwards).

    An earlier attempt still holding the lock (an orphan of a killed run) is waited for up to
    `wait_seconds`, then killed with everything it started; processes of earlier attempts that
    hold no lock (detached grandchildren) are killed before the new attempt starts.
    """
    cell_dir.mkdir(parents=True, exist_ok=True)
    attempt = Attempt(cell_dir, f"{os.getpid()}-{uuid.uuid4().hex[:10]}", Path())
    fd = os.open(cell_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, cell_dir, wait_seconds)
        me = _self_record(attempt.id)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        sweep({CELL_ENV: str(cell_dir.resolve())})
        for old in cell_dir.glob(SCRATCH_PREFIX + "*"):
            shutil.rmtree(old, ignore_errors=True)
        scratch = cell_dir / f"{SCRATCH_PREFIX}{attempt.id}"
        scratch.mkdir()
        attempt = Attempt(cell_dir, attempt.id, scratch)
        try:
            yield attempt
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    finally:
        os.close(fd)  # releases the lock


def _acquire(fd: int, cell_dir: Path, wait_seconds: float) -> None:
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if time.monotonic() >= deadline:
            break
        time.sleep(_POLL)
    holder = _read_record(fd)
    print(f"[holdbench] {cell_dir}: an earlier attempt ({holder or 'unknown'}) still holds the cell; "
          "stopping it", file=sys.stderr, flush=True)
    if holder:
        _kill_record(holder)
    sweep({CELL_ENV: str(cell_dir.resolve())})
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            time.sleep(_POLL)
    raise RuntimeError(f"{cell_dir}: another attempt of this cell ({holder}) holds its lock and could not "
                       "be stopped")


def _self_record(attempt_id: str) -> dict:
    return {"pid": os.getpid(), "started": process_start(os.getpid()), "attempt": attempt_id}


def _read_record(fd: int) -> dict | None:
    try:
        rec = json.loads(os.pread(fd, 4096, 0).decode() or "null")
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def _kill_record(rec: dict) -> None:
    """Kill the supervisor a lock record names (if it is still that process), its cgroup and its attempt."""
    pid = rec.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and process_start(pid) == rec.get("started"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if rec.get("attempt"):
        path = _Cgroup.path_for(str(rec["attempt"]))
        if path is not None and path.is_dir():
            _Cgroup(path).remove()
        sweep({ATTEMPT_ENV: str(rec["attempt"])})


def process_start(pid: int) -> str | None:
    """When process `pid` started, as an identity that tells it from a later process given the same pid; None
    when it is gone (or a zombie) or not ours to look at.

    Linux: its start in clock ticks since boot (/proc/<pid>/stat, field 22). psutil's create_time adds that
    to a boot time derived from the wall clock, which moves when the clock is stepped: on a VM paused and
    resumed by its host it moved under running cells, every one of them took Snakemake for gone and
    stopped (two Bale & Quick fits lost 40 CPU minutes so). Elsewhere psutil's create_time, to 1 s."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    except OSError:
        text = ""
    if text:
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": field 3 (state) onwards
        return None if fields[0] in ("Z", "X") else f"ticks:{fields[19]}"
    try:
        import psutil

        p = psutil.Process(pid)
        return None if p.status() == psutil.STATUS_ZOMBIE else f"created:{round(p.create_time())}"
    except Exception:  # noqa: BLE001 - gone, or not ours to look at
        return None


def sweep(match: dict[str, str]) -> list[int]:
    """SIGKILL every process (but this one and its ancestors) whose environment holds all of
    `match`; returns their pids. Processes that are not ours to read are skipped."""
    import psutil

    me = psutil.Process()
    spare = {me.pid} | {p.pid for p in me.parents()}
    killed = []
    for proc in psutil.process_iter():
        if proc.pid in spare:
            continue
        try:
            env = proc.environ()
        except (psutil.Error, OSError):
            continue
        if all(env.get(k) == v for k, v in match.items()):
            with contextlib.suppress(psutil.Error):
                proc.kill()
                killed.append(proc.pid)
    return killed


def run_isolated(
    stage: str,
    payload: dict,
    attempt: Attempt,
    timeout_seconds: float,
    memory_gb: float,
    max_file_mb: float = 200,
    threads: int | None = 1,
) -> dict:
    """Run `holdbench.benchmark.cell.stages.<stage>(payload)` in a child; return its result or a failure status.

    The result always has `status` (one of STATUSES), `reason` (one line) and
    `traceback_tail`, plus `peak_rss_mb`, `stage_wall_seconds` and `stage_cpu_seconds` (user + system
    CPU of the child and its descendants). Raises Interrupted (after
    killing the cell) when Snakemake died or the supervisor was signalled.
    """
    scratch = attempt.scratch
    payload_path, result_path = scratch / f"{stage}.payload.json", scratch / f"{stage}.result.json"
    exit_path = scratch / f"{stage}.exit"
    payload_path.write_text(json.dumps(payload, default=str))
    env = {**os.environ, **attempt.env}
    if threads is not None:
        env.update({k: str(threads) for k in THREAD_ENV})
    mem = _capped(resource.RLIMIT_AS, int(memory_gb * 1024**3))
    fsize = _capped(resource.RLIMIT_FSIZE, int(max_file_mb * 1024**2))
    cgroup = _Cgroup.create(attempt.id)

    def limits() -> None:
        _die_with_parent()
        if cgroup is not None:
            cgroup.join()
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    watch = _Watch()
    log_start = _stderr_size()
    _become_subreaper()
    oom_before = _oom_kills(cgroup)
    sys.stdout.flush()
    sys.stderr.flush()
    t0 = time.perf_counter()
    cpu0 = _children_cpu()
    proc = subprocess.Popen(
        [sys.executable, "-m", "holdbench.benchmark.cell._child", stage, str(payload_path), str(result_path), str(exit_path)],
        stdin=subprocess.DEVNULL, env=env, preexec_fn=limits, start_new_session=True,  # noqa: PLW1509 - one thread here
    )
    timed_out = False
    try:
        timed_out = _supervise(proc, result_path, timeout_seconds, watch)
    finally:
        _kill_group(proc.pid)
        proc.wait()
        _kill_descendants(attempt, cgroup)
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = _read_result(result_path)
    if timed_out:
        said = _no_memory_line(_stderr_since(log_start))
        result = failure("oom", f"{stage} process could not get memory under the {mem / 1024**3:g} GB limit "
                         f"(memory_gb) and hung until the {timeout_seconds:g} s wall-clock limit: {said[:300]}") \
            if said else failure("timeout", f"{stage} exceeded the {timeout_seconds:g} s wall-clock limit; "
                                 "its processes were killed")
    elif result is None:
        result = _crash_status(stage, proc.returncode, mem, fsize, _read_exit(exit_path), peak_mb,
                               _oom_kills(cgroup) > oom_before, _stderr_since(log_start))
    result["reason"] = clean_line(result.get("reason", ""))
    result.setdefault("traceback_tail", "")
    result["peak_rss_mb"] = round(peak_mb, 1)
    result["stage_wall_seconds"] = round(wall, 3)
    result["stage_cpu_seconds"] = round(cpu, 3)
    return result


def _children_cpu() -> float:
    """User + system CPU seconds of every process this one has reaped so far, their own reaped
    descendants included (the child, its plug-in workers and joblib processes once they are waited
    for, or re-parented here and reaped by _kill_descendants)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _supervise(proc: subprocess.Popen, result_path: Path, timeout_seconds: float, watch: _Watch) -> bool:
    """Wait for the child; True if it hit the wall-clock limit. A child that lingers after writing
    its result (a non-daemon thread) is ended after EXIT_GRACE seconds."""
    deadline = time.monotonic() + timeout_seconds
    written_at = None
    while True:
        try:
            proc.wait(timeout=_POLL)
            return False
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if result_path.exists():
            written_at = written_at or now
            if now - written_at >= EXIT_GRACE:
                return False
        elif now >= deadline:
            return True
        lost = watch.lost()
        if lost:
            raise Interrupted(lost)


class _Watch:
    """The supervisor's ancestors up to Snakemake: if one of them is gone, the run was killed."""

    def __init__(self) -> None:
        self.ppid = os.getppid()
        self.chain: list[tuple[int, str]] = []
        try:
            import psutil

            for p in psutil.Process().parents():
                start = process_start(p.pid)
                if start is not None:
                    self.chain.append((p.pid, start))
                if "snakemake" in " ".join(p.cmdline()):
                    break
            else:
                self.chain = self.chain[:1]
        except Exception:  # noqa: BLE001 - without psutil the parent pid check remains
            self.chain = []

    def lost(self) -> str | None:
        if os.getppid() != self.ppid:
            return "the supervisor's parent process died"
        for pid, start in self.chain:
            if process_start(pid) != start:  # gone, a zombie, or its pid taken by a later process
                return f"process {pid} (Snakemake or its job shell) is gone"
        return None


def _become_subreaper() -> None:
    """Linux: orphaned descendants (setsid, double fork) are re-parented to this process."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def _die_with_parent() -> None:
    """Linux: SIGKILL the child when its supervisor dies."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _kill_descendants(attempt: Attempt, cgroup: _Cgroup | None) -> None:
    """Kill whatever the child left: its cgroup, every descendant of this process, every process
    marked with this attempt; then reap the zombies re-parented here."""
    if cgroup is not None:
        cgroup.kill()
    with contextlib.suppress(Exception):  # the marker sweep below still runs
        import psutil

        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                child.kill()
    with contextlib.suppress(Exception):
        sweep({ATTEMPT_ENV: attempt.id})
    for _ in range(200):
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.01)
    if cgroup is not None:
        cgroup.remove()


class _Cgroup:
    """A cgroup v2 for one attempt, under this process's own cgroup, where we may create one."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def path_for(attempt_id: str) -> Path | None:
        """Where the cgroup of an attempt is (beside this process's own cgroup v2), or None."""
        if os.environ.get("HOLDBENCH_NO_CGROUP"):
            return None
        try:
            own = next(line.split("::", 1)[1].strip() for line in Path("/proc/self/cgroup").read_text().splitlines()
                       if line.startswith("0::"))
            mount = next(line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
                         if " - cgroup2 " in line)
        except (OSError, StopIteration, IndexError):
            return None
        own_dir = Path(mount) / own.lstrip("/")
        if own_dir.name.startswith("holdbench-"):
            own_dir = own_dir.parent
        return own_dir / f"holdbench-{attempt_id}"

    @classmethod
    def create(cls, attempt_id: str) -> _Cgroup | None:
        path = cls.path_for(attempt_id)
        try:
            if path is None:
                return None
            path.mkdir()
        except OSError:
            return None
        return cls(path)

    def join(self) -> None:
        """Called in the child before exec: move itself into the cgroup (silently skipped if refused)."""
        with contextlib.suppress(OSError):
            (self.path / "cgroup.procs").write_text("0")

    def pids(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill(self) -> None:
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            if (self.path / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    (self.path / "cgroup.kill").write_text("1")
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(0.02)

    def oom_kills(self) -> int:
        try:
            for line in (self.path / "memory.events").read_text().splitlines():
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0


def _oom_kills(cgroup: _Cgroup | None) -> int:
    """OOM-killer kills so far: the cgroup's if it counts them, else the system's (/proc/vmstat)."""
    total = cgroup.oom_kills() if cgroup is not None else 0
    try:
        for line in Path("/proc/vmstat").read_text().splitlines():
            if line.startswith("oom_kill "):
                total += int(line.split()[1])
    except (OSError, ValueError):
        pass
    return total


def _capped(kind: int, want: int) -> int:
    """`want` bytes, or the hard limit this process already runs under when that is lower (`ulimit -f`,
    `ulimit -v`): a child cannot raise its hard limit, and asking for more fails its start."""
    _soft, hard = resource.getrlimit(kind)
    return want if hard == resource.RLIM_INFINITY else min(want, hard)


def disk_problem(exc: BaseException) -> str | None:
    """One line naming the per-file size limit or the full disk behind an OSError (EFBIG, ENOSPC,
    EDQUOT), or None for any other exception."""
    import errno

    if not isinstance(exc, OSError) or exc.errno not in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        return None
    where = f" writing {exc.filename}" if exc.filename else ""
    if exc.errno == errno.EFBIG:
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        soft = _soft if _soft != resource.RLIM_INFINITY else hard
        limit = "no limit" if soft == resource.RLIM_INFINITY else f"{soft:,} bytes"
        return (f"file too large (EFBIG){where}: a file reached the per-file size limit (RLIMIT_FSIZE, "
                f"`ulimit -f`: {limit}; a process flooding its output?)")
    if exc.errno == errno.EDQUOT:
        return f"disk quota exceeded (EDQUOT){where}: free space in your quota and run again"
    return f"no space left on device (ENOSPC){where}: the disk is full; free space and run again"


def _how(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        sig = -returncode
        return signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
    return f"exit code {returncode}"


def failure(status: str, reason: str, traceback_tail: str = "") -> dict:
    assert status in STATUSES
    return {"status": status, "reason": clean_line(reason), "traceback_tail": traceback_tail}


def _read_result(path: Path) -> dict | None:
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) and result.get("status") in STATUSES else None


def _read_exit(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


#: what a process that could not get memory under RLIMIT_AS leaves on stderr before dying (a thread that
#: cannot be created, a shared library that cannot be mapped, an allocator giving up)
_NO_MEMORY_TEXT = ("cannot allocate memory", "failed to map segment", "memoryerror", "std::bad_alloc",
                   "out of memory", "memory exhausted", "resource temporarily unavailable",
                   "memory allocation", "unable to allocate")


def _no_memory_line(text: str) -> str | None:
    """The last line of a child's stderr saying it could not get memory, or None."""
    return next((line.strip() for line in reversed(text.splitlines())
                 if any(t in line.lower() for t in _NO_MEMORY_TEXT)), None)


def _stderr_size() -> int | None:
    """Size of the log file this process's stderr writes to (the child inherits it), or None."""
    try:
        st = os.fstat(2)
    except OSError:
        return None
    import stat

    return st.st_size if stat.S_ISREG(st.st_mode) else None


def _stderr_since(offset: int | None, limit: int = 16384) -> str:
    """The last `limit` bytes the child wrote to the shared log since `offset` ('' if not a file)."""
    if offset is None:
        return ""
    try:
        with open("/proc/self/fd/2", "rb") as fh:  # a readable handle on the log (fd 2 is write-only)
            end = os.fstat(fh.fileno()).st_size
            start = max(offset, end - limit)
            fh.seek(start)
            return fh.read(end - start).decode("utf-8", "replace") if end > start else ""
    except OSError:
        return ""


def _crash_status(stage: str, returncode: int | None, mem: int, fsize: int, called_exit: int | None,
                  peak_mb: float, oom_killed: bool, stderr_tail: str = "") -> dict:
    """A child that died without writing its result: say how, in one line, claiming only what is known."""
    said = _no_memory_line(stderr_tail)
    if said and returncode != 0:
        return failure("oom", f"{stage} process could not get memory under the {mem / 1024**3:g} GB limit "
                       f"(memory_gb) and died ({_how(returncode)}): {said[:300]}")
    if returncode is not None and returncode < 0:
        sig = -returncode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGKILL:
            if oom_killed or peak_mb >= 0.9 * mem / 1024**2:
                return failure("oom", f"{stage} process was killed by SIGKILL (out of memory: peak "
                               f"{peak_mb:,.0f} MB, limit {mem / 1024**3:g} GB"
                               f"{'; the kernel recorded an OOM kill' if oom_killed else ''})")
            return failure("error", f"{stage} process was killed by SIGKILL from outside holdbench "
                           f"(peak {peak_mb:,.0f} MB, under the {mem / 1024**3:g} GB limit; no out-of-memory "
                           "kill was recorded)")
        if sig == signal.SIGXFSZ:
            return failure("error", f"{stage} process wrote more than {fsize / 1024**2:g} MB to one file "
                           "(flooding its output?) and was stopped by SIGXFSZ")
        return failure("error", f"{stage} process crashed with {name}")
    if called_exit is not None:
        return failure("error", f"the synthesizer called os._exit({called_exit}): the {stage} process "
                       f"exited with code {returncode} without writing a result")
    return failure("error", f"{stage} process exited with code {returncode} without writing a result")

"""Run one stage of a cell in its own process group, with a wall-clock and a memory limit.

Standard library only: the supervising process stays small and fast to start; the
child (benchmark._child) imports pandas, torch and the synthesizer. A timeout kills the
whole process group with SIGKILL, so nothing the synthesizer started survives it.
RLIMIT_AS caps memory, RLIMIT_FSIZE caps what a runaway child can write (a flooded
log), and core dumps are off. Whatever happens, the caller gets a status dict.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

STATUSES = ("ok", "error", "timeout", "oom", "skipped")
THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def run_isolated(
    stage: str,
    payload: dict,
    workdir: Path,
    timeout_seconds: float,
    memory_gb: float,
    max_file_mb: float = 200,
    threads: int | None = 1,
) -> dict:
    """Run `benchmark.stages.<stage>(payload)` in a child; return its result or a failure status.

    The result always has `status` (one of STATUSES), `reason` (one line) and
    `traceback_tail`, plus `peak_rss_mb` and `stage_wall_seconds`.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    payload_path = workdir / f".{stage}.payload.json"
    result_path = workdir / f".{stage}.result.json"
    result_path.unlink(missing_ok=True)
    payload_path.write_text(json.dumps(payload, default=str))
    env = dict(os.environ)
    if threads is not None:
        env.update({k: str(threads) for k in THREAD_ENV})
    mem = int(memory_gb * 1024**3)
    fsize = int(max_file_mb * 1024**2)

    def limits() -> None:
        _die_with_parent()
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    sys.stdout.flush()
    sys.stderr.flush()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmark._child", stage, str(payload_path), str(result_path)],
        stdin=subprocess.DEVNULL,
        env=env,
        preexec_fn=limits,
        start_new_session=True,
    )
    timed_out = False
    try:
        proc.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc.pid)
        proc.wait()
    finally:
        _kill_group(proc.pid)
    wall = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = _read_result(result_path)
    if timed_out:
        result = failure("timeout", f"{stage} exceeded the {timeout_seconds:g} s wall-clock limit; "
                         "its process group was killed")
    elif result is None:
        result = _crash_status(stage, proc.returncode, mem, fsize)
    result.setdefault("reason", "")
    result.setdefault("traceback_tail", "")
    result["peak_rss_mb"] = round(peak_mb, 1)
    result["stage_wall_seconds"] = round(wall, 3)
    payload_path.unlink(missing_ok=True)
    result_path.unlink(missing_ok=True)
    return result


def _die_with_parent() -> None:
    """Linux: SIGKILL the child when its supervisor dies (a killed run leaves no orphans)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def failure(status: str, reason: str, traceback_tail: str = "") -> dict:
    assert status in STATUSES
    return {"status": status, "reason": " ".join(str(reason).split())[:500], "traceback_tail": traceback_tail}


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_result(path: Path) -> dict | None:
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return result if isinstance(result, dict) and result.get("status") in STATUSES else None


def _crash_status(stage: str, returncode: int, mem: int, fsize: int) -> dict:
    """A child that died without writing its result: say how, in one line."""
    if returncode is not None and returncode < 0:
        sig = -returncode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGKILL:
            return failure("oom", f"{stage} process was killed by SIGKILL (out of memory: limit "
                           f"{mem / 1024**3:g} GB, or the system OOM killer)")
        if sig == signal.SIGXFSZ:
            return failure("error", f"{stage} process wrote more than {fsize / 1024**2:g} MB to one file "
                           "(flooding its output?) and was stopped by SIGXFSZ")
        return failure("error", f"{stage} process crashed with {name}")
    return failure("error", f"{stage} process exited with code {returncode} without writing a result "
                   "(sys.exit/os._exit in the synthesizer?)")

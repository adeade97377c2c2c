"""Who may change a study: the study lock, what kind of Snakemake invocation this is, and
clearing the lock a killed Snakemake run leaves behind.

Snakemake parses the Snakefile before it takes its own lock, and also for a dry run, a
`--list-rules` or a job on a cluster node. So holdbench takes its own lock first: an
exclusive flock on results/<study>/.lock, held by the Snakemake process until it exits (the
kernel releases it on `kill -9`, so it is never stale). Only an invocation that will execute
jobs takes it, and only the holder writes anything; a second invocation is refused before it
writes a byte, a dry run never writes.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path

import psutil

#: Snakemake CLI flags that parse the workflow but run no job
READ_ONLY_FLAGS = (
    "dryrun", "list_rules", "list_target_rules", "print_compilation", "lint", "dag", "rulegraph",
    "filegraph", "d3dag", "summary", "detailed_summary", "list_changes", "list_input_changes",
    "list_params_changes", "list_untracked", "unlock", "cleanup_metadata", "cleanup_shadow", "archive",
    "containerize", "generate_unit_tests", "conda_create_envs_only", "conda_cleanup_envs", "list_conda_envs",
    "container_cleanup_images", "report", "delete_all_output", "delete_temp_output",
)

_HELD: dict[str, int] = {}


class StudyBusy(RuntimeError):
    """Another invocation holds the study's lock; this one changed nothing."""


def invocation_mode(workflow=None) -> str:
    """"run" (this process executes jobs: lock, then write), "dry" (parses only: write nothing)
    or "job" (a job process on a cluster node, or a subprocess: the main process prepared everything).

    Read from Snakemake's exec mode and the CLI's parsed arguments; when Snakemake is driven
    through its API and no arguments are found, "run" (the lock then guards the study).
    """
    mode = getattr(getattr(workflow, "exec_mode", None), "name", "DEFAULT")
    if mode != "DEFAULT":
        return "job"
    if os.environ.get("HOLDBENCH_DRY_RUN") == "1":
        return "dry"
    args = _cli_args()
    if args is not None and any(getattr(args, flag, None) for flag in READ_ONLY_FLAGS):
        return "dry"
    return "run"


def study_locks_only() -> bool:
    """Turn off Snakemake's own lock for this run (as `--nolock` would); True if it was found.

    Snakemake locks the checkout, not the study: its lock files in `.snakemake/locks` are shared by
    every study run from the same directory, a killed run's stale files block the rerun of its study
    while another study runs (and `--unlock` or any run that ends removes the others' too). The
    study lock taken by `lock_study` already guards everything a run writes, so a run that holds it
    needs no Snakemake lock. Called while the Snakefile is parsed, inside Snakemake's
    `execute_workflow`, whose execution settings are read only after the parse."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "execute_workflow" and "snakemake" in frame.f_code.co_filename:
            settings = frame.f_locals.get("execution_settings")
            if settings is not None and hasattr(settings, "lock"):
                settings.lock = False
                return True
        frame = frame.f_back
    return False


def _cli_args():
    """The argparse namespace of Snakemake's CLI, from the stack of this parse (None if not found)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "args_to_api" and "snakemake" in frame.f_code.co_filename:
            return frame.f_locals.get("args")
        frame = frame.f_back
    return None


def lock_study(root: Path) -> None:
    """Hold results/<study>/.lock for the life of this process, or raise StudyBusy naming the holder."""
    key = str(root.resolve())
    if key in _HELD:
        return
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise StudyBusy(
            f"study {root.name!r} ({root}) is being run by another invocation{holder}; this one changed "
            "nothing. Wait for it to finish, or stop it, and run again") from None
    me = psutil.Process()
    record = {"pid": me.pid, "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(me.create_time())),
              "cmdline": " ".join(me.cmdline())[:300], "cwd": os.getcwd()}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(record).encode(), 0)
    _HELD[key] = fd


def _holder(fd: int) -> str:
    try:
        rec = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return f" (pid {rec['pid']}, started {rec['started']}, in {rec['cwd']})"
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _other_snakemake_here(workdir: Path) -> bool:
    me = os.getpid()
    ancestors = {p.pid for p in psutil.Process(me).parents()}
    for proc in psutil.process_iter(["pid", "cmdline", "cwd"]):
        try:
            if proc.pid == me or proc.pid in ancestors:
                continue
            cmd = " ".join(proc.info["cmdline"] or [])
            if "snakemake" in cmd and Path(proc.info["cwd"] or "/").resolve() == workdir.resolve():
                return True
        except (psutil.Error, OSError):
            continue
    return False


def clear_stale_locks(workdir: Path = Path("."), study_root: Path | None = None) -> bool:
    """Remove Snakemake's lock files a killed run left: all of them when no other live snakemake
    process works in this directory, else those naming a file of `study_root` (the caller holds that
    study's lock, so the run that wrote them is dead); return True if any were removed."""
    locks = workdir / ".snakemake" / "locks"
    files = list(locks.glob("*.lock")) if locks.is_dir() else []
    if files and _other_snakemake_here(workdir):
        files = [f for f in files if study_root is not None and _names_study(f, workdir, study_root)]
    if not files:
        return False
    for f in files:
        f.unlink(missing_ok=True)
    print(f"[holdbench] removed {len(files)} stale Snakemake lock(s) left by an interrupted run")
    return True


def _names_study(lock_file: Path, workdir: Path, study_root: Path) -> bool:
    """True if a Snakemake lock file lists a file of the study at `study_root`."""
    root = study_root.resolve()
    try:
        lines = lock_file.read_text().splitlines()
    except OSError:
        return False
    return any(line.strip() and (workdir / line.strip()).resolve().is_relative_to(root) for line in lines)

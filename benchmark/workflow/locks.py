"""Clear the lock a killed Snakemake run leaves behind, so a plain rerun resumes.

Snakemake refuses to start while `.snakemake/locks/` holds lock files, even when the
run that wrote them died by `kill -9`. A lock is stale when no other live snakemake
process works in this directory; only then is it removed.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil


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


def clear_stale_locks(workdir: Path = Path(".")) -> bool:
    """Remove stale lock files; return True if any were removed."""
    locks = workdir / ".snakemake" / "locks"
    files = list(locks.glob("*.lock")) if locks.is_dir() else []
    if not files or _other_snakemake_here(workdir):
        return False
    for f in files:
        f.unlink(missing_ok=True)
    print(f"[holdbench] removed {len(files)} stale Snakemake lock(s) left by an interrupted run")
    return True

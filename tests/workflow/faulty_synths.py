"""Synthesizers that fail on purpose, one way each (test-only; configs made by the tests)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.synthesizers.base import FitContext, Synthesizer


def _note_pid(mode: str, pid: int) -> None:
    """Record a pid the test will check is gone (directory from $HOLDBENCH_TEST_PIDS)."""
    where = os.environ.get("HOLDBENCH_TEST_PIDS")
    if where:
        with open(Path(where) / f"{mode}.pids", "a") as fh:
            fh.write(f"{pid}\n")


def _sleeper_detached() -> int:
    """A child in its own session (setsid): outside the cell's process group."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc.pid


def _double_fork(mode: str) -> None:
    """A daemon the classic way: fork, setsid, fork again, the middle process exits."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.write(w, f"{os.getpid()}\n".encode())
            time.sleep(600)
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
    _note_pid(mode, int(os.read(r, 64).decode().strip()))


_BURN = """import sys, time
t = time.process_time()
while time.process_time() - t < 1.0:
    pass
open(sys.argv[1], "w").write(repr(time.process_time()))
"""


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


class Faulty(Synthesizer):
    """Bootstraps T, then misbehaves as `mode` says."""

    def __init__(self, mode: str = "ok"):
        self.mode = mode

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        self.train = train
        if self.mode == "raise_fit":
            raise RuntimeError("boom in fit")
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "nomem_hang":  # as OpenBLAS under a too low address-space limit: says so, then spins
            print("OpenBLAS error: Memory allocation still failed after 10 retries, giving up.", file=sys.stderr,
                  flush=True)
            time.sleep(3600)
        if self.mode == "hog":
            hog = []
            while True:
                hog.append(np.ones(50_000_000))
        if self.mode == "sys_exit":
            sys.exit(3)
        if self.mode == "os_exit":
            os._exit(7)
        if self.mode == "segfault":
            ctypes.string_at(0)
        if self.mode in ("setsid_child", "hang_spawn"):
            _note_pid(self.mode, _sleeper_detached())
        if self.mode == "double_fork":
            _double_fork(self.mode)
        if self.mode == "thread_linger":
            threading.Thread(target=time.sleep, args=(600,), daemon=False).start()
        if self.mode == "hang_spawn":
            _note_pid(self.mode, os.getpid())
            time.sleep(600)
        if self.mode == "burn_worker":  # as a plug-in worker: a grandchild that burns ~1 CPU s, then says how much
            subprocess.run([sys.executable, "-c", _BURN, os.environ["HOLDBENCH_TEST_BURN_FILE"]], check=True)
        if self.mode == "slow":
            time.sleep(float(os.environ.get("HOLDBENCH_TEST_SLOW", "6")))
        if self.mode == "until_released":  # busy until the test creates $HOLDBENCH_TEST_RELEASE (at most 10 min)
            release, deadline = Path(os.environ["HOLDBENCH_TEST_RELEASE"]), time.monotonic() + 600
            while not release.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
        if self.mode == "libc_exit":
            sys.stdout.flush()
            ctypes.CDLL(None).exit(5)
        if self.mode == "unprintable":
            raise _Unprintable()
        if self.mode == "escape_reason":
            raise RuntimeError("bad\x00 \x1b[31mred\x1b[0m <b>&amp; | x")
        if self.mode == "flood":
            line = "x" * 1023 + "\n"
            while True:
                sys.stdout.write(line * 1024)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self.mode == "raise_sample":
            raise ValueError("boom in sample")
        idx = np.random.default_rng(seed).integers(0, len(self.train), n)
        out = self.train.iloc[idx].reset_index(drop=True)
        if self.mode == "wrong_columns":
            out = out.rename(columns={out.columns[0]: "not_a_column"})
        elif self.mode == "wrong_rows":
            out = out.iloc[: n // 2]
        elif self.mode == "all_missing":
            out[out.columns[1]] = np.nan
        elif self.mode == "inf_in_int":
            out["age"] = out["age"].astype(float)
            out.loc[0, "age"] = np.inf
        elif self.mode == "wrong_type":
            out["age"] = out["age"].astype(object)
            out.loc[0, "age"] = "forty"
        return out

"""Synthesizers that fail on purpose, one way each (test-only; configs made by the tests)."""

from __future__ import annotations

import ctypes
import os
import sys
import time

import numpy as np
import pandas as pd

from synthesizers.base import FitContext, Synthesizer


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
        elif self.mode == "wrong_type":
            out["age"] = out["age"].astype(object)
            out.loc[0, "age"] = "forty"
        return out

"""A process that exits right after reading a parquet file exits cleanly (holdbench.contracts.io.read_parquet).

With pyarrow's pre-buffering (pandas' default), such a process was aborted at exit in about one run in ten here
("terminate called without an active exception", exit 134, apache/arrow#34314): `holdbench load` on a cached
table, for one, reads a parquet file and exits. Forty children that read and exit: with the former reading the
chance that all forty exit 0 is about 0.9**40, under 2%."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.slow

CHILD = "import sys; from holdbench.contracts.io import read_parquet; read_parquet(sys.argv[1])"


def test_forty_processes_exit_cleanly_right_after_a_read(tmp_path):
    rng = np.random.default_rng(0)
    n = 600
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "city": rng.choice(["a", "b", "c"], n),
                          "signup": rng.choice(["2020-01-01", "2021-06-30"], n), "y": rng.integers(0, 2, n)})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path, index=False)
    codes = [subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True)
             for _ in range(40)]
    failed = [(p.returncode, p.stderr[-200:]) for p in codes if p.returncode != 0]
    assert failed == []

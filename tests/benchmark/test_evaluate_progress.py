"""`holdbench evaluate` says which metric family it is computing and how long each took (issue 24)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from holdbench.benchmark.cli import main


def test_evaluate_prints_one_timed_line_per_family(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for name, n in (("train", 120), ("holdout", 100), ("synthetic", 150)):
        path = tmp_path / f"{name}.csv"
        pd.DataFrame({"age": rng.integers(18, 80, n), "job": rng.choice(["a", "b", "c"], n)}).to_csv(path, index=False)
        paths += [f"--{name}", str(path)]
    assert main(["evaluate", *paths, "--skip", "utility", "--skip", "panel"]) == 0
    err = capsys.readouterr().err
    lines = re.findall(r"^\[holdbench\] (\w+) \.\.\. (\d+\.\d) s$", err, flags=re.MULTILINE)
    # the default metrics config minus the two skipped families: the paper's fidelity and privacy
    names = [n for n, _ in lines]
    assert "fidelity" in names and "privacy" in names
    assert "utility" not in names and "panel" not in names
    assert len(names) == len(set(names))

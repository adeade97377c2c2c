"""The paper_published study (the paper's own split and synthetic files) reproduces the
published adult numbers through the whole workflow: split, external synthesizer, evaluate,
leaderboard."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.conftest import SHARED
from tests.workflow.helpers import env_for, run_study

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (SHARED / "reference").is_dir(), reason=f"no {SHARED}/reference")]


def test_leaderboard_reproduces_published_adult_numbers(tmp_path):
    env = env_for(tmp_path)
    env["HOLDBENCH_SHARED_DIR"] = str(SHARED)
    # the paper's measures only (the study's default metrics add attacks and utility, which the
    # published figures do not cover and which take most of the time)
    proc = run_study(tmp_path, "paper_published", env=env,
                     config={"study_overrides": "datasets=[adult],metrics=paper"}, timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    board = pd.read_csv(tmp_path / "results/paper_published/leaderboard.csv")
    assert set(board["status"]) == {"ok"}
    board["synthesizer"] = board["synthesizer"].str.replace("published_", "", regex=False)
    ref = pd.read_csv(SHARED / "reference/paper_adult_expected.csv")
    both = ref.merge(board, on="synthesizer", suffixes=("_published", ""))
    assert len(both) == len(ref) == 17
    for col in ("F1", "F2", "F3", "F1_ratio", "F2_ratio", "F3_ratio", "dcr_share"):
        # the published CSV carries 10 significant digits
        assert both[col].to_numpy() == pytest.approx(both[f"{col}_published"].to_numpy(), rel=1e-9), col
    for col in ("dcr_train_mean", "dcr_holdout_mean"):
        assert both[col].to_numpy() == pytest.approx(both[f"{col}_published"].to_numpy(), abs=1e-6), col

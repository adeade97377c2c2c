"""Anonymeter bridge: the subprocess contract with fake interpreters, and the real isolated venv.

Fake interpreters are tiny Python scripts (shebang = this interpreter) that stand in for the
venv's python: they write a canned result.json, exit 1, exit 3, or sleep past the timeout, and
copy what the bridge handed them so the encoding can be checked. Tests that need the real
anonymeter venv are skipped, with the install command as the reason, only when it is absent.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import stat
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.anonymeter_bridge import (
    EVALUATORS,
    Anonymeter,
    AnonymeterResult,
    anonymeter_python,
    install_command,
)
from holdbench.metrics.registry import EvalData, scalars, specs_of

BASELINE_WARNING = ("Attack is as good or worse as baseline model. Estimated rates: attack = 0.01, "
                    "baseline = 0.02. Analysis results cannot be trusted.")


def _canned(evaluators=EVALUATORS) -> dict:
    rows = {
        "singling_uni": {"risk": 0.9, "ci_low": 0.85, "ci_high": 0.95, "attack_rate": 0.93, "baseline_rate": 0.01,
                         "control_rate": 0.2, "warnings": [], "cpu_seconds": 1.5},
        "singling_multi": {"risk": 0.1, "ci_low": 0.04, "ci_high": 0.16, "attack_rate": 0.26, "baseline_rate": 0.05,
                           "control_rate": 0.18, "warnings": ["Attack `multivariate` could generate only 3"],
                           "cpu_seconds": 2.0},
        "linkability": {"risk": 0.0, "ci_low": 0.0, "ci_high": 0.005, "attack_rate": 0.01, "baseline_rate": 0.02,
                        "control_rate": 0.01, "warnings": [BASELINE_WARNING], "cpu_seconds": 3.0},
        "inference": {"risk": 0.15, "ci_low": 0.0, "ci_high": 0.37, "attack_rate": 0.83, "baseline_rate": 0.01,
                      "control_rate": None, "warnings": [], "cpu_seconds": 4.0},
    }
    return {"anonymeter_version": "1.1.0", "results": {k: rows[k] for k in evaluators}}


def _fake_python(tmp_path: Path, body: str) -> Path:
    """An executable standing in for the venv's python; argv = [-I, worker.py, WORKDIR]."""
    path = tmp_path / "fake_python"
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent("""
        import json, shutil, sys, time
        from pathlib import Path
        workdir = Path(sys.argv[-1])
        capture = Path(__file__).with_name("captured")
        shutil.copytree(workdir, capture, dirs_exist_ok=True)
    """) + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _writes(payload: dict, code: int = 0) -> str:
    return f"(workdir / 'result.json').write_text({json.dumps(json.dumps(payload))})\nsys.exit({code})\n"


def _small_data(holdout_row: bool = False, target: str | None = "y", sensitive: str | None = None) -> EvalData:
    t = pd.DataFrame({"a": [1, 2, 3, 4], "c": ["x", "y", None, "x"], "f": [1.0, 2.0, np.nan, 4.0],
                      "y": [True, False, True, True]})
    h = pd.DataFrame({"a": [5, 6, 7], "c": ["y", "y", "z"], "f": [3.0, 2.0, 1.0], "y": [False, False, True]})
    s = pd.DataFrame({"a": [1.5, 9.0], "c": ["x", "q"], "f": [1.0, 5.0], "y": [True, False]})
    return EvalData(train=t, holdout=h, synthetic=h if holdout_row else s,
                    kinds={"a": "numeric", "c": "categorical", "f": "categorical", "y": "numeric"},
                    holdout_row=holdout_row, target=target, sensitive=sensitive, seed=7)


# ------------------------------------------------------------------ registry contract
def test_result_declares_four_lower_is_better_risks():
    specs = {s.name: s for s in specs_of(AnonymeterResult)}
    assert set(specs) == {f"anonymeter_{e}_risk" for e in EVALUATORS}
    assert all(s.direction == "lower" and s.group == "attack" for s in specs.values())
    assert Anonymeter.name == "anonymeter" and Anonymeter.result_type is AnonymeterResult


@pytest.mark.parametrize("opts", [{"n_attacks": 0}, {"n_attacks": 2.5}, {"n_attacks_multi": 0}, {"n_cols": 0},
                                  {"n_neighbors": 0},
                                  {"link_split": "thirds"}, {"seed": -1}, {"timeout_seconds": 0},
                                  {"max_attempts": 0}])
def test_bad_options_raise_naming_the_option(opts):
    with pytest.raises(ValueError, match=next(iter(opts))):
        Anonymeter(**opts)


def test_bad_kinds_and_columns_raise():
    data = _small_data()
    with pytest.raises(ValueError, match="'c'"):
        Anonymeter(python="/nonexistent").compute(EvalData(**{**data.__dict__, "kinds": {"a": "numeric"}}))
    bad = EvalData(**{**data.__dict__, "synthetic": data.synthetic[["c", "a", "f", "y"]]})
    with pytest.raises(ValueError, match="synthetic columns"):
        Anonymeter(python="/nonexistent").compute(bad)


# ------------------------------------------------------------------ NaN + reason paths
def test_missing_interpreter_gives_nan_and_the_install_command(tmp_path):
    res = Anonymeter(python=str(tmp_path / "no" / "python")).compute(_small_data())
    assert all(math.isnan(getattr(res, f"anonymeter_{e}_risk")) for e in EVALUATORS)
    assert res.anonymeter_reason.startswith("anonymeter not installed: ")
    assert install_command() in res.anonymeter_reason
    assert "python3 -m venv" in install_command() and "metrics/plugins/anonymeter/requirements.txt" in install_command()


def test_interpreter_resolution_order(monkeypatch, tmp_path):
    monkeypatch.setenv("HOLDBENCH_ANONYMETER_PYTHON", str(tmp_path / "env_python"))
    assert anonymeter_python("/opt/x/python") == Path("/opt/x/python")
    assert anonymeter_python() == tmp_path / "env_python"
    monkeypatch.delenv("HOLDBENCH_ANONYMETER_PYTHON")
    assert anonymeter_python().parts[-3:] == (".venv-anonymeter", "bin", "python")


def test_holdout_row_is_nan_with_reason_and_runs_nothing(tmp_path):
    fake = _fake_python(tmp_path, "sys.exit(1)\n")
    res = Anonymeter(python=str(fake)).compute(_small_data(holdout_row=True))
    assert all(math.isnan(getattr(res, f"anonymeter_{e}_risk")) for e in EVALUATORS)
    assert "holdout" in res.anonymeter_reason
    assert not (tmp_path / "captured").exists()


def test_worker_exit_3_means_not_installed(tmp_path):
    fake = _fake_python(tmp_path, _writes({"missing": "ModuleNotFoundError: No module named 'anonymeter'"}, 3))
    res = Anonymeter(python=str(fake)).compute(_small_data())
    assert math.isnan(res.anonymeter_singling_uni_risk)
    assert res.anonymeter_reason.startswith("anonymeter not installed: ") and "No module named" in res.anonymeter_reason


@pytest.mark.skipif(importlib.util.find_spec("anonymeter") is not None, reason="anonymeter is importable here")
def test_real_worker_without_anonymeter_reports_not_installed():
    """The real worker run by this interpreter (which lacks anonymeter) exits 3 -> NaN + reason."""
    res = Anonymeter(python=sys.executable).compute(_small_data())
    assert math.isnan(res.anonymeter_inference_risk)
    assert res.anonymeter_reason.startswith("anonymeter not installed: ") and "anonymeter" in res.anonymeter_reason


# ------------------------------------------------------------------ JSON parsing and the inputs handed over
def test_canned_json_becomes_the_result_and_inputs_round_trip(tmp_path):
    fake = _fake_python(tmp_path, _writes(_canned()))
    res = Anonymeter(python=str(fake), n_attacks=500).compute(_small_data(sensitive="c"))
    assert res.anonymeter_singling_uni_risk == 0.9 and res.anonymeter_singling_uni_ci_high == 0.95
    assert res.anonymeter_singling_uni_meaningful is True and res.anonymeter_singling_uni_warning is None
    assert res.anonymeter_singling_multi_warning == "Attack `multivariate` could generate only 3"
    assert res.anonymeter_singling_multi_meaningful is True
    assert res.anonymeter_linkability_meaningful is False and res.anonymeter_linkability_warning == BASELINE_WARNING
    assert math.isnan(res.anonymeter_inference_control_rate) and res.seconds_anonymeter_inference_cpu == 4.0
    assert res.anonymeter_inference_secret == "c" and res.anonymeter_reason is None
    assert res.anonymeter_version == "1.1.0" and res.anonymeter_n_attacks == 3  # capped at |H| = 3
    assert res.anonymeter_n_attacks_multi == 3
    json.dumps(scalars(res))  # JSON-safe

    cap = tmp_path / "captured"
    cfg = json.loads((cap / "config.json").read_text())
    assert cfg["seed"] == 7 and cfg["secret"] == "c" and cfg["regression"] is False
    assert cfg["n_attacks"] == 3 and cfg["n_attacks_multi"] == 3 and cfg["n_jobs"] == 1
    assert cfg["aux_cols"] == [["a", "c"], ["f", "y"]]
    assert cfg["evaluators"] == list(EVALUATORS)
    t = pd.read_parquet(cap / "train.parquet")
    assert t["c"].tolist() == ["x", "y", None, "x"]
    assert t["f"].tolist() == ["1", "2", None, "4"]  # integral floats of a categorical print as ints
    assert t["y"].tolist() == [1.0, 0.0, 1.0, 1.0] and t["y"].dtype == np.float64
    assert t["a"].dtype == np.float64
    s = pd.read_parquet(cap / "synthetic.parquet")
    assert s["a"].tolist() == [1.5, 9.0] and s["c"].tolist() == ["x", "q"]


def test_no_secret_skips_inference_with_reason(tmp_path):
    fake = _fake_python(tmp_path, _writes(_canned(("singling_uni", "singling_multi", "linkability"))))
    res = Anonymeter(python=str(fake), link_split="qi").compute(_small_data(target=None))
    cfg = json.loads((tmp_path / "captured" / "config.json").read_text())
    assert cfg["evaluators"] == ["singling_uni", "singling_multi"]  # no QIs either: no linkability
    assert math.isnan(res.anonymeter_inference_risk) and math.isnan(res.anonymeter_linkability_risk)
    assert "inference" in res.anonymeter_reason and "linkability" in res.anonymeter_reason
    assert res.anonymeter_singling_uni_risk == 0.9


def test_result_missing_a_requested_evaluator_raises(tmp_path):
    fake = _fake_python(tmp_path, _writes(_canned(("singling_uni", "singling_multi", "linkability"))))
    with pytest.raises(RuntimeError, match="result for inference is malformed"):
        Anonymeter(python=str(fake)).compute(_small_data())


def test_worker_failure_raises_with_stderr_tail(tmp_path):
    fake = _fake_python(tmp_path, "print('numba exploded here', file=sys.stderr)\nsys.exit(1)\n")
    with pytest.raises(RuntimeError, match=r"anonymeter worker failed with exit code 1(.|\n)*numba exploded here"):
        Anonymeter(python=str(fake)).compute(_small_data())


def test_worker_without_result_raises(tmp_path):
    fake = _fake_python(tmp_path, "sys.exit(0)\n")
    with pytest.raises(RuntimeError, match="anonymeter worker wrote no readable result.json"):
        Anonymeter(python=str(fake)).compute(_small_data())


def test_malformed_result_raises(tmp_path):
    fake = _fake_python(tmp_path, _writes({"results": {"singling_uni": {"risk": 0.5}}}))
    with pytest.raises(RuntimeError, match="anonymeter worker result for singling_uni is malformed"):
        Anonymeter(python=str(fake)).compute(_small_data())


def test_timeout_kills_the_worker_and_raises(tmp_path):
    fake = _fake_python(tmp_path, "print('still thinking', file=sys.stderr, flush=True)\n"
                                  "(Path(__file__).with_name('pid')).write_text(str(__import__('os').getpid()))\n"
                                  "time.sleep(60)\n")
    start = time.perf_counter()
    with pytest.raises(RuntimeError, match=r"anonymeter worker timed out after 3 s(.|\n)*still thinking"):
        Anonymeter(python=str(fake), timeout_seconds=3).compute(_small_data())
    assert time.perf_counter() - start < 15
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


# ------------------------------------------------------------------ the real isolated interpreter
_REAL = anonymeter_python()
needs_venv = pytest.mark.skipif(not _REAL.exists(), reason=f"anonymeter not installed: {install_command()}")


def _population(n: int, seed: int) -> pd.DataFrame:
    """Records unique on their continuous columns; each half (age, income, city | score, job, y) has one."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n), "income": np.round(rng.lognormal(10, 1, n), 2),
        "city": rng.choice([f"c{i}" for i in range(40)], n), "score": np.round(rng.normal(0, 1, n), 4),
        "job": rng.choice(["a", "b", "c", "d", "e"], n), "y": rng.choice(["no", "yes"], n, p=[0.7, 0.3])})


_KINDS = {"age": "numeric", "income": "numeric", "score": "numeric", "city": "categorical",
          "job": "categorical", "y": "categorical"}


@needs_venv
@pytest.mark.slow
def test_real_copies_are_risky_independent_data_is_not_and_runs_repeat():
    t, h = _population(400, 1), _population(400, 2)
    copies = t.sample(frac=1.0, random_state=0).reset_index(drop=True)
    fresh = _population(400, 3)
    family = Anonymeter(n_attacks=100, n_attacks_multi=50, max_attempts=20_000)
    leak = family.compute(EvalData(train=t, holdout=h, synthetic=copies, kinds=_KINDS, target="y", seed=3))
    safe = family.compute(EvalData(train=t, holdout=h, synthetic=fresh, kinds=_KINDS, target="y", seed=3))
    again = family.compute(EvalData(train=t, holdout=h, synthetic=fresh, kinds=_KINDS, target="y", seed=3))
    assert leak.anonymeter_version == "1.1.0" and leak.anonymeter_reason is None
    # S = T: every record that one rare value singles out in S is that same record in T, none in H
    assert leak.anonymeter_singling_uni_risk > 0.8 and leak.anonymeter_singling_multi_risk > 0.8
    # each half's nearest S record is the record itself (a continuous value matches exactly), so the
    # halves re-join; against H the nearest records of the two halves are unrelated
    assert leak.anonymeter_linkability_risk > 0.8
    assert safe.anonymeter_singling_uni_risk < 0.2 and safe.anonymeter_linkability_risk < 0.2
    assert safe.anonymeter_singling_multi_risk < 0.2
    timing = {f"seconds_anonymeter_{e}_cpu" for e in EVALUATORS} | {"seconds_anonymeter", "seconds_anonymeter_cpu"}
    a = {k: v for k, v in scalars(safe).items() if k not in timing}
    b = {k: v for k, v in scalars(again).items() if k not in timing}
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_unavailable_names_what_is_missing_and_heals(tmp_path):
    # the harness asks unavailable() before each run: a cell that got n/a while anonymeter was
    # missing is re-evaluated once this returns None
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    family = Anonymeter(python=str(python))
    assert "anonymeter not installed" in family.unavailable() and str(python) in family.unavailable()
    python.parent.mkdir(parents=True)
    python.write_text("")
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    assert "has no anonymeter package" in family.unavailable()
    (site / "anonymeter").mkdir()
    assert family.unavailable() is None

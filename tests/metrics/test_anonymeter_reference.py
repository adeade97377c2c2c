"""holdbench's anonymeter bridge against anonymeter called directly, same data, seeds and options.

The reference is a short script (DIRECT below, written here, not the bridge's worker) run with
the anonymeter venv's python on parquet files this test writes itself with pandas. It calls
anonymeter 1.1.0's three evaluators as its documentation shows, with the options the bridge
documents (T = ori, H = control, S = syn; singling-out with `seed`; linkability on the two
halves of the columns with n_neighbors; inference of the target from all other columns).

What the script must do besides calling anonymeter, for anonymeter itself to be repeatable:
- seed numpy's global RNG before each evaluator (linkability and inference draw their targets
  with pandas `.sample` from it) and polars' global RNG (the singling-out size correction);
- make polars keep first-appearance order in `group_by` / `unique`: univariate singling-out
  builds its query list from `df.group_by(col).len()` and then shuffles it with the seeded
  generator, so a hash-ordered list gives other queries from the same seed.
Nothing else is seeded: linkability's random-guess baseline (`_random_links`) draws from an
unseeded `np.random.default_rng()`, so its baseline rate is compared only for being a rate;
the risk, interval, attack and control rates do not depend on it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import textwrap

import numpy as np
import pandas as pd
import pytest

from holdbench.metrics.anonymeter_bridge import Anonymeter, anonymeter_python, install_command
from holdbench.metrics.registry import EvalData

PYTHON = anonymeter_python()
pytestmark = pytest.mark.skipif(not PYTHON.exists(),
                                reason=f"the anonymeter venv is missing ({PYTHON}); install: {install_command()}")

KINDS = {"age": "numeric", "income": "numeric", "city": "categorical", "hours": "numeric",
         "job": "categorical", "y": "categorical"}
OPTIONS = {"n_attacks": 60, "n_attacks_multi": 40, "n_cols": 3, "max_attempts": 20_000, "n_neighbors": 5, "seed": 11}

DIRECT = textwrap.dedent("""
    import json, random, sys
    import numpy as np, pandas as pd, polars as pl
    from anonymeter.evaluators import InferenceEvaluator, LinkabilityEvaluator, SinglingOutEvaluator

    d, opt = sys.argv[1], json.loads(sys.argv[2])
    ori, control, syn = (pd.read_parquet(f"{d}/{k}.parquet") for k in ("t", "h", "s"))
    if opt["ordered"]:
        group_by, unique = pl.DataFrame.group_by, pl.Series.unique
        pl.DataFrame.group_by = lambda self, *by, **kw: group_by(self, *by, maintain_order=True, **kw)
        pl.Series.unique = lambda self, **kw: unique(self, maintain_order=True)

    def seeded():
        np.random.seed(opt["seed"]); random.seed(opt["seed"]); pl.set_random_seed(opt["seed"])

    def summary(ev):
        risk, res = ev.risk(confidence_level=0.95), ev.results(confidence_level=0.95)
        return {"risk": risk.value, "ci": list(risk.ci), "attack": res.attack_rate.value,
                "baseline": res.baseline_rate.value, "control": res.control_rate.value}

    out = {}
    for mode, key, n in (("univariate", "singling_uni", opt["n_attacks"]),
                         ("multivariate", "singling_multi", opt["n_attacks_multi"])):
        seeded()
        ev = SinglingOutEvaluator(ori=ori, syn=syn, control=control, n_attacks=n, n_cols=opt["n_cols"],
                                  max_attempts=opt["max_attempts"], seed=opt["seed"])
        out[key] = summary(ev.evaluate(mode=mode))
    cols = list(ori.columns)
    half = (len(cols) + 1) // 2
    seeded()
    ev = LinkabilityEvaluator(ori=ori, syn=syn, control=control, aux_cols=(cols[:half], cols[half:]),
                              n_attacks=opt["n_attacks"], n_neighbors=opt["n_neighbors"])
    out["linkability"] = summary(ev.evaluate(n_jobs=1))
    seeded()
    ev = InferenceEvaluator(ori=ori, syn=syn, control=control, aux_cols=[c for c in cols if c != "y"],
                            secret="y", regression=False, n_attacks=opt["n_attacks"])
    out["inference"] = summary(ev.evaluate(n_jobs=1))
    print(json.dumps(out))
""")


def population(n: int, seed: int) -> pd.DataFrame:
    """Mixed columns with missing values; integers stored as floats (as the bridge hands them over)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n).astype(float)
    income = np.round(rng.lognormal(10, 1, n), 0)
    income[rng.random(n) < 0.05] = np.nan
    city = rng.choice([f"c{i}" for i in range(30)], n).astype(object)
    city[rng.random(n) < 0.03] = None
    hours = np.round(rng.normal(40, 10, n))
    job = rng.choice(["a", "b", "c", "d", "e"], n)
    y = np.where(rng.random(n) < 0.2 + 0.5 * (age > 50), "yes", "no")
    return pd.DataFrame({"age": age, "income": income, "city": city, "hours": hours, "job": job, "y": y})


def direct(tmp_path, t, h, s, ordered=True) -> dict:
    for key, frame in (("t", t), ("h", h), ("s", s)):
        frame.to_parquet(tmp_path / f"{key}.parquet", index=False)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NUMBA_NUM_THREADS="1", POLARS_MAX_THREADS="1")
    proc = subprocess.run([str(PYTHON), "-I", "-c", DIRECT, str(tmp_path), json.dumps({**OPTIONS, "ordered": ordered})],
                          check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def tables():
    t, h = population(300, 1), population(300, 2)
    near = t.sample(frac=1.0, random_state=3).reset_index(drop=True)
    near["hours"] = near["hours"] + np.random.default_rng(4).choice([-1.0, 0.0, 1.0], len(near))
    s = pd.concat([near.iloc[:150], population(150, 5)], ignore_index=True)  # half near-copies of T
    return t, h, s


@pytest.mark.slow
def test_bridge_equals_anonymeter_called_directly(tables, tmp_path):
    t, h, s = tables
    seed = OPTIONS["seed"]
    family = Anonymeter(**{k: v for k, v in OPTIONS.items() if k != "seed"})
    res = family.compute(EvalData(train=t, holdout=h, synthetic=s, kinds=KINDS, target="y", seed=seed))
    ref = direct(tmp_path, t, h, s)
    for e in ("singling_uni", "singling_multi", "linkability", "inference"):
        got = {"risk": getattr(res, f"anonymeter_{e}_risk"), "ci": [getattr(res, f"anonymeter_{e}_ci_low"),
                                                                  getattr(res, f"anonymeter_{e}_ci_high")],
               "attack": getattr(res, f"anonymeter_{e}_attack_rate"),
               "control": getattr(res, f"anonymeter_{e}_control_rate")}
        want = {k: ref[e][k] for k in got}
        assert got == want, e  # to the last digit (floats through JSON round-trip exactly)
        if e != "linkability":  # linkability's baseline draws from an unseeded generator in anonymeter
            assert getattr(res, f"anonymeter_{e}_baseline_rate") == ref[e]["baseline"], e
        else:
            assert 0 <= res.anonymeter_linkability_baseline_rate <= 1
    # the data make every evaluator do something: none of these equalities is 0 == 0
    assert res.anonymeter_singling_uni_attack_rate > 0.3 and res.anonymeter_singling_multi_attack_rate > 0.3
    assert res.anonymeter_linkability_attack_rate > 0.1 and res.anonymeter_inference_attack_rate > 0.5


def test_worker_keeps_the_compiled_kernels_and_a_cached_run_gives_the_same_risks(tables, tmp_path, monkeypatch):
    """The worker lets numba cache anonymeter's two nearest-neighbour kernels on disk (NUMBA_CACHE_DIR here,
    so the test sees the files): after one run both kernels' index files exist, and a second run that loads
    them gives every risk, interval and rate of the first to the last digit."""
    t, h, s = tables
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    family = Anonymeter(n_attacks=30, n_attacks_multi=10, n_cols=3, max_attempts=5_000, n_neighbors=5)
    data = EvalData(train=t, holdout=h, synthetic=s, kinds=KINDS, target="y", seed=3)
    first = dataclasses.asdict(family.compute(data))
    index = sorted(p.name.split("-")[0] for p in (tmp_path / "numba").rglob("*.nbi"))
    assert index == ["head_neighbours._insertion_sort", "head_neighbours._lt", "head_neighbours._partition",
                     "head_neighbours.head_argsort", "head_neighbours.nearest_neighbors",
                     "mixed_types_kneighbors.gower_distance"]
    second = dataclasses.asdict(family.compute(data))
    numbers = [k for k in first if k.startswith("anonymeter_") and not k.startswith("seconds_")]
    assert {k: first[k] for k in numbers} == {k: second[k] for k in numbers}
    assert first["anonymeter_linkability_attack_rate"] > 0 and first["anonymeter_inference_attack_rate"] > 0


def _awkward(n: int, seed: int) -> pd.DataFrame:
    """Texts with quotes, missing texts and numbers, an integer column with gaps, rare and frequent values."""
    rng = np.random.default_rng(seed)
    name = rng.choice(["O'Brien", 'say "hi"', "plain", "x", "y"], n, p=[0.02, 0.03, 0.55, 0.3, 0.1]).astype(object)
    name[rng.random(n) < 0.02] = None
    city = rng.choice([f"c{i}" for i in range(40)], n).astype(object)
    kids = rng.integers(0, 6, n).astype(float)
    kids[rng.random(n) < 0.04] = np.nan
    income = np.round(rng.lognormal(10, 1, n), 0)
    income[rng.random(n) < 0.03] = np.nan
    sex = rng.choice(["f", "m"], n)
    return pd.DataFrame({"name": name, "city": city, "kids": kids, "income": income, "sex": sex,
                         "age": rng.integers(18, 90, n).astype(float)})


AWKWARD_KINDS = {"name": "categorical", "city": "categorical", "kids": "numeric", "income": "numeric",
                 "sex": "categorical", "age": "numeric"}


def _worker_results(work, frames: dict, config: dict) -> dict:
    """The worker's `results` on `_awkward` frames: the bridge's inputs written into `work` with `config` (over
    one job, no regression, the columns' two halves as linkability's sources), one worker run."""
    from holdbench.metrics.anonymeter_bridge import run_worker, write_inputs

    columns = list(AWKWARD_KINDS)
    work.mkdir()
    write_inputs(work, frames, columns, AWKWARD_KINDS, {"aux_cols": [columns[:3], columns[3:]], "regression": False,
                                                        "n_jobs": 1, **config})
    payload, _, _ = run_worker(PYTHON, work, 600)
    return payload["results"]


@pytest.mark.parametrize(("n_cols", "seed"), [(3, 0), (4, 5), (5, 9)])
def test_indexed_singling_out_counts_equal_anonymeters_own(tmp_path, n_cols, seed):
    """Multivariate singling-out with the worker's index (_IndexedCounts) gives anonymeter's own result to
    the last digit (risk, interval, rates, number of successful queries) on data with quotes in texts,
    missing texts and numbers, integers with gaps, and both rare and frequent values; and the index is used."""
    frames = {"train": _awkward(1500, seed + 1), "control": _awkward(1500, seed + 2),
              "synthetic": _awkward(9000, seed + 3)}  # three slices of the scan
    results = {}
    for indexed in (True, False):
        config = {"seed": seed, "n_attacks": 50, "n_attacks_multi": 60, "n_cols": n_cols, "max_attempts": 6_000,
                  "n_neighbors": 5, "secret": None, "evaluators": ["singling_multi"], "indexed_counts": indexed}
        results[indexed] = _worker_results(tmp_path / str(indexed), frames, config)["singling_multi"]
    fast, own = results[True], results[False]
    assert fast["indexed_batches"] >= 1 and own["indexed_batches"] is None
    keys = ("risk", "ci_low", "ci_high", "attack_rate", "baseline_rate", "control_rate", "n_success",
            "n_baseline", "n_control", "warnings")
    assert {k: fast[k] for k in keys} == {k: own[k] for k in keys}
    assert own["n_success"] > 0  # the attack found queries: the equality is not 0 == 0


HEAD = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import head_neighbours
    import anonymeter.evaluators
    from anonymeter.neighbors.mixed_types_kneighbors import _nearest_neighbors

    rng = np.random.default_rng(7)
    cases = differ = ties_at_cut = 0
    for n in (1, 2, 3, 14, 15, 16, 17, 31, 200, 5000, 30000):
        for k in sorted({1, 2, 5, 10, 15, 16, 40, n}):
            if k > n:
                continue
            for kind in ("ties", "continuous"):
                cand = rng.integers(0, 3, (n, 5)).astype(float)  # 3 categorical columns of 3 levels
                cand[:, :2] = rng.integers(0, 4, (n, 2)) / 4 if kind == "ties" else rng.random((n, 2))
                cand[rng.random((n, 5)) < 0.05] = np.nan  # one-sided NaN gives a NaN distance: sorted last
                q = rng.integers(0, 3, (4, 5)).astype(float)
                q[0, 0], q[1, 3] = np.nan, np.nan
                want = _nearest_neighbors(q, cand, 2, k)
                got = head_neighbours.nearest_neighbors(q, cand, 2, k)
                cases += 1
                differ += not (np.array_equal(want[0], got[0]) and np.array_equal(want[1], got[1], equal_nan=True))
                if k < n:  # a tie across the cut: which of the equal records are kept is the sort's choice
                    full = _nearest_neighbors(q, cand, 2, n)[1]
                    ties_at_cut += int(np.sum(full[:, k - 1] == full[:, k]))
    print(json.dumps({"cases": cases, "differ": differ, "ties_at_cut": ties_at_cut}))
""")


def test_head_neighbours_equal_anonymeters_own_nearest_neighbours():
    """The worker's nearest-neighbour search (head_neighbours.py: anonymeter's Gower distances, only the head
    of numba's quicksort sorted) returns anonymeter's own `_nearest_neighbors` indices and distances exactly:
    ranges of 1 to 30,000 candidates around numba's insertion-sort threshold (15), 1 to all neighbours, tied
    distances across the cut (so the quicksort's own choice among equal records matters) and NaN distances."""
    from holdbench.metrics.anonymeter_bridge import WORKER

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    proc = subprocess.run([str(PYTHON), "-I", "-c", HEAD, str(WORKER.parent)], check=False, capture_output=True,
                          text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["cases"] == 120 and out["differ"] == 0, out
    assert out["ties_at_cut"] > 50, out  # the cut falls inside runs of equal distances, often


def test_head_sort_leaves_linkability_and_inference_as_anonymeter_gives_them(tmp_path):
    """Linkability and inference through the worker with its head sort (the default) and with anonymeter's full
    sort (`head_sort: false`): the same risk, interval, rates and warnings to the last digit."""
    frames = {"train": _awkward(800, 21), "control": _awkward(800, 22), "synthetic": _awkward(3000, 23)}
    frames["synthetic"].iloc[:400] = frames["train"].iloc[:400].to_numpy()  # near-copies: links to find
    results = {}
    for head in (True, False):
        config = {"seed": 4, "n_attacks": 120, "n_attacks_multi": 10, "n_cols": 3, "max_attempts": 1_000,
                  "n_neighbors": 5, "secret": "sex", "evaluators": ["linkability", "inference"], "head_sort": head}
        results[head] = _worker_results(tmp_path / str(head), frames, config)
    keys = ("risk", "ci_low", "ci_high", "attack_rate", "baseline_rate", "control_rate", "n_success",
            "n_baseline", "n_control", "warnings")
    for e in ("linkability", "inference"):
        assert {k: results[True][e][k] for k in keys} == {k: results[False][e][k] for k in keys}, e
    assert results[True]["linkability"]["n_success"] > 0 and results[True]["inference"]["n_success"] > 0

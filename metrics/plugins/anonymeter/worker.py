"""Run anonymeter's three evaluators; executed by the ISOLATED interpreter, never imported by holdbench.

Usage: <venv python> -I worker.py WORKDIR   (the `anonymeter` plug-in; see contracts/plugin_env.py)

WORKDIR holds `train.parquet` (T, anonymeter's `ori`), `control.parquet` (H, `control`),
`synthetic.parquet` (S, `syn`) and `config.json`, all written by metrics/anonymeter_bridge.py.
The worker writes `WORKDIR/result.json` and exits 0; exit code 3 with `result.json` =
{"missing": "..."} means anonymeter (or its stack) cannot be imported here.

This file imports only anonymeter (and what anonymeter itself loads), pandas, numpy and the
standard library: nothing from holdbench, whose environment has another numpy.

Determinism: anonymeter draws from numpy's global RNG (pandas `.sample`), from an unseeded
`np.random.default_rng()` (linkability baseline), from polars' global RNG (singling-out size
correction when |control| != |ori|) and from its own `seed` (singling-out queries). Before
each evaluator all of them are seeded from the one `seed` in config.json. It also draws from
lists whose order polars leaves to hashing (see `_stable_polars`): those are put in a fixed order.
"""

import json
import logging
import random
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

MISSING_EXIT = 3


class _Collect(logging.Handler):
    """Keeps anonymeter's logged warnings (e.g. 'could generate only N singling out queries')."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _stable_polars(pl) -> None:
    """Make polars' `DataFrame.group_by` and `Series.unique` keep first-appearance order.

    anonymeter builds its univariate queries from `df.group_by(col).len()` and its baseline
    queries from `df[col].unique()`; polars returns those groups in hash order, which changes
    from run to run, so the seeded draws would pick different queries. Same groups, fixed order.
    """
    if getattr(pl.DataFrame.group_by, "_holdbench_stable", False):
        return
    group_by, unique = pl.DataFrame.group_by, pl.Series.unique

    def stable_group_by(self, *by, maintain_order: bool = True, **named_by):
        return group_by(self, *by, maintain_order=maintain_order, **named_by)

    def stable_unique(self, *, maintain_order: bool = True):
        return unique(self, maintain_order=maintain_order)

    stable_group_by._holdbench_stable = True
    pl.DataFrame.group_by, pl.Series.unique = stable_group_by, stable_unique


def _cache_compiled() -> list:
    """Let numba keep the machine code of anonymeter's nearest-neighbour kernels between runs.

    Linkability and inference search with two numba-compiled functions (Gower distance, brute-force
    neighbours) that anonymeter compiles in every new process, ~4.4 CPU seconds each time, more than the
    search itself costs on a 50,000-row S. numba's own on-disk cache (`Dispatcher.enable_caching`, the
    same as `@jit(cache=True)`: beside the module when writable, else the user's cache folder, rebuilt
    when the source changes) turns the second and later runs into a load. The kernels and their results
    are unchanged: the cache stores what the compiler would build. Returns the names made cached."""
    try:
        import anonymeter.neighbors.mixed_types_kneighbors as kneighbors
        from numba.core.registry import CPUDispatcher
    except ImportError:  # another anonymeter layout: it compiles as before
        return []
    names = []
    for name, obj in sorted(vars(kneighbors).items()):
        if isinstance(obj, CPUDispatcher):
            obj.enable_caching()
            names.append(name)
    return names


def _seed_everything(seed: int, modules: dict) -> None:
    np.random.seed(seed)
    random.seed(seed)
    modules["singling"].pl.set_random_seed(seed)  # polars, reached through anonymeter's own import
    rng = np.random.default_rng(seed)
    linkability = modules["linkability"]

    def seeded_random_links(n_synthetic: int, n_attacks: int, n_neighbors: int) -> np.ndarray:
        # same draws as anonymeter's _random_links, from a seeded generator instead of default_rng()
        return np.array([rng.choice(n_synthetic, size=n_neighbors, replace=False) for _ in range(n_attacks)])

    linkability._random_links = seeded_random_links


def _summary(evaluator, seconds: float, cpu_seconds: float) -> dict:
    risk = evaluator.risk(confidence_level=0.95)
    res = evaluator.results(confidence_level=0.95)
    return {
        "risk": float(risk.value),
        "ci_low": float(risk.ci[0]),
        "ci_high": float(risk.ci[1]),
        "attack_rate": float(res.attack_rate.value),
        "baseline_rate": float(res.baseline_rate.value),
        "control_rate": None if res.control_rate is None else float(res.control_rate.value),
        "n_success": int(res.n_success),
        "n_baseline": int(res.n_baseline),
        "n_control": None if res.n_control is None else float(res.n_control),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
    }


def _run_one(name: str, cfg: dict, frames: dict, modules: dict) -> dict:
    ori, control, syn = frames["train"], frames["control"], frames["synthetic"]
    seed, n_attacks, n_jobs = int(cfg["seed"]), int(cfg["n_attacks"]), int(cfg["n_jobs"])
    _seed_everything(seed, modules)
    handler = _Collect()
    logger = logging.getLogger("anonymeter")
    logger.addHandler(handler)
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if name in ("singling_uni", "singling_multi"):
                ev = modules["singling"].SinglingOutEvaluator(
                    ori=ori, syn=syn, control=control, n_cols=int(cfg["n_cols"]),
                    n_attacks=n_attacks if name == "singling_uni" else int(cfg["n_attacks_multi"]),
                    max_attempts=cfg["max_attempts"], seed=seed)
                ev.evaluate(mode="univariate" if name == "singling_uni" else "multivariate")
            elif name == "linkability":
                aux = (list(cfg["aux_cols"][0]), list(cfg["aux_cols"][1]))
                ev = modules["linkability"].LinkabilityEvaluator(
                    ori=ori, syn=syn, control=control, aux_cols=aux, n_attacks=n_attacks,
                    n_neighbors=int(cfg["n_neighbors"]))
                ev.evaluate(n_jobs=n_jobs)
            elif name == "inference":
                secret = cfg["secret"]
                aux = [c for c in ori.columns if c != secret]
                ev = modules["inference"].InferenceEvaluator(
                    ori=ori, syn=syn, control=control, aux_cols=aux, secret=secret,
                    regression=bool(cfg["regression"]), n_attacks=n_attacks)
                ev.evaluate(n_jobs=n_jobs)
            else:
                raise ValueError(f"unknown evaluator {name!r}")
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            out = _summary(ev, seconds, cpu)  # inside: risk()/results() re-issue the baseline warning
        messages = handler.messages + [str(w.message) for w in caught]
    finally:
        logger.removeHandler(handler)
    out["warnings"] = list(dict.fromkeys(messages))
    return out


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: worker.py WORKDIR", file=sys.stderr)
        return 2
    workdir = Path(argv[1])
    cfg = json.loads((workdir / "config.json").read_text())
    try:
        import anonymeter.evaluators.inference_evaluator as inference
        import anonymeter.evaluators.linkability_evaluator as linkability
        import anonymeter.evaluators.singling_out_evaluator as singling
    except ImportError as exc:
        (workdir / "result.json").write_text(json.dumps({"missing": f"{type(exc).__name__}: {exc}"}))
        return MISSING_EXIT
    modules = {"singling": singling, "linkability": linkability, "inference": inference}
    _stable_polars(singling.pl)  # polars, reached through anonymeter's own import
    cached = _cache_compiled()
    frames = {k: pd.read_parquet(workdir / f"{k}.parquet") for k in ("train", "control", "synthetic")}
    results = {name: _run_one(name, cfg, frames, modules) for name in cfg["evaluators"]}
    from importlib.metadata import version

    payload = {"anonymeter_version": version("anonymeter"), "numpy_version": np.__version__,
               "numba_cached": cached, "results": results}
    (workdir / "result.json").write_text(json.dumps(payload, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Anonymeter's singling-out, linkability and inference risks (docs/definitions/attacks.md §9), run in an isolated interpreter.

anonymeter 1.1.0 pins numpy < 1.27 and cannot live in holdbench's environment (numpy 2), so
it is installed in its own virtual environment and driven through a subprocess:

  1. this module (main environment, no anonymeter import) writes T, H and S as parquet into a
     temporary directory, categorical columns as strings (missing = null) and numeric columns as
     float64, so both sides read back exactly the same values and dtypes;
  2. `<venv python> -I metrics/plugins/anonymeter/worker.py DIR` runs the evaluators with T as `ori`,
     H as `control` and S as `syn` and writes DIR/result.json;
  3. the JSON becomes an `AnonymeterResult`.

The interpreter is, in this order: the `python` option, the environment variable
HOLDBENCH_ANONYMETER_PYTHON, `<repo>/.venv-anonymeter/bin/python`. If none exists the risks are
NaN and `anonymeter_reason` gives the command that installs it (`install_command()`).

The study setting (the defaults of `Anonymeter`): 200 attacks per evaluator (anonymeter: 500)
except multivariate singling-out, which gets 100 on 3 columns with at most 200,000 query
attempts (anonymeter: 500 and 10,000,000): on adult only ~0.2% of random 3-column predicates
drawn from S single out a record of S, so that attack needs tens of thousands of attempts (the
worker counts them from an index, ~0.05 CPU s per 1,000 attempts on a 50,000-row S, where
anonymeter's own counting takes ~0.3; same results); with these settings the four evaluators take
about 7.5 CPU s on adult with |S| = 50,000, the worker about 9 with its start-up (measured by
scripts/bench/bench_anonymeter.py). Linkability: the columns of T split in two halves in T's order
(the first ceil(p/2) known to the attacker from one source, the rest from the other); a link is
claimed when the two halves share one of their 10 nearest S records (anonymeter's default of 1
neighbour never beats its random baseline on adult: 0 links in 500 attacks on synthpop, so the
risk would always be "not meaningful"); `link_split="qi"` uses the dataset's quasi-identifiers
against the other columns.
Inference: the secret is `data.sensitive`, else `data.target` (one secret, not an average),
guessed from all other columns by anonymeter's nearest-neighbour predictor. Every random draw
of anonymeter is seeded from `seed` (default: the cell's `data.seed`), so a rerun is identical.
A risk is anonymeter's residual risk against the control set, (attack − control) /
(1 − control), clipped to [0, 1], with its 95% interval. When anonymeter warns that the attack
is no better than its random baseline (or the control attack succeeds always) the number is
kept but `<evaluator>_meaningful` is False and `<evaluator>_warning` holds anonymeter's text.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.contracts import plugin_env
from holdbench.metrics.registry import EvalData, MetricFamily, metric

#: the `anonymeter` plug-in: the folder metrics/plugins/anonymeter/ (plugin.toml, requirements.txt, worker.py)
ENV = plugin_env.load_plugin(Path(__file__).parent / "plugins" / "anonymeter")
WORKER = ENV.worker
EVALUATORS = ("singling_uni", "singling_multi", "linkability", "inference")
LINK_SPLITS = ("halves", "qi")
REGRESSION_MIN_LEVELS = 20
"""A numeric secret with more distinct values in T than this is guessed as a regression (anonymeter's
5% relative tolerance); otherwise, and for a categorical secret, a guess must match exactly."""
_NOT_MEANINGFUL = ("as good or worse as baseline", "control attack is 100%")


def install_command() -> str:
    """The shell command that creates the isolated interpreter the bridge looks for by default."""
    return ENV.install_command()


def anonymeter_python(override: str | os.PathLike | None = None) -> Path:
    """The interpreter to run: the option, else $HOLDBENCH_ANONYMETER_PYTHON, else the repo's venv."""
    return ENV.python(override)


def _risk(label: str, what: str) -> object:
    return metric(f"Anonymeter {label} risk", "attack", direction="lower", digits=3,
                  meaning=f"anonymeter's {what} risk of T given S, in excess of the same attack on H "
                          f"(control): (attack - control)/(1 - control), 0 ideal")


def _nan() -> object:
    return field(default=math.nan)


def _none() -> object:
    return field(default=None)


@dataclass(frozen=True)
class AnonymeterResult:
    """Anonymeter's risks (lower is better, 0 ideal) with 95% intervals and per-evaluator diagnostics.

    For each evaluator E in singling_uni, singling_multi, linkability, inference:
    `anonymeter_E_risk` (the metric), `_ci_low/_ci_high` (anonymeter's 95% interval, clipped to
    [0, 1]), `_attack_rate/_baseline_rate/_control_rate` (success rates of the attack on T, of the
    random-guess baseline, of the attack on H), `_warning` (anonymeter's own warnings, verbatim,
    joined by ' | '; None if it gave none) and `_meaningful` (False when the attack is no better
    than the baseline or the control attack always succeeds: then the risk says nothing),
    `seconds_<evaluator>_cpu` (CPU seconds the worker spent on it).
    """

    anonymeter_singling_uni_risk: float = _risk(
        "singling-out (univariate)", "univariate singling-out (one-column predicates from S that isolate one record)")
    anonymeter_singling_multi_risk: float = _risk(
        "singling-out (multivariate)", "multivariate singling-out (n_cols-column predicates from S)")
    anonymeter_linkability_risk: float = _risk(
        "linkability", "linkability (the two halves of a record re-joined through their nearest S records)")
    anonymeter_inference_risk: float = _risk(
        "inference", "attribute-inference (the secret column guessed from the nearest S record)")
    anonymeter_singling_uni_ci_low: float = _nan()
    anonymeter_singling_uni_ci_high: float = _nan()
    anonymeter_singling_uni_attack_rate: float = _nan()
    anonymeter_singling_uni_baseline_rate: float = _nan()
    anonymeter_singling_uni_control_rate: float = _nan()
    anonymeter_singling_uni_warning: str | None = _none()
    anonymeter_singling_uni_meaningful: bool | None = _none()
    seconds_anonymeter_singling_uni_cpu: float = _nan()
    anonymeter_singling_multi_ci_low: float = _nan()
    anonymeter_singling_multi_ci_high: float = _nan()
    anonymeter_singling_multi_attack_rate: float = _nan()
    anonymeter_singling_multi_baseline_rate: float = _nan()
    anonymeter_singling_multi_control_rate: float = _nan()
    anonymeter_singling_multi_warning: str | None = _none()
    anonymeter_singling_multi_meaningful: bool | None = _none()
    seconds_anonymeter_singling_multi_cpu: float = _nan()
    anonymeter_linkability_ci_low: float = _nan()
    anonymeter_linkability_ci_high: float = _nan()
    anonymeter_linkability_attack_rate: float = _nan()
    anonymeter_linkability_baseline_rate: float = _nan()
    anonymeter_linkability_control_rate: float = _nan()
    anonymeter_linkability_warning: str | None = _none()
    anonymeter_linkability_meaningful: bool | None = _none()
    seconds_anonymeter_linkability_cpu: float = _nan()
    anonymeter_inference_ci_low: float = _nan()
    anonymeter_inference_ci_high: float = _nan()
    anonymeter_inference_attack_rate: float = _nan()
    anonymeter_inference_baseline_rate: float = _nan()
    anonymeter_inference_control_rate: float = _nan()
    anonymeter_inference_warning: str | None = _none()
    anonymeter_inference_meaningful: bool | None = _none()
    seconds_anonymeter_inference_cpu: float = _nan()
    anonymeter_inference_secret: str | None = None
    """The column the inference attack guesses (data.sensitive, else data.target)."""
    anonymeter_n_attacks: int | None = None
    """Attacks run by each evaluator but multivariate singling-out (n_attacks, capped at |T| and |H|)."""
    anonymeter_n_attacks_multi: int | None = None
    """Attacks run by multivariate singling-out (n_attacks_multi, capped likewise)."""
    seconds_anonymeter: float = math.nan
    """Wall seconds of the worker subprocess, start-up included."""
    seconds_anonymeter_cpu: float = math.nan
    """CPU seconds (user + system) of the worker subprocess, start-up and numba compilation included."""
    anonymeter_version: str | None = None
    anonymeter_reason: str | None = None
    """Why some or all risks are NaN (holdout row, not installed, no secret column); None if none are."""


def _nan_result(reason: str, **extra: object) -> AnonymeterResult:
    return AnonymeterResult(**{f"anonymeter_{e}_risk": math.nan for e in EVALUATORS},
                            anonymeter_reason=reason, **extra)


class Anonymeter(MetricFamily):
    """Anonymeter 1.1.0 in its own interpreter; T = ori, H = control, S = syn (see the module doc)."""

    name = "anonymeter"
    result_type = AnonymeterResult
    definition = "definitions/attacks.md#9-membership-inference-holdbenchs-attack-panel"
    reference = (
        "Every risk, interval, attack rate and control rate equals anonymeter 1.1 called directly in "
        "its venv on the same data, seeds and options exactly (==), for all four evaluators: "
        "tests/metrics/test_anonymeter_reference.py."
    )

    def __init__(self, n_attacks: int = 200, n_attacks_multi: int | None = 100, n_cols: int = 3,
                 max_attempts: int | None = 200_000,
                 link_split: str = "halves", n_neighbors: int = 10, seed: int | None = None,
                 timeout_seconds: float = 1800.0, python: str | None = None) -> None:
        """n_attacks: attacks per evaluator (anonymeter's default: 500).
        n_attacks_multi: attacks of the multivariate singling-out (None: n_attacks).
        n_cols: columns per predicate of the multivariate singling-out.
        max_attempts: cap on the multivariate singling-out's query attempts, passed to anonymeter (None: no cap).
        link_split: linkability's two sources: halves (T's columns in two halves, in T's order) or qi (the
        dataset's quasi-identifiers against the other columns).
        n_neighbors: linkability claims a link when the two sources share one of their n_neighbors nearest S records.
        seed: the seed of every random draw of anonymeter (None: the cell's seed).
        timeout_seconds: wall-clock limit of the anonymeter worker.
        python: the interpreter that runs anonymeter (None: $HOLDBENCH_ANONYMETER_PYTHON, else the plug-in's venv)."""
        n_attacks_multi = n_attacks if n_attacks_multi is None else n_attacks_multi
        for opt, value, low in (("n_attacks", n_attacks, 1), ("n_attacks_multi", n_attacks_multi, 1),
                                ("n_cols", n_cols, 1), ("n_neighbors", n_neighbors, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"anonymeter option {opt} must be an integer >= {low}, got {value!r}")
        if max_attempts is not None and (isinstance(max_attempts, bool) or not isinstance(max_attempts, int)
                                         or max_attempts < 1):
            raise ValueError(f"anonymeter option max_attempts must be a positive integer or null, got {max_attempts!r}")
        if link_split not in LINK_SPLITS:
            raise ValueError(f"anonymeter option link_split must be one of {LINK_SPLITS}, got {link_split!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"anonymeter option seed must be a non-negative integer or null, got {seed!r}")
        if not timeout_seconds or timeout_seconds <= 0:
            raise ValueError(f"anonymeter option timeout_seconds must be positive, got {timeout_seconds!r}")
        self.n_attacks, self.n_attacks_multi = n_attacks, n_attacks_multi
        self.n_cols, self.max_attempts = n_cols, max_attempts
        self.link_split, self.n_neighbors, self.seed = link_split, n_neighbors, seed
        self.timeout_seconds, self.python = float(timeout_seconds), python

    def unavailable(self) -> str | None:
        """Why anonymeter cannot run here (no interpreter, a venv without the package or built from
        other requirements), or None. Cheap (file-system looks), so the harness can ask before every
        run and re-evaluate cells that got n/a while it was missing."""
        return ENV.unavailable(self.python)

    def compute(self, data: EvalData) -> AnonymeterResult:
        columns = list(data.train.columns)
        kinds = _checked_kinds(data, columns)
        if data.holdout_row:
            return _nan_result("undefined for the holdout reference row: S is H, anonymeter's control set")
        missing = self.unavailable()
        if missing:
            return _nan_result(missing)
        python = anonymeter_python(self.python)
        config, skipped, secret = self._config(data, columns, kinds)
        frames = {"train": data.train, "control": data.holdout, "synthetic": data.synthetic}
        with tempfile.TemporaryDirectory(prefix="holdbench-anonymeter-") as tmp:
            workdir = Path(tmp)
            write_inputs(workdir, frames, columns, kinds, config)
            payload, seconds, cpu = run_worker(python, workdir, self.timeout_seconds, data.n_jobs)
        if "missing" in payload:
            return _nan_result(f"anonymeter not installed: {install_command()} ({python}: {payload['missing']})")
        values: dict[str, object] = {f"anonymeter_{e}_risk": math.nan for e in EVALUATORS}
        for name in config["evaluators"]:  # only what was asked: anything else in the JSON is ignored
            values.update(_evaluator_fields(name, payload["results"].get(name)))
        return AnonymeterResult(**values, anonymeter_inference_secret=secret,
                                anonymeter_n_attacks=config["n_attacks"],
                                anonymeter_n_attacks_multi=config["n_attacks_multi"],
                                seconds_anonymeter=seconds, seconds_anonymeter_cpu=cpu,
                                anonymeter_version=payload.get("anonymeter_version"),
                                anonymeter_reason="; ".join(skipped) or None)

    def _config(self, data: EvalData, columns: list[str], kinds: dict[str, str]) -> tuple[dict, list[str], str | None]:
        evaluators, skipped = ["singling_uni", "singling_multi"], []
        if self.n_cols > len(columns):
            raise ValueError(f"anonymeter option n_cols={self.n_cols} exceeds the {len(columns)} columns")
        if self.link_split == "qi":
            qis = [c for c in data.quasi_identifiers if c in columns]
            aux = [qis, [c for c in columns if c not in qis]]
        else:
            half = (len(columns) + 1) // 2
            aux = [columns[:half], columns[half:]]
        if aux[0] and aux[1]:
            evaluators.append("linkability")
        else:
            skipped.append(f"linkability: the {self.link_split!r} split leaves one side without columns")
        secret = data.sensitive or data.target
        if secret is not None and secret not in columns:
            raise ValueError(f"anonymeter: secret column {secret!r} (sensitive/target) is not a column of T")
        if secret is None:
            skipped.append("inference: the dataset names neither a sensitive attribute nor a target")
        elif len(columns) < 2:
            skipped.append("inference: no columns besides the secret")
            secret = None
        else:
            evaluators.append("inference")
        regression = (secret is not None and kinds[secret] == "numeric"
                      and data.train[secret].nunique() > REGRESSION_MIN_LEVELS)
        cap = min(len(data.train), len(data.holdout))
        if cap < 1:
            raise ValueError("anonymeter: T and H must have at least one row")
        config = {"seed": data.seed if self.seed is None else self.seed, "n_attacks": min(self.n_attacks, cap),
                  "n_attacks_multi": min(self.n_attacks_multi, cap),
                  "n_cols": self.n_cols, "max_attempts": self.max_attempts, "aux_cols": aux,
                  "n_neighbors": self.n_neighbors, "secret": secret, "regression": bool(regression),
                  "n_jobs": max(1, int(data.n_jobs)), "evaluators": evaluators}
        return config, skipped, secret


def write_inputs(workdir: Path, frames: dict[str, pd.DataFrame], columns: list[str], kinds: dict[str, str],
                 config: dict) -> None:
    """The worker's inputs in workdir: `<name>.parquet` per frame (train, control, synthetic; encoded by
    `_encode`) and config.json."""
    for name, df in frames.items():
        _encode(df, columns, kinds).to_parquet(workdir / f"{name}.parquet", index=False)
    (workdir / "config.json").write_text(json.dumps(config, indent=1))


def run_worker(python: Path, workdir: Path, timeout: float, n_jobs: int = 1) -> tuple[dict, float, float]:
    """Run the worker on a prepared directory (holdbench.contracts.plugin_env.run_worker); (parsed result.json,
    wall seconds, CPU seconds), or ({"missing": ...}, ...) when anonymeter cannot be imported there."""
    payload, seconds, cpu = plugin_env.run_worker("anonymeter", python, WORKER, workdir, timeout, n_jobs)
    if "missing" not in payload and not isinstance(payload.get("results"), dict):
        raise RuntimeError(f"anonymeter worker result.json has no 'results' object: {str(payload)[:300]}")
    return payload, seconds, cpu


def _evaluator_fields(name: str, res: object) -> dict[str, object]:
    p = f"anonymeter_{name}"
    try:
        warnings = [str(w) for w in res.get("warnings", [])]
        attack, baseline = float(res["attack_rate"]), float(res["baseline_rate"])
        control = math.nan if res.get("control_rate") is None else float(res["control_rate"])
        meaningful = attack > baseline and not any(k in w for w in warnings for k in _NOT_MEANINGFUL)
        return {f"{p}_risk": float(res["risk"]), f"{p}_ci_low": float(res["ci_low"]),
                f"{p}_ci_high": float(res["ci_high"]), f"{p}_attack_rate": attack,
                f"{p}_baseline_rate": baseline, f"{p}_control_rate": control,
                f"{p}_warning": " | ".join(warnings) or None, f"{p}_meaningful": meaningful,
                f"seconds_{p}_cpu": float(res.get("cpu_seconds", math.nan))}
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise RuntimeError(f"anonymeter worker result for {name} is malformed ({exc!r}): {str(res)[:300]}") from None


def _checked_kinds(data: EvalData, columns: list[str]) -> dict[str, str]:
    kinds = {}
    for c in columns:
        kind = data.kinds.get(c)
        if kind not in ("categorical", "numeric"):
            raise ValueError(f"anonymeter: column {c!r} needs kind 'categorical' or 'numeric', got {kind!r}")
        kinds[c] = kind
    for label, df in (("holdout", data.holdout), ("synthetic", data.synthetic)):
        if list(df.columns) != columns:
            raise ValueError(f"anonymeter: {label} columns {list(df.columns)} differ from T's {columns}")
    return kinds


def _encode(df: pd.DataFrame, columns: list[str], kinds: dict[str, str]) -> pd.DataFrame:
    """Categoricals -> str (missing -> None), numerics -> float64 (unparseable -> NaN), index reset."""
    out = {}
    for c in columns:
        s = df[c].reset_index(drop=True)
        if kinds[c] == "numeric":
            if pd.api.types.is_bool_dtype(s):
                s = s.astype("float64")
            out[c] = pd.to_numeric(s, errors="coerce").astype("float64")
        else:
            out[c] = _as_strings(s)
    return pd.DataFrame(out, columns=columns)


def _as_strings(s: pd.Series) -> pd.Series:
    """Category labels as text; integral floats (an int column that met a NaN) print as integers."""
    if pd.api.types.is_float_dtype(s):
        values = s.dropna().to_numpy()
        if np.isfinite(values).all() and (values == np.round(values)).all():
            s = s.astype("Int64")
    return pd.Series([None if pd.isna(v) else str(v) for v in s], dtype=object, index=s.index)

"""Quality gates after ANITA D2.2: per-cell pass/fail targets read from a YAML file.

Two kinds of target (conf/gates/default.yaml shows both, benchmark/schemas/gates.schema.yaml
defines them):

- a **distribution test** (`test: dcr` or `test: nndr`), D2.2's privacy target: the distances of
  S to T are not systematically smaller than those of a reference. The test is a one-sided
  Brunner-Munzel test (scipy; valid with the heavy ties of integer Hamming distances and with
  unequal spreads), and the effect size is the probability of superiority
  A = P(d_S < d_ref) + P(d_S = d_ref) / 2, reported as A - 0.5 (0 = no difference, 0.5 = every
  synthetic record closer to T than every reference record). A cell fails when p < alpha AND
  A - 0.5 > max_effect.
  * dcr: the `dcr_histogram` artifact (counts of S by Hamming distance to its nearest T record
    and to its nearest H record). The reference is H's own distance to T (D2.2's form) when the
    table has a `holdout_to_train` column, otherwise S's distance to H (the same S, so the test
    asks "is S closer to T than to unseen data").
  * nndr: the `nndr_distribution` artifact (101 quantiles of the Gower d1/d2 ratio to T, for S
    and for H). The per-record values are rebuilt from the quantile function at the true sample
    sizes (n_privacy and n_holdout), so the p-value is an approximation within 1% of the ranks.
- a **threshold** on any registry metric (`metric: F2_ratio, max: 2`), or on one end of its
  interval (`use: ci_low`).

`verdicts(results, gates)` judges every cell of a study: one row per cell x target with the
value, the threshold, the p-value, the verdict (pass / FAIL / n/a), a one-line detail and `why`:
the verdict in words, with what was measured and what is allowed ("S's records nearer to T than
H's records are: A = 0.545 > 0.52 allowed, p = 4.2e-08"); `cell_verdicts` joins them per cell.
A cell that is not ok has one row "cell status": FAIL for error, timeout and oom (nothing was
evaluated), n/a for skipped. The holdout reference row (S = H) is never judged.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

PASS, FAIL, NA = "pass", "FAIL", "n/a"
VERDICT_COLUMNS = ("cell_id", "dataset", "synthesizer", "seed", "reference", "target", "value", "threshold",
                   "pvalue", "verdict", "detail", "why")
_SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "gates.schema.yaml"
_NOT_EVALUATED = ("error", "timeout", "oom")


@dataclass(frozen=True)
class Target:
    """One named gate. Exactly one of `test` / `metric` is set."""

    name: str
    test: str | None = None
    """'dcr' or 'nndr': D2.2's distribution test."""
    alpha: float = 0.05
    """Significance level of the one-sided test."""
    max_effect: float = 0.02
    """Largest tolerated A - 0.5 (probability of superiority minus one half)."""
    artifact: str | None = None
    """The artifact table a test reads: by default dcr_histogram (dcr) or nndr_distribution (nndr); a table
    with the same columns under another name, e.g. seq_dcr_histogram or subject_nndr_distribution of a
    sequential cell (one distance per subject)."""
    metric: str | None = None
    """A registry metric name (or the name of one end of its interval)."""
    min: float | None = None
    max: float | None = None
    use: str = "value"
    """value, ci_low or ci_high: which number of the metric is compared."""
    required: bool = False
    """A missing input is a failure rather than n/a."""
    description: str = ""

    def shift_fails(self, res: ShiftTest) -> bool:
        """A distribution test's verdict: significant (p < alpha) AND larger than max_effect."""
        return res.pvalue < self.alpha and res.effect > self.max_effect

    def admits(self, value: float) -> bool:
        """A threshold's verdict: value within [min, max] (a bound not set does not apply)."""
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    @property
    def threshold(self) -> str:
        if self.test is not None:
            return f"fail if p < {self.alpha:g} and effect > {self.max_effect:g}"
        parts = []
        if self.min is not None:
            parts.append(f">= {self.min:g}")
        if self.max is not None:
            parts.append(f"<= {self.max:g}")
        return " and ".join(parts)


@dataclass(frozen=True)
class Gates:
    """A gates file, read and checked."""

    source: str
    targets: tuple[Target, ...]
    description: str = ""


#: the gates a study is judged with unless told otherwise, by its kind (study.json's `kind`)
DEFAULT_GATES = {"flat": "default", "sequential": "sequential"}


def default_gates(study: dict) -> str:
    """conf/gates/<name> of a study's kind: default (flat tables) or sequential (subject + event data)."""
    return DEFAULT_GATES.get(str(study.get("kind") or "flat"), DEFAULT_GATES["flat"])


def gates_path(name_or_path: str | Path) -> Path:
    """A path to an existing file as given, else conf/gates/<name>.yaml."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ValueError(f"gates file {path} does not exist")
        return path
    from holdbench.benchmark.config import check_name, config_file, config_files, did_you_mean

    check_name("gates", str(name_or_path))
    path = config_file("gates", str(name_or_path))  # conf/gates/ and the config search path
    if not path.is_file():
        raise ValueError(f"no gates config {name_or_path!r}{did_you_mean([name_or_path], config_files('gates'))}: "
                         f"{path} does not exist (known: {config_files('gates')})")
    return path


def load_gates(name_or_path: str | Path = "default", specs: list | None = None) -> Gates:
    """Read and validate a gates YAML; with `specs`, every `metric:` must name a registry entry."""
    import yaml

    path = gates_path(name_or_path)
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"gates file {path}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    return parse_gates(raw, str(path), specs)


def parse_gates(raw: Any, source: str = "<gates>", specs: list | None = None) -> Gates:
    """Validate a gates mapping against the schema and build the targets."""
    import jsonschema
    import yaml

    if not isinstance(raw, dict):
        raise ValueError(  # noqa: TRY004 - a usage error (exit 2), as the CLI expects
            f"gates file {source}: not a gates file (expected a YAML mapping with `targets:`, got {type(raw).__name__})")
    schema = yaml.safe_load(_SCHEMA.read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(raw), key=lambda e: list(e.path))
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.path) or "(top level)"
        if err.validator == "oneOf" and isinstance(err.instance, dict):
            message = _target_problem(err.instance)
        elif err.validator == "additionalProperties" and isinstance(err.instance, dict):
            known = sorted(err.schema.get("properties") or {})
            message = f"unknown key(s) {sorted(set(err.instance) - set(known))} (known: {', '.join(known)})"
        elif err.validator == "type":  # never echo the value: it may be any file's content
            message = f"expected {err.validator_value}, got {type(err.instance).__name__}"
        else:
            message = err.message
        raise ValueError(f"gates file {source}: `{key}`: {message}")
    targets = tuple(Target(name=str(name), **body) for name, body in raw["targets"].items())
    for t in targets:
        if t.min is not None and t.max is not None and t.min > t.max:
            raise ValueError(f"gates file {source}: `targets.{t.name}`: min {t.min} is above max {t.max}")
    if specs is not None:
        check_metrics(Gates(source, targets), specs)
    return Gates(source, targets, str(raw.get("description") or ""))


def _target_problem(body: dict) -> str:
    """Why a target matches neither form, in words."""
    if "test" in body and "metric" in body:
        return "a target has either `test:` or `metric:`, not both"
    if "test" in body:
        extra = sorted(set(body) - {"test", "alpha", "max_effect", "artifact", "required", "description"})
        if extra:
            return (f"unknown key(s) {extra} for a test target (known: alpha, max_effect, artifact, required, "
                    "description)")
        return f"test must be dcr or nndr, alpha in (0, 1), max_effect in [0, 0.5]; got {body}"
    if "metric" in body:
        extra = sorted(set(body) - {"metric", "min", "max", "use", "required", "description"})
        if extra:
            return f"unknown key(s) {extra} for a metric target (known: min, max, use, required, description)"
        if "min" not in body and "max" not in body:
            return f"metric target {body['metric']!r} needs `min:` or `max:`"
        return f"min/max must be numbers and use one of value, ci_low, ci_high; got {body}"
    return "a target needs `test: dcr|nndr` or `metric: <registry metric>`"


def metric_names(specs: list) -> dict[str, Any]:
    """Name -> spec of every registry metric and of the two ends of its interval."""
    out: dict[str, Any] = {}
    for spec in specs:
        out[spec.name] = spec
        for end in spec.interval or ():
            out[end] = spec
    return out


def check_metrics(gates: Gates, specs: list) -> None:
    """Every metric target names a registry metric with an interval where `use` asks for one.

    A metric that `specs` (the families being judged) lack but a family of some metrics config computes
    is not an error: its target is n/a on every cell, naming that family (`uncomputed_reason`), as for
    any other missing input. A name no family gives is refused, with the nearest names."""
    known = metric_names(specs)
    for t in gates.targets:
        if t.metric is None:
            continue
        spec = known.get(t.metric)
        if spec is None:
            elsewhere = metrics_of_every_family()
            if t.metric not in elsewhere:
                from holdbench.benchmark.config import did_you_mean

                raise ValueError(f"gates file {gates.source}: target {t.name!r}: {t.metric!r} is not a metric of "
                                 f"any metric family{did_you_mean([t.metric], [*known, *elsewhere])}")
            spec = elsewhere[t.metric]
        if t.use != "value" and not spec.interval:
            raise ValueError(f"gates file {gates.source}: target {t.name!r}: {t.metric!r} has no interval, "
                             f"so `use: {t.use}` has nothing to compare")


def metrics_of_every_family() -> dict[str, Any]:
    """Metric name (and the names of its interval's ends) -> its registry spec, over the families of every
    metrics config on the config search path."""
    return _every_family()[0]


def families_writing(field: str) -> list[str]:
    """The metric families (of any metrics config on the search path) whose results hold `field`: a metric,
    an artifact (`<field>.csv`) or another value of their result type."""
    return sorted(_every_family()[1].get(field, ()))


def _every_family() -> tuple[dict[str, Any], dict[str, set[str]]]:
    """(metrics_of_every_family, field -> family names) for the current config search path, built once; a
    metrics config that cannot be read is left out here (a study that uses it is refused when it loads it)."""
    from holdbench.benchmark import config as hconfig

    key = tuple(str(p) for p in hconfig.search_path())
    if key not in _EVERY_FAMILY:
        import dataclasses

        from holdbench.metrics.registry import specs_of

        metrics: dict[str, Any] = {}
        fields: dict[str, set[str]] = {}
        for cfg_name in hconfig.available("metrics"):
            try:
                classes = hconfig.metric_family_classes(hconfig.group_config("metrics", cfg_name))
            except (ImportError, ValueError):  # ConfigError is a ValueError
                continue
            for family, cls in classes.items():
                metrics.update(metric_names(specs_of(cls.result_type)))
                for f in dataclasses.fields(cls.result_type):
                    fields.setdefault(f.name, set()).add(family)
        _EVERY_FAMILY[key] = (metrics, fields)
    return _EVERY_FAMILY[key]


_EVERY_FAMILY: dict[tuple[str, ...], tuple[dict, dict]] = {}


def uncomputed_reason(metric: str) -> str:
    """Why a gate's metric has no value when the families judged do not include one that computes it."""
    return f"{metric} not computed{_given_by(metric) or ': no metric family gives it'}"


def _given_by(field: str) -> str:
    """' (written by the metric family 'privacy', which this evaluation skipped or does not have)', or ''."""
    families = families_writing(field)
    if not families:
        return ""
    return (f" (written by the metric family {' or '.join(repr(f) for f in families)}, which this evaluation "
            f"skipped or does not have)")


# ---------------------------------------------------------------------------------------------
# the distribution test


@dataclass(frozen=True)
class ShiftTest:
    """S's distances to T against a reference sample: is S systematically closer?"""

    effect: float
    """A - 0.5 where A = P(d_S < d_ref) + P(d_S = d_ref)/2; 0 = no shift, positive = S closer to T."""
    pvalue: float
    """One-sided Brunner-Munzel p-value of 'S stochastically smaller than the reference'."""
    n_synthetic: int
    n_reference: int


def superiority(values_s: np.ndarray, counts_s: np.ndarray, values_r: np.ndarray, counts_r: np.ndarray) -> float:
    """A = P(S < R) + P(S = R)/2 for two weighted samples (values with counts), exactly."""
    order = np.argsort(values_r, kind="stable")
    vr, cr = values_r[order].astype(float), counts_r[order].astype(float)
    cum = np.concatenate([[0.0], np.cumsum(cr)])
    n_r, n_s = cum[-1], float(np.sum(counts_s))
    left = np.searchsorted(vr, values_s, side="left")
    right = np.searchsorted(vr, values_s, side="right")
    greater = n_r - cum[right]           # reference values strictly above each S value
    equal = cum[right] - cum[left]
    return float(np.sum(counts_s * (greater + 0.5 * equal)) / (n_s * n_r))


def shift_test(values_s: np.ndarray, counts_s: np.ndarray, values_r: np.ndarray,
               counts_r: np.ndarray) -> ShiftTest:
    """One-sided Brunner-Munzel test of S < reference on weighted samples (values with counts)."""
    from scipy import stats

    counts_s = np.asarray(counts_s, dtype=np.int64)
    counts_r = np.asarray(counts_r, dtype=np.int64)
    if (counts_s < 0).any() or (counts_r < 0).any():
        raise ValueError("distance histogram: counts must be non-negative")
    n_s, n_r = int(counts_s.sum()), int(counts_r.sum())
    if n_s < 2 or n_r < 2:
        return ShiftTest(math.nan, math.nan, n_s, n_r)
    values_s, values_r = np.asarray(values_s, dtype=float), np.asarray(values_r, dtype=float)
    a = superiority(values_s, counts_s, values_r, counts_r)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(stats.brunnermunzel(np.repeat(values_s, counts_s), np.repeat(values_r, counts_r),
                                      alternative="less").pvalue)
    if math.isnan(p):  # no variance inside either sample: complete separation or identical samples
        p = 0.0 if a > 0.5 else 1.0
    return ShiftTest(a - 0.5, p, n_s, n_r)


#: the artifact table each test reads unless its target names another
TEST_ARTIFACTS = {"dcr": "dcr_histogram", "nndr": "nndr_distribution"}
#: metrics.json keys holding the NNDR test's sample sizes, first present wins: S's (flat: the rows of S whose
#: distances were computed; sequential: S's subjects) and H's (rows or subjects)
_N_SYNTHETIC = ("n_privacy", "n_synthetic", "n_subjects_synthetic")
_N_HOLDOUT = ("n_holdout", "n_subjects_holdout")


def _dcr_inputs(cell, artifact: str = TEST_ARTIFACTS["dcr"]) -> tuple[tuple, str] | str:
    table = cell.artifacts.get(artifact)
    if table is None or not {"distance", "to_train"} <= set(table.columns):
        return f"no {artifact}.csv in this cell{_given_by(artifact)}"
    ref_col, ref_name = (("holdout_to_train", "H's DCR to T") if "holdout_to_train" in table.columns
                         else ("to_holdout", "S's DCR to H"))
    if ref_col not in table.columns:
        return f"{artifact}.csv has no {ref_col} column"
    t = table[["distance", "to_train", ref_col]].apply(pd.to_numeric, errors="coerce").dropna()
    d = t["distance"].to_numpy()
    return (d, t["to_train"].to_numpy(), d, t[ref_col].to_numpy()), f"S's Hamming DCR to T vs {ref_name}"


def _sample_from_quantiles(quantiles: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """n values whose empirical distribution follows the given quantile function."""
    probs = (np.arange(n) + 0.5) / n
    return np.interp(probs, quantiles, values)


def _nndr_inputs(cell, artifact: str = TEST_ARTIFACTS["nndr"]) -> tuple[tuple, str] | str:
    table = cell.artifacts.get(artifact)
    if table is None or not {"quantile", "synthetic", "holdout"} <= set(table.columns):
        return f"no {artifact}.csv in this cell{_given_by(artifact)}"
    t = table[["quantile", "synthetic", "holdout"]].apply(pd.to_numeric, errors="coerce").dropna()
    if len(t) < 2:
        return f"{artifact}.csv has fewer than 2 quantiles"
    n_s = next(filter(None, (_count(cell.metrics.get(k)) for k in _N_SYNTHETIC)), 0)
    n_h = next(filter(None, (_count(cell.metrics.get(k)) for k in _N_HOLDOUT)), 0)
    if not n_s or not n_h:
        return (f"metrics.json lacks {'/'.join(_N_SYNTHETIC)} or {'/'.join(_N_HOLDOUT)} (the sample sizes of "
                f"the NNDR test){_given_by(_N_SYNTHETIC[0])}")
    q = t["quantile"].to_numpy()
    s = np.round(_sample_from_quantiles(q, t["synthetic"].to_numpy(), n_s), 12)
    h = np.round(_sample_from_quantiles(q, t["holdout"].to_numpy(), n_h), 12)
    vs, cs = np.unique(s, return_counts=True)
    vh, ch = np.unique(h, return_counts=True)
    return (vs, cs, vh, ch), "S's Gower NNDR d1/d2 to T vs H's (rebuilt from 101 quantiles)"


def _count(value: Any) -> int:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return 0
    return int(v) if math.isfinite(v) and v > 0 else 0


# ---------------------------------------------------------------------------------------------
# judging cells


def _row(cell, target: str, value: float, threshold: str, pvalue: float, verdict: str, detail: str,
         why: str = "") -> dict:
    return {"cell_id": cell.cell_id, "dataset": cell.dataset, "synthesizer": cell.synthesizer, "seed": cell.seed,
            "reference": is_reference(cell), "target": target, "value": value, "threshold": threshold,
            "pvalue": pvalue, "verdict": verdict, "detail": detail, "why": why or detail}


def _missing(cell, t: Target, why: str) -> dict:
    verdict = FAIL if t.required else NA
    detail = why + (" (required)" if t.required else "")
    return _row(cell, t.name, math.nan, t.threshold, math.nan, verdict, detail, f"{t.name}: {detail}")


#: what a distribution test's A measures, in words
_TEST_WORDS = {"dcr": "how often S is nearer to T than H is (D2.2, Hamming DCR; 0.5 = as often)",
               "nndr": "how often S's NNDR to T is below H's (D2.2; 0.5 = as often)"}


#: what a distribution test compares, and with which reference: the name a report gives its verdict
_TEST_NAMES = {"dcr": "DCR distribution S→T vs H→T (Hamming, Brunner-Munzel)",
               "nndr": "NNDR distribution S→T vs H→T (Gower d1/d2, Brunner-Munzel)"}


def verdict_name(t: Target, specs: list) -> str:
    """A gate named by what it tests and its reference, e.g. 'DCR share vs holdout, 95% interval low <= 0.52'."""
    if t.test is not None:
        return _TEST_NAMES[t.test]
    spec = metric_names(specs).get(t.metric) or metrics_of_every_family().get(t.metric)
    label = spec.label if spec is not None else t.metric
    end = {"ci_low": ", 95% interval low", "ci_high": ", 95% interval high"}.get(t.use, "")
    ref = " vs holdout" if t.metric in ("dcr_share", "gower_dcr_share") else ""
    return f"{label}{ref}{end} {t.threshold}"


def _why_test(cell, t: Target, res: ShiftTest, fails: bool) -> str:
    """A test's verdict in words: the measured A (P(S's distance < H's), ties halved) against the largest
    one allowed, and its p-value; a failed DCR test says when the DCR share does not show S nearer T than H."""
    allowed, a = 0.5 + t.max_effect, res.effect + 0.5
    what = f"{t.name}, {_TEST_WORDS[t.test]}"
    p = "p < 1e-300" if res.pvalue == 0 else f"p = {res.pvalue:.2g}"  # a p-value below double precision
    if not fails:
        if res.pvalue >= t.alpha:
            return f"{what}: A = {a:.3f}, not significant ({p})"
        return f"{what}: A = {a:.3f} <= {allowed:g} allowed ({p})"
    text = f"{what}: A = {a:.3f} > {allowed:g} allowed ({p})"
    prefix = "seq_" if t.artifact == "seq_dcr_histogram" else ""
    share, low = cell.metrics.get(f"{prefix}dcr_share"), cell.metrics.get(f"{prefix}dcr_share_ci_low")
    if t.test == "dcr" and all(isinstance(x, float) for x in (share, low)) and low <= allowed:
        text += (f", yet S is not clearly nearer to T than to H (DCR share {share:.3f}, 95% interval from {low:.3f}): "
                 "this points at S crowding T's common records rather than copying them; D2.2 fails both")
    return text


def _judge_test(cell, t: Target) -> dict:
    read = _dcr_inputs if t.test == "dcr" else _nndr_inputs
    got = read(cell, t.artifact or TEST_ARTIFACTS[t.test])
    if isinstance(got, str):
        return _missing(cell, t, got)
    (vs, cs, vr, cr), what = got
    res = shift_test(vs, cs, vr, cr)
    if math.isnan(res.effect):
        return _missing(cell, t, f"{what}: fewer than 2 records on a side")
    fails = t.shift_fails(res)
    detail = (f"{what}: effect {res.effect:+.4f} (A = {res.effect + 0.5:.4f}), one-sided Brunner-Munzel "
              f"p = {res.pvalue:.3g}, n_S = {res.n_synthetic:,}, n_ref = {res.n_reference:,}")
    return _row(cell, t.name, res.effect, t.threshold, res.pvalue, FAIL if fails else PASS, detail,
                _why_test(cell, t, res, fails))


def _metric_value(cell, t: Target, specs_by_name: dict[str, Any]) -> tuple[float, str]:
    name = t.metric
    if t.use != "value":
        spec = specs_by_name.get(name) or metrics_of_every_family().get(name)
        if spec is None or not spec.interval:
            return math.nan, f"{name} has no interval"
        name = spec.interval[0 if t.use == "ci_low" else 1]
    raw = cell.metrics.get(name)
    if isinstance(raw, bool):
        return float(raw), name
    try:
        value = float(raw)
    except (TypeError, ValueError):
        return math.nan, name
    return value, name


def _why_metric(cell, t: Target, spec: Any, value: float, ok: bool) -> str:
    """A threshold's verdict in words: the metric (and which end of its interval), its value, the bound."""
    label = spec.label if spec is not None else t.metric
    digits = spec.digits if spec is not None else 3
    if t.use == "value":
        what = f"{t.name}, {label} {_number(value, digits)}"
    else:
        point = cell.metrics.get(spec.name)
        point = f" {_number(point, digits)}," if isinstance(point, float) else ""
        end = "from" if t.use == "ci_low" else "up to"
        what = f"{t.name}, {label}{point} 95% interval {end} {_number(value, digits)}"
    if ok:
        bounds = " and ".join(b for b in ((f">= {t.min:g}" if t.min is not None else ""),
                                          (f"<= {t.max:g}" if t.max is not None else "")) if b)
        return f"{what} {bounds} allowed"
    return f"{what} " + (f"< {t.min:g} required" if t.min is not None and value < t.min else f"> {t.max:g} allowed")


def _number(value: float, digits: int) -> str:
    """value at the registry's digits, a negative value that rounds to zero written as 0."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _judge_metric(cell, t: Target, specs_by_name: dict[str, Any]) -> dict:
    value, name = _metric_value(cell, t, specs_by_name)
    if math.isnan(value):
        return _missing(cell, t, f"{name} not computed for this cell" if t.metric in specs_by_name
                        else uncomputed_reason(t.metric))
    ok = t.admits(value)
    return _row(cell, t.name, value, t.threshold, math.nan, PASS if ok else FAIL, f"{name} = {value:.4g}",
                _why_metric(cell, t, specs_by_name.get(t.metric), value, ok))


def is_reference(cell) -> bool:
    return cell.status.get("holdout_rule") is True or cell.metrics.get("holdout_row") is True


def judge_cell(cell, gates: Gates, specs: list) -> list[dict]:
    """The verdict rows of one cell."""
    state = cell.status.get("status")
    if state != "ok":
        verdict = NA if state == "skipped" else FAIL
        reason = cell.status.get("reason") or ""
        return [_row(cell, "cell status", math.nan, "ok", math.nan, verdict, f"{state}: {reason}".strip())]
    if is_reference(cell):
        return [_row(cell, t.name, math.nan, t.threshold, math.nan, NA, "holdout reference row (S = H): not judged",
                     "the holdout reference row (S = H), the yardstick") for t in gates.targets]
    by_name = metric_names(specs)
    rows = [_judge_test(cell, t) if t.test else _judge_metric(cell, t, by_name) for t in gates.targets]
    audit = audit_row(cell, by_name, {t.name for t in gates.targets})
    return rows + ([audit] if audit else [])


def audit_row(cell, by_name: dict, named=frozenset()) -> dict | None:
    """The audit's own verdict row of an audited cell that the gates file does not judge by name (`named`):
    AUDIT_TARGET for a DP generator (its ε lower bound against its configured ε), MEMBERSHIP_TARGET for a
    generator without one; None for a cell without the audit's metrics."""
    if _number_in(cell.metrics, AUDIT_TARGET.metric) and AUDIT_TARGET.name not in named:
        return _judge_audit(cell, by_name)
    if _number_in(cell.metrics, MEMBERSHIP_TARGET.metric) and cell.metrics.get("audit_epsilon_configured") is None \
            and MEMBERSHIP_TARGET.name not in named:
        return _judge_membership(cell, by_name)
    return None


def _number_in(metrics: dict, name: str) -> bool:
    """metrics holds `name` as a number (not None, not NaN)."""
    value = metrics.get(name)
    return isinstance(value, (int, float)) and not math.isnan(float(value))


def _judge_membership(cell, by_name: dict) -> dict:
    """MEMBERSHIP_TARGET's row: a generator without a configured ε fails when the per-target audit's ε lower
    bound is above 0, i.e. when the attack tells members from non-members of a vulnerable record beyond chance
    at the audit's confidence; the attack's counts are the evidence."""
    m = cell.metrics
    row = _judge_metric(cell, MEMBERSHIP_TARGET, by_name)
    row["detail"] = f"{row['detail']}; {m.get('audit_evidence') or ''}".rstrip("; ")
    if row["verdict"] == FAIL:
        confidence = m.get("audit_confidence")
        at = f" with probability >= {float(confidence):g}" if isinstance(confidence, (int, float)) else ""
        row["why"] = (f"{row['why']}: the audit's attack tells whether a vulnerable record of T was in the "
                      f"generator's training data beyond chance{at} (a generator without a DP guarantee, "
                      f"audited ε >= {float(m[MEMBERSHIP_TARGET.metric]):.2f})")
    return row


def _judge_audit(cell, by_name: dict) -> dict:
    """AUDIT_TARGET's row; n/a when the configured ε is at or above what the audit's test fits can prove
    at all (audit_epsilon_provable): no outcome of the attack could have failed the cell."""
    m = cell.metrics
    provable, configured = m.get("audit_epsilon_provable"), m.get("audit_epsilon_configured")
    if provable is not None and configured is not None and math.isfinite(float(provable)) \
            and float(configured) >= float(provable):
        why = (f"{AUDIT_TARGET.name}: untested, the audit's {m.get('audit_n_fits_test')} test fits can prove at most "
               f"ε {float(provable):.2f}, below the configured ε {float(configured):g}{_fits_needed(m, float(configured))}")
        return _row(cell, AUDIT_TARGET.name, float(m.get(AUDIT_TARGET.metric)), AUDIT_TARGET.threshold, math.nan, NA,
                    why, why)
    row = _judge_metric(cell, AUDIT_TARGET, by_name)
    row["detail"] = f"{row['detail']}; {m.get('audit_evidence') or ''}".rstrip("; ")
    return row


def _fits_needed(m: dict, configured: float) -> str:
    """'; proving it needs n_fits_test >= N' (N: the fewest test fits on which a perfect attack's bound, at the
    cell's confidence and δ, exceeds the configured ε: balanced fits per target at the Bonferroni level for the
    per-target bound, canaries = targets x test fits for the one-run bound); a cell whose metrics lack the
    audit's confidence or targets (evaluated before they were recorded) gets ' (more n_fits_test raise it)'."""
    from holdbench.metrics.audit.bounds import one_run_canaries_needed, per_target_confidence, trials_needed

    try:
        delta, n_targets, confidence = float(m.get("audit_delta") or 0.0), int(m["audit_n_targets"]), \
            float(m["audit_confidence"])
        canaries = one_run_canaries_needed(configured, confidence, delta)
        one_run = None if canaries is None else -(-canaries // n_targets)
        if m.get("audit_bound") == "one_run":
            fits, also = one_run, ""
        else:
            members = trials_needed(configured, per_target_confidence(confidence, n_targets), delta)
            fits = None if members is None else 2 * members
            also = "" if one_run is None else f" (with `bound: one_run`, {one_run:,} at these targets)"
    except (KeyError, TypeError, ValueError):
        return " (more n_fits_test raise it)"
    if fits is None:
        return " (no feasible number of test fits can prove it)"
    return f"; proving it needs n_fits_test >= {fits:,}{also}"


#: judged for every cell whose metrics hold it (a DP generator's cell in a study with the `audit` family,
#: holdbench.metrics.audit): its audited ε lower bound must not exceed the ε it was configured with
AUDIT_TARGET = Target("audited_epsilon", metric="audit_epsilon_excess", max=0.0,
                      description="a DP generator's audited ε lower bound is at most its configured ε")
#: judged for every audited cell without a configured ε (a generator without a DP guarantee): the audit's ε
#: lower bound must be 0, i.e. its attack finds no vulnerable record whose membership it tells beyond chance
MEMBERSHIP_TARGET = Target("audited_membership", metric="audit_epsilon_lower", max=0.0,
                           description="a generator without a DP guarantee: the per-target audit proves no "
                                       "record's membership (its ε lower bound is 0)")


def verdicts(results, gates: Gates) -> pd.DataFrame:
    """Every cell of a StudyResults against the gates: one row per cell x target (VERDICT_COLUMNS)."""
    check_metrics(gates, results.specs)
    rows = [row for cell in results.cells for row in judge_cell(cell, gates, results.specs)]
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def explain_cell(group: pd.DataFrame) -> str:
    """One cell's verdict in words: the targets that decided it first (the failed ones of a FAIL),
    each with its measured value and what is allowed, then the others."""
    v = group["verdict"]
    parts = []
    for verdict, head in ((FAIL, "fails"), (PASS, "passes"), (NA, "not judged")):
        whys = list(dict.fromkeys(str(w) for w in group.loc[v == verdict, "why" if "why" in group else "detail"]))
        if whys:
            parts.append(f"{head}: " + "; ".join(whys))
    return ". ".join(parts)


def cell_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the overall verdict (FAIL if any target fails, else pass if any passes, else n/a),
    the names of the failed targets, and `why`, the verdict in words (explain_cell)."""
    rows = []
    for cell_id, group in table.groupby("cell_id", sort=False):
        v = group["verdict"]
        first = group.iloc[0]
        rows.append({"cell_id": cell_id, "dataset": first["dataset"], "synthesizer": first["synthesizer"],
                     "seed": first["seed"], "reference": bool(first["reference"]),
                     "verdict": FAIL if (v == FAIL).any() else PASS if (v == PASS).any() else NA,
                     "failed": ", ".join(group.loc[v == FAIL, "target"]), "why": explain_cell(group)})
    return pd.DataFrame(rows, columns=["cell_id", "dataset", "synthesizer", "seed", "reference", "verdict", "failed",
                                       "why"])

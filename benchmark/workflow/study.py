"""A study: datasets × synthesizers × split seeds, expanded into immutable cell specs.

Everything a study names is checked here, before Snakemake schedules a single job:
unknown datasets or synthesizers, misspelt parameters, negative record counts, flip
probabilities outside [0, 1] and empty studies are all rejected with the key named.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdbench.benchmark.config import (
    ConfigError,
    available,
    check_metrics_config,
    check_name,
    config_source,
    did_you_mean,
    group_config,
    is_sequential,
    load_group,
    synthesizer_config,
    to_container,
    validate_config,
)
from holdbench.benchmark.workflow.cellconfig import name_conflicts

SPLITS = ("random", "provided")
#: what study.json's `kind` says: a study is flat (tables) or sequential (subject + event pairs), never both
KINDS = {False: "flat", True: "sequential"}


@dataclass(frozen=True)
class CellSpec:
    """One (dataset, synthesizer, split seed) of a study: everything a job needs to run it."""

    study: str
    dataset: str
    synthesizer: str
    seed: int
    n_synthetic: int
    config: dict = field(hash=False)
    timeout_seconds: float = 3600.0
    memory_gb: float = 8.0

    @property
    def cell_id(self) -> str:
        return f"{self.study}/{self.dataset}/seed{self.seed}/{self.synthesizer}"


@dataclass(frozen=True)
class Study:
    name: str
    datasets: tuple[str, ...]
    synthesizers: tuple[str, ...]
    seeds: tuple[int, ...]
    n_synthetic: int
    split: str
    split_files: dict | None
    timeout_seconds: float
    memory_gb: float
    metrics: dict
    synth_configs: dict[str, dict]
    drilldown: dict[str, list[str]]
    evaluate_shards: int = 1
    """evaluate_shard jobs per cell: privacy (rows of S) and fidelity (marginals) split into this many
    parts, merged exactly by the cell's evaluate job; 1 = the evaluate job computes everything."""
    sequential: bool = False
    """A study of sequential (subject + event) datasets, sequential synthesizers and sequential metric
    families; S has |T| subjects (n_synthetic is 0: not a row count)."""
    leaderboard_metrics: tuple[str, ...] = ()
    """Metrics shown after the headline ones in the study's tables (registry names; checked at load)."""
    sources: dict = field(default_factory=dict)
    """Which file each config came from (holdbench.benchmark.config.config_source): `study`, `metrics`,
    and `datasets` / `synthesizers` mapping each name to its file; shipped files relative to the
    repository, the user's own (config search path) absolute."""

    def cells(self) -> list[CellSpec]:
        return [
            CellSpec(self.name, d, s, k, self.n_synthetic, self.synth_configs[s],
                     self.timeout_seconds, self.memory_gb)
            for d in self.datasets for k in self.seeds for s in self.synthesizers
        ]

    def summary(self) -> dict[str, Any]:
        """What study.json records (read by the leaderboard and the tracker)."""
        return {
            "name": self.name, "datasets": list(self.datasets), "synthesizers": list(self.synthesizers),
            "seeds": list(self.seeds), "n_synthetic": self.n_synthetic, "split": self.split,
            "metrics": self.metrics, "drilldown": self.drilldown, "kind": KINDS[self.sequential],
            "leaderboard_metrics": list(self.leaderboard_metrics),
            "config_files": self.sources,
        }


def load_study(name: str, overrides: list[str] | tuple[str, ...] = ()) -> Study:
    """Compose conf/study/<name>.yaml, expand and check everything it names."""
    check_name("study", name)
    cfg = to_container(load_group("study", name, overrides, add_keys=True))
    try:
        validate_config("study", name, cfg)
    except ConfigError as exc:
        if not overrides:
            raise
        raise ConfigError(f"{exc} (the study as overridden by {', '.join(overrides)})") from None
    datasets = _names(cfg, name, "datasets", "dataset")
    synths = _names(cfg, name, "synthesizers", "synthesizer")
    seeds = cfg.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and s >= 0 for s in seeds):
        raise ConfigError(f"study {name!r}: `seeds` must be a non-empty list of non-negative integers")
    sequential = _sequential_datasets(name, datasets)
    n_syn = cfg.get("n_synthetic")
    if sequential:
        if n_syn is not None:
            raise ConfigError(f"study {name!r}: a sequential study samples as many subjects as T has; "
                              f"remove `n_synthetic` (got {n_syn!r})")
        n_syn = 0
    elif not isinstance(n_syn, int) or isinstance(n_syn, bool) or n_syn <= 0:
        raise ConfigError(f"study {name!r}: `n_synthetic` must be a positive integer, got {n_syn!r}")
    split = cfg.get("split", "random")
    if split not in SPLITS:
        raise ConfigError(f"study {name!r}: `split` must be one of {SPLITS}, got {split!r}")
    if split == "provided" and sequential:
        raise ConfigError(f"study {name!r}: a sequential study splits its subjects at random (`split: random`)")
    if split == "provided":
        files = cfg.get("split_files") or {}
        if not {"train", "holdout"} <= set(files):
            raise ConfigError(f"study {name!r}: split 'provided' needs split_files.train and .holdout")
        from holdbench.contracts.io import NOT_A_HOLDOUT, same_file

        for d in datasets:  # (a missing file is named by the split job)
            t, h = (str(files[k]).format(dataset=d) for k in ("train", "holdout"))
            if same_file(t, h):
                raise ConfigError(f"study {name!r}: dataset {d!r}: split_files.holdout {h} is the same table as "
                                  f"split_files.train {t}; {NOT_A_HOLDOUT}")
    for key in ("timeout_seconds", "memory_gb"):
        val = cfg.get(key)
        if val is not None and (not isinstance(val, (int, float)) or isinstance(val, bool)
                                or not math.isfinite(val) or val <= 0):
            raise ConfigError(f"study {name!r}: `{key}` must be a positive finite number, got {val!r}")
    params = cfg.get("params") or {}
    stray = sorted(set(params) - set(synths))
    if stray:
        raise ConfigError(f"study {name!r}: `params` names synthesizers not in the study: {stray}")
    configs = {}
    for s in synths:
        try:
            configs[s] = synthesizer_config(s, cfg.get("preset"), params=params.get(s) or {})
            _check_values(s, configs[s], datasets)
            stated = name_conflicts(s, configs[s])
            if stated:  # every figure and table reads the recorded setting; a name saying otherwise misleads
                raise ConfigError(f"synthesizer {s!r}: {'; '.join(stated)} (set by the study's `params` or an "
                                  "override): add a variant named after the setting it runs, or drop the override")
        except ConfigError as exc:
            raise ConfigError(f"study {name!r}: {exc}") from exc
    wrong = [s for s in synths if is_sequential(configs[s]) != sequential]
    if wrong:
        raise ConfigError(f"study {name!r}: synthesizer(s) {wrong} are {KINDS[not sequential]} but the study's "
                          f"datasets are {KINDS[sequential]} (sequential synthesizers are the "
                          "holdbench.synthesizers.sequential.SequentialSynthesizer classes, named seq_*)")
    metrics_name = cfg.get("metrics") or ("sequential" if sequential else "default")
    if not isinstance(metrics_name, str):
        raise ConfigError(f"study {name!r}: `metrics` must name a config in conf/metrics/, got {metrics_name!r}")
    metrics = group_config("metrics", metrics_name)
    try:
        check_metrics_config(metrics_name, metrics)
    except ConfigError as exc:
        raise ConfigError(f"study {name!r}: {exc}") from None
    wrong = [f for f, c in metrics["families"].items() if c is not None and is_sequential(c) != sequential]
    if wrong:
        raise ConfigError(f"study {name!r}: metrics config {metrics_name!r}: famil(ies) {wrong} are "
                          f"{KINDS[not sequential]} but the study's datasets are {KINDS[sequential]} "
                          f"(use `metrics: {'sequential' if sequential else 'default'}`)")
    shards = cfg.get("evaluate_shards", 1)
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 1:
        raise ConfigError(f"study {name!r}: `evaluate_shards` must be a positive integer (1 = not sharded), "
                          f"got {shards!r}")
    if sequential and shards != 1:
        raise ConfigError(f"study {name!r}: the sequential metric families are not shardable; "
                          f"remove `evaluate_shards` (got {shards})")
    drill = cfg.get("drilldown") or {}
    shown = _leaderboard_metrics(name, metrics_name, metrics, cfg.get("leaderboard_metrics") or [])
    sources = {"study": config_source("study", name), "metrics": config_source("metrics", metrics_name),
               "datasets": {d: config_source("dataset", d) for d in datasets},
               "synthesizers": {s: config_source("synthesizer", s) for s in synths}}
    return Study(
        name=name, datasets=tuple(datasets), synthesizers=tuple(synths), seeds=tuple(seeds),
        n_synthetic=n_syn, split=split, split_files=cfg.get("split_files"),
        timeout_seconds=float(cfg.get("timeout_seconds") or 3600), memory_gb=float(cfg.get("memory_gb") or 8),
        metrics=metrics, synth_configs=configs, drilldown={d: list(c) for d, c in drill.items()},
        evaluate_shards=shards, sequential=sequential, leaderboard_metrics=shown, sources=sources,
    )


def _leaderboard_metrics(study: str, metrics_name: str, metrics: dict, names: list[str]) -> tuple[str, ...]:
    """The study's `leaderboard_metrics`, each a metric of its metrics config and not a headline one."""
    from holdbench.benchmark.config import did_you_mean, metric_specs

    specs = {sp.name: sp for sp in metric_specs(metrics)}
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise ConfigError(f"study {study!r}: leaderboard_metrics {unknown} are not metrics of metrics config "
                          f"{metrics_name!r}{did_you_mean(unknown, specs)} (the docs' metric reference, reference/metrics.md, "
                          "lists every name)")
    headline = [n for n in names if specs[n].headline]
    if headline:
        raise ConfigError(f"study {study!r}: leaderboard_metrics {headline} are headline metrics, shown already")
    return tuple(names)


def _sequential_datasets(study: str, datasets: list[str]) -> bool:
    """True when every dataset is sequential, False when none is; a mix is a ConfigError naming them."""
    from holdbench.benchmark.data.tables import dataset_config

    kinds = {d: dataset_config(d)["source"] == "sequential" for d in datasets}
    if len(set(kinds.values())) > 1:
        seq = sorted(d for d, k in kinds.items() if k)
        raise ConfigError(f"study {study!r}: datasets {seq} are sequential (subject + event) and "
                          f"{sorted(set(kinds) - set(seq))} are flat; a study is one or the other")
    return kinds[datasets[0]]


def _names(cfg: dict, study: str, key: str, group: str) -> list[str]:
    names = cfg.get(key)
    if not isinstance(names, list) or not names:
        raise ConfigError(f"study {study!r}: `{key}` must be a non-empty list")
    known = available(group)
    for n in names:
        check_name(group, n)
        if n not in known:
            raise ConfigError(f"study {study!r}: unknown {group} {n!r} in `{key}`{did_you_mean([n], known)} "
                              f"(known: {', '.join(known)})")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"study {study!r}: `{key}` lists {dupes} more than once")
    return names


def _check_values(synth: str, cfg: dict, datasets: list[str]) -> None:
    """Value checks that would otherwise surface deep inside a job."""
    if cfg.get("visit_sequence") is not None:
        from holdbench.benchmark.data.tables import dataset_schema
        from holdbench.synthesizers.base import check_visit_sequence

        seq = cfg["visit_sequence"]
        if not isinstance(seq, list) or not seq:
            raise ConfigError(f"synthesizer {synth!r}: `visit_sequence` must be a non-empty list of every "
                              f"column or null, got {seq!r}")
        for d in datasets:
            try:
                check_visit_sequence(synth, seq, dataset_schema(d).names, d)
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
    p = cfg.get("p")
    if p is not None and not (isinstance(p, (int, float)) and 0 <= p <= 1):
        raise ConfigError(f"synthesizer {synth!r}: `p` must be a probability in [0, 1], got {p!r}")
    for key in ("epochs", "batch_size"):
        v = cfg.get(key)
        if v is not None and (not isinstance(v, int) or v <= 0):
            raise ConfigError(f"synthesizer {synth!r}: `{key}` must be a positive integer, got {v!r}")
    _check_privacy_budget(synth, cfg)


#: the largest ε a DP generator accepts: above log(max float64) = 709.78, e^ε (the privacy-loss bound the DP
#: libraries' accounting computes with) is no finite 64-bit float, and OpenDP fails deep inside with an overflow
MAX_EPSILON = math.log(sys.float_info.max)


def _check_privacy_budget(synth: str, cfg: dict) -> None:
    """ε (and δ, preprocessor_eps) of a DP generator's config, checked before any job runs."""
    def number(v) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)

    if "epsilon" in cfg:
        eps = cfg["epsilon"]
        if not number(eps) or eps <= 0:
            raise ConfigError(f"synthesizer {synth!r}: `epsilon` must be a positive finite number, got {eps!r}")
        if eps > MAX_EPSILON:
            raise ConfigError(f"synthesizer {synth!r}: `epsilon` {eps:g} is above {MAX_EPSILON:.2f} = log(largest "
                              "64-bit float): e^epsilon, the privacy-loss bound the DP libraries compute with, "
                              "overflows (and any epsilon above ~10 protects next to nothing)")
    if cfg.get("delta") is not None and "epsilon" in cfg and not (number(cfg["delta"]) and 0 < cfg["delta"] < 1):
        raise ConfigError(f"synthesizer {synth!r}: `delta` must be a number in (0, 1), got {cfg['delta']!r}")
    pre = cfg.get("preprocessor_eps")
    if pre is not None and not (number(pre) and 0 < pre < cfg.get("epsilon", math.inf)):
        raise ConfigError(f"synthesizer {synth!r}: `preprocessor_eps` must be a positive number below `epsilon` "
                          f"({cfg.get('epsilon')!r}), got {pre!r}")


def write_if_changed(path: Path, obj: Any) -> None:
    """Rewrite a config snapshot only when its content changes, so its mtime drives reruns."""
    text = json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n"
    if path.exists() and path.read_text() == text:
        return
    from holdbench.contracts.io import write_text

    write_text(path, text)

"""The metric registry: one declaration per metric, read by everything that shows a metric.

A metric is a field of a frozen result dataclass, declared with `metric(...)`: its name is
the field name (and the key in metrics.json, the leaderboard column, the MLflow metric),
and the declaration carries its label, group, direction, digits and one-line meaning.
Fields declared with a plain `dataclasses.field` (counts, flags, reasons) are written to
metrics.json but are not ranked or plotted; a plain field named `seconds_*` is a timing, which
the harness moves to status.json so that metrics.json stays byte-identical across reruns. Fields declared with `artifact(...)` hold a
table (a curve, a histogram, a trace) that the harness writes as `<field>.csv` in the cell.

A family of metrics is a `MetricFamily` subclass: its constructor takes only options (from
`conf/metrics/<name>.yaml` through `_target_`), `compute(data)` returns its result type.

A family may also be shardable (`shardable = True`): `partial(data, shard, of)` computes one of
`of` disjoint parts of its work as plain arrays (per-row distances, per-marginal TVDs, never
averages), and `merge(data, partials)` concatenates them in order and derives the result. Its
`compute(data)` IS `merge(data, [partial(data, 0, 1)])`, so a merge of any number of shards is
the unsharded result to the last bit by construction.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import pandas as pd

GROUPS = ("fidelity", "privacy", "utility", "attack", "disclosure")
Direction = Literal["lower", "higher", "ideal"]
_KEY = "holdbench_metric"
_ARTIFACT = "holdbench_artifact"


@dataclass(frozen=True)
class MetricSpec:
    """What a metric means and which way is better."""

    name: str
    label: str
    group: str
    direction: Direction
    """lower: smaller is better; higher: larger is better; ideal: closest to `ideal` is best."""
    ideal: float | None
    digits: int
    meaning: str
    headline: bool = False
    """Shown first: in the CLI summary, the MLflow runs table and the report's headline table."""
    interval: tuple[str, str] | None = None
    """Names of the fields holding this metric's 95% interval (low, high), if it has one."""
    flag: bool = False
    """A pass/fail metric (its field is a bool): over several cells its mean is a pass rate."""

    def __post_init__(self) -> None:
        if self.group not in GROUPS:
            raise ValueError(f"metric {self.name!r}: group must be one of {GROUPS}, got {self.group!r}")
        if self.direction not in ("lower", "higher", "ideal"):
            raise ValueError(f"metric {self.name!r}: direction must be lower, higher or ideal")
        if (self.direction == "ideal") != (self.ideal is not None):
            raise ValueError(f"metric {self.name!r}: an ideal value goes with direction 'ideal' only")

    @property
    def better(self) -> str:
        """The direction in words, for tables and reports."""
        if self.direction == "ideal":
            return f"{self.ideal:g} is ideal"
        return f"{self.direction} is better"

    def badness(self, value: float | None) -> float:
        """A number to sort by, smaller = better (NaN for a missing value)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return math.nan
        v = float(value)
        if self.direction == "lower":
            return v
        if self.direction == "higher":
            return -v
        return abs(v - float(self.ideal))

    def format(self, value: Any) -> str:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "n/a"
        if isinstance(value, bool):
            return "pass" if value else "FAIL"
        return f"{float(value):.{self.digits}f}"


def metric(label: str, group: str, *, direction: Direction, ideal: float | None = None, digits: int = 3,
           meaning: str, headline: bool = False, interval: tuple[str, str] | None = None) -> Any:
    """Declare a dataclass field as a registry metric (no default: every result sets it)."""
    return field(metadata={_KEY: {"label": label, "group": group, "direction": direction, "ideal": ideal,
                                  "digits": digits, "meaning": meaning, "headline": headline,
                                  "interval": interval}})


def artifact(meaning: str) -> Any:
    """Declare a dataclass field holding a table the harness writes as `<field>.csv`."""
    return field(default=None, repr=False, compare=False, metadata={_ARTIFACT: meaning})


def specs_of(result_type: type) -> list[MetricSpec]:
    """The registry metrics a result dataclass declares, in field order."""
    return [MetricSpec(name=f.name, flag="bool" in str(f.type), **f.metadata[_KEY])
            for f in dataclasses.fields(result_type) if _KEY in f.metadata]


def artifact_names(result_type: type) -> list[str]:
    return [f.name for f in dataclasses.fields(result_type) if _ARTIFACT in f.metadata]


def scalars(result: Any) -> dict[str, Any]:
    """Every non-artifact field of a result as a JSON-safe scalar (NaN/inf -> None)."""
    skip = set(artifact_names(type(result)))
    return {f.name: json_scalar(getattr(result, f.name)) for f in dataclasses.fields(result)
            if f.name not in skip}


def artifacts(result: Any) -> dict[str, pd.DataFrame]:
    """The artifact tables a result carries (None ones left out)."""
    out = {}
    for name in artifact_names(type(result)):
        table = getattr(result, name)
        if table is not None:
            out[name] = table
    return out


def json_scalar(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return int(v)
    v = float(v)
    return v if math.isfinite(v) else None


@dataclass(frozen=True)
class EvalData:
    """What every metric family sees of one cell. Columns of H and S are in T's order.

    For the holdout reference row (holdout_row=True) `synthetic` is H itself.
    """

    train: pd.DataFrame
    holdout: pd.DataFrame
    synthetic: pd.DataFrame
    kinds: Mapping[str, str]
    """Metric kinds per column (docs/definitions/paper.md §1): 'categorical' or 'numeric'."""
    holdout_row: bool = False
    target: str | None = None
    """The dataset's prediction target (utility metrics skip without one)."""
    sensitive: str | None = None
    """A binary sensitive attribute (attribute disclosure skips without one)."""
    quasi_identifiers: tuple[str, ...] = ()
    seed: int = 0
    n_jobs: int = 1
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def shared(self, key: str, compute: Callable[[], Any]) -> Any:
        """A value several families need (codes, distances), computed once per evaluation."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]


class MetricFamily(ABC):
    """A group of metrics computed together; options come from the constructor only."""

    #: section name (also the key in conf/metrics/<study>.yaml's `families:`)
    name: ClassVar[str]
    #: the frozen dataclass `compute` returns; its `metric(...)` fields are the registry entries
    result_type: ClassVar[type]
    #: the docs page and anchor that define this family's metrics, relative to docs/
    #: (e.g. "definitions/paper.md#3-fidelity-f1-f2-f3"); the generated metrics reference links every
    #: metric of the family to it
    definition: ClassVar[str]
    #: one sentence: the independent reference this family's values equal, to how many digits, and the
    #: test (or script) that checks it; printed beside the family in the metrics reference
    reference: ClassVar[str]

    @abstractmethod
    def compute(self, data: EvalData) -> Any:
        """Return an instance of result_type. Raise ValueError for unusable inputs."""

    def unavailable(self) -> str | None:
        """Why this family cannot run in this environment (a missing interpreter or library), or
        None. The harness records it; a cell evaluated while a family was unavailable is
        re-evaluated once it is available again (checked before each run, so it must be cheap)."""
        return None

    #: True when partial() and merge() split the family's work into shards (see the module doc)
    shardable: ClassVar[bool] = False

    def partial(self, data: EvalData, shard: int, of: int) -> dict[str, Any]:
        """Part `shard` (0-based) of `of` of the work, as a mapping of name -> numpy array."""
        raise NotImplementedError(f"metric family {self.name!r} is not shardable")

    def merge(self, data: EvalData, partials: Sequence[Mapping[str, Any]]) -> Any:
        """The result from every shard's partial(), given in shard order."""
        raise NotImplementedError(f"metric family {self.name!r} is not shardable")


def shard_slice(n: int, shard: int, of: int) -> slice:
    """Rows (or items) of shard `shard` of `of` over n: contiguous, in order, sizes differing by at
    most one; with of > n some shards are empty. A bad shard or count is a ValueError naming it."""
    for key, v in (("shard count", of), ("shard", shard)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise ValueError(f"{key} must be an integer, got {v!r}")  # noqa: TRY004 (CLI contract)
    if of < 1:
        raise ValueError(f"shard count must be a positive integer, got {of!r}")
    if not 0 <= shard < of:
        raise ValueError(f"shard must be in [0, {of - 1}] for {of} shards, got {shard!r}")
    return slice(n * shard // of, n * (shard + 1) // of)


#: the key of a shard's partial result recording that the family failed on it (its reason)
FAILED_KEY = "_failed"


class MergedFamily(MetricFamily):
    """A shardable family whose compute() merges partials computed elsewhere (the shard jobs); a
    shard that recorded the family's failure (FAILED_KEY) makes the merge raise with its reason."""

    def __init__(self, family: MetricFamily, partials: Sequence[Mapping[str, Any]]):
        if not family.shardable:
            raise ValueError(f"metric family {family.name!r} is not shardable")
        if not partials:
            raise ValueError(f"metric family {family.name!r}: no partial results to merge")
        self.family, self.partials = family, list(partials)
        self.name, self.result_type = family.name, family.result_type  # type: ignore[misc]
        self.definition, self.reference = family.definition, family.reference  # type: ignore[misc]

    def unavailable(self) -> str | None:
        return self.family.unavailable()

    def compute(self, data: EvalData) -> Any:
        for i, part in enumerate(self.partials):
            if FAILED_KEY in part:
                raise RuntimeError(f"shard {i} of {len(self.partials)}: {part[FAILED_KEY]}")
        return self.family.merge(data, self.partials)


def renamed_result_type(result_type: type, prefix: str, label: str, meaning: str) -> type:
    """A copy of a result dataclass whose fields are renamed `<prefix><name>` (timings
    `seconds_<prefix><rest>`, so they stay timings) and whose registry labels read `<label> <its label>`
    and meanings end with `meaning`: the same metrics, declared once, measured on other data (e.g. one
    vector per subject of a sequential dataset). Every field gets a default (NaN, None or 0): the
    values always come from `rename_result`."""
    def new_name(name: str) -> str:
        return f"seconds_{prefix}{name.removeprefix('seconds_')}" if name.startswith("seconds_") else prefix + name

    fields = []
    for f in dataclasses.fields(result_type):
        md = dict(f.metadata)
        if _KEY in md:
            spec = dict(md[_KEY])
            spec["label"] = f"{label} {spec['label']}"
            spec["meaning"] = f"{spec['meaning'].rstrip('.')}; {meaning}"
            if spec.get("interval"):
                spec["interval"] = tuple(new_name(n) for n in spec["interval"])
            md[_KEY] = spec
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = None
        else:
            default = math.nan
        fields.append((new_name(f.name), f.type, field(default=default, metadata=md, repr=f.repr, compare=f.compare)))
    name = f"{prefix.strip('_').title().replace('_', '')}{result_type.__name__}"
    out = dataclasses.make_dataclass(name, fields, frozen=True)
    out.__module__ = result_type.__module__
    return out


def rename_result(result: Any, renamed_type: type) -> Any:
    """`result` as an instance of `renamed_type` (renamed_result_type of its type), field for field."""
    names = [f.name for f in dataclasses.fields(renamed_type)]
    values = [getattr(result, f.name) for f in dataclasses.fields(result)]
    return renamed_type(**dict(zip(names, values, strict=True)))

"""MOSTLY AI's open-source engine (TabularARGN), an optional extra: pip install 'holdbench[mostly]'.

The paper evaluated MOSTLY AI's commercial service (its outputs are available as
`published_mostly`); this runs today's open-source engine on T instead, through its
documented workflow split -> analyze -> encode -> train -> generate in a workspace
directory, on CPU, offline (HF_HUB_OFFLINE=1: the tabular models need no download).

Encodings. Booleans and columns the schema models as categorical get
`categorical_encoding` (TABULAR_CATEGORICAL); every other column gets `numeric_encoding`;
`column_encodings` overrides single columns. The engine's TABULAR_NUMERIC_AUTO picks per
column: DISCRETE (the column's values as categories) when 99.9 % of the values are
non-rare, else DIGIT (one sub-column per decimal digit) when the values use at most 3 digit
positions (e.g. integers below 1000), else BINNED (100 quantile bins, uniform draws within a
bin, so T's exact repeated values such as 0, 1000 or 0.2 are lost). With
`binned_to_digit`, a column AUTO would bin is encoded as DIGIT instead when a value
between its minimum and maximum holds at least `point_mass` of T (default 1 %: such a value
is an edge of the metrics' 100 quantile buckets, and uniform draws around it land on both
sides; the minimum and maximum themselves BINNED keeps exactly, as tokens); binned
columns without such a value (fnlwgt) stay binned, as digits of a near-continuous column
only add loss and end training early. The bridge runs the engine's split and analysis
once, reads which columns came out BINNED, and redoes split and analysis (same seed, so
the same training part) with the new encodings; AUTO's DISCRETE and DIGIT picks stay.
The encoding the engine actually used for every column is read back from its analysis
and kept in `fit_record` (and logged).

Value protection (on by default in the engine) clips numbers to a stochastic 5th..20th
smallest/largest value and turns rare categories into `_RARE_` (CONSTANT) or into a draw
from the frequent ones (SAMPLE). In a numeric or boolean column of T a `_RARE_` cannot be
stored; it becomes missing and is counted in `sample_record`.

Training stops at `max_epochs`, after `max_training_time` minutes, or on the engine's
early stopping (validation loss not improving for 4 epochs; engine 2.7 offers no switch
for it; its validation part is the (1 - trn_val_split) share of T). The engine seeds
`random`, numpy and torch (`set_random_state`) from the fit seed before splitting T and
from the sample seed before generating; with an epoch budget (not a time budget) two runs
give identical output.

Output dtypes are T's: the engine returns nullable Int64/Float64 and strings (booleans
come back as "True"/"False"); `restore_dtypes` converts them back.

Caches: the engine's training reads its encoded data through Hugging Face `datasets`,
which writes an Arrow copy of it under ~/.cache/huggingface/datasets. The bridge points
HF_HOME, HF_DATASETS_CACHE and HF_MODULES_CACHE into the workspace (`cache_env`) for the
fit, so nothing of T is left outside the cell's scratch space.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from holdbench.contracts.environ import environ_set
from holdbench.contracts.io import read_parquet
from holdbench.synthesizers._seeding import seed_everything, single_thread
from holdbench.synthesizers.base import FitContext, Synthesizer, SynthesizerUnavailable

LOG = logging.getLogger("holdbench.synth")

INSTALL_HINT = (
    "pip install 'holdbench[mostly]' (mostlyai-engine needs torch 2.13.x; with a CPU-only torch, "
    "remove the torchvision and torchaudio that pip brings along: pip uninstall torchvision torchaudio)"
)

CATEGORICAL = "TABULAR_CATEGORICAL"
NUMERIC_ENCODINGS = (
    "TABULAR_NUMERIC_AUTO", "TABULAR_NUMERIC_DISCRETE", "TABULAR_NUMERIC_BINNED", "TABULAR_NUMERIC_DIGIT",
)
#: the tabular encodings this bridge passes on (datetime, lat-long and language ones need other data)
ENCODINGS = (CATEGORICAL, "TABULAR_CHARACTER", *NUMERIC_ENCODINGS)
MODELS = ("MOSTLY_AI/Small", "MOSTLY_AI/Medium", "MOSTLY_AI/Large")
RARE_METHODS = ("CONSTANT", "SAMPLE")
#: the engine's token for a protected rare category
RARE_TOKEN = "_RARE_"
_TRUE = frozenset({"true", "1", "1.0"})
_FALSE = frozenset({"false", "0", "0.0"})


def _engine():
    """Import mostlyai.engine offline, or raise SynthesizerUnavailable saying how to install it."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        engine = importlib.import_module("mostlyai.engine")
    except ImportError as exc:
        if exc.name in ("mostlyai", "mostlyai.engine"):
            raise SynthesizerUnavailable(f"mostlyai-engine is not installed: {INSTALL_HINT}") from exc
        broken = exc
    except Exception as exc:  # noqa: BLE001 - a broken install fails in transformers or torchvision
        broken = exc
    else:
        return engine
    raise SynthesizerUnavailable(
        f"mostlyai-engine is installed but cannot be imported: {type(broken).__name__}: {broken}; "
        f"{INSTALL_HINT}"
    ) from broken


def encoding_types(
    columns: Sequence[Any],
    numeric_encoding: str = "TABULAR_NUMERIC_AUTO",
    categorical_encoding: str = CATEGORICAL,
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The encoding type requested for every schema column (objects with name, dtype, model_kind).

    Booleans and model_kind categorical -> categorical_encoding; the rest -> numeric_encoding;
    then `overrides` per column. A numeric encoding is refused for text and boolean columns.
    """
    _check_choice("numeric_encoding", numeric_encoding, NUMERIC_ENCODINGS)
    _check_choice("categorical_encoding", categorical_encoding, (CATEGORICAL, "TABULAR_CHARACTER"))
    out = {
        c.name: categorical_encoding if c.dtype == "bool" or c.model_kind == "categorical" else numeric_encoding
        for c in columns
    }
    by_name = {c.name: c for c in columns}
    for name, enc in (overrides or {}).items():
        if name not in by_name:
            raise ValueError(f"MostlyAI: column_encodings names column {name!r}, which the dataset does not have "
                             f"(columns: {list(by_name)})")
        _check_choice(f"column_encodings[{name!r}]", enc, ENCODINGS)
        if enc in NUMERIC_ENCODINGS and by_name[name].dtype in ("str", "bool"):
            raise ValueError(f"MostlyAI: column {name!r} has dtype {by_name[name].dtype}; "
                             f"a numeric encoding ({enc}) cannot encode it")
        out[name] = enc
    return out


def digits_for_binned(requested: Mapping[str, str], used: Mapping[str, str], train: pd.DataFrame,
                      point_mass: float = 0.01) -> dict[str, str]:
    """`requested` with DIGIT for the columns requested as AUTO that the engine's analysis binned
    and where a value strictly between T's minimum and maximum holds at least `point_mass` of
    the rows of `train` (0: every such column). BINNED encodes the minimum and maximum exactly
    (as tokens), so a point mass there is no reason for digits."""
    def heavy(col: str) -> bool:
        values = train[col].dropna()
        interior = values[(values > values.min()) & (values < values.max())]
        return point_mass <= 0 or (len(interior) > 0 and interior.value_counts().iloc[0] / len(values) >= point_mass)

    return {
        col: "TABULAR_NUMERIC_DIGIT"
        if enc == "TABULAR_NUMERIC_AUTO" and used.get(col) == "TABULAR_NUMERIC_BINNED" and heavy(col) else enc
        for col, enc in requested.items()
    }


def cache_env(scratch: Path) -> dict[str, str]:
    """Environment that keeps the engine's Hugging Face caches inside `scratch` (and offline)."""
    hf = Path(scratch) / "hf-cache"
    return {
        "HF_HOME": str(hf),
        "HF_DATASETS_CACHE": str(hf / "datasets"),
        "HF_MODULES_CACHE": str(hf / "modules"),
        "HF_HUB_OFFLINE": "1",
    }


@contextmanager
def redirected_caches(scratch: Path) -> Iterator[dict[str, str]]:
    """Set `cache_env(scratch)` for the block, then restore the environment.

    `datasets` reads its cache directory from the environment at import; if it is already
    imported, its config is pointed at the scratch directory too (and restored).
    """
    env = cache_env(scratch)
    config = sys.modules.get("datasets.config")
    saved_cfg = {}
    if config is not None:
        saved_cfg = {k: getattr(config, k) for k in ("HF_DATASETS_CACHE", "HF_MODULES_CACHE") if hasattr(config, k)}
    with environ_set(env):
        for key in saved_cfg:
            setattr(config, key, Path(env[key]))
        try:
            yield env
        finally:
            for key, value in saved_cfg.items():
                setattr(config, key, value)


def used_encodings(workspace: Path) -> dict[str, str]:
    """{column: encoding type} as the engine's analysis resolved it (AUTO replaced by its pick)."""
    path = Path(workspace) / "ModelStore" / "tgt-stats" / "stats.json"
    try:
        stats = json.loads(path.read_text())
        return {str(col): str(s["encoding_type"]) for col, s in stats["columns"].items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RuntimeError(f"MostlyAI: cannot read the engine's column encodings from {path}: {exc}") from exc


def training_summary(workspace: Path) -> dict[str, Any]:
    """Epochs trained, best validation loss and training seconds from the engine's progress file."""
    path = Path(workspace) / "ModelStore" / "model-data" / "progress-messages.csv"
    try:
        prog = pd.read_csv(path)
    except (OSError, ValueError):
        return {}
    val = pd.to_numeric(prog.get("val_loss"), errors="coerce").dropna()
    return {
        "epochs": float(prog["epoch"].iloc[-1]) if len(prog) else 0.0,
        "best_val_loss": float(val.min()) if len(val) else None,
        "training_seconds": float(prog["total_time"].iloc[-1]) if len(prog) else 0.0,
    }


def restore_dtypes(out: pd.DataFrame, dtypes: Mapping[str, Any]) -> tuple[pd.DataFrame, dict[str, int]]:
    """The engine's output in T's column order and dtypes, plus {column: rare tokens made missing}.

    bool <- "True"/"False" strings (nullable `boolean` when values are missing); int64 <-
    Int64 (nullable `Int64` when values are missing); float64 <- Float64 (NaN for missing);
    text columns as Python strings with NaN for missing. The engine's `_RARE_` token in a
    numeric or boolean column becomes missing (counted); any other value that does not fit
    the column's dtype is a ValueError naming the column.
    """
    missing_cols = [c for c in dtypes if c not in out.columns]
    if missing_cols:
        raise ValueError(f"MostlyAI: the engine's output lacks column(s) {missing_cols}")
    res, rare = {}, {}
    for col, dtype in dtypes.items():
        res[col], n_rare = _restore(out[col].reset_index(drop=True), pd.api.types.pandas_dtype(dtype), col)
        if n_rare:
            rare[col] = n_rare
    return pd.DataFrame(res, index=pd.RangeIndex(len(out))), rare


def _restore(s: pd.Series, dtype: Any, col: str) -> tuple[pd.Series, int]:
    if pd.api.types.is_bool_dtype(dtype):
        text = s.astype(object).map(lambda v: v if pd.isna(v) else str(v).strip().lower())
        rare = int((text == RARE_TOKEN.lower()).sum())
        text = text.mask(text == RARE_TOKEN.lower())
        bad = text.notna() & ~text.isin(_TRUE | _FALSE)
        if bad.any():
            raise ValueError(f"MostlyAI: column {col!r} should be boolean but the engine returned "
                             f"{sorted(map(str, text[bad].unique()))[:5]}")
        vals = text.map(lambda v: v if pd.isna(v) else v in _TRUE)
        return (vals.astype("boolean") if vals.isna().any() else vals.astype(bool)), rare
    if pd.api.types.is_numeric_dtype(dtype):
        raw = s.astype(object).where(s.notna(), None)
        rare_mask = raw.map(lambda v: isinstance(v, str) and v == RARE_TOKEN)
        raw = raw.mask(rare_mask, None)
        nums = pd.to_numeric(raw, errors="coerce").astype("Float64")
        bad = raw.notna() & nums.isna()
        if bad.any():
            raise ValueError(f"MostlyAI: column {col!r} should be numeric but the engine returned "
                             f"{sorted(map(str, raw[bad].unique()))[:5]}")
        if pd.api.types.is_integer_dtype(dtype):
            whole = nums.dropna()
            if not (whole == np.round(whole)).all():
                raise ValueError(f"MostlyAI: column {col!r} should hold integers but the engine returned fractions")
            target = "Int64" if nums.isna().any() else dtype
            return nums.astype("Int64").astype(target), int(rare_mask.sum())
        return nums.astype(float).astype(dtype), int(rare_mask.sum())
    text = s.astype(object).map(lambda v: v if pd.isna(v) or isinstance(v, str) else str(v))
    return text.where(s.notna(), np.nan).astype(object), 0


def _check_choice(setting: str, value: Any, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ValueError(f"MostlyAI: {setting} must be one of {list(allowed)}, got {value!r}")


class MostlyAI(Synthesizer):
    """mostlyai-engine's TabularARGN; `max_training_time` is in minutes.

    The workspace (model, encoded data, caches, generated parquet files) is a temporary
    directory removed with the object, unless `workspace_dir` names one to keep.
    After fit, `fit_record` holds the encodings used per column and the training summary;
    after sample, `sample_record` holds the rare tokens made missing per column.
    """

    def __init__(
        self,
        max_training_time: float | None = 60.0,
        max_epochs: float | None = 100.0,
        model: str = "MOSTLY_AI/Medium",
        batch_size: int | None = None,
        value_protection: bool = True,
        rare_category_replacement: str = "CONSTANT",
        numeric_encoding: str = "TABULAR_NUMERIC_AUTO",
        categorical_encoding: str = CATEGORICAL,
        column_encodings: Mapping[str, str] | None = None,
        binned_to_digit: bool = False,
        point_mass: float = 0.01,
        enable_flexible_generation: bool = True,
        trn_val_split: float = 0.8,
        sampling_temperature: float = 1.0,
        sampling_top_p: float = 1.0,
        workspace_dir: str | None = None,
    ) -> None:
        if max_training_time is not None and max_training_time <= 0:
            raise ValueError(f"MostlyAI: max_training_time must be positive (minutes), got {max_training_time!r}")
        if max_epochs is not None and max_epochs <= 0:
            raise ValueError(f"MostlyAI: max_epochs must be positive, got {max_epochs!r}")
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError(f"MostlyAI: batch_size must be a positive integer or null, got {batch_size!r}")
        if not 0 < trn_val_split < 1:
            raise ValueError(f"MostlyAI: trn_val_split must be in (0, 1), got {trn_val_split!r}")
        if not 0 <= point_mass <= 1:
            raise ValueError(f"MostlyAI: point_mass must be a share in [0, 1], got {point_mass!r}")
        if not sampling_temperature > 0:
            raise ValueError(f"MostlyAI: sampling_temperature must be positive, got {sampling_temperature!r}")
        if not 0 < sampling_top_p <= 1:
            raise ValueError(f"MostlyAI: sampling_top_p must be in (0, 1], got {sampling_top_p!r}")
        _check_choice("model", model, MODELS)
        _check_choice("rare_category_replacement", rare_category_replacement, RARE_METHODS)
        _check_choice("numeric_encoding", numeric_encoding, NUMERIC_ENCODINGS)
        _check_choice("categorical_encoding", categorical_encoding, (CATEGORICAL, "TABULAR_CHARACTER"))
        for name, enc in (column_encodings or {}).items():
            _check_choice(f"column_encodings[{name!r}]", enc, ENCODINGS)
        self.max_training_time = max_training_time
        self.max_epochs = max_epochs
        self.model = model
        self.batch_size = batch_size
        self.value_protection = bool(value_protection)
        self.rare_category_replacement = rare_category_replacement
        self.numeric_encoding = numeric_encoding
        self.categorical_encoding = categorical_encoding
        self.column_encodings = dict(column_encodings or {})
        self.binned_to_digit = bool(binned_to_digit)
        self.point_mass = float(point_mass)
        self.enable_flexible_generation = bool(enable_flexible_generation)
        self.trn_val_split = float(trn_val_split)
        self.sampling_temperature = sampling_temperature
        self.sampling_top_p = sampling_top_p
        self.workspace_dir = workspace_dir
        self.fit_record: dict[str, Any] = {}
        self.sample_record: dict[str, Any] = {}
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._workspace: Path | None = None
        self._dtypes: dict[str, Any] | None = None

    # the engine's arguments, as pure functions of the config (tested without the engine)
    def analyze_kwargs(self) -> dict[str, Any]:
        return {"value_protection": self.value_protection}

    def train_kwargs(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "max_training_time": self.max_training_time,
            "max_epochs": self.max_epochs,
            "batch_size": self.batch_size,
            "enable_flexible_generation": self.enable_flexible_generation,
            "device": "cpu",
        }

    def generate_kwargs(self, n: int) -> dict[str, Any]:
        return {
            "sample_size": n,
            "sampling_temperature": self.sampling_temperature,
            "sampling_top_p": self.sampling_top_p,
            "rare_category_replacement_method": self.rare_category_replacement,
            "device": "cpu",
        }

    def _new_workspace(self) -> Path:
        if self.workspace_dir is not None:
            path = Path(self.workspace_dir)
            path.mkdir(parents=True, exist_ok=True)
            return path
        self._tmp = tempfile.TemporaryDirectory(prefix="holdbench-mostly-")
        return Path(self._tmp.name)

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        requested = encoding_types(ctx.schema.columns, self.numeric_encoding, self.categorical_encoding,
                                   self.column_encodings)
        ws = self._new_workspace()
        with redirected_caches(ws):
            engine = _engine()
            with single_thread():
                self._split_analyze(engine, train, requested, ctx.seed, ws)
                rebinned = (digits_for_binned(requested, used_encodings(ws), train, self.point_mass)
                            if self.binned_to_digit else requested)
                if rebinned != requested:
                    requested = rebinned
                    self._split_analyze(engine, train, requested, ctx.seed, ws)
                engine.encode(workspace_dir=ws)
                engine.train(workspace_dir=ws, update_progress=_log_progress, **self.train_kwargs())
        self._workspace = ws
        self._dtypes = {str(c): train[c].dtype for c in train.columns}
        self.fit_record = {
            "requested_encodings": requested,
            "encodings": used_encodings(ws),
            **training_summary(ws),
        }
        LOG.info("MostlyAI: column encodings used %s", self.fit_record["encodings"])
        LOG.info("MostlyAI: trained %s", {k: v for k, v in self.fit_record.items() if "encodings" not in k})

    def _split_analyze(self, engine, train: pd.DataFrame, encodings: dict[str, str], seed: int, ws: Path) -> None:
        engine.set_random_state(seed_everything(seed))
        engine.split(
            tgt_data=train.reset_index(drop=True),
            tgt_encoding_types=encodings,
            model_type="TABULAR",
            trn_val_split=self.trn_val_split,
            workspace_dir=ws,
        )
        engine.analyze(workspace_dir=ws, **self.analyze_kwargs())

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._workspace is None or self._dtypes is None:
            raise RuntimeError("MostlyAI: sample() called before fit()")
        out_dir = self._workspace / "SyntheticData"
        with redirected_caches(self._workspace):
            engine = _engine()
            with single_thread():
                engine.set_random_state(seed_everything(seed))
                engine.generate(workspace_dir=self._workspace, **self.generate_kwargs(n))
        files = sorted(out_dir.glob("*.parquet"))
        if not files:
            raise RuntimeError(f"MostlyAI: the engine wrote no parquet file in {out_dir}")
        raw = pd.concat([read_parquet(f) for f in files], ignore_index=True)
        out, rare = restore_dtypes(raw, self._dtypes)
        self.sample_record = {"rare_to_missing": rare}
        if rare:
            LOG.warning("MostlyAI: the engine's %s token in numeric/boolean columns read as missing: %s",
                        RARE_TOKEN, rare)
        return out

    def info(self) -> dict:
        """Recorded with the cell: the engine's version, the encoding it used for every column
        (and the one requested), epochs and validation loss, and rare tokens read as missing."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            engine_version = version("mostlyai-engine")
        except PackageNotFoundError:
            engine_version = None
        return {"engine_version": engine_version, **self.fit_record, **getattr(self, "sample_record", {})}


def _log_progress(total: int | None = None, completed: int | None = None, advance: int | None = None,
                  message: dict | None = None, **_: Any) -> None:
    """update_progress callback: the engine's training messages (epoch, losses) as log lines."""
    if message:
        shown = {k: message[k] for k in ("epoch", "trn_loss", "val_loss", "total_time") if message.get(k) is not None}
        LOG.info("MostlyAI: training %s", shown)

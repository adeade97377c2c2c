"""MOSTLY AI's open-source engine (TabularARGN), an optional extra: pip install 'holdbench[mostly]'.

The paper evaluated MOSTLY AI's commercial service (its outputs are available as
`external_mostly`); this runs today's open-source engine on T instead, through its
documented workflow split -> analyze -> encode -> train -> generate in a workspace
directory, on CPU, offline (HF_HUB_OFFLINE=1: the tabular models need no download).

Columns are typed from the schema: model_kind categorical and booleans ->
TABULAR_CATEGORICAL, numeric -> TABULAR_NUMERIC_AUTO. The engine's value protection
(rare categories become '_RARE_', extreme numbers are clipped) stays on as its default.
Training stops at `max_epochs`, at early stopping, or after `max_training_time` minutes,
whichever comes first. The engine seeds `random`, numpy and torch itself
(`set_random_state`) from the fit seed before splitting T into its own training and
validation parts, and from the sample seed before generating.
"""

from __future__ import annotations

import importlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from benchmark.schema import Column
from synthesizers._seeding import seed_everything, single_thread
from synthesizers.base import FitContext, Synthesizer, SynthesizerUnavailable

LOG = logging.getLogger("holdbench.synth")

INSTALL_HINT = (
    "pip install 'holdbench[mostly]' (mostlyai-engine needs torch 2.13.x; with a CPU-only torch, "
    "remove the CUDA torchvision that pip brings along: pip uninstall torchvision)"
)


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


def encoding_type(column: Column) -> str:
    """The engine's encoding type for a schema column (see the module docstring)."""
    if column.dtype == "bool" or column.model_kind == "categorical":
        return "TABULAR_CATEGORICAL"
    return "TABULAR_NUMERIC_AUTO"


class MostlyAI(Synthesizer):
    """mostlyai-engine's TabularARGN; `max_training_time` is in minutes.

    The workspace (model, encoded data, generated parquet files) is a temporary directory
    removed with the object, unless `workspace_dir` names one to keep.
    """

    def __init__(
        self,
        max_training_time: float = 60.0,
        max_epochs: float = 100.0,
        model: str = "MOSTLY_AI/Medium",
        batch_size: int | None = None,
        value_protection: bool = True,
        enable_flexible_generation: bool = True,
        sampling_temperature: float = 1.0,
        sampling_top_p: float = 1.0,
        workspace_dir: str | None = None,
    ) -> None:
        if max_training_time is not None and max_training_time <= 0:
            raise ValueError(f"MostlyAI: max_training_time must be positive (minutes), got {max_training_time!r}")
        if max_epochs is not None and max_epochs <= 0:
            raise ValueError(f"MostlyAI: max_epochs must be positive, got {max_epochs!r}")
        self.max_training_time = max_training_time
        self.max_epochs = max_epochs
        self.model = model
        self.batch_size = batch_size
        self.value_protection = value_protection
        self.enable_flexible_generation = enable_flexible_generation
        self.sampling_temperature = sampling_temperature
        self.sampling_top_p = sampling_top_p
        self.workspace_dir = workspace_dir
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._workspace: Path | None = None

    def _new_workspace(self) -> Path:
        if self.workspace_dir is not None:
            path = Path(self.workspace_dir)
            path.mkdir(parents=True, exist_ok=True)
            return path
        self._tmp = tempfile.TemporaryDirectory(prefix="holdbench-mostly-")
        return Path(self._tmp.name)

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        engine = _engine()
        ws = self._new_workspace()
        encodings = {c.name: encoding_type(c) for c in ctx.schema.columns}
        with single_thread():
            engine.set_random_state(seed_everything(ctx.seed))
            engine.split(
                tgt_data=train.reset_index(drop=True),
                tgt_encoding_types=encodings,
                model_type="TABULAR",
                workspace_dir=ws,
            )
            engine.analyze(value_protection=self.value_protection, workspace_dir=ws)
            engine.encode(workspace_dir=ws)
            engine.train(
                model=self.model,
                max_training_time=self.max_training_time,
                max_epochs=self.max_epochs,
                batch_size=self.batch_size,
                enable_flexible_generation=self.enable_flexible_generation,
                device="cpu",
                workspace_dir=ws,
                update_progress=_log_progress,
            )
        self._workspace = ws

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        if self._workspace is None:
            raise RuntimeError("MostlyAI: sample() called before fit()")
        engine = _engine()
        with single_thread():
            engine.set_random_state(seed_everything(seed))
            engine.generate(
                sample_size=n,
                sampling_temperature=self.sampling_temperature,
                sampling_top_p=self.sampling_top_p,
                device="cpu",
                workspace_dir=self._workspace,
            )
        files = sorted((self._workspace / "SyntheticData").glob("*.parquet"))
        if not files:
            raise RuntimeError(f"MostlyAI: the engine wrote no parquet file in {self._workspace / 'SyntheticData'}")
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _log_progress(total: int | None = None, completed: int | None = None, advance: int | None = None,
                  message: dict | None = None, **_: Any) -> None:
    """update_progress callback: the engine's training messages (epoch, losses) as log lines."""
    if message:
        shown = {k: message[k] for k in ("epoch", "trn_loss", "val_loss", "total_time") if message.get(k) is not None}
        LOG.info("MostlyAI: training %s", shown)

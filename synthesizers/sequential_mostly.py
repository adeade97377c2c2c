"""MOSTLY AI's open-source engine in two stages for subject + event data (optional extra, as the flat
bridge holdbench.synthesizers.mostly: pip install 'holdbench[mostly]').

Stage 1 (subjects) is the flat bridge itself: holdbench.synthesizers.mostly.MostlyAI trained on T's subject
attributes (the key left out), with this synthesizer's settings. Stage 2 (events) is the engine's
sequential tabular model: split(tgt_data=T's events, ctx_data=T's subjects, tgt_context_key =
ctx_primary_key = the key) -> analyze -> encode -> train, so the engine learns each subject's
sequence (its length, 0 included, and its event rows in T's order) given the subject's attributes.
Sampling draws n subjects from stage 1, gives them the keys 0 .. n-1, and generates their events
with stage 2, the synthetic subjects as context (generate(ctx_data=...)). Subjects with zero events
need nothing special: the engine counts every context key without a target row as a sequence of
length 0 and samples such lengths; `sample_record["events"]["zero_event_subjects"]` counts them.

The key reaches the engine as the subject's position in T (0 .. |T|-1), never T's own ids. Encodings
as the flat bridge's (holdbench.synthesizers.mostly.encoding_types) for both tables; its rebinning option
(binned_to_digit) is not offered here. Every stage stops at `max_epochs`, after
`max_training_time` minutes (per stage: a fit takes at most about twice that plus encoding), or on
the engine's early stopping. Seeds: stage 1 fits with the cell's seed and stage 2 with a seed
derived from it; a sample call draws subjects and events with two seeds derived from the sample
seed. With an epoch budget (not a time budget) two runs give identical output. Offline, one thread,
Hugging Face caches inside each stage's workspace (removed with the object), as the flat bridge.
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from holdbench.contracts.io import read_parquet
from holdbench.synthesizers import mostly
from holdbench.synthesizers._seeding import check_seed, derive_seed, seed_everything, single_thread
from holdbench.synthesizers.base import FitContext
from holdbench.synthesizers.sequential import SequentialContext, SequentialSynthesizer, _check_n, _Sequences

LOG = logging.getLogger("holdbench.synth")


class MostlySequential(SequentialSynthesizer):
    """Subjects by the flat MOSTLY AI bridge, then events by the engine's sequential model (module
    docstring). The settings are holdbench.synthesizers.mostly.MostlyAI's and apply to both stages."""

    name: ClassVar[str] = "mostly_seq"

    def __init__(
        self,
        max_training_time: float | None = 60.0,
        max_epochs: float | None = 100.0,
        model: str = "MOSTLY_AI/Medium",
        batch_size: int | None = None,
        value_protection: bool = True,
        rare_category_replacement: str = "CONSTANT",
        numeric_encoding: str = "TABULAR_NUMERIC_AUTO",
        categorical_encoding: str = mostly.CATEGORICAL,
        enable_flexible_generation: bool = True,
        trn_val_split: float = 0.8,
        sampling_temperature: float = 1.0,
        sampling_top_p: float = 1.0,
    ) -> None:
        # stage 1 is the flat bridge with these settings; its checks and engine arguments serve both stages
        self._subjects = mostly.MostlyAI(
            max_training_time=max_training_time, max_epochs=max_epochs, model=model, batch_size=batch_size,
            value_protection=value_protection, rare_category_replacement=rare_category_replacement,
            numeric_encoding=numeric_encoding, categorical_encoding=categorical_encoding,
            enable_flexible_generation=enable_flexible_generation, trn_val_split=trn_val_split,
            sampling_temperature=sampling_temperature, sampling_top_p=sampling_top_p,
        )
        self.fit_record: dict[str, Any] = {}
        self.sample_record: dict[str, Any] = {}
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._workspace: Path | None = None

    def fit(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        mostly._engine()  # not installed -> SynthesizerUnavailable with the install command, before any work
        if ctx.subject_schema is None:
            raise ValueError(f"mostly_seq: {ctx.dataset} has no subject attributes; this two-stage wrapper needs "
                             "them (stage 1 synthesizes the subject table)")
        t = _Sequences(subjects, events, ctx)
        key, flat = ctx.key, self._subjects
        LOG.info("mostly_seq: stage 1, %d subjects", t.size)
        flat.fit(t.attrs, FitContext(ctx.subject_schema, ctx.seed, ctx.dataset))
        self._tmp = tempfile.TemporaryDirectory(prefix="holdbench-mostly-seq-")
        ws = Path(self._tmp.name)
        ctx_data = pd.concat([pd.DataFrame({key: np.arange(t.size)}), t.attrs], axis=1)
        tgt_data = pd.concat([pd.DataFrame({key: t.subject_of_event}), t.events], axis=1)
        LOG.info("mostly_seq: stage 2, %d event rows of %d subjects", len(tgt_data), t.size)
        with mostly.redirected_caches(ws):
            engine = mostly._engine()
            with single_thread():
                engine.set_random_state(seed_everything(derive_seed(ctx.seed, 2)))
                engine.split(
                    tgt_data=tgt_data, ctx_data=ctx_data, tgt_context_key=key, ctx_primary_key=key,
                    tgt_encoding_types=self._encodings(ctx.event_schema.columns),
                    ctx_encoding_types=self._encodings(ctx.subject_schema.columns),
                    model_type="TABULAR", trn_val_split=flat.trn_val_split, workspace_dir=ws,
                )
                engine.analyze(workspace_dir=ws, **flat.analyze_kwargs())
                engine.encode(workspace_dir=ws)
                engine.train(workspace_dir=ws, update_progress=mostly._log_progress, **flat.train_kwargs())
        self._workspace, self._ctx = ws, ctx
        self._dtypes = {c: t.events[c].dtype for c in ctx.event_schema.names}
        self.fit_record = {
            "subjects": {k: v for k, v in flat.fit_record.items() if k != "requested_encodings"},
            "events": {"encodings": mostly.used_encodings(ws), **mostly.training_summary(ws),
                       "zero_event_subjects_in_T": int((t.lengths == 0).sum())},
        }
        LOG.info("mostly_seq: trained %s", self.fit_record)

    def _encodings(self, columns) -> dict[str, str]:
        return mostly.encoding_types(columns, self._subjects.numeric_encoding, self._subjects.categorical_encoding)

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self._workspace is None:
            raise RuntimeError("mostly_seq: sample() called before fit()")
        n, seed, ctx, ws = _check_n(self.name, n_subjects), check_seed(seed), self._ctx, self._workspace
        attrs = self._subjects.sample(n, derive_seed(seed, 1))
        if len(attrs) != n:
            raise RuntimeError(f"mostly_seq: stage 1 returned {len(attrs)} subjects, asked for {n}")
        subjects = pd.concat([pd.DataFrame({ctx.key: np.arange(n)}), attrs[ctx.subject_schema.names]], axis=1)
        out_dir = ws / "SyntheticData"
        with mostly.redirected_caches(ws):
            engine = mostly._engine()
            with single_thread():
                engine.set_random_state(seed_everything(derive_seed(seed, 2)))
                engine.generate(ctx_data=subjects, workspace_dir=ws, **self._subjects.generate_kwargs(n))
        files = sorted(out_dir.glob("*.parquet"))
        if not files:
            raise RuntimeError(f"mostly_seq: the engine wrote no parquet file in {out_dir}")
        raw = pd.concat([read_parquet(f) for f in files], ignore_index=True)
        owner = pd.to_numeric(raw[ctx.key], errors="raise").to_numpy(dtype=np.int64)
        if len(owner) and (owner.min() < 0 or owner.max() >= n):
            raise RuntimeError(f"mostly_seq: the engine returned event keys outside 0..{n - 1}")
        order = np.argsort(owner, kind="stable")  # each subject's events contiguous, in generated order
        events, rare = mostly.restore_dtypes(raw.take(order), self._dtypes)
        lengths = np.bincount(owner, minlength=n)
        self.sample_record = {"subjects": dict(self._subjects.sample_record),
                              "events": {"rare_to_missing": rare, "zero_event_subjects": int((lengths == 0).sum())}}
        if rare:
            LOG.warning("mostly_seq: the engine's %s token in numeric/boolean event columns read as missing: %s",
                        mostly.RARE_TOKEN, rare)
        return subjects, pd.concat([pd.DataFrame({ctx.key: owner[order]}), events], axis=1)

    def info(self) -> dict:
        """Recorded with the cell: the engine's version and, per stage, the encodings used, epochs,
        validation loss, rare tokens read as missing and zero-event subjects."""
        return {"engine_version": self._subjects.info()["engine_version"], "fit": self.fit_record,
                "sample": self.sample_record}

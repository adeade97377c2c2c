"""SDV's PARSynthesizer (deepecho's probabilistic autoregressive GRU) behind the sequential interface.

PAR takes one long table: one row per event, the sequence key, the subject attributes repeated on
every event row as *context columns* (modelled by a GaussianCopula over subjects; PAR's GRU is
conditioned on them), and the event columns. The wrapper builds that table from T's subject and event
tables; the key is replaced by the subject's position in T (0 .. |T|-1), so no real id reaches SDV.
Metadata comes from the schemas, never auto-detected: the key is sdtype "id" and the sequence key,
every other column holdbench.synthesizers.sdv.sdtype (categorical / numerical / boolean).

Order. With a single order column (nlswork's `year`) it is PAR's `sequence_index`: PAR models the
first value per subject in its context model and the steps between events in the GRU (at least T's
smallest step), so a sampled sequence is increasing in it, except that SDV's min/max enforcement
(`enforce_min_max_values`, on by default) clips values past T's largest one to it, which makes ties
at T's last value (a sequence that runs on past the end of T's period). With several order columns (baseball's yearID, stint) there is no
composite sequence index in SDV; they are ordinary event columns and a subject's events are its rows
in the order PAR generates them (its GRU sees T's rows in order), with nothing forcing the order
columns to increase: `sample_record["subjects_out_of_order"]` counts the synthetic subjects whose
order columns decrease somewhere. Without order columns in the context, likewise.

Subjects with zero events cannot be written in PAR's long table (a subject is its event rows). The
wrapper fits PAR on the subjects with events, keeps T's share p0 of zero-event subjects, and at
sample time draws the number of zero-event subjects ~ Binomial(n, p0) and empties the sequences of
that many of the n sampled subjects (chosen uniformly, seeded): their attributes are draws of PAR's
context model, which was fitted on subjects with events only (a limitation: T's zero-event subjects'
own attributes are not modelled). `fit_record` holds T's counts, `sample_record` the drawn number
(`zero_event_subjects_sampled`).

Cost. deepecho trains PAR full-batch: an epoch is one gradient step over every training sequence,
and its loss loops in Python over every sequence and event column, slicing the padded batch each
time, so an epoch's CPU time grows about quadratically with the number of sequences, and its memory
with it (measured in the README, "Sequential (event) data"): SDV's default of 128 epochs on a T of
baseball's size takes many hours on one core. The YAML's default profile therefore fits on
`max_subjects` subjects of T with events (a seeded draw; None: all) for `epochs` epochs; the subjects
left out are not seen by the model. `segment_size` stays off: deepecho drops every sequence
shorter than a segment and the tail of the others, which adds sequences (cost) and caps sampled
lengths at the segment size. Sampling draws one sequence at a time, re-running the GRU over the prefix
at every step.

Reproducibility as holdbench.synthesizers.sdv: fit seeds random, numpy and torch from the fit seed on one
thread; each sample call seeds them from the sample seed, resets SDV's sampling state and seeds the
context model and every reverse transformer from it, so sample(n, seed) depends on (fit, n, seed)
only.
"""

from __future__ import annotations

import logging
import time
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from holdbench.synthesizers._seeding import check_seed, derive_seed, seed_everything, single_thread
from holdbench.synthesizers.base import SynthesizerUnavailable
from holdbench.synthesizers.sdv import (
    _INSTALL_HINT,
    _SDV_EVENT_LOGGER,
    _log_epochs,
    _reseed_reverse_transformers,
    sdtype,
)
from holdbench.synthesizers.sequential import SequentialContext, SequentialSynthesizer, _check_n, _Sequences

LOG = logging.getLogger("holdbench.synth")
_TABLE = "events"


class PAR(SequentialSynthesizer):
    """sdv.sequential.PARSynthesizer on T's subjects (context) and events (module docstring)."""

    name: ClassVar[str] = "par"

    def __init__(self, epochs: int = 128, max_subjects: int | None = None, sample_size: int = 1,
                 segment_size: int | None = None, enforce_min_max_values: bool = True, enforce_rounding: bool = True,
                 log_every: int = 10) -> None:
        for setting, value in (("epochs", epochs), ("sample_size", sample_size), ("log_every", log_every)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"par: {setting} must be a positive integer, got {value!r}")
        for setting, value in (("max_subjects", max_subjects), ("segment_size", segment_size)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"par: {setting} must be a positive integer or null, got {value!r}")
        self.epochs, self.max_subjects, self.sample_size, self.segment_size = epochs, max_subjects, sample_size, \
            segment_size
        self.enforce_min_max_values, self.enforce_rounding = bool(enforce_min_max_values), bool(enforce_rounding)
        self.log_every = log_every
        self.fit_record: dict[str, Any] = {}
        self.sample_record: dict[str, Any] = {}
        self._model = None

    def _metadata(self, ctx: SequentialContext, sequence_index: str | None):
        from sdv.metadata import Metadata

        columns = {ctx.key: {"sdtype": "id"}}
        columns.update({c.name: {"sdtype": sdtype(c)} for c in (*ctx.subject_columns,
                                                                 *ctx.event_schema.columns)})
        table: dict[str, Any] = {"columns": columns, "sequence_key": ctx.key}
        if sequence_index is not None:
            table["sequence_index"] = sequence_index
        return Metadata.load_from_dict({"tables": {_TABLE: table}})

    def fit(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        try:
            from sdv.sequential import PARSynthesizer
        except ImportError as exc:
            raise SynthesizerUnavailable(f"sdv (with deepecho) is not installed: {_INSTALL_HINT} ({exc})") from exc
        t = _Sequences(subjects, events, ctx)
        if len(t.events) == 0:
            raise ValueError(f"par: {ctx.dataset}: no subject of the training data has an event; PAR models "
                             "event sequences")
        logging.getLogger(_SDV_EVENT_LOGGER).setLevel(logging.WARNING)
        order = tuple(ctx.order)
        sequence_index = order[0] if len(order) == 1 else None
        attrs = ctx.subject_names
        # the long table: key = the subject's position in T, its attributes on every event row
        long = pd.concat([pd.DataFrame({ctx.key: t.subject_of_event}),
                          t.attrs.take(t.subject_of_event).reset_index(drop=True), t.events], axis=1)
        with_events = np.flatnonzero(t.lengths > 0)
        if self.max_subjects is not None and len(with_events) > self.max_subjects:
            chosen = np.random.default_rng(derive_seed(ctx.seed, 1)).choice(with_events, self.max_subjects,
                                                                             replace=False)
            long = long[np.isin(t.subject_of_event, chosen)].reset_index(drop=True)
        for c in (*ctx.subject_columns, *ctx.event_schema.columns):
            if sdtype(c) == "numerical" and isinstance(long[c.name].dtype, pd.api.extensions.ExtensionDtype):
                # nullable Int64 with pd.NA: deepecho's nan-means fail on pd.NA; NaN in float64 is its missing
                long[c.name] = long[c.name].to_numpy(dtype=float, na_value=np.nan)
        n_zero = int((t.lengths == 0).sum())
        with single_thread():
            seed_everything(ctx.seed)
            model = PARSynthesizer(self._metadata(ctx, sequence_index), context_columns=attrs,
                                   epochs=self.epochs, sample_size=self.sample_size, segment_size=self.segment_size,
                                   enforce_min_max_values=self.enforce_min_max_values,
                                   enforce_rounding=self.enforce_rounding, cuda=False, verbose=True)
            start = time.monotonic()
            with _log_epochs(("deepecho.models.par",), "par", self.log_every):
                model.fit({_TABLE: long})
            seconds = time.monotonic() - start
        model._model_kwargs["verbose"] = False  # no progress bar over the subjects while sampling
        losses = model.get_loss_values()
        self._model, self._ctx = model, ctx
        self._zero_share = n_zero / t.size
        self.fit_record = {
            "subjects": t.size, "subjects_with_events": t.size - n_zero, "zero_event_subjects": n_zero,
            "subjects_fitted": int(long[ctx.key].nunique()), "event_rows_fitted": len(long),
            "sequence_index": sequence_index,
            "order_columns_as_events": list(order) if sequence_index is None else [],
            "epochs": self.epochs, "final_loss": float(losses["Loss"].iloc[-1]) if len(losses) else None,
            "fit_seconds": round(seconds, 1),
        }
        LOG.info("par: fitted %s", self.fit_record)

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self._model is None:
            raise RuntimeError("par: sample() called before fit()")
        n, seed = _check_n("par", n_subjects), check_seed(seed)
        ctx, model = self._ctx, self._model
        with single_thread():
            seed32 = seed_everything(seed)
            model._data_processor.reset_sampling()  # PARSynthesizer has no reset_sampling of its own
            context = model._context_synthesizer
            context.reset_sampling()
            context._set_random_state(derive_seed(seed32, 1))
            _reseed_reverse_transformers(context, derive_seed(seed, 2))
            _reseed_reverse_transformers(model, derive_seed(seed, 3))
            long = model.sample_sequences(n)[_TABLE]
        owner, uniques = pd.factorize(long[ctx.key])
        if len(uniques) != n:
            raise RuntimeError(f"par: asked for {n} sequences, PAR returned {len(uniques)} distinct keys")
        rng = np.random.default_rng(derive_seed(seed, 4))
        n_zero = int(rng.binomial(n, self._zero_share))
        keep = np.ones(n, dtype=bool)
        keep[rng.choice(n, n_zero, replace=False)] = False
        first = np.flatnonzero(~pd.Series(owner).duplicated().to_numpy())
        attrs = (ctx.subject_schema.coerce(long.iloc[first][ctx.subject_names], "par: subjects")
                 if ctx.subject_schema is not None else pd.DataFrame(index=range(n)))
        rows = np.flatnonzero(keep[owner])
        events = ctx.event_schema.coerce(long.iloc[rows][ctx.event_schema.names], "par: events")
        subjects_out = pd.concat([pd.DataFrame({ctx.key: np.arange(n)}), attrs], axis=1)
        events_out = pd.concat([pd.DataFrame({ctx.key: owner[rows]}), events], axis=1)
        self.sample_record = {"zero_event_subjects_sampled": n_zero,
                              "subjects_out_of_order": _out_of_order(events_out, ctx.key, list(ctx.order))}
        return subjects_out, events_out

    def info(self) -> dict:
        """Recorded with the cell: the versions of sdv and deepecho, the fit and sample records."""
        from importlib.metadata import PackageNotFoundError, version

        versions = {}
        for package in ("sdv", "deepecho"):
            try:
                versions[f"{package}_version"] = version(package)
            except PackageNotFoundError:
                versions[f"{package}_version"] = None
        return {**versions, **self.fit_record, **self.sample_record}


def _out_of_order(events: pd.DataFrame, key: str, order: list[str]) -> int:
    """Subjects whose event rows are not in non-decreasing lexicographic order of the order columns."""
    if not order or len(events) < 2:
        return 0
    same = (events[key].to_numpy()[1:] == events[key].to_numpy()[:-1])
    # row i+1 against row i, column by column: the first column that differs decides
    decided = np.zeros(len(events) - 1, dtype=bool)
    down = np.zeros(len(events) - 1, dtype=bool)
    for col in order:
        v = events[col].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        lower, higher = v[1:] < v[:-1], v[1:] > v[:-1]
        down |= ~decided & lower
        decided |= lower | higher
    return int(pd.unique(events[key].to_numpy()[1:][same & down]).size)

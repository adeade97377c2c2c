"""Sequential (subject + event) synthesizers: one interface, the reference rows, baselines and ar_cart.

Data convention (the same in holdbench.metrics.sequential): a subject table (the key column, then the subject
attributes; one row per subject) and an event table (the key column, then the event columns; a
subject's events are its rows in row order). Synthetic keys are 0 .. n-1 (the holdout row keeps H's).

- `holdout`: returns H (the reference row; evaluated with the holdout rule).
- `copy`: n subjects of T drawn with replacement, each with its whole sequence (the leak every
  privacy measure must catch).
- `flip` (p): docs/definitions/paper.md §5 applied to the subject table and to every event cell, lengths kept: the base
  subjects are T's first n (n <= |T|) or n drawn with replacement, their sequences follow them, then
  holdbench.synthesizers.flip.Flip perturbs the base subject table and, separately, the base event table (each
  cell replaced with probability p by a value of its column). With n = |T| the base is T itself, so
  donors are drawn from T's columns exactly as docs/definitions/paper.md §5; with n > |T| from the base tables.
- `indep_events`: the base subjects and their lengths, each event row drawn independently from T's
  pooled event rows (sequence structure destroyed; marginals of whole event rows kept).
- `swap_sequences`: the base subjects, each given the sequence of another base subject (a seeded
  permutation): every subject and every sequence is real, only the pairing is new (a privacy trap).
- `ar_cart`: holdbench.synthesizers.cart's CART for the subject table with the sequence length as a last
  column (so the length is drawn given the subject), then, position by position, each event column
  given the subject attributes, the position, the previous event (every column; a "start" level or
  a missing number at position 0) and the event columns drawn before it at this position.

Sequences without subject attributes (SequentialContext.subject_schema None): the subject table is the
key alone; `flip` flips event cells only, `ar_cart` draws the length from T's lengths (a one-column CART)
and each event given the position and the previous event. A subject's events are its rows in row order,
which is how `order: row` data stays ordered through synthesis.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from holdbench.contracts.schema import Column, Schema
from holdbench.synthesizers._seeding import check_seed, derive_seed
from holdbench.synthesizers.base import FitContext
from holdbench.synthesizers.cart import CART, ColumnModel, EncodedColumn, draw_column, encode_column
from holdbench.synthesizers.flip import Flip

#: the sequence-length column ar_cart appends to the subject table (not a name a dataset may use)
LENGTH = "__n_events__"


@dataclass(frozen=True)
class SequentialContext:
    """What a sequential synthesizer may know besides T (H only for `needs_holdout`)."""

    key: str
    #: None: sequences without subject attributes (the subject table is the key alone)
    subject_schema: Schema | None
    event_schema: Schema
    seed: int
    dataset: str = ""
    holdout: tuple[pd.DataFrame, pd.DataFrame] | None = None
    #: the event order columns (SequentialSpec.order; () = row order); T's events are already in this order
    order: tuple[str, ...] = ()

    @property
    def subject_columns(self) -> tuple[Column, ...]:
        """The subject attributes' columns (none without subject attributes)."""
        return self.subject_schema.columns if self.subject_schema is not None else ()

    @property
    def subject_names(self) -> list[str]:
        return [c.name for c in self.subject_columns]


class SequentialSynthesizer(ABC):
    """Fit on T's subjects and events, then sample n subjects with their events (seeded)."""

    needs_holdout: ClassVar[bool] = False
    holdout_rule: ClassVar[bool] = False

    @abstractmethod
    def fit(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        """Learn from T (subject table and event table, key column in both)."""

    @abstractmethod
    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(subjects, events) of n_subjects synthetic subjects, same columns as T's tables."""

    def info(self) -> dict:
        """JSON-safe facts about the fitted synthesizer, recorded with the cell (as Synthesizer.info)."""
        return {}

    def versions(self) -> dict[str, str | None]:
        """Versions of what the output depends on beyond the Python packages the harness records
        (as Synthesizer.versions: recorded in generate.json, status.json and MLflow)."""
        return {}


class _Sequences:
    """T arranged by subject: attributes, each subject's events contiguous (in their order), lengths."""

    def __init__(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        key = ctx.key
        if len(subjects) == 0:
            raise ValueError(f"{ctx.dataset}: the training subject table has no rows")
        if subjects[key].duplicated().any():
            raise ValueError(f"{ctx.dataset}: column {key!r} (the key) is not unique in the training subjects")
        pos = pd.Index(subjects[key]).get_indexer(events[key])
        if (pos < 0).any():
            raise ValueError(f"{ctx.dataset}: column {key!r}: {int((pos < 0).sum())} training event row(s) "
                             "have a key with no subject")
        order = np.argsort(pos, kind="stable")
        self.ctx = ctx
        self.attrs = subjects[ctx.subject_names].reset_index(drop=True)
        self.events = events[ctx.event_schema.names].iloc[order].reset_index(drop=True)
        self.subject_of_event = pos[order]
        self.lengths = np.bincount(pos, minlength=len(subjects)).astype(np.int64)
        self.starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.int64)

    @property
    def size(self) -> int:
        return len(self.attrs)

    def base(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """docs/definitions/paper.md §5's base rows: the first n subjects if n <= |T|, else n drawn with replacement."""
        return np.arange(n) if n <= self.size else rng.integers(0, self.size, n)

    def event_rows(self, subjects: np.ndarray) -> np.ndarray:
        """Rows of self.events holding the sequences of `subjects`, one after the other."""
        lengths = self.lengths[subjects]
        total = int(lengths.sum())
        within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return np.repeat(self.starts[subjects], lengths) + within

    def assemble(self, attrs: pd.DataFrame, events: pd.DataFrame, lengths: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Synthetic tables with keys 0..n-1: subject i owns the next lengths[i] event rows."""
        key, n = self.ctx.key, len(attrs)
        subjects = pd.concat([pd.DataFrame({key: np.arange(n)}), attrs.reset_index(drop=True)], axis=1)
        ev = pd.concat([pd.DataFrame({key: np.repeat(np.arange(n), lengths)}), events.reset_index(drop=True)],
                       axis=1)
        return subjects, ev


def _check_n(who: str, n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{who}: n_subjects must be a positive integer, got {n!r}")
    return int(n)


class _FromT(SequentialSynthesizer):
    """A synthesizer that only rearranges T (the baselines)."""

    name: ClassVar[str] = "sequential"

    def fit(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        self._t = _Sequences(subjects, events, ctx)

    def _fitted(self) -> _Sequences:
        if not hasattr(self, "_t"):
            raise RuntimeError(f"{self.name}: sample() called before fit()")
        return self._t


class SequentialHoldout(SequentialSynthesizer):
    """Returns H's subject and event tables (n and seed ignored)."""

    needs_holdout = True
    holdout_rule = True

    def fit(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        if ctx.holdout is None:
            raise ValueError("holdout: the harness passed no holdout split (SequentialContext.holdout is None)")
        self._holdout = ctx.holdout

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        if not hasattr(self, "_holdout"):
            raise RuntimeError("holdout: sample() called before fit()")
        return self._holdout[0].copy(), self._holdout[1].copy()


class Copy(_FromT):
    """n subjects of T drawn with replacement, each with its whole real sequence."""

    name = "copy"

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        t = self._fitted()
        pick = np.random.default_rng(check_seed(seed)).integers(0, t.size, _check_n(self.name, n_subjects))
        return t.assemble(t.attrs.take(pick), t.events.take(t.event_rows(pick)), t.lengths[pick])


class SequentialFlip(_FromT):
    """docs/definitions/paper.md §5 on the base subject table and on the base event table (lengths kept)."""

    name = "flip"

    def __init__(self, p: float) -> None:
        self._flip = Flip(p)  # checks p
        self.p = self._flip.p

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        t = self._fitted()
        n, seed = _check_n(self.name, n_subjects), check_seed(seed)
        base = t.base(n, np.random.default_rng(seed))
        tables = []
        for i, (frame, schema) in enumerate(((t.attrs.take(base), t.ctx.subject_schema),
                                             (t.events.take(t.event_rows(base)), t.ctx.event_schema)), start=1):
            if len(frame) == 0 or schema is None:  # no events, or no subject attributes: nothing to flip
                tables.append(frame.reset_index(drop=True))
                continue
            flip = Flip(self.p)
            flip.fit(frame.reset_index(drop=True), FitContext(schema, seed, t.ctx.dataset))
            tables.append(flip.sample(len(frame), derive_seed(seed, i)))
        return t.assemble(tables[0], tables[1], t.lengths[base])


class IndependentEvents(_FromT):
    """The base subjects and lengths; every event row drawn independently from T's pooled events."""

    name = "indep_events"

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        t = self._fitted()
        rng = np.random.default_rng(check_seed(seed))
        base = t.base(_check_n(self.name, n_subjects), rng)
        lengths = t.lengths[base]
        rows = rng.integers(0, max(len(t.events), 1), int(lengths.sum()))
        return t.assemble(t.attrs.take(base), t.events.take(rows), lengths)


class SwapSequences(_FromT):
    """The base subjects, each with the whole sequence of a base subject chosen by a seeded permutation."""

    name = "swap_sequences"

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        t = self._fitted()
        rng = np.random.default_rng(check_seed(seed))
        base = t.base(_check_n(self.name, n_subjects), rng)
        donors = base[rng.permutation(len(base))]
        return t.assemble(t.attrs.take(base), t.events.take(t.event_rows(donors)), t.lengths[donors])


class ARCart(SequentialSynthesizer):
    """Autoregressive CART (module docstring). Tree options as holdbench.synthesizers.cart.CART's."""

    name = "ar_cart"

    def __init__(self, min_samples_leaf: int = 5, min_samples_split: int = 15, cp: float = 1e-8,
                 max_depth: int | None = 30) -> None:
        self._options = {"min_samples_leaf": min_samples_leaf, "min_samples_split": min_samples_split,
                         "cp": cp, "max_depth": max_depth}
        CART(**self._options)  # checks the options

    def fit(self, subjects: pd.DataFrame, events: pd.DataFrame, ctx: SequentialContext) -> None:
        t = _Sequences(subjects, events, ctx)
        if LENGTH in ctx.subject_names:
            raise ValueError(f"ar_cart: a subject column may not be called {LENGTH!r}")
        seed = check_seed(ctx.seed)
        self._ctx = ctx
        self._subject_schema = Schema(f"{ctx.dataset}:subjects+length",
                                      (*ctx.subject_columns, Column(LENGTH, "numeric", "int", "numeric")))
        self._subjects = CART(**self._options)
        self._subjects.fit(t.attrs.assign(**{LENGTH: t.lengths}), FitContext(self._subject_schema, seed, ctx.dataset))
        attrs = [encode_column(t.attrs[c.name], c) for c in ctx.subject_columns]
        self._attr_levels = [a.levels for a in attrs]
        self._event_enc = [encode_column(t.events[c.name], c) for c in ctx.event_schema.columns]
        self._max_len = int(t.lengths.max(initial=0))
        self._models: list[ColumnModel] = []
        if len(t.events) == 0:
            return
        s = t.subject_of_event
        position = np.arange(len(t.events)) - t.starts[s]
        first = position == 0
        context = [EncodedColumn(a.name, a.values[s], a.levels) for a in attrs]
        context.append(EncodedColumn("__position__", position.astype(float)))
        for e in self._event_enc:
            prev = np.roll(e.values, 1)
            context.append(_previous(e, prev, first))
        trees = CART(**self._options)
        trees._seed = seed % 2**32  # the tree builder of cart.CART, used column by column below
        for j, e in enumerate(self._event_enc):
            self._models.append(trees.fit_column(e, context + self._event_enc[:j]))

    def sample(self, n_subjects: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
        if not hasattr(self, "_subjects"):
            raise RuntimeError("ar_cart: sample() called before fit()")
        n, seed = _check_n(self.name, n_subjects), check_seed(seed)
        subj = self._subjects.sample(n, derive_seed(seed, 1))
        lengths = np.clip(subj[LENGTH].to_numpy(dtype=np.int64), 0, None)
        attrs = [_codes(subj[c.name], levels) for c, levels in zip(self._ctx.subject_columns,
                                                                    self._attr_levels, strict=True)]
        rng = np.random.default_rng(derive_seed(seed, 2))
        cols = self._event_enc
        prev = [_previous(e, np.zeros(n, dtype=e.values.dtype), np.ones(n, dtype=bool)).values for e in cols]
        owners, drawn = [], [[] for _ in cols]
        for pos in range(int(lengths.max(initial=0)) if self._models else 0):
            active = np.flatnonzero(lengths > pos)
            context = [a[active] for a in attrs] + [np.full(len(active), float(pos))] + [p[active] for p in prev]
            current: list[np.ndarray] = []
            for model in self._models:
                current.append(draw_column(model, context + current, len(active), rng))
            for j, values in enumerate(current):
                drawn[j].append(values)
                prev[j][active] = values
            owners.append(active)
        who = np.concatenate(owners) if owners else np.empty(0, dtype=np.int64)
        order = np.argsort(who, kind="stable")  # positions were appended in order: stable keeps them
        out = {}
        for e, parts in zip(cols, drawn, strict=True):
            values = np.concatenate(parts)[order] if parts else np.empty(0)
            out[e.name] = e.levels[values.astype(np.int64)] if e.categorical else values
        events = self._ctx.event_schema.coerce(pd.DataFrame(out, columns=[e.name for e in cols]), "ar_cart: events")
        attrs_out = (self._ctx.subject_schema.coerce(subj[self._ctx.subject_names], "ar_cart: subjects")
                     if self._ctx.subject_schema is not None else pd.DataFrame(index=range(n)))
        key = self._ctx.key
        return (pd.concat([pd.DataFrame({key: np.arange(n)}), attrs_out], axis=1),
                pd.concat([pd.DataFrame({key: np.sort(who)}), events], axis=1))


def _previous(e: EncodedColumn, prev: np.ndarray, first: np.ndarray) -> EncodedColumn:
    """The previous event's value of column e as a predictor: a 'start' level (categorical) or a
    missing number at a sequence's first event."""
    if e.categorical:
        levels = np.append(e.levels, np.array(["__start__"], dtype=object))
        return EncodedColumn(f"prev:{e.name}", np.where(first, len(e.levels), prev).astype(np.int64), levels)
    return EncodedColumn(f"prev:{e.name}", np.where(first, np.nan, prev).astype(float))


def _codes(values: pd.Series, levels: np.ndarray | None) -> np.ndarray:
    """A sampled column in the encoding the trees were fitted on (codes of `levels`, or floats)."""
    if levels is None:
        return values.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    codes = pd.Index(levels).get_indexer(values.astype(object))
    if (codes < 0).any():
        raise RuntimeError("ar_cart: a sampled subject value is not a level seen in T")
    return codes.astype(np.int64)

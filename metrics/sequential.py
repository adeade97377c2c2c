"""Sequential (subject + event) measures, holdout-calibrated: S against T beside H against T.

Tables follow holdbench.synthesizers.sequential's convention: a subject table (key + attributes, one row per
subject) and an event table (key + event columns; a subject's events are its rows in row order).

- **D2.2 accuracy** (docs/definitions/d22.md §11): one flat row per subject: its attributes, its sequence length
  (`n_events`) and two subsequent events t and t+1 (`<col>@t`, `<col>@t+1`), t drawn uniformly among
  0 .. length-2 by one seeded draw per subject (`default_rng(seed).random(n_subjects)`, the same seed
  for T, H and S); a length-1 subject has t = 0 and t+1 missing, a length-0 subject both missing.
  This table is scored by the flat F1-F3 code (holdbench.metrics.fidelity.FidelityModel) and its ratios.
- **Coherence**: for each event column c, the TVD between T's and S's joint distribution of
  (c at event t, c at event t+1) over every subsequent pair, c cut into T's buckets at F2's cap (10);
  `seq_coherence_ratio` = mean over columns for S / the same mean for H.
- **Sequence length**: the TVD of the exact length distributions T vs S, as a ratio to H's; 0 means
  the lengths were copied (`seq_lengths_copied`).
- **Privacy per subject** (never per event row: the two-event table is a weak privacy probe): one
  vector per subject (attributes, length, the columns of its first m events, missing past its end)
  fed to the flat DCR-share code (holdbench.metrics.privacy, docs/definitions/paper.md §4), and the identical match share.

`d22_tables` and `subject_vectors` return the flat tables and their kinds; `subject_privacy` runs
flat families (by default the extended privacy panel with NNDR and IMS, Bale & Quick's legal criteria
and the membership-inference panel) on the subject vectors through holdbench.metrics.evaluate, unchanged.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from holdbench.metrics._discretise import Discretiser
from holdbench.metrics.evaluate import FamilyNA, _check_on_error, _check_options, _run_family, evaluate, size_warning
from holdbench.metrics.fidelity import BUCKET_CAPS, FidelityModel
from holdbench.metrics.privacy import distance_data, holdout_distances, privacy
from holdbench.metrics.registry import EvalData, MetricFamily
from holdbench.metrics.result import EvaluationResult
from holdbench.metrics.sequential_parts import (
    RATIO_FLOOR,
    coherence_parts,
    floored_ratio,
    gap_tvds,
    interleaved_keys,
    out_of_order,
    ratio_note,
)
from holdbench.metrics.sequential_result import SequentialResult

Tables = tuple[pd.DataFrame, pd.DataFrame]
LENGTH = "n_events"


@dataclass(frozen=True)
class SequentialLayout:
    """Which columns are the key, the subject attributes and the event columns, and their kinds."""

    key: str
    subject_kinds: Mapping[str, str]
    event_kinds: Mapping[str, str]
    n_events_privacy: int = 3
    #: the order columns (() = row order): S's events whose order values decrease are counted, not re-sorted
    order: tuple[str, ...] = ()
    #: the column whose inter-event gaps are measured (None: no gap measure)
    time: str | None = None
    #: event columns that are datetimes held as days since 1970-01-01 (numeric to every measure)
    datetimes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        m = self.n_events_privacy
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"n_events_privacy must be a positive integer, got {m!r}")
        clash = sorted(set(self.subject_kinds) & {LENGTH, self.key} | set(self.event_kinds) & {self.key})
        if clash:
            raise ValueError(f"column name(s) {clash} are reserved (the key or {LENGTH!r})")
        unknown = [c for c in (*self.order, *([self.time] if self.time else []), *self.datetimes)
                   if c not in self.event_kinds]
        if unknown:
            raise ValueError(f"order/time/datetime column(s) {unknown} are not event columns")
        if self.time and self.event_kinds[self.time] != "numeric":
            raise ValueError(f"the time column {self.time!r} must be numeric or a datetime")


class _Arranged:
    """One (subjects, events) pair indexed by subject: lengths and each subject's events' rows."""

    def __init__(self, tables: Tables, layout: SequentialLayout, source: str) -> None:
        subjects, events = tables
        key = layout.key
        for part, frame, cols in (("subjects", subjects, layout.subject_kinds), ("events", events, layout.event_kinds)):
            missing = [c for c in (key, *cols) if c not in frame.columns]
            if missing:
                raise ValueError(f"{source} ({part} table): column(s) {missing} are missing")
        owner = pd.Index(subjects[key]).get_indexer(events[key])
        if (owner < 0).any():
            raise ValueError(f"{source} (events table): column {key!r}: {int((owner < 0).sum())} event row(s) have "
                             "a key with no subject")
        order = np.argsort(owner, kind="stable")
        self.subjects = subjects[list(layout.subject_kinds)].reset_index(drop=True)
        # events in subject order, one all-missing row appended: row -1 reads as "no event"
        ev = events[list(layout.event_kinds)].iloc[order].reset_index(drop=True)
        self.events = ev.reindex(pd.RangeIndex(len(ev) + 1))
        self.lengths = np.bincount(owner, minlength=len(subjects)).astype(np.int64)
        self.owner_in_row_order = owner
        self.starts = np.concatenate(([0], np.cumsum(self.lengths)[:-1])).astype(np.int64)
        self.n_events = len(ev)

    def event_at(self, position: np.ndarray) -> pd.DataFrame:
        """Each subject's event at `position` (an array over subjects); missing where it has none."""
        rows = np.where((position >= 0) & (position < self.lengths), self.starts + position, -1)
        rows = np.where(rows < 0, len(self.events) - 1, rows)
        return self.events.take(rows).reset_index(drop=True)

    def pairs(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Every subsequent pair of events: (events t, events t+1), row for row."""
        first = np.flatnonzero(np.repeat(self.lengths > 1, self.lengths) &
                               (np.arange(self.n_events) - np.repeat(self.starts, self.lengths)
                                < np.repeat(self.lengths - 1, self.lengths)))
        return self.events.take(first).reset_index(drop=True), self.events.take(first + 1).reset_index(drop=True)


def _suffixed(frame: pd.DataFrame, suffix: str) -> pd.DataFrame:
    return frame.rename(columns={c: f"{c}{suffix}" for c in frame.columns})


def _d22(a: _Arranged, seed: int) -> pd.DataFrame:
    u = np.random.default_rng(seed).random(len(a.lengths))
    t = np.where(a.lengths >= 2, np.floor(u * np.maximum(a.lengths - 1, 1)).astype(np.int64), 0)
    return pd.concat([a.subjects, pd.DataFrame({LENGTH: a.lengths}), _suffixed(a.event_at(t), "@t"),
                      _suffixed(a.event_at(t + 1), "@t+1")], axis=1)


def _vectors(a: _Arranged, m: int) -> pd.DataFrame:
    return pd.concat([a.subjects, pd.DataFrame({LENGTH: a.lengths}),
                      *(_suffixed(a.event_at(np.full(len(a.lengths), i)), f"#{i + 1}") for i in range(m))], axis=1)


def _kinds(layout: SequentialLayout, suffixes: Sequence[str]) -> dict[str, str]:
    return {**layout.subject_kinds, LENGTH: "numeric",
            **{f"{c}{s}": k for s in suffixes for c, k in layout.event_kinds.items()}}


def d22_tables(train: Tables, holdout: Tables, synthetic: Tables, layout: SequentialLayout,
               seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """The D2.2 two-event flat tables of T, H and S (one row per subject) and their kinds."""
    tables = [_d22(_Arranged(x, layout, src), seed) for x, src in ((train, "T"), (holdout, "H"), (synthetic, "S"))]
    return (*tables, _kinds(layout, ("@t", "@t+1")))


def subject_vectors(train: Tables, holdout: Tables, synthetic: Tables, layout: SequentialLayout
                    ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """The per-subject privacy vectors of T, H and S (attributes, length, first m events) and kinds."""
    m = layout.n_events_privacy
    tables = [_vectors(_Arranged(x, layout, src), m) for x, src in ((train, "T"), (holdout, "H"), (synthetic, "S"))]
    return (*tables, _kinds(layout, [f"#{i + 1}" for i in range(m)]))


def subject_privacy(train: Tables, holdout: Tables, synthetic: Tables, layout: SequentialLayout, *,
                    families: Sequence[MetricFamily] | None = None, seed: int = 0, holdout_row: bool = False,
                    n_jobs: int = 1) -> EvaluationResult:
    """Flat privacy families on one vector per subject (`subject_vectors`), exactly as on a flat table:
    `families` default to the extended panel (IMS, DCR/NNDR percentiles vs H, Gower DCR share), Bale &
    Quick's legal criteria and the membership-inference panel (members = T's subjects, non-members =
    H's). holdout_row: S is H (the reference row)."""
    if families is None:
        from holdbench.metrics.attacks import MembershipInference
        from holdbench.metrics.legal import LegalCriteria
        from holdbench.metrics.panel import PrivacyPanel

        families = [PrivacyPanel(), LegalCriteria(), MembershipInference()]
    vt, vh, vs, kinds = subject_vectors(train, holdout, synthetic, layout)
    return evaluate(vt, vh, None if holdout_row else vs, kinds, families=families, holdout_row=holdout_row,
                    n_jobs=n_jobs, seed=seed)


def tvd_counts(a: np.ndarray, b: np.ndarray) -> float:
    """½ Σ |p_a − p_b| of two count vectors of equal length (NaN if either is empty)."""
    na, nb = a.sum(), b.sum()
    if na == 0 or nb == 0:
        return math.nan
    return float(0.5 * np.abs(a / na - b / nb).sum())


def length_tvds(t: np.ndarray, h: np.ndarray, s: np.ndarray) -> tuple[float, float, pd.DataFrame]:
    """TVD of the exact length distributions T vs S and T vs H, and the histogram table."""
    top = int(max(t.max(initial=0), h.max(initial=0), s.max(initial=0))) + 1
    ct, ch, cs = (np.bincount(x, minlength=top) for x in (t, h, s))
    hist = pd.DataFrame({"length": np.arange(top), "train": ct, "holdout": ch, "synthetic": cs})
    return tvd_counts(ct, cs), tvd_counts(ct, ch), hist


def coherence_tvds(train: _Arranged, others: Sequence[_Arranged], event_kinds: Mapping[str, str]) -> np.ndarray:
    """(n_event_columns, len(others)) TVDs of the (c@t, c@t+1) joint distribution vs T's, on T's buckets."""
    t_pairs = train.pairs()
    cols = list(event_kinds)
    out = np.full((len(cols), len(others)), np.nan)
    if len(t_pairs[0]) == 0:
        return out
    stacked = pd.concat(t_pairs, ignore_index=True)  # both positions fit one set of buckets per column
    disc = Discretiser(stacked, event_kinds, BUCKET_CAPS[2])
    cards = disc.cardinalities.astype(np.int64)

    def counts(pairs: tuple[pd.DataFrame, pd.DataFrame]) -> np.ndarray:
        a, b = (disc.transform(p[cols]).astype(np.int64) for p in pairs)
        joint = a * cards[:, None] + b
        return [np.bincount(joint[j], minlength=int(cards[j]) ** 2) for j in range(len(cols))]

    ct = counts(t_pairs)
    for i, other in enumerate(others):
        pairs = other.pairs()
        if len(pairs[0]) == 0:
            continue
        co = counts(pairs)
        out[:, i] = [tvd_counts(x, y) for x, y in zip(ct, co, strict=True)]
    return out


def evaluate_sequential(train: Tables, holdout: Tables, synthetic: Tables, layout: SequentialLayout, *,
                        seed: int = 0, holdout_row: bool = False, n_jobs: int = 1) -> SequentialResult:
    """Every sequential measure of one cell. holdout_row: S is H (the reference row; docs/definitions/paper.md §4.5 rule).
    Every ratio is S's distance / max(H's, RATIO_FLOOR) (docs/definitions/d22.md §11.4)."""
    start = time.perf_counter()
    arranged = [_Arranged(x, layout, src) for x, src in ((train, "T"), (holdout, "H"), (synthetic, "S"))]
    t, h, s = arranged
    flat = [_d22(a, seed) for a in arranged]
    model = FidelityModel(flat[0], flat[1], _kinds(layout, ("@t", "@t+1")), n_jobs=n_jobs, seed=seed)
    fid = model.score(None if holdout_row else flat[2])
    coh = coherence_tvds(t, [s, h], layout.event_kinds)
    coh_s, coh_h = (float(np.nanmean(coh[:, i])) if np.isfinite(coh[:, i]).any() else math.nan for i in (0, 1))
    len_s, len_h, hist = length_tvds(t.lengths, h.lengths, s.lengths)
    parts = coherence_parts(_owned(t), [_owned(s), _owned(h)], dict(layout.event_kinds))
    dis_s, dis_h, cat_s, cat_h = (float(parts[c].mean()) for c in ("distinct_0", "distinct_1", "category_0",
                                                                   "category_1"))
    gap_s = gap_h = math.nan
    gaps = None
    if layout.time:
        (gap_s, gap_h), gaps = gap_tvds(_timed(t, layout.time), [_timed(s, layout.time), _timed(h, layout.time)])
        gaps = gaps.rename(columns={"n_0": "n_synthetic", "tvd_0": "tvd_synthetic", "median_0": "median_synthetic",
                                    "n_1": "n_holdout", "tvd_1": "tvd_holdout", "median_1": "median_holdout"})
    order_cols = list(layout.order) or ([layout.time] if layout.time else [])
    ooo_s = ooo_pairs = ooo_h = math.nan
    if order_cols:
        ooo_s, ooo_pairs = out_of_order(s.lengths, s.events.iloc[:-1][order_cols])
        ooo_h = out_of_order(h.lengths, h.events.iloc[:-1][order_cols])[0]
    inter = interleaved_keys(s.owner_in_row_order)
    F = {k: (fid.F[k], fid.F_holdout[k]) for k in (1, 2, 3)}
    distances = {"seq_F1": F[1], "seq_F2": F[2], "seq_F3": F[3], "coherence": (coh_s, coh_h), "length": (len_s, len_h),
                 "distinct": (dis_s, dis_h), "category": (cat_s, cat_h), "gap": (gap_s, gap_h)}
    m = layout.n_events_privacy
    vec = [_vectors(a, m) for a in arranged]
    codes = distance_data(vec[0], vec[1], vec[2], _kinds(layout, [f"#{i + 1}" for i in range(m)]))
    dcr = privacy(codes, holdout_row, n_jobs)
    h_to_t = dcr.d_train if holdout_row else holdout_distances(codes, n_jobs)
    return SequentialResult(
        seq_F1=fid.F[1], seq_F2=fid.F[2], seq_F3=fid.F[3],
        seq_F1_ratio=floored_ratio(*F[1]), seq_F2_ratio=floored_ratio(*F[2]), seq_F3_ratio=floored_ratio(*F[3]),
        seq_F1_holdout=fid.F_holdout[1], seq_F2_holdout=fid.F_holdout[2], seq_F3_holdout=fid.F_holdout[3],
        seq_coherence_ratio=floored_ratio(coh_s, coh_h), seq_coherence_tvd=coh_s, seq_coherence_tvd_holdout=coh_h,
        seq_length_ratio=floored_ratio(len_s, len_h), seq_length_tvd=len_s, seq_length_tvd_holdout=len_h,
        seq_distinct_ratio=floored_ratio(dis_s, dis_h), seq_distinct_tvd=dis_s, seq_distinct_tvd_holdout=dis_h,
        seq_category_ratio=floored_ratio(cat_s, cat_h), seq_category_tvd=cat_s, seq_category_tvd_holdout=cat_h,
        seq_gap_ratio=floored_ratio(gap_s, gap_h), seq_gap_tvd=gap_s, seq_gap_tvd_holdout=gap_h,
        seq_out_of_order=ooo_s, seq_out_of_order_pairs=ooo_pairs, seq_out_of_order_holdout=ooo_h,
        seq_keys_interleaved=inter, seq_ratio_floor=RATIO_FLOOR, seq_ratios_reason=ratio_note(distances),
        seq_order_reason=_order_note(layout, ooo_s, ooo_pairs, inter),
        seq_lengths_copied=bool(len_s == 0),
        seq_dcr_share=dcr.share, seq_dcr_share_ci_low=dcr.ci_low, seq_dcr_share_ci_high=dcr.ci_high,
        seq_dcr_train_mean=float(np.mean(dcr.d_train)), seq_dcr_holdout_mean=float(np.mean(dcr.d_holdout)),
        seq_ims=float(np.mean(dcr.d_train == 0)), seq_ims_holdout=float(np.mean(h_to_t == 0)),
        n_subjects_train=len(t.lengths), n_subjects_holdout=len(h.lengths),
        n_subjects_synthetic=len(s.lengths), n_events_synthetic=s.n_events, n_events_privacy=m,
        seconds_sequential=time.perf_counter() - start,
        seq_length_histogram=hist,
        seq_coherence=pd.DataFrame({"column": list(layout.event_kinds), "tvd_synthetic": coh[:, 0],
                                    "tvd_holdout": coh[:, 1]}),
        seq_coherence_parts=parts.rename(columns={"distinct_0": "distinct_tvd_synthetic",
                                                  "distinct_1": "distinct_tvd_holdout",
                                                  "category_0": "category_tvd_synthetic",
                                                  "category_1": "category_tvd_holdout"}),
        seq_gaps=gaps,
        seq_marginals=fid.marginals,
        seq_dcr_histogram=_dcr_histogram(dcr.d_train, dcr.d_holdout, h_to_t),
    )


def _owned(a: _Arranged) -> tuple[np.ndarray, pd.DataFrame]:
    """(subject of each event, the events) in subject order, for sequential_parts."""
    return np.repeat(np.arange(len(a.lengths)), a.lengths), a.events.iloc[:-1]


def _timed(a: _Arranged, column: str) -> tuple[np.ndarray, np.ndarray]:
    from holdbench.metrics._discretise import numeric_values

    return a.lengths, numeric_values(a.events[column].iloc[:-1])


def _order_note(layout: SequentialLayout, ooo: float, ooo_pairs: float, inter: float) -> str | None:
    """The output's note on S's order: events out of order (counted, not re-sorted) and interleaved keys."""
    notes = []
    if math.isfinite(ooo) and ooo > 0:
        cols = list(layout.order) or [layout.time]
        notes.append(f"S has events out of order: {ooo:.1%} of its sequences ({ooo_pairs:.2%} of subsequent pairs) "
                     f"hold an event whose {cols} is below the previous event's in S's row order; S is measured in "
                     "its row order as it is (not re-sorted)")
    if math.isfinite(inter) and inter > 0 and not layout.order:
        notes.append(f"S's rows are not grouped by key: the rows of {inter:.1%} of its keys are interleaved with "
                     "other keys' rows. With `order: row` a sequence is its rows in file order, so if S's rows were "
                     "shuffled its event order is lost (the measures read it as it is)")
    return "; ".join(notes) or None


def _dcr_histogram(d_train: np.ndarray, d_holdout: np.ndarray, h_to_t: np.ndarray) -> pd.DataFrame:
    top = int(max(d_train.max(initial=0), d_holdout.max(initial=0), h_to_t.max(initial=0)))
    return pd.DataFrame({"distance": np.arange(top + 1)} | {
        col: np.bincount(np.asarray(d, dtype=np.int64), minlength=top + 1)
        for col, d in (("to_train", d_train), ("to_holdout", d_holdout), ("holdout_to_train", h_to_t))})


# ---------------------------------------------------------------------------------------------
# sequential metric families (conf/metrics/sequential.yaml): what a sequential cell is scored with


@dataclass(frozen=True)
class SequentialEvalData:
    """What every sequential metric family sees of one cell: T, H and S as (subjects, events) pairs.
    For the holdout reference row `synthetic` is H itself."""

    train: Tables
    holdout: Tables
    synthetic: Tables
    layout: SequentialLayout
    holdout_row: bool = False
    seed: int = 0
    n_jobs: int = 1
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def shared(self, key: str, compute):
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def subject_data(self) -> EvalData:
        """The flat EvalData of one vector per subject (`subject_vectors`), built once per evaluation."""
        def build() -> EvalData:
            vt, vh, vs, kinds = subject_vectors(self.train, self.holdout, self.synthetic, self.layout)
            return EvalData(vt, vh, vh if self.holdout_row else vs, kinds, holdout_row=self.holdout_row,
                            seed=self.seed, n_jobs=self.n_jobs)
        return self.shared("subject_data", build)


class SequentialFamily(MetricFamily):
    """A metric family of sequential (subject + event) data: `compute` takes a SequentialEvalData.
    A study of sequential datasets may use only these; a flat study none of them."""


class SequentialMeasures(SequentialFamily):
    """D2.2 accuracy, coherence (and mostlyai-qa's two further parts), sequence length, inter-event gaps,
    order diagnostics, subject DCR share and IMS (evaluate_sequential)."""

    name = "sequential"
    result_type = SequentialResult
    definition = "definitions/d22.md#11-quantifiable-targets-anita-d22"
    reference = (
        "The D2.2 table (two subsequent events per subject) and the subject vectors equal tables "
        "built row by row in the test, the sequence-length and coherence TVDs answers worked out by "
        "hand, and the subject DCR share and IMS the flat privacy code on those row-by-row vectors "
        "exactly (==): tests/sequential/test_sequential_metrics.py. mostlyai-qa's two coherence parts equal "
        "mostlyai-qa 1.10.11's own accuracies to its 5-decimal rounding on categorical, integer and continuous columns "
        "(scripts/reference/mostlyai_qa_coherence.py) and hand-worked answers; the ratio floor, gaps, events "
        "out of order and interleaved keys hand-worked answers: tests/sequential/test_sequential_no_context.py."
    )

    def compute(self, data: SequentialEvalData) -> SequentialResult:
        return evaluate_sequential(data.train, data.holdout, data.synthetic, data.layout, seed=data.seed,
                                   holdout_row=data.holdout_row, n_jobs=data.n_jobs)


def evaluate_families(train: Tables, holdout: Tables, synthetic: Tables | None, layout: SequentialLayout, *,
                      families: Sequence[MetricFamily], holdout_row: bool = False, n_jobs: int = 1, seed: int = 0,
                      on_error: str = "raise") -> EvaluationResult:
    """Run sequential metric families on one cell, as holdbench.metrics.evaluate.evaluate runs flat ones (the same
    on_error rule: "na" turns a family's failure into n/a with its reason). holdout_row: S = H."""
    _check_on_error(on_error)
    _check_options(n_jobs, seed)
    flat = [f.name for f in families if not isinstance(f, SequentialFamily)]
    if flat:
        raise ValueError(f"metric families {flat} are not sequential families (holdbench.metrics.sequential.SequentialFamily): "
                         "a sequential cell is scored by sequential families only")
    names = [f.name for f in families]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"metric families listed more than once: {dupes}")
    if holdout_row:
        synthetic = holdout
    elif synthetic is None:
        raise ValueError("synthetic is missing (only holdout_row=True evaluates without one)")
    for src, tables in (("T", train), ("H", holdout), ("S", synthetic)):
        _Arranged(tables, layout, src)  # column and key checks before any family runs
        if len(tables[0]) == 0:
            raise ValueError(f"{src} (subjects table) has no rows")
    data = SequentialEvalData(train, holdout, synthetic, layout, holdout_row, seed, n_jobs)
    results, na = {}, {}
    for f in families:
        outcome = _run_family(f, lambda f=f: f.compute(data), on_error)
        (na if isinstance(outcome, FamilyNA) else results)[f.name] = outcome
    n_columns = len(layout.subject_kinds) + len(layout.event_kinds)
    return EvaluationResult(results, holdout_row, n_columns, seed,
                            too_small=size_warning(len(train[0]), len(holdout[0])),
                            na={k: v.reason for k, v in na.items()},
                            na_types={k: v.result_type for k, v in na.items()},
                            unavailable=tuple(k for k, v in na.items() if v.unavailable))

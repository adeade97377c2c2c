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
from holdbench.metrics.registry import EvalData, MetricFamily, artifact, metric
from holdbench.metrics.result import EvaluationResult

Tables = tuple[pd.DataFrame, pd.DataFrame]
LENGTH = "n_events"


@dataclass(frozen=True)
class SequentialLayout:
    """Which columns are the key, the subject attributes and the event columns, and their kinds."""

    key: str
    subject_kinds: Mapping[str, str]
    event_kinds: Mapping[str, str]
    n_events_privacy: int = 3

    def __post_init__(self) -> None:
        m = self.n_events_privacy
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            raise ValueError(f"n_events_privacy must be a positive integer, got {m!r}")
        clash = sorted(set(self.subject_kinds) & {LENGTH, self.key} | set(self.event_kinds) & {self.key})
        if clash:
            raise ValueError(f"column name(s) {clash} are reserved (the key or {LENGTH!r})")


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


def _ratio(num: float, den: float) -> float:
    return num / den if math.isfinite(num) and math.isfinite(den) and den > 0 else math.nan


@dataclass(frozen=True)
class SequentialResult:
    """Sequential (event-data) measures of one cell (module docstring: definitions)."""

    seq_F1: float = metric("Seq. F1 (D2.2 table)", "fidelity", direction="lower", digits=4,
                           meaning="F1 on the D2.2 two-event table (attributes, length, events t and t+1).")
    seq_F2: float = metric("Seq. F2 (D2.2 table)", "fidelity", direction="lower", digits=4,
                           meaning="F2 on the D2.2 two-event table.")
    seq_F3: float = metric("Seq. F3 (D2.2 table)", "fidelity", direction="lower", digits=4,
                           meaning="F3 on the D2.2 two-event table.")
    seq_F1_ratio: float = metric("Seq. F1 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3,
                                 meaning="seq_F1 / its value for H: 1 = as faithful as fresh real subjects.")
    seq_F2_ratio: float = metric("Seq. F2 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3,
                                 meaning="seq_F2 / its value for H (same reading).")
    seq_F3_ratio: float = metric("Seq. F3 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
                                 meaning="seq_F3 / its value for H: ANITA D2.2's accuracy on event data.")
    seq_coherence_ratio: float = metric(
        "Coherence ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
        meaning="Mean TVD of each event column paired with itself one event later (T vs S) / the same for H; "
                "far above 1 = the order of events is lost.")
    seq_length_ratio: float = metric(
        "Sequence length ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
        meaning="TVD of the sequence-length distribution T vs S / T vs H; 0 = lengths copied from T.")
    seq_dcr_share: float = metric(
        "Subject DCR share", "privacy", direction="ideal", ideal=0.5, digits=3, headline=True,
        interval=("seq_dcr_share_ci_low", "seq_dcr_share_ci_high"),
        meaning="DCR share (docs/definitions/paper.md §4) on one vector per subject (attributes, length, first m events): "
                "0.5 ideal, above = synthetic subjects sit closer to training subjects than to unseen ones.")
    seq_ims: float = metric(
        "Subject identical match share", "privacy", direction="lower", digits=3,
        meaning="Share of synthetic subject vectors equal to a training subject's; compare seq_ims_holdout.")
    seq_F1_holdout: float = math.nan
    """F1 of H's D2.2 table against T's."""
    seq_F2_holdout: float = math.nan
    """F2 of H's D2.2 table against T's."""
    seq_F3_holdout: float = math.nan
    """F3 of H's D2.2 table against T's."""
    seq_coherence_tvd: float = math.nan
    """Mean over event columns of the (t, t+1) TVD, T vs S."""
    seq_coherence_tvd_holdout: float = math.nan
    """The same for H."""
    seq_length_tvd: float = math.nan
    """TVD of the exact length distributions, T vs S."""
    seq_length_tvd_holdout: float = math.nan
    """The same for H."""
    seq_lengths_copied: bool = False
    """True when S's length distribution equals T's exactly (seq_length_tvd = 0)."""
    seq_ims_holdout: float = math.nan
    """Share of H's subject vectors equal to a training subject's (the IMS reference)."""
    seq_dcr_share_ci_low: float = math.nan
    """Lower end of the 95% Wilson interval of seq_dcr_share."""
    seq_dcr_share_ci_high: float = math.nan
    """Upper end of the 95% Wilson interval of seq_dcr_share."""
    seq_dcr_train_mean: float = math.nan
    """Mean Hamming distance of a synthetic subject vector to its nearest training one."""
    seq_dcr_holdout_mean: float = math.nan
    """Mean Hamming distance of a synthetic subject vector to its nearest holdout one."""
    n_subjects_train: int = 0
    """Subjects of T."""
    n_subjects_holdout: int = 0
    """Subjects of H."""
    n_subjects_synthetic: int = 0
    """Subjects of S."""
    n_events_synthetic: int = 0
    """Event rows of S."""
    n_events_privacy: int = 0
    """m: events per subject vector."""
    seconds_sequential: float = 0.0
    """Wall time of the sequential measures."""
    seq_length_histogram: pd.DataFrame | None = artifact(
        "Subjects by sequence length in T, H and S (columns length, train, holdout, synthetic).")
    seq_coherence: pd.DataFrame | None = artifact(
        "Per event column: the (t, t+1) TVD of S and of H against T (columns column, tvd_synthetic, tvd_holdout).")
    seq_marginals: pd.DataFrame | None = artifact(
        "One row per marginal of the D2.2 table: columns, k, tvd_synthetic, tvd_holdout.")
    seq_dcr_histogram: pd.DataFrame | None = artifact(
        "Counts of S's subject vectors by Hamming distance to the nearest T and H vector, and of H's by distance "
        "to the nearest T vector (columns distance, to_train, to_holdout, holdout_to_train): D2.2's DCR test "
        "per subject.")


def evaluate_sequential(train: Tables, holdout: Tables, synthetic: Tables, layout: SequentialLayout, *,
                        seed: int = 0, holdout_row: bool = False, n_jobs: int = 1) -> SequentialResult:
    """Every sequential measure of one cell. holdout_row: S is H (the reference row; docs/definitions/paper.md §4.5 rule)."""
    start = time.perf_counter()
    arranged = [_Arranged(x, layout, src) for x, src in ((train, "T"), (holdout, "H"), (synthetic, "S"))]
    t, h, s = arranged
    flat = [_d22(a, seed) for a in arranged]
    model = FidelityModel(flat[0], flat[1], _kinds(layout, ("@t", "@t+1")), n_jobs=n_jobs, seed=seed)
    fid = model.score(None if holdout_row else flat[2])
    coh = coherence_tvds(t, [s, h], layout.event_kinds)
    coh_s, coh_h = (float(np.nanmean(coh[:, i])) if np.isfinite(coh[:, i]).any() else math.nan for i in (0, 1))
    len_s, len_h, hist = length_tvds(t.lengths, h.lengths, s.lengths)
    m = layout.n_events_privacy
    vec = [_vectors(a, m) for a in arranged]
    codes = distance_data(vec[0], vec[1], vec[2], _kinds(layout, [f"#{i + 1}" for i in range(m)]))
    dcr = privacy(codes, holdout_row, n_jobs)
    h_to_t = dcr.d_train if holdout_row else holdout_distances(codes, n_jobs)
    return SequentialResult(
        seq_F1=fid.F[1], seq_F2=fid.F[2], seq_F3=fid.F[3],
        seq_F1_ratio=fid.ratio(1), seq_F2_ratio=fid.ratio(2), seq_F3_ratio=fid.ratio(3),
        seq_F1_holdout=fid.F_holdout[1], seq_F2_holdout=fid.F_holdout[2], seq_F3_holdout=fid.F_holdout[3],
        seq_coherence_ratio=_ratio(coh_s, coh_h), seq_coherence_tvd=coh_s, seq_coherence_tvd_holdout=coh_h,
        seq_length_ratio=_ratio(len_s, len_h), seq_length_tvd=len_s, seq_length_tvd_holdout=len_h,
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
        seq_marginals=fid.marginals,
        seq_dcr_histogram=_dcr_histogram(dcr.d_train, dcr.d_holdout, h_to_t),
    )


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
    """D2.2 accuracy, coherence, sequence length, subject DCR share and IMS (evaluate_sequential)."""

    name = "sequential"
    result_type = SequentialResult
    definition = "definitions/d22.md#11-quantifiable-targets-anita-d22"
    reference = (
        "The D2.2 table (two subsequent events per subject) and the subject vectors equal tables "
        "built row by row in the test, the sequence-length and coherence TVDs answers worked out by "
        "hand, and the subject DCR share and IMS the flat privacy code on those row-by-row vectors "
        "exactly (==): tests/sequential/test_sequential_metrics.py."
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

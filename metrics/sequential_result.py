"""The result of the sequential measures (holdbench.metrics.sequential.evaluate_sequential): its registry
metrics, their references and its artifact tables. Every ratio is S's distance / max(H's, RATIO_FLOOR)
(holdbench.metrics.sequential_parts; docs/definitions/d22.md §11.4)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from holdbench.metrics.registry import artifact, metric


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
                                 meaning="seq_F1 / its value for H (floored at 0.01): 1 = as faithful as fresh real subjects.")
    seq_F2_ratio: float = metric("Seq. F2 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3,
                                 meaning="seq_F2 / its value for H (floored at 0.01; same reading).")
    seq_F3_ratio: float = metric("Seq. F3 ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
                                 meaning="seq_F3 / its value for H (floored at 0.01): ANITA D2.2's accuracy on event data.")
    seq_coherence_ratio: float = metric(
        "Coherence ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
        meaning="Mean TVD of each event column paired with itself one event later (T vs S) / the same for H "
                "(floored at 0.01); far above 1 = the order of events is lost.")
    seq_length_ratio: float = metric(
        "Sequence length ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
        meaning="TVD of the sequence-length distribution T vs S / T vs H (floored at 0.01); 0 = lengths copied "
                "from T.")
    seq_distinct_ratio: float = metric(
        "Distinct categories per sequence ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
        meaning="mostlyai-qa's coherence part: mean over event columns of the TVD of the number of distinct "
                "categories (bins) a sequence takes, T vs S / the same for H (floored at 0.01).")
    seq_category_ratio: float = metric(
        "Sequences per category ratio", "fidelity", direction="ideal", ideal=1.0, digits=3, headline=True,
        meaning="mostlyai-qa's coherence part: mean over event columns of the TVD of the number of sequences "
                "holding each category (T's top 9 bins and the rest), T vs S / the same for H (floored at 0.01).")
    seq_gap_ratio: float = metric(
        "Inter-event gap ratio", "fidelity", direction="ideal", ideal=1.0, digits=3,
        meaning="TVD of the gap between subsequent events of the time column, position by position (weighted "
                "by T's gaps), T vs S / the same for H (floored at 0.01); n/a without a time column.")
    seq_out_of_order: float = metric(
        "Sequences out of order", "fidelity", direction="lower", digits=3,
        meaning="Share of S's sequences (with 2+ events) holding an event whose order values are below the "
                "previous event's in S's row order (counted, never re-sorted; T's and H's are 0); n/a with "
                "`order: row` and no time column.")
    seq_keys_interleaved: float = metric(
        "Keys with interleaved rows", "fidelity", direction="lower", digits=3,
        meaning="Share of S's keys whose event rows are not one contiguous block of the file; with `order: "
                "row` a sequence is its rows in file order, so a file whose rows were shuffled has lost it.")
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
    seq_distinct_tvd: float = math.nan
    """Mean over event columns of the distinct-categories-per-sequence TVD, T vs S (1 - it is mostlyai-qa's accuracy)."""
    seq_distinct_tvd_holdout: float = math.nan
    """The same for H."""
    seq_category_tvd: float = math.nan
    """Mean over event columns of the sequences-per-category TVD, T vs S (1 - it is mostlyai-qa's accuracy)."""
    seq_category_tvd_holdout: float = math.nan
    """The same for H."""
    seq_gap_tvd: float = math.nan
    """The inter-event gap TVD, T vs S (time column units: days for a datetime)."""
    seq_gap_tvd_holdout: float = math.nan
    """The same for H."""
    seq_out_of_order_pairs: float = math.nan
    """Share of S's subsequent event pairs whose order values decrease (row order)."""
    seq_out_of_order_holdout: float = math.nan
    """seq_out_of_order of H (0: H is sorted on loading)."""
    seq_ratio_floor: float = 0.01
    """The floor on H's distance in every sequential ratio."""
    seq_ratios_reason: str | None = None
    """The output's note on the ratios: the floor rule and each ratio's S and H distances."""
    seq_order_reason: str | None = None
    """The output's note when S's events are out of order or its rows interleaved (None when neither)."""
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
    seq_coherence_parts: pd.DataFrame | None = artifact(
        "Per event column: mostlyai-qa's distinct-categories-per-sequence and sequences-per-category TVDs of S and "
        "of H against T (columns column, distinct_tvd_synthetic, distinct_tvd_holdout, category_tvd_synthetic, "
        "category_tvd_holdout).")
    seq_gaps: pd.DataFrame | None = artifact(
        "Per gap position: T's, H's and S's number of gaps, their median and the TVD of H and S against T "
        "(columns position, n_train, median_train, n_holdout, tvd_holdout, median_holdout, n_synthetic, "
        "tvd_synthetic, median_synthetic).")
    seq_marginals: pd.DataFrame | None = artifact(
        "One row per marginal of the D2.2 table: columns, k, tvd_synthetic, tvd_holdout.")
    seq_dcr_histogram: pd.DataFrame | None = artifact(
        "Counts of S's subject vectors by Hamming distance to the nearest T and H vector, and of H's by distance "
        "to the nearest T vector (columns distance, to_train, to_holdout, holdout_to_train): D2.2's DCR test "
        "per subject.")

"""Every number of a file report: the metric families of a metrics config on each S (as `holdbench
evaluate` runs them), and the per-column, per-pair and per-record views the report draws, each from a
function of holdbench.metrics (the buckets of F1/F2, Cramér's V, the exposure of T's records)."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from holdbench.benchmark.outputs.filereport.diagnostics import diagnostics

#: most distorted 2- and 3-way marginals listed, exposed records kept in report.json
TOP_MARGINALS = 10
TOP_EXPOSED = 25


@dataclass
class Evaluation:
    """One S: the flat metrics (EvaluationResult.to_dict()), its artifact tables and the report's views."""

    name: str
    metrics: dict
    artifacts: dict[str, pd.DataFrame]
    views: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)


def metrics_config(metrics: str | None, skip: list[str], overrides: list[str], n_jobs: int | None,
                   seed: int | None, sequential: bool):
    """(config, families) of a metrics config, as `holdbench evaluate` builds them (--skip, --set)."""
    from holdbench.benchmark.cli.evaluate import _metrics_config

    ns = argparse.Namespace(metrics=metrics, set=list(overrides), max_combinations=None, privacy_sample=None,
                            n_jobs=n_jobs, seed=seed, skip=list(skip), no_extended=False, no_utility=False,
                            target=None, sep=None, **{f"{r}_{p}": ("x" if sequential else None)
                                                      for r in ("train", "holdout", "synthetic")
                                                      for p in ("subjects", "events")})
    return _metrics_config(ns)


def evaluate_flat(inputs, name: str, families: list, cfg: dict) -> Evaluation:
    """The metric families on (T, H, S=inputs.synthetic[name]), n/a with a reason where one cannot run."""
    from holdbench.metrics.evaluate import evaluate

    t0 = time.process_time()
    res = evaluate(inputs.train, inputs.holdout, inputs.synthetic[name], inputs.kinds, families=families,
                   n_jobs=int(cfg.get("n_jobs", 1)), seed=int(cfg.get("seed", 0)), on_error="na",
                   **inputs.roles)
    return Evaluation(name, res.to_dict(), res.artifacts(), seconds={"metrics": time.process_time() - t0})


class Shared:
    """What every S is compared with, computed once: T's and H's buckets and association matrices."""

    def __init__(self, inputs) -> None:
        from holdbench.metrics._discretise import Discretiser, transform_all
        from holdbench.metrics.association import association_matrix
        from holdbench.metrics.fidelity import BUCKET_CAPS

        self.columns = list(inputs.train.columns)
        #: the columns read from ISO dates: whether every T value is a whole day (shown without a time)
        self.datetimes = {c: bool((inputs.train[c].dropna() % 1 == 0).all()) for c in inputs.datetimes}
        self.disc = [Discretiser(inputs.train, inputs.kinds, BUCKET_CAPS[k]) for k in (1, 2)]
        self._transform_all = transform_all
        self._assoc = association_matrix
        t1, t2 = transform_all(self.disc, inputs.train)
        h1, h2 = transform_all(self.disc, inputs.holdout)
        self.counts = {"train": self._counts(t1), "holdout": self._counts(h1)}
        cards = self.disc[1].cardinalities
        self.assoc = {"train": association_matrix(t2, cards), "holdout": association_matrix(h2, cards)}

    def _counts(self, codes: np.ndarray) -> list[np.ndarray]:
        cards = self.disc[0].cardinalities
        return [np.bincount(codes[j].astype(np.int64), minlength=int(cards[j])) for j in range(len(cards))]

    def of(self, frame: pd.DataFrame) -> tuple[list[np.ndarray], np.ndarray]:
        s1, s2 = self._transform_all(self.disc, frame)
        return self._counts(s1), self._assoc(s2, self.disc[1].cardinalities)

    def bucket_labels(self) -> list[list[str]]:
        """Each column's bucket names: T's categories, or numeric ranges, then _other_ and missing."""
        from holdbench.contracts.dates import days_text

        out = []
        for b in self.disc[0].columns:
            if b.kind == "numeric":
                if b.name in self.datetimes:  # days since 1970-01-01: shown as the dates (and times) they are
                    e = days_text(b.edges, self.datetimes[b.name])
                else:
                    e = [f"{v:.4g}" for v in b.edges]
                names = [f"{e[i]}..{e[i + 1]}" for i in range(len(e) - 1)] if len(e) > 1 else ["(all)"]
                names += ["outside T's range", "missing"]
            else:
                names = [*b.labels, "_other_ (not among T's top 100)", "missing"]
            out.append(names)
        return out


def marginal_views(marginals: pd.DataFrame | None) -> dict:
    """Column shapes (k=1, worst first) and the most distorted 2-/3-way marginals (TVD excess over H's)."""
    if marginals is None or not len(marginals):
        return {"columns": [], "pairs": [], "triples": []}
    m = marginals.copy()
    m["excess"] = m["tvd_synthetic"] - m["tvd_holdout"]
    out = {"columns": m[m["k"] == 1].sort_values(["tvd_synthetic", "columns"], ascending=[False, True])
           [["columns", "tvd_synthetic", "tvd_holdout", "excess"]].to_dict("records")}
    for k, key in ((2, "pairs"), (3, "triples")):
        sub = m[m["k"] == k].sort_values(["excess", "columns"], ascending=[False, True]).head(TOP_MARGINALS)
        out[key] = sub[["columns", "tvd_synthetic", "tvd_holdout", "excess"]].to_dict("records")
        out[f"n_{key}"] = int((m["k"] == k).sum())
        out[f"n_{key}_worse_than_h"] = int(((m["k"] == k) & (m["excess"] > 0)).sum())
    return out


def exposure(inputs, name: str, n_jobs: int, unmask: bool, ids: tuple[np.ndarray, np.ndarray, np.ndarray]) -> dict:
    """T's most exposed records (holdbench.metrics.privacy.record_exposure), the shares of T's and of H's
    records that S copies exactly (identical in every value: `ids` are exact_row_ids of T, H, S) and
    that S matches at Hamming distance 0 (the same bin of every column); values masked unless `unmask`."""
    from holdbench.metrics.privacy import distance_data, record_exposure

    codes = distance_data(inputs.train, inputs.holdout, inputs.synthetic[name], inputs.kinds)
    table = record_exposure(codes, n_jobs)
    t_ids, h_ids, s_ids = ids
    top = table.head(TOP_EXPOSED).copy()
    records = top.to_dict("records")
    for rec in records:
        row = inputs.train.iloc[int(rec["row"])]
        rec["values"] = {str(c): (str(v) if unmask else "•••") for c, v in row.items()}
    return {"records": records, "masked": not unmask,
            "train_exact_copy_rate": _share_in(t_ids, s_ids), "holdout_exact_copy_rate": _share_in(h_ids, s_ids),
            "train_zero_distance_rate": float((table["d_synthetic"] == 0).mean()),
            "holdout_zero_distance_rate": _share_in(codes.holdout_ids, codes.synthetic_ids),
            "n_train_below_1pct": int((table["percentile"] < 0.01).sum()),
            "n_train": len(table)}


def _share_in(ids: np.ndarray, other: np.ndarray) -> float:
    """Share of the rows `ids` whose id occurs in `other` (NaN for no rows)."""
    return float(np.isin(ids, other).mean()) if len(ids) else float("nan")


def views(inputs, shared: Shared, ev: Evaluation, n_jobs: int, unmask: bool) -> None:
    """The report's per-column, per-pair and per-record views of one S, into ev.views."""
    from holdbench.metrics.privacy import exact_row_ids

    t0 = time.process_time()
    s = inputs.synthetic[ev.name]
    counts, assoc = shared.of(s)
    v = ev.views
    v.update(marginal_views(ev.artifacts.get("marginals")))
    v["histograms"] = {"labels": shared.bucket_labels(), "train": shared.counts["train"],
                       "holdout": shared.counts["holdout"], "synthetic": counts}
    v["association"] = {"columns": shared.columns, "train": shared.assoc["train"], "holdout": shared.assoc["holdout"],
                        "synthetic": assoc,
                        "mean_abs_diff_synthetic": _mean_abs_off(assoc - shared.assoc["train"]),
                        "mean_abs_diff_holdout": _mean_abs_off(shared.assoc["holdout"] - shared.assoc["train"])}
    ids = exact_row_ids([inputs.train, inputs.holdout, s], inputs.kinds)
    v["diagnostics"] = diagnostics(inputs, ev.name, ids)
    ev.seconds["views"] = time.process_time() - t0
    t1 = time.process_time()
    v["exposure"] = exposure(inputs, ev.name, n_jobs, unmask, ids)
    ev.seconds["exposure"] = time.process_time() - t1


def _mean_abs_off(m: np.ndarray) -> float:
    """Mean absolute off-diagonal entry of a square matrix over the defined ones (NaN when none is)."""
    v = np.abs(m[~np.eye(len(m), dtype=bool)])
    v = v[~np.isnan(v)]
    return float(v.mean()) if len(v) else float("nan")

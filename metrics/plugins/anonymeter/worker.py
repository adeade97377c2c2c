"""Run anonymeter's three evaluators; executed by the ISOLATED interpreter, never imported by holdbench.

Usage: <venv python> -I worker.py WORKDIR   (the `anonymeter` plug-in; see contracts/plugin_env.py)

WORKDIR holds `train.parquet` (T, anonymeter's `ori`), `control.parquet` (H, `control`),
`synthetic.parquet` (S, `syn`) and `config.json`, all written by metrics/anonymeter_bridge.py.
The worker writes `WORKDIR/result.json` and exits 0; exit code 3 with `result.json` =
{"missing": "..."} means anonymeter (or its stack) cannot be imported here.

This file imports only anonymeter (and what anonymeter itself loads), pandas, numpy and the
standard library: nothing from holdbench, whose environment has another numpy.

Determinism: anonymeter draws from numpy's global RNG (pandas `.sample`), from an unseeded
`np.random.default_rng()` (linkability baseline), from polars' global RNG (singling-out size
correction when |control| != |ori|) and from its own `seed` (singling-out queries). Before
each evaluator all of them are seeded from the one `seed` in config.json. It also draws from
lists whose order polars leaves to hashing (see `_stable_polars`): those are put in a fixed order.

Speed, same numbers: multivariate singling-out counts its candidate queries on S from an index
(`_IndexedCounts`; config.json `indexed_counts: false` counts them with anonymeter's own polars code,
which the tests compare it with); the nearest-neighbour search of linkability and inference sorts only the
part of each distance array that holds the nearest records, with anonymeter's own sort (head_neighbours.py;
`head_sort: false` uses anonymeter's full sort); numba keeps the compiled kernels on disk (`_cache_compiled`).
"""

import functools
import json
import logging
import random
import sys
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

MISSING_EXIT = 3


class _Collect(logging.Handler):
    """Keeps anonymeter's logged warnings (e.g. 'could generate only N singling out queries')."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.messages: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _stable_polars(pl) -> None:
    """Make polars' `DataFrame.group_by` and `Series.unique` keep first-appearance order.

    anonymeter builds its univariate queries from `df.group_by(col).len()` and its baseline
    queries from `df[col].unique()`; polars returns those groups in hash order, which changes
    from run to run, so the seeded draws would pick different queries. Same groups, fixed order.
    """
    if getattr(pl.DataFrame.group_by, "_holdbench_stable", False):
        return
    group_by, unique = pl.DataFrame.group_by, pl.Series.unique

    def stable_group_by(self, *by, maintain_order: bool = True, **named_by):
        return group_by(self, *by, maintain_order=maintain_order, **named_by)

    def stable_unique(self, *, maintain_order: bool = True):
        return unique(self, maintain_order=maintain_order)

    stable_group_by._holdbench_stable = True
    pl.DataFrame.group_by, pl.Series.unique = stable_group_by, stable_unique


def _cache_compiled() -> None:
    """Let numba keep the machine code of anonymeter's nearest-neighbour kernels between runs.

    Linkability and inference search with two numba-compiled functions (Gower distance, brute-force
    neighbours) that anonymeter compiles in every new process, ~4.4 CPU seconds each time, more than the
    search itself costs on a 50,000-row S. numba's own on-disk cache (`Dispatcher.enable_caching`, the
    same as `@jit(cache=True)`: beside the module when writable, else the user's cache folder, rebuilt
    when the source changes) turns the second and later runs into a load. The kernels and their results
    are unchanged: the cache stores what the compiler would build."""
    try:
        import anonymeter.neighbors.mixed_types_kneighbors as kneighbors
        from numba.core.registry import CPUDispatcher
    except ImportError:  # another anonymeter layout: it compiles as before
        return
    for obj in vars(kneighbors).values():
        if isinstance(obj, CPUDispatcher):
            obj.enable_caching()


def _use_head_neighbours(on: bool) -> None:
    """Linkability's and inference's neighbour search through head_neighbours.py (on) or anonymeter's own.

    head_neighbours.py, beside this file, is imported by its own name (not run as a script) so that numba can
    keep its compiled kernels in its cache and load them in later runs."""
    if not on:
        return
    import anonymeter.neighbors.mixed_types_kneighbors as kneighbors

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import head_neighbours

    kneighbors._nearest_neighbors = head_neighbours.nearest_neighbors


class _Pending:
    """A singling-out query as conditions, its polars Expr built by anonymeter only when something asks for it
    (its text for the de-duplication, a count on another frame, any Expr attribute)."""

    __slots__ = ("_expr", "_make", "conditions")

    def __init__(self, make, conditions: list) -> None:
        self._make, self._expr, self.conditions = make, None, conditions

    def expr(self):
        if self._expr is None:
            self._expr = self._make()
        return self._expr

    def __str__(self) -> str:
        return str(self.expr())

    def __getattr__(self, name: str):
        return getattr(self.expr(), name)


class _Column(NamedTuple):
    """One column of S as _IndexedCounts searches it."""

    kind: str  # "text" or "number"
    values: np.ndarray  # text: level codes (-1 missing); number: the values (NaN missing)
    nulls: np.ndarray  # the missing-value mask
    rows_of: dict | None  # text: level -> sorted row ids
    code: dict | None  # text: level -> code
    null_rows: np.ndarray  # row ids of the missing values


class _IndexedCounts:
    """Exact counts of multivariate singling-out queries on S without a polars scan per query.

    anonymeter's multivariate singling-out draws up to `max_attempts` queries from S's records, a batch of
    1,000 at a time, builds a polars expression for each and keeps those that match exactly one record of
    S, counting every batch with one polars scan of S per query (on adult with 100 attacks, ~60 batches
    and ~16 CPU s; on online-shoppers all 200 batches its cap allows, ~32 CPU s). This class replaces
    anonymeter's `_query_from_record` by one that notes a query's conditions with the same branches (a
    missing value -> is_null, a numeric value -> `>=` above S's median else `<=`, any other -> `==` on
    the text, escaped as anonymeter escapes it) and leaves the Expr to anonymeter's own function, called
    only when the query is used beyond its count on S (those that single out); and it answers
    `_evaluate_queries` on S from an index: a query's candidate rows are those of its rarest
    `==`/`is_null` condition (sorted row ids per value, built once), on which the other conditions are
    tested with numpy, or, without a rare condition, a scan of S in slices that stops at the second match.
    A count is 0, 1, or 2 for "two or more": the generation loop (`UniqueSinglingOutQueries`) only keeps
    the queries whose count is exactly 1, and polars would find the same 0 and 1 (a missing value
    satisfies no comparison). No random draw moves: `_query_from_record` draws only when no medians are
    given, and such a query is built at once. Any frame or query this class does not
    know (T, H, their samples, univariate queries, Boolean or Categorical columns, numeric NaN that is
    not missing) is counted by anonymeter's own code on the built Expr.
    """

    def __init__(self, singling) -> None:
        self.singling = singling
        self.build, self.count = singling._query_from_record, singling._evaluate_queries
        self.frame = None  # the first frame counted from conditions (S, in the generation loop)
        self.index: dict | None = None
        self.masks: dict[tuple, np.ndarray] = {}  # (column, text) -> mask over S's rows, frequent texts only
        self.batches = 0  # batches counted from the index (the rest went to anonymeter's own code)
        self._dtypes, self._kind = None, {}

    def install(self) -> None:
        self.singling._query_from_record, self.singling._evaluate_queries = self._build, self._count

    def uninstall(self) -> None:
        self.singling._query_from_record, self.singling._evaluate_queries = self.build, self.count
        self.frame = self.index = None
        self.masks = {}

    def _kinds(self, dtypes: dict) -> dict:
        """column -> 'other' (Boolean, Categorical), 'number' or 'text', for anonymeter's dtypes dict (one per
        generation call, kept with it)."""
        if self._dtypes is not dtypes:
            pl = self.singling.pl
            self._dtypes = dtypes
            self._kind = {c: "other" if dt == pl.Boolean or dt == pl.Categorical else
                          "number" if dt.is_numeric() else "text" for c, dt in dtypes.items()}
        return self._kind

    def _build(self, record, dtypes, columns, medians, rng):
        kinds = self._kinds(dtypes)
        conditions = []
        for col in sorted(columns):
            val = record[col]
            if val is None or (isinstance(val, float) and np.isnan(val)):
                conditions.append(("null", col, None))
            elif kinds[col] == "other" or medians is None:
                # not indexed (and with no medians anonymeter draws an operator): built now, as anonymeter does
                return self.build(record=record, dtypes=dtypes, columns=columns, medians=medians, rng=rng)
            elif kinds[col] == "number":
                conditions.append(("ge" if val > medians[col] else "le", col, val))
            else:
                text = self.singling._escape_quotes(val) if isinstance(val, str) else str(val)
                conditions.append(("eq", col, text))
        return _Pending(functools.partial(self.build, record=record, dtypes=dtypes, columns=columns,
                                          medians=medians, rng=rng), conditions)

    def _count(self, df, queries):
        if queries and all(isinstance(q, _Pending) for q in queries) and (self.frame is None or self.frame is df):
            if self.frame is None:
                self.frame, self.index, self.masks = df, self._index_of(df), {}
            try:
                if self.index is None:
                    raise _NotIndexed
                counts = tuple(self._one(q.conditions, df.height) for q in queries)
                self.batches += 1
                return counts
            except _NotIndexed:
                pass
        return self.count(df=df, queries=[q.expr() if isinstance(q, _Pending) else q for q in queries])

    def _index_of(self, df):
        """{col: _Column} of df, or None when a column is not indexable."""
        pl = self.singling.pl
        index = {}
        for col in df.columns:
            s = df[col]
            nulls = s.is_null().to_numpy()
            null_rows = np.flatnonzero(nulls)
            if s.dtype == pl.String:
                text = s.to_list()
                keys = sorted({v for v in text if v is not None})
                code = {v: i for i, v in enumerate(keys)}
                codes = np.array([-1 if v is None else code[v] for v in text], dtype=np.int64)
                order = np.argsort(codes, kind="stable")
                bounds = np.searchsorted(codes[order], np.arange(-1, len(keys) + 1))
                rows = {v: order[bounds[i + 1]:bounds[i + 2]] for v, i in code.items()}
                index[col] = _Column("text", codes, nulls, rows, code, null_rows)
            elif s.dtype.is_numeric() and s.dtype != pl.Boolean:
                if s.dtype.is_float() and bool(s.is_nan().fill_null(False).any()):
                    return None  # NaN that polars does not treat as missing: leave it to anonymeter
                # NaN where missing (an integer column with gaps comes out as floats), so no comparison holds there
                values = s.cast(pl.Float64).to_numpy() if s.dtype.is_float() or len(null_rows) else s.to_numpy()
                index[col] = _Column("number", values, nulls, None, None, null_rows)
            else:
                return None
        return index

    def _one(self, conditions, n_rows: int) -> int:
        """How many of S's rows match every condition, as 0, 1, or 2 for two or more (all that anonymeter's
        generation loop asks of a count is whether it is exactly 1). When the rarest `==`/`is_null`
        condition leaves few candidate rows, the others are tested on those rows only; otherwise S is
        scanned in slices with boolean masks (a frequent text's mask built once and kept), stopping at the
        second match. A missing number is NaN here and satisfies no comparison, as in polars."""
        index, best = self.index, None
        for j, (kind, col, val) in enumerate(conditions):
            column = index[col]
            if kind == "null":
                rows = column.null_rows
            elif kind == "eq":
                if column.kind != "text":  # text compared with a numeric column: anonymeter's own code decides
                    raise _NotIndexed
                rows = column.rows_of.get(val, _NONE)
            else:
                continue
            if best is None or len(rows) < len(best[1]):
                best = (j, rows)
        if best is not None and len(best[1]) * _FEW <= n_rows:  # a rare condition: test its rows only
            rows = best[1]
            mask = None
            for j, (kind, col, val) in enumerate(conditions):
                if j == best[0]:
                    continue
                mask = self._part(kind, col, val, rows) if mask is None else (mask & self._part(kind, col, val, rows))
            return min(2, len(rows) if mask is None else int(np.count_nonzero(mask)))
        found = 0
        for lo in range(0, n_rows, _SLICE):
            part = slice(lo, lo + _SLICE)
            mask = None
            for kind, col, val in conditions:
                mask = self._part(kind, col, val, part) if mask is None else (mask & self._part(kind, col, val, part))
            found += int(np.count_nonzero(mask))
            if found >= 2:
                return 2
        return found

    def _part(self, kind: str, col: str, val, rows):
        """One condition's boolean mask over `rows` (row ids or a slice) of S; never a kept mask itself. `_one`
        has checked that every `==` is on a text column."""
        column = self.index[col]
        if kind == "null":
            return column.nulls[rows]
        if kind == "eq":
            if isinstance(rows, slice):
                return self._text_mask(col, val)[rows]
            return column.values[rows] == column.code.get(val, -2)  # -2: a text no row holds
        if column.kind != "number":
            raise _NotIndexed
        values = column.values[rows]
        return (values >= val) if kind == "ge" else (values <= val)

    def _text_mask(self, col: str, val: str):
        """The boolean mask of rows whose `col` is the text `val`, kept for reuse."""
        key = (col, val)
        mask = self.masks.get(key)
        if mask is None:
            column = self.index[col]
            mask = column.values == column.code.get(val, -2)
            self.masks[key] = mask
        return mask


class _NotIndexed(Exception):
    """A condition the index cannot answer exactly (e.g. text compared with a numeric column)."""


_NONE = np.empty(0, dtype=np.int64)
_FEW = 8
"""Candidate rows are gathered when the rarest condition keeps at most 1/_FEW of S's rows."""
_SLICE = 4096
"""Rows of S per slice of the scan that stops at a query's second match."""


def _seed_everything(seed: int, modules: dict) -> None:
    np.random.seed(seed)
    random.seed(seed)
    modules["singling"].pl.set_random_seed(seed)  # polars, reached through anonymeter's own import
    rng = np.random.default_rng(seed)
    linkability = modules["linkability"]

    def seeded_random_links(n_synthetic: int, n_attacks: int, n_neighbors: int) -> np.ndarray:
        # same draws as anonymeter's _random_links, from a seeded generator instead of default_rng()
        return np.array([rng.choice(n_synthetic, size=n_neighbors, replace=False) for _ in range(n_attacks)])

    linkability._random_links = seeded_random_links


def _summary(evaluator, seconds: float, cpu_seconds: float) -> dict:
    risk = evaluator.risk(confidence_level=0.95)
    res = evaluator.results(confidence_level=0.95)
    return {
        "risk": float(risk.value),
        "ci_low": float(risk.ci[0]),
        "ci_high": float(risk.ci[1]),
        "attack_rate": float(res.attack_rate.value),
        "baseline_rate": float(res.baseline_rate.value),
        "control_rate": None if res.control_rate is None else float(res.control_rate.value),
        "n_success": int(res.n_success),
        "n_baseline": int(res.n_baseline),
        "n_control": None if res.n_control is None else float(res.n_control),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
    }


def _run_one(name: str, cfg: dict, frames: dict, modules: dict) -> dict:
    ori, control, syn = frames["train"], frames["control"], frames["synthetic"]
    seed, n_attacks, n_jobs = int(cfg["seed"]), int(cfg["n_attacks"]), int(cfg["n_jobs"])
    _seed_everything(seed, modules)
    handler = _Collect()
    logger = logging.getLogger("anonymeter")
    logger.addHandler(handler)
    start, cpu_start = time.perf_counter(), time.process_time()
    indexed = None
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if name in ("singling_uni", "singling_multi"):
                ev = modules["singling"].SinglingOutEvaluator(
                    ori=ori, syn=syn, control=control, n_cols=int(cfg["n_cols"]),
                    n_attacks=n_attacks if name == "singling_uni" else int(cfg["n_attacks_multi"]),
                    max_attempts=cfg["max_attempts"], seed=seed)
                counts = _IndexedCounts(modules["singling"]) if cfg.get("indexed_counts", True) else None
                if counts is not None:
                    counts.install()
                try:
                    ev.evaluate(mode="univariate" if name == "singling_uni" else "multivariate")
                finally:
                    if counts is not None:
                        counts.uninstall()
                indexed = None if counts is None else counts.batches
            elif name == "linkability":
                aux = (list(cfg["aux_cols"][0]), list(cfg["aux_cols"][1]))
                ev = modules["linkability"].LinkabilityEvaluator(
                    ori=ori, syn=syn, control=control, aux_cols=aux, n_attacks=n_attacks,
                    n_neighbors=int(cfg["n_neighbors"]))
                ev.evaluate(n_jobs=n_jobs)
            elif name == "inference":
                secret = cfg["secret"]
                aux = [c for c in ori.columns if c != secret]
                ev = modules["inference"].InferenceEvaluator(
                    ori=ori, syn=syn, control=control, aux_cols=aux, secret=secret,
                    regression=bool(cfg["regression"]), n_attacks=n_attacks)
                ev.evaluate(n_jobs=n_jobs)
            else:
                raise ValueError(f"unknown evaluator {name!r}")
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            out = _summary(ev, seconds, cpu)  # inside: risk()/results() re-issue the baseline warning
        messages = handler.messages + [str(w.message) for w in caught]
    finally:
        logger.removeHandler(handler)
    out["warnings"] = list(dict.fromkeys(messages))
    out["indexed_batches"] = indexed  # singling-out: query batches counted by _IndexedCounts (None: not used)
    return out


def main(argv: list) -> int:
    if len(argv) != 2:
        print("usage: worker.py WORKDIR", file=sys.stderr)
        return 2
    workdir = Path(argv[1])
    cfg = json.loads((workdir / "config.json").read_text())
    try:
        import anonymeter.evaluators.inference_evaluator as inference
        import anonymeter.evaluators.linkability_evaluator as linkability
        import anonymeter.evaluators.singling_out_evaluator as singling
    except ImportError as exc:
        (workdir / "result.json").write_text(json.dumps({"missing": f"{type(exc).__name__}: {exc}"}))
        return MISSING_EXIT
    modules = {"singling": singling, "linkability": linkability, "inference": inference}
    _stable_polars(singling.pl)  # polars, reached through anonymeter's own import
    _cache_compiled()
    _use_head_neighbours(bool(cfg.get("head_sort", True)))
    frames = {k: pd.read_parquet(workdir / f"{k}.parquet", pre_buffer=False) for k in ("train", "control", "synthetic")}
    results = {name: _run_one(name, cfg, frames, modules) for name in cfg["evaluators"]}
    from importlib.metadata import version

    payload = {"anonymeter_version": version("anonymeter"), "numpy_version": np.__version__,
               "results": results}
    (workdir / "result.json").write_text(json.dumps(payload, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

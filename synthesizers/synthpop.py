"""R synthpop's `syn()` through rpy2, with its defaults (the paper's synthpop row).

`syn(T, k = n, seed = seed)` fits and samples in one call, so `fit` only checks that R and
synthpop are there and converts T to an R data.frame once (synthesizers._rconvert: factors
for str columns, NA for missing values, syntactic R names); `sample(n, seed)` runs `syn()`
on it with k = n and R's seed. The fit seed is therefore unused: synthpop's tree fits are
deterministic and all its randomness comes from the seed given to `sample`. Since syn()
refits for every call, two samples cost two fits (the study samples once per cell).

Column names that are not valid R names (adult's `capital-gain`) are passed to R as
syntactic names and restored on the way back: synthpop's rule parsing otherwise fails on
such a column once it has missing values ("object 'hours' not found"). syn()'s options are
settings here: `maxfaclevels` (a categorical with more levels is refused by synthpop unless
raised), `visit_sequence`, `minnumlevels`, `smoothing`, `proper`, `cart_minbucket`, `cart_cp`.
`r_seeds` pins the R seed per dataset (the paper's script drew them with set.seed(123)).

Without rpy2, R or the synthpop package, `fit` raises SynthesizerUnavailable saying how to
install them; nothing R-related is imported before that, so the harness runs without R.
R's "cannot allocate vector" becomes a MemoryError, which the harness records as `oom`.
"""

from __future__ import annotations

import pandas as pd

from synthesizers.base import FitContext, Synthesizer

#: R's set.seed takes a 32-bit signed integer
R_SEED_MODULUS = 2**31 - 1


class Synthpop(Synthesizer):
    """`synthpop::syn()` with `method` (synthpop's default "cart"; the first visited column is
    always drawn by "sample") and syn()'s options at synthpop's defaults unless set."""

    def __init__(self, method: str = "cart", maxfaclevels: int = 60, minnumlevels: int = 1,
                 visit_sequence: list[str] | None = None, smoothing: dict | None = None,
                 proper: bool = False, cart_minbucket: int = 5, cart_cp: float = 1e-8,
                 r_seeds: dict | None = None) -> None:
        """smoothing: {column: "density"} for numeric columns; r_seeds: {dataset: R seed} (overrides
        the cell's seed for that dataset, e.g. the paper's draws)."""
        self.method = str(method)
        if not isinstance(maxfaclevels, int) or maxfaclevels < 1:
            raise ValueError(f"synthpop: maxfaclevels must be a positive integer, got {maxfaclevels!r}")
        self.options = {"maxfaclevels": maxfaclevels, "minnumlevels": minnumlevels, "proper": bool(proper),
                        "cart.minbucket": cart_minbucket, "cart.cp": cart_cp}
        self.visit_sequence = list(visit_sequence) if visit_sequence else None
        self.smoothing = dict(smoothing or {})
        self.r_seeds = {str(k): int(v) for k, v in (r_seeds or {}).items()}

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        from synthesizers._rconvert import r_names, require_r, to_r

        require_r(["synthpop"])
        for what, cols in (("visit_sequence", self.visit_sequence or []), ("smoothing", self.smoothing)):
            unknown = [c for c in cols if c not in ctx.schema.names]
            if unknown:
                raise ValueError(f"synthpop: {what} names column(s) {unknown} that dataset "
                                 f"{ctx.dataset!r} does not have")
        self._schema = ctx.schema
        self._names = r_names(ctx.schema.names)
        self._dataset = ctx.dataset
        self._train = to_r(ctx.schema.coerce(train, "synthpop: training data"), ctx.schema, self._names)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        from rpy2.rinterface_lib.embedded import RRuntimeError
        from rpy2.robjects import StrVector
        from rpy2.robjects.packages import importr

        from synthesizers._rconvert import from_r

        synthpop = importr("synthpop")
        args = {"method": self.method, "k": int(n), "print.flag": False, **self.options,
                "seed": self.r_seeds.get(self._dataset, int(seed) % R_SEED_MODULUS)}
        if self.visit_sequence:
            args["visit.sequence"] = StrVector([self._names[c] for c in self.visit_sequence])
        if self.smoothing:
            from rpy2.robjects import ListVector

            args["smoothing"] = ListVector({self._names[c]: v for c, v in self.smoothing.items()})
        try:
            result = synthpop.syn(self._train, **args)
        except RRuntimeError as exc:
            if "cannot allocate vector" in str(exc):
                raise MemoryError(f"R: {' '.join(str(exc).split())}") from exc
            raise
        return from_r(result.rx2("syn"), self._schema, "synthpop: synthetic data", self._names)

    def info(self) -> dict:
        """R, synthpop and rpy2 versions (recorded with every cell)."""
        from importlib import metadata

        import rpy2.robjects as ro

        return {"R": str(ro.r("R.version.string")[0]),
                "synthpop": str(ro.r('as.character(packageVersion("synthpop"))')[0]),
                "rpy2": metadata.version("rpy2"),
                "r_seed": self.r_seeds.get(getattr(self, "_dataset", ""), None)}

"""R synthpop's `syn()` through rpy2, with its defaults (the paper's synthpop row).

`syn(T, k = n, seed = seed)` fits and samples in one call, so `fit` only checks that R and
synthpop are there and converts T to an R data.frame once (synthesizers._rconvert: factors
for str columns, NA for missing values); `sample(n, seed)` runs `syn()` on it with k = n
and R's seed. The fit seed is therefore unused: synthpop's tree fits are deterministic and
all its randomness comes from the seed given to `sample`. Since syn() refits for every
call, two samples cost two fits (the study samples once per cell).

Without rpy2, R or the synthpop package, `fit` raises SynthesizerUnavailable saying how to
install them; nothing R-related is imported before that, so the harness runs without R.
"""

from __future__ import annotations

import pandas as pd

from synthesizers.base import FitContext, Synthesizer

#: R's set.seed takes a 32-bit signed integer
R_SEED_MODULUS = 2**31 - 1


class Synthpop(Synthesizer):
    """`synthpop::syn()` with `method` (synthpop's default "cart"; the first visited column is
    always drawn by "sample"), everything else at synthpop's defaults."""

    def __init__(self, method: str = "cart") -> None:
        self.method = str(method)

    def fit(self, train: pd.DataFrame, ctx: FitContext) -> None:
        from synthesizers._rconvert import require_r, to_r

        require_r(["synthpop"])
        self._schema = ctx.schema
        self._train = to_r(ctx.schema.coerce(train, "synthpop: training data"), ctx.schema)

    def sample(self, n: int, seed: int) -> pd.DataFrame:
        from rpy2.robjects.packages import importr

        from synthesizers._rconvert import from_r

        synthpop = importr("synthpop")
        result = synthpop.syn(
            self._train,
            **{"method": self.method, "k": int(n), "seed": int(seed) % R_SEED_MODULUS, "print.flag": False},
        )
        return from_r(result.rx2("syn"), self._schema, "synthpop: synthetic data")

"""R synthpop through rpy2: the unavailable paths, the sample path, and a real run if possible.

synthpop comes from CRAN, which many machines cannot reach; its sample path is still
exercised with a stand-in `syn()` written in base R that returns what synthpop returns
(a list whose `syn` holds ints as doubles, character NA and string row names).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from benchmark.config import build_synthesizer, synthesizer_config
from benchmark.schema import Schema
from synthesizers import _rconvert
from synthesizers.base import FitContext, SynthesizerUnavailable

R_REASON = _rconvert.r_unavailable_reason()
SYNTHPOP_REASON = _rconvert.r_unavailable_reason(["synthpop"])


def small_table(n: int = 120, seed: int = 0) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 70, n),
        "job": rng.choice(["clerk", "nurse", "smith"], n).astype(object),
        "pay": np.where(rng.random(n) < 0.1, np.nan, np.round(rng.normal(3000, 500, n), 2)),
        "member": rng.random(n) < 0.4,
    })
    df.loc[rng.random(n) < 0.1, "job"] = np.nan
    schema = Schema.infer("small", df)
    return schema.coerce(df, "T"), schema


def synthpop():
    return build_synthesizer(synthesizer_config("synthpop", preset="smoke"))


def test_without_rpy2_the_message_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "rpy2.robjects", None)
    train, schema = small_table()
    with pytest.raises(SynthesizerUnavailable) as err:
        synthpop().fit(train, FitContext(schema, 0, "small"))
    message = str(err.value)
    assert "pip install 'holdbench[r]'" in message
    assert "apt-get install r-base-core" in message
    assert 'install.packages("synthpop")' in message


@pytest.mark.skipif(SYNTHPOP_REASON is None, reason="synthpop is installed in R")
@pytest.mark.needs_r
@pytest.mark.skipif(R_REASON is not None, reason="rpy2/R not installed")
def test_without_synthpop_the_message_names_install_packages():
    train, schema = small_table()
    with pytest.raises(SynthesizerUnavailable, match=r'install\.packages\("synthpop"\)'):
        synthpop().fit(train, FitContext(schema, 0, "small"))


STAND_IN_SYN = """
function(data, method, k, seed, print.flag) {
  stopifnot(method == "cart", !print.flag, !any(vapply(data, function(x) any(is.nan(x)), NA)))
  set.seed(seed)
  out <- data[sample(nrow(data), k, replace = TRUE), , drop = FALSE]
  out$age <- as.double(out$age)
  out$job <- as.character(out$job)
  rownames(out) <- as.character(seq_len(k))
  list(syn = out, seed = seed)
}
"""


@pytest.mark.needs_r
@pytest.mark.skipif(R_REASON is not None, reason="rpy2/R not installed")
def test_sample_path_with_a_stand_in_syn(monkeypatch):
    import rpy2.robjects as ro
    from rpy2.robjects import packages

    class StandIn:
        syn = ro.r(STAND_IN_SYN)

    monkeypatch.setattr(_rconvert, "require_r", lambda names=(): None)
    monkeypatch.setattr(packages, "importr", lambda name: StandIn)
    train, schema = small_table()
    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "small"))
    out = synth.sample(300, seed=2**40 + 5)
    pd.testing.assert_frame_equal(out, schema.coerce(out, "S"))
    assert out.dtypes.to_dict() == train.dtypes.to_dict() and len(out) == 300
    assert out["job"].isna().any() and out["pay"].isna().any()
    assert set(out["job"].dropna()) <= set(train["job"].dropna())
    pd.testing.assert_frame_equal(out, synth.sample(300, seed=2**40 + 5))


@pytest.mark.slow
@pytest.mark.needs_r
@pytest.mark.skipif(SYNTHPOP_REASON is not None, reason=f"synthpop not usable: {SYNTHPOP_REASON}")
def test_real_synthpop_run():
    train, schema = small_table(300)
    synth = synthpop()
    synth.fit(train, FitContext(schema, 0, "small"))
    out = synth.sample(200, seed=1)
    assert len(out) == 200
    pd.testing.assert_frame_equal(out, schema.coerce(out, "S"))
    assert out.dtypes.to_dict() == train.dtypes.to_dict()
    for col in ("job", "member"):
        assert set(out[col].dropna()) <= set(train[col].dropna())
    pd.testing.assert_frame_equal(out, synth.sample(200, seed=1))

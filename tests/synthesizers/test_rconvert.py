"""The pandas <-> R conversion layer against base R (no synthpop needed).

Checked on the R side: NA arrives as NA (not NaN), str columns are factors with character
levels, int columns are R integers, and base R code that breaks on NaN runs. Checked on the
way back: the quirks synthpop's results have (ints as doubles, character/integer/logical
NA, string row names) map back to canonical dtypes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.contracts.schema import Schema, SchemaError
from holdbench.synthesizers._rconvert import from_r, to_r
from tests.r_available import need_r

pytestmark = pytest.mark.needs_r


@pytest.fixture(autouse=True)
def _r_here():
    need_r()

SCHEMA = Schema.from_mapping("conv", {
    "count": {"kind": "numeric", "dtype": "int"},
    "count-na": {"kind": "numeric", "dtype": "int"},
    "amount": {"kind": "numeric", "dtype": "float"},
    "amount na": {"kind": "numeric", "dtype": "float"},
    "flag": {"kind": "numeric", "dtype": "bool"},
    "flag_na": {"kind": "numeric", "dtype": "bool"},
    "word": {"kind": "categorical"},
    "word_na": {"kind": "categorical"},
    "code": {"kind": "numeric", "dtype": "int", "model_kind": "categorical"},
})


def frame() -> pd.DataFrame:
    raw = pd.DataFrame({
        "count": [3, -1, 0, 7, 2_000_000_000],
        "count-na": [1, None, 3, None, -5],
        "amount": [0.5, -2.25, 1e-300, 3.0, 1e12],
        "amount na": [np.nan, 1.5, np.nan, 0.0, -7.125],
        "flag": [True, False, True, True, False],
        "flag_na": [True, None, False, None, True],
        "word": ["b", "a", "b", "c d", "ä"],
        "word_na": ["x", np.nan, "y", "x", np.nan],
        "code": [2, 1, 2, 2, 1],
    })
    return SCHEMA.coerce(raw, "fixture")


def r(code: str):
    import rpy2.robjects as ro

    return ro.r(code)


def r_call(fn: str, *args):
    """Call an R function given as source text; returns the R result."""
    return r(fn)(*args)


def as_list(vec) -> list:
    return list(vec)


def test_round_trip_is_exact():
    df = frame()
    back = from_r(to_r(df, SCHEMA), SCHEMA)
    pd.testing.assert_frame_equal(back, df)
    assert back["count-na"].dtype == "Int64" and back["flag_na"].dtype == "boolean"
    assert back["count"].dtype == np.int64 and back["flag"].dtype == bool


def test_r_types_and_names():
    rdf = to_r(frame(), SCHEMA)
    assert as_list(r("names")(rdf)) == SCHEMA.names
    typeof = r("function(df) vapply(df, typeof, '')")(rdf)
    klass = r("function(df) vapply(df, function(x) class(x)[1], '')")(rdf)
    assert dict(zip(SCHEMA.names, typeof)) == {
        "count": "integer", "count-na": "integer", "amount": "double", "amount na": "double",
        "flag": "logical", "flag_na": "logical", "word": "integer", "word_na": "integer", "code": "integer",
    }
    assert [klass[i] for i in (6, 7)] == ["factor", "factor"]
    assert klass[8] == "integer"
    # the levels in R's own order (its collation: "ä" sorts beside "a" in ICU's, after "c d" in bytes)
    from rpy2.robjects import StrVector

    r_order = as_list(r("sort")(StrVector(["b", "a", "c d", "ä"])))
    assert sorted(r_order) == ["a", "b", "c d", "ä"]
    assert as_list(r("function(df) levels(df$word)")(rdf)) == r_order
    assert r("function(df) typeof(levels(df$word_na))")(rdf)[0] == "character"
    assert as_list(r("function(df) levels(df$word_na)")(rdf)) == ["x", "y"]


def test_missing_values_arrive_as_na_not_nan():
    df = frame()
    rdf = to_r(df, SCHEMA)
    is_na = r("function(df) vapply(df, function(x) sum(is.na(x)), 0L)")(rdf)
    is_nan = r("function(df) vapply(df, function(x) sum(is.nan(x)), 0L)")(rdf)
    assert dict(zip(SCHEMA.names, is_na)) == df.isna().sum().to_dict()
    assert sum(is_nan) == 0
    assert as_list(r("function(df) which(is.na(df$`amount na`))")(rdf)) == [1, 3]


def test_base_r_code_that_breaks_on_nan_runs():
    """`if (is.na(v)) ... else if (v > 0)` fails on NaN ("missing value where TRUE/FALSE
    needed"), the same error syn() gives when pandas2ri sends NaN; table() counts NA."""
    rdf = to_r(frame(), SCHEMA)
    signs = r_call(
        "function(x) vapply(x, function(v) if (is.na(v) && !is.nan(v)) 'NA' "
        "else if (v > 0) 'pos' else 'non-pos', '')",
        rdf.rx2("amount na"),
    )
    assert as_list(signs) == ["NA", "pos", "NA", "non-pos", "non-pos"]
    with pytest.raises(Exception, match="TRUE/FALSE"):
        r_call("function(x) for (v in x) if (v > 0) NULL", r("c(1, NaN)"))
    counts = r("function(x) { t <- table(x, useNA = 'ifany'); setNames(as.integer(t), "
               "ifelse(is.na(names(t)), '<NA>', names(t))) }")
    words = counts(rdf.rx2("word_na"))
    assert dict(zip(words.names, words)) == {"x": 2, "y": 1, "<NA>": 2}
    flags = counts(rdf.rx2("flag_na"))
    assert dict(zip(flags.names, flags)) == {"FALSE": 1, "TRUE": 2, "<NA>": 2}
    assert r("function(df) sum(complete.cases(df))")(rdf)[0] == int(frame().notna().all(axis=1).sum())
    assert r("function(df) nlevels(addNA(df$word_na))")(rdf)[0] == 3
    assert r("function(df) mean(df$`count-na`, na.rm = TRUE)")(rdf)[0] == pytest.approx(-1 / 3)


def test_from_r_maps_synthpop_style_quirks_back():
    rdf = r(
        "data.frame(count = c(3, 4, 5), `count-na` = c(1L, NA, 3L), amount = c(0.5, NA, NaN),"
        " `amount na` = c(NA_real_, 1, 2), flag = c(TRUE, FALSE, TRUE), flag_na = c(NA, TRUE, FALSE),"
        " word = c('a', NA, 'b'), word_na = factor(c(NA, 'x', 'y')), code = factor(c('2', '1', NA)),"
        " row.names = c('17', '3', '42'), check.names = FALSE, stringsAsFactors = FALSE)"
    )
    back = from_r(rdf, SCHEMA)
    expected = SCHEMA.coerce(pd.DataFrame({
        "count": [3, 4, 5],
        "count-na": [1, None, 3],
        "amount": [0.5, np.nan, np.nan],
        "amount na": [np.nan, 1.0, 2.0],
        "flag": [True, False, True],
        "flag_na": [None, True, False],
        "word": ["a", np.nan, "b"],
        "word_na": [np.nan, "x", "y"],
        "code": [2, 1, None],
    }), "expected")
    pd.testing.assert_frame_equal(back, expected)
    assert isinstance(back.index, pd.RangeIndex)
    assert back["count"].dtype == np.int64 and back["code"].dtype == "Int64"
    assert back["word"].isna().tolist() == [False, True, False]
    assert back["flag_na"].isna().tolist() == [True, False, False]


def test_ints_beyond_r_integer_range_go_as_doubles():
    schema = Schema.from_mapping("big", {"n": {"kind": "numeric", "dtype": "int"}})
    df = schema.coerce(pd.DataFrame({"n": [2**40, -3, 0]}), "big")
    rdf = to_r(df, schema)
    assert r("function(df) typeof(df$n)")(rdf)[0] == "double"
    pd.testing.assert_frame_equal(from_r(rdf, schema), df)


def test_column_mismatch_is_a_schema_error():
    rdf = r("data.frame(count = 1L)")
    with pytest.raises(SchemaError, match="missing"):
        from_r(rdf, SCHEMA)
    with pytest.raises(SchemaError, match="missing"):
        to_r(frame().drop(columns="word"), SCHEMA)

"""check_output: the gate between synthesizers and metrics."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cell.checks import UNPARSEABLE_ATTR, SynthesizerOutputError, check_output


def _raw(train: pd.DataFrame) -> pd.DataFrame:
    """The table as a careless synthesizer might return it: shuffled columns, loose dtypes."""
    raw = train[list(reversed(train.columns))].astype(object)
    raw.index = raw.index + 1000
    return raw


def test_good_output_comes_back_canonical(train, schema):
    out = check_output(_raw(train), schema, len(train), "gen")
    assert list(out.columns) == schema.names
    pd.testing.assert_frame_equal(out, train)
    assert out.attrs[UNPARSEABLE_ATTR] == {}


def test_canonical_dtypes_with_missing_values(train, schema):
    raw = _raw(train)
    raw.loc[raw.index[0], "age"] = None
    raw.loc[raw.index[1], "member"] = None
    out = check_output(raw, schema, len(train), "gen")
    assert str(out["age"].dtype) == "Int64"
    assert str(out["member"].dtype) == "boolean"
    assert out["grade"].dtype == np.int64


def test_not_a_dataframe(train, schema):
    with pytest.raises(SynthesizerOutputError, match="synthesizer 'gen' returned a ndarray"):
        check_output(train.to_numpy(), schema, len(train), "gen")


def test_missing_column_is_named(train, schema):
    with pytest.raises(SynthesizerOutputError, match=r"'gen'.*missing \['city'\]"):
        check_output(train.drop(columns="city"), schema, len(train), "gen")


def test_extra_column_is_named(train, schema):
    with pytest.raises(SynthesizerOutputError, match=r"'gen'.*unexpected \['id'\]"):
        check_output(train.assign(id=1), schema, len(train), "gen")


def test_duplicated_column_is_named(train, schema):
    doubled = pd.concat([train, train[["age"]]], axis=1)
    with pytest.raises(SynthesizerOutputError, match=r"'gen'.*duplicated \['age'\]"):
        check_output(doubled, schema, len(train), "gen")


@pytest.mark.parametrize("rows", [0, 299, 301])
def test_row_count_must_match(train, schema, rows):
    df = pd.concat([train, train]).head(rows)
    with pytest.raises(SynthesizerOutputError, match=rf"'gen' returned {rows} rows, expected 300"):
        check_output(df, schema, 300, "gen")


@pytest.mark.parametrize(
    "column, value",
    [("age", "old"), ("income", "12 3"), ("member", "maybe"), ("grade", "B")],
)
def test_wrong_type_names_synthesizer_and_column(train, schema, column, value):
    bad = train.astype({column: object})
    bad.loc[5, column] = value
    with pytest.raises(SynthesizerOutputError, match=rf"synthesizer 'gen'.*column '{column}'") as err:
        check_output(bad, schema, len(train), "gen")
    assert "\n" not in str(err.value)


def test_entirely_missing_column_is_an_error(train, schema):
    with pytest.raises(SynthesizerOutputError, match=r"'gen'.*\['color'\] are entirely missing"):
        check_output(train.assign(color=None), schema, len(train), "gen")


def test_no_rows_expected_no_rows_given(train, schema):
    assert len(check_output(train.head(0), schema, 0, "gen")) == 0


def test_lenient_turns_garbage_into_missing_and_counts_it(train, schema, caplog):
    bad = train.astype({"age": object, "member": object, "income": object})
    bad.loc[[1, 2], "age"] = ["6-149", "pa8"]
    bad.loc[3, "member"] = "2"
    bad.loc[4, "income"] = "0.0.5"
    with caplog.at_level(logging.WARNING, logger="holdbench.synth"):
        out = check_output(bad, schema, len(train), "gretel", lenient=True)
    assert out.attrs[UNPARSEABLE_ATTR] == {"age": 2, "income": 1, "member": 1}
    assert out["age"].isna().sum() == 2 and str(out["age"].dtype) == "Int64"
    assert pd.isna(out.loc[3, "member"]) and out["member"].notna().sum() == len(train) - 1
    assert out.loc[0, "age"] == train.loc[0, "age"]
    assert any("'gretel'" in r.getMessage() and "4 value(s)" in r.getMessage() for r in caplog.records)


def test_lenient_accepts_r_style_booleans(train, schema):
    raw = train.assign(member=train["member"].map({True: "TRUE", False: "FALSE"}))
    out = check_output(raw, schema, len(train), "mostly", lenient=True)
    pd.testing.assert_series_equal(out["member"], train["member"])
    assert out.attrs[UNPARSEABLE_ATTR] == {}


def test_lenient_still_rejects_wrong_columns_and_rows(train, schema):
    with pytest.raises(SynthesizerOutputError, match="missing"):
        check_output(train.drop(columns="age"), schema, len(train), "gretel", lenient=True)
    with pytest.raises(SynthesizerOutputError, match="rows"):
        check_output(train, schema, 10, "gretel", lenient=True)

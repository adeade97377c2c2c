"""Values that used to slip through the output gate, user tables, and the three readings of
values (strict, pandas = the paper's, lenient). Issue 13 items 6 and 7, issue 14 item 1."""

from __future__ import annotations

import datetime as dt
import logging

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.cell.checks import MIXED_ATTR, UNPARSEABLE_ATTR, SynthesizerOutputError, check_output
from holdbench.benchmark.data.tables import load_dataset
from holdbench.contracts.schema import Schema, SchemaError
from tests.workflow.helpers import make_conf

SCHEMA = Schema.from_mapping("t", {
    "n": {"kind": "numeric", "dtype": "int"},
    "x": {"kind": "numeric", "dtype": "float"},
    "b": {"kind": "numeric", "dtype": "bool"},
    "c": {"kind": "categorical"},
})


def _frame(**cols) -> pd.DataFrame:
    base = pd.DataFrame({"n": [1, 2, 3, 4], "x": [0.5, 1.5, 2.5, 3.5], "b": [True, False, True, False],
                         "c": ["u", "v", "u", "w"]})
    for k, v in cols.items():
        base[k] = v
    return base


@pytest.mark.parametrize("column, values, words", [
    ("x", pd.to_datetime(["2020-01-01"] * 4), "datetime64"),
    ("x", pd.Series([dt.datetime(2020, 1, 1), 1.0, 2.0, 3.0], dtype=object), "datetime"),
    ("x", np.array([1 + 2j, 1, 2, 3]), "complex"),
    ("n", pd.Series([dt.timedelta(days=1), 1, 2, 3], dtype=object), "timedelta"),
    ("n", [1.0, np.inf, 3.0, 4.0], "int64 range"),
    ("n", [1.0, 1e300, 3.0, 4.0], "int64 range"),
    ("n", [1.0, -np.inf, None, 4.0], "int64 range"),   # pandas raised IntCastingNaNError here
    ("n", pd.Series([1, 10**30, 3, 4], dtype=object), "int64 range"),
    ("x", [np.inf, -np.inf, np.inf, np.inf], "not finite"),
])
@pytest.mark.parametrize("values_mode", ["strict", "pandas", "lenient"])
def test_foreign_or_unstorable_values_are_rejected_naming_synthesizer_and_column(column, values, words,
                                                                                 values_mode):
    df = _frame(**{column: values})
    if values_mode != "strict" and words in ("int64 range", "not finite"):
        # pandas/lenient read them as missing (or, pandas, keep 1e300 as read), never as a wrapped integer
        if words == "not finite":
            with pytest.raises(SynthesizerOutputError, match=r"'gen'.*\['x'\] are entirely missing"):
                check_output(df, SCHEMA, 4, "gen", values=values_mode)
            return
        got = check_output(df, SCHEMA, 4, "gen", values=values_mode)[column].astype(float)
        # the offending value (row 1) is missing, or (pandas) kept as read, as the paper's metrics read it
        assert np.isnan(got[1]) or (values_mode == "pandas" and got[1] >= 1e29), got.tolist()
        assert (got.dropna() > -2**62).all()
        return
    with pytest.raises(SynthesizerOutputError) as err:
        check_output(df, SCHEMA, 4, "gen", values=values_mode)
    msg = str(err.value)
    assert "synthesizer 'gen'" in msg and f"column '{column}'" in msg and words in msg, msg
    assert "IntCastingNaNError" not in msg and "\n" not in msg


def test_inf_in_an_integer_column_never_becomes_int64_min():
    """Before: astype(int64) of inf silently stored -9223372036854775808."""
    with pytest.raises(SynthesizerOutputError, match="column 'n'"):
        check_output(_frame(n=[1.0, np.inf, 3.0, 4.0]), SCHEMA, 4, "gen")


def test_a_raw_pandas_error_is_converted(monkeypatch):
    """Whatever pandas raises while storing a column reaches the user as one line naming it."""
    from holdbench.benchmark.cell import checks

    def boom(*a, **k):
        raise pd.errors.IntCastingNaNError("Cannot convert non-finite values (NA or inf) to integer")

    monkeypatch.setattr(checks.Schema, "coerce", boom)
    with pytest.raises(SynthesizerOutputError, match=r"synthesizer 'gen': column 'n' \(int\).*"
                                                     r"\(IntCastingNaNError\)$"):
        check_output(_frame(), SCHEMA, 4, "gen")


def test_pandas_reading_is_the_metrics_reading_and_mixed_types_are_reported(caplog):
    """A bool column read by pandas in chunks: real bools, then the strings 'True'/'False' and a '2'.
    The paper's metrics (holdbench.metrics._discretise.numeric_values) read bools as 0/1, '2' as 2 and the
    other strings as missing; the pandas reading stores exactly that (float, since 2 is not a bool)."""
    from holdbench.metrics._discretise import numeric_values

    raw = pd.Series([True, False, "True", "False", "2", True], dtype=object)
    df = pd.DataFrame({"n": range(6), "x": np.arange(6.0), "b": raw, "c": list("uvwuvw")})
    with caplog.at_level(logging.WARNING, logger="holdbench.synth"):
        out = check_output(df, SCHEMA, 6, "gretel", values="pandas")
    np.testing.assert_array_equal(out["b"].to_numpy(dtype=float, na_value=np.nan), numeric_values(raw))
    assert out.attrs[MIXED_ATTR] == {"b": {"bool": 3, "str": 3}}
    assert out.attrs[UNPARSEABLE_ATTR] == {"b": 2}
    lenient = check_output(df, SCHEMA, 6, "gretel", values="lenient")
    assert lenient["b"].tolist()[:4] == [True, False, True, False]  # coerced: not the paper's reading
    assert lenient.attrs[MIXED_ATTR] == {"b": {"bool": 3, "str": 3}}
    with pytest.raises(SynthesizerOutputError, match="column 'b'"):
        check_output(df, SCHEMA, 6, "gretel", values="strict")


def test_pandas_reading_keeps_bools_as_bools_when_they_fit():
    df = _frame(b=pd.Series([True, "x", False, True], dtype=object))
    out = check_output(df, SCHEMA, 4, "g", values="pandas")
    assert str(out["b"].dtype) == "boolean" and out["b"].isna().sum() == 1


# ---- user tables (item 7) -------------------------------------------------------------------

@pytest.fixture()
def user_table(tmp_path, monkeypatch):
    monkeypatch.setenv("HOLDBENCH_CACHE_DIR", str(tmp_path / "cache"))

    def make(text: str, extra: str = "", suffix: str = ".csv") -> str:
        path = tmp_path / f"t{suffix}"
        path.write_text(text)
        conf = make_conf(tmp_path)
        (conf / "dataset" / "mine.yaml").write_text(f"name: mine\nsource: file\npath: {path}\n{extra}")
        monkeypatch.setenv("HOLDBENCH_CONF_DIR", str(conf))
        return "mine"

    return make


def _rows(sep: str, n: int = 8) -> str:
    lines = [sep.join(["age", "job", "score"])]
    lines += [sep.join([str(20 + i), "ab"[i % 2], f"{i / 4:.2f}"]) for i in range(n)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_separator_is_detected(user_table, sep):
    df = load_dataset(user_table(_rows(sep)))
    assert list(df.columns) == ["age", "job", "score"]
    assert df["age"].dtype == np.int64 and df["score"].dtype == float


def test_configured_separator_wins(user_table):
    # a comma inside the header would fool detection; `sep:` says what it is
    text = "age;job,title;score\n" + "".join(f"{20 + i};x,{i};{i}.5\n" for i in range(8))
    df = load_dataset(user_table(text, "sep: ';'\n"))
    assert list(df.columns) == ["age", "job,title", "score"]


def test_a_column_with_fewer_than_two_values_is_rejected(user_table):
    text = "a,b,c\n" + "".join(f"{i},{'x' if i == 3 else ''},{i % 3}\n" for i in range(8))
    with pytest.raises(SchemaError, match=r"\['b'\] hold fewer than two values \(\{'b': 1\}\)"):
        load_dataset(user_table(text))


def test_a_truncated_cache_is_rebuilt_not_trusted(user_table, tmp_path):
    name = user_table(_rows(","))
    first = load_dataset(name)
    cached = next((tmp_path / "cache").glob("mine-*.parquet"))
    cached.write_bytes(cached.read_bytes()[:40])
    pd.testing.assert_frame_equal(load_dataset(name), first)
    pd.testing.assert_frame_equal(pd.read_parquet(cached), first)


@pytest.mark.parametrize(("name", "hinted"), [("Unnamed: 0", True), ("Unnamed: 12", True), ("level_0", True),
                                              ("__index_level_0__", True), ("index", True),
                                              ("unnamed", False), ("age_index", False), ("Unnamed: x", False)])
def test_a_column_that_looks_like_a_written_row_index_is_named_so(name, hinted):
    from holdbench.contracts.schema import index_column_hint

    hint = index_column_hint(["other", name])
    assert (f"{name!r} looks like a row index that pandas wrote as a column" in hint) == hinted
    assert hint == "" or hint.startswith(" (") and hint.endswith(")")


def test_a_column_named_as_t_names_it_but_for_case_or_spaces_is_pointed_out():
    from holdbench.contracts.schema import near_names_hint

    assert near_names_hint(["age", "sex", "income"], ["Age ", " SEX", "job"]) == (
        " (differing only in letter case or spaces: 'Age ' for 'age', ' SEX' for 'sex'; names must match T's exactly)")
    assert near_names_hint(["age"], ["ages"]) == "" and near_names_hint([], ["Age"]) == ""

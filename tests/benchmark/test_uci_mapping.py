"""ucimlrepo's tables -> canonical tables, on small frames shaped like ucimlrepo's output.

The frames mimic what `fetch_ucirepo(id).data.features` + `.targets` hold: adult's missing
workclass/occupation/native-country as NaN and test labels with a trailing '.', bank's
`unknown` as NaN and `day` named `day_of_week`, credit-default's columns as X1…X23 and Y.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from holdbench.benchmark.data._uci import map_to_canonical
from holdbench.benchmark.data.tables import dataset_config, dataset_schema
from holdbench.contracts.schema import SchemaError


def _map(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    return map_to_canonical(frame, dataset_schema(name), dataset_config(name).get("uci") or {})


def test_adult():
    frame = pd.DataFrame({
        "age": [39, 50], "workclass": ["State-gov", np.nan], "fnlwgt": [77516, 83311],
        "education": ["Bachelors", "Bachelors"], "education-num": [13, 13],
        "marital-status": ["Never-married", "Divorced"], "occupation": [np.nan, "Exec-managerial"],
        "relationship": ["Not-in-family", "Husband"], "race": ["White", "White"], "sex": ["Male", "Male"],
        "capital-gain": [2174, 0], "capital-loss": [0, 0], "hours-per-week": [40, 13],
        "native-country": ["United-States", np.nan], "income": ["<=50K", ">50K."],
    })
    out = _map("adult", frame)
    assert out["workclass"].tolist() == ["State-gov", "?"]
    assert out["occupation"].tolist() == ["?", "Exec-managerial"]
    assert out["native-country"].tolist() == ["United-States", "?"]
    assert out["income"].tolist() == ["<=50K", ">50K"]


def test_bank_marketing():
    names = dataset_schema("bank-marketing").names
    frame = pd.DataFrame({c: [1, 2] for c in names}).rename(columns={"day": "day_of_week"})
    for c in ("job", "marital", "education", "default", "housing", "loan", "contact", "month", "poutcome", "y"):
        frame[c] = ["x", np.nan]
    out = _map("bank-marketing", frame)
    assert list(out.columns) == names
    assert out["day"].tolist() == [1, 2]
    assert out["contact"].tolist() == ["x", "unknown"] and out["poutcome"].tolist() == ["x", "unknown"]


def test_credit_default_positional():
    frame = pd.DataFrame({f"X{i}": [i, i + 1] for i in range(1, 24)})
    frame["Y"] = [0, 1]
    out = _map("credit-default", frame)
    assert list(out.columns) == dataset_schema("credit-default").names
    assert out["LIMIT_BAL"].tolist() == [1, 2] and out["default payment next month"].tolist() == [0, 1]


def test_a_table_that_does_not_fit_is_refused():
    frame = pd.DataFrame({f"V{i}": [0] for i in range(24)})
    with pytest.raises(SchemaError, match="expected columns"):
        _map("credit-default", frame)
    with pytest.raises(SchemaError, match="missing"):
        _map("adult", pd.DataFrame({"age": [1]}))

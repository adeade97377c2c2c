"""Download through `ucimlrepo` and map its tables onto the canonical ones.

ucimlrepo serves the same data with other names and missing-value codes (credit-default
arrives as X1…X23/Y, bank's `unknown` and adult's `?` arrive as NaN, bank's `day` as
`day_of_week`). Each dataset config carries a `uci:` block saying how to map it back;
a table the mapping does not fit is refused, never guessed at.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from holdbench.contracts.schema import Schema, SchemaError


def fetch(uci_id: int) -> pd.DataFrame:
    """Features and targets of a UCI dataset as one frame, exactly as ucimlrepo gives them."""
    from ucimlrepo import fetch_ucirepo

    repo = fetch_ucirepo(id=int(uci_id))
    return pd.concat([repo.data.features, repo.data.targets], axis=1)


def map_to_canonical(frame: pd.DataFrame, schema: Schema, mapping: Mapping[str, Any]) -> pd.DataFrame:
    """Apply a dataset's `uci:` mapping; SchemaError when the frame does not fit it.

    mapping keys: `positional` (bool: take the columns in order, checking `source_columns`),
    `rename` {uci name: canonical name}, `categorical_na` (value for missing categories),
    `strip_suffix` {column: suffix removed from its values}.
    """
    df = frame.copy()
    source = f"ucimlrepo table of {schema.name!r}"
    if mapping.get("positional"):
        expected = list(mapping.get("source_columns") or [])
        got = [str(c) for c in df.columns]
        if expected and got != expected:
            raise SchemaError(f"{source}: expected columns {expected}, got {got}")
        if len(got) != len(schema.names):
            raise SchemaError(f"{source}: {len(got)} columns, the canonical table has {len(schema.names)}")
        df.columns = schema.names
    else:
        df = df.rename(columns=dict(mapping.get("rename") or {}))
    schema.check_columns(df, source)
    df = df[schema.names]
    fill = mapping.get("categorical_na")
    for col, kind in schema.kinds.items():
        if kind == "categorical":
            if fill is not None:
                df[col] = df[col].where(df[col].notna(), fill)
            df[col] = df[col].map(lambda v: v.strip() if isinstance(v, str) else v)
    for col, suffix in (mapping.get("strip_suffix") or {}).items():
        df[col] = df[col].map(lambda v, sfx=suffix: v[: -len(sfx)] if isinstance(v, str) and v.endswith(sfx) else v)
    return df

"""The files of `holdbench report`: names, sizes and columns checked before any work, then T, H and
every S read with one schema (T's, or --dataset's), exactly as `holdbench evaluate` reads them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from holdbench.benchmark.cli._files import MAX_SYNTHETIC_ROWS, check_files


@dataclass
class Inputs:
    """T, H and the named S tables, their schema, roles and what reading them noticed."""

    train: pd.DataFrame
    holdout: pd.DataFrame
    synthetic: dict[str, pd.DataFrame]
    paths: dict[str, str]
    kinds: dict[str, str]
    roles: dict
    raw_dtypes: dict[str, dict[str, str]] = field(default_factory=dict)
    """file role or S name -> {column: dtype pandas read it with}, before T's schema was applied."""
    read_notes: dict[str, dict] = field(default_factory=dict)
    """S name -> mixed types and values read as missing (holdbench.benchmark.cell.checks)."""
    datetimes: list[str] = field(default_factory=list)
    """Columns of T holding dates (datetime64 or ISO 8601 text), read as days since 1970-01-01 in T, H and every S."""
    identifiers: list[dict] = field(default_factory=list)
    """Columns of T that look like record identifiers (diagnostics.identifier_columns)."""


def stem(path: str) -> str:
    """A file's name without its table suffix (holdbench.contracts.io.TABLE_SUFFIXES): `S.csv.zip` -> `S`."""
    from holdbench.contracts.io import table_suffix

    name = Path(path).name
    suffix = table_suffix(name)
    return name[: -len(suffix)] if suffix else Path(path).stem


def named_paths(items: list[str], inputs: tuple[str, ...] = ()) -> dict[str, str]:
    """{name: path} from `--synthetic` items `path`, `name=path` or a folder (each table file in it, by name
    order, named after its file; holdbench.contracts.io.TABLE_SUFFIXES; the files of `inputs`, T and H, left
    out); names must be unique."""
    from holdbench.benchmark.cli._names import check_name, split_name

    out: dict[str, str] = {}
    for item in items:
        name, path = split_name(item)
        if name is None and Path(path).is_dir():
            pairs = [(check_name(stem(str(p)), str(p)), str(p)) for p in _tables_in(Path(path), inputs)]
        else:
            pairs = [(check_name(name if name is not None else stem(item), item), path)]
        for name, path in pairs:
            if name in out:
                raise ValueError(f"--synthetic: two files are named {name!r} ({out[name]} and {path}); name "
                                 "them apart with NAME=PATH")
            out[name] = path
    return out


def _tables_in(folder: Path, inputs: tuple[str, ...] = ()) -> list[Path]:
    """The table files of a folder (not its subfolders) but the files of `inputs` (T and H, when they sit in
    the same folder), sorted by name; none is an error naming the folder."""
    from holdbench.contracts.io import TABLE_TYPES, table_suffix

    given = {Path(p).resolve() for p in inputs if p}
    found = sorted(p for p in folder.iterdir() if p.is_file() and table_suffix(p) and not p.name.startswith(".")
                   and p.resolve() not in given)
    if not found:
        raise ValueError(f"--synthetic {folder}: the folder holds no table file ({TABLE_TYPES})"
                         + (" but T and H" if given else ""))
    return found


def read_flat(train: str, holdout: str, synthetic: dict[str, str], *, dataset: str | None, target: str | None,
              values: str = "pandas", sep: str | None = None, max_rows: int = MAX_SYNTHETIC_ROWS,
              drop: list[str] = ()) -> Inputs:
    """T, H and every S, checked (check_files) and read with T's schema as `holdbench evaluate` reads them."""
    from argparse import Namespace

    from holdbench.benchmark.cli.evaluate import raw_synthetic, read_inputs, read_synthetic

    check_files(train, holdout, synthetic, sep, max_rows, target, list(drop), dataset)
    args = Namespace(train=train, holdout=holdout, synthetic=None, holdout_row=True, dataset=dataset,
                     values=values, sep=sep, drop=list(drop))
    t, h, _, schema, notes = read_inputs(args)
    raw_dtypes = {"train": {c.name: str(c.dtype) for c in schema.columns}}
    out, read_notes = {}, {}
    for name, path in synthetic.items():
        raw = raw_synthetic(path, notes, sep, f"synthetic {name!r} ({path})")
        raw_dtypes[name] = {c: str(raw[c].dtype) for c in t.columns}
        out[name], read_notes[name] = read_synthetic(raw, schema, values, f"synthetic {name!r} ({path})")
        del raw
    roles = {"target": target or schema.target, "sensitive": schema.sensitive,
             "quasi_identifiers": tuple(schema.quasi_identifiers)}
    read_notes["holdout"] = {k.removeprefix("holdout_"): v for k, v in notes.items() if k.startswith("holdout_")}
    from holdbench.benchmark.outputs.filereport.diagnostics import identifier_columns

    return Inputs(t, h, out, {"train": train, "holdout": holdout, **synthetic}, dict(schema.kinds), roles,
                  raw_dtypes, read_notes, list(notes["datetimes"]),
                  identifier_columns(t, dict(schema.kinds), notes["datetimes"]))

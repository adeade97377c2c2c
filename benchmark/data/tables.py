"""Loading datasets as canonical tables: `load_dataset(name)` and `dataset_schema(name)`.

Raw UCI files are looked up in `$HOLDBENCH_DATA_DIR` (default `data/`); when absent they
are fetched with ucimlrepo and the fetched table is saved there so the next load is
offline. Parsed tables are cached as parquet under the results dir (never in the data
dir, which may be read-only). Every table is validated against its config.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path

import pandas as pd

from holdbench.benchmark.data import _uci, _uci_parsers as _parsers
from holdbench.benchmark.config import (
    REPO_ROOT,
    ConfigError,
    check_name,
    conf_dir,
    config_file,
    load_group,
    to_container,
    validate_config,
)
from holdbench.benchmark.data.demo import make_demo
from holdbench.contracts.io import read_parquet, write_parquet
from holdbench.contracts.schema import Schema, SchemaError

log = logging.getLogger("holdbench.data")

SOURCES = ("uci", "file", "demo", "sequential")


class DataUnavailable(FileNotFoundError):
    """The raw files are not there and could not be downloaded."""


def data_dir() -> Path:
    return Path(os.environ.get("HOLDBENCH_DATA_DIR", REPO_ROOT / "data"))


def cache_dir() -> Path:
    default = Path(os.environ.get("HOLDBENCH_RESULTS_DIR", REPO_ROOT / "results")) / "cache"
    return Path(os.environ.get("HOLDBENCH_CACHE_DIR", default))


def dataset_config(name: str) -> dict:
    """The resolved dataset config, its `source` checked."""
    check_name("dataset", name)
    cfg = to_container(load_group("dataset", name))
    validate_config("dataset", name, cfg)
    cfg.setdefault("name", name)
    if cfg.get("source") not in SOURCES:
        raise ConfigError(f"dataset {name!r}: source must be one of {SOURCES}, got {cfg.get('source')!r}")
    if cfg["source"] == "file" and not cfg.get("path"):
        raise ConfigError(f"dataset {name!r}: a file dataset needs `path`")
    if cfg["source"] == "file":
        cfg["path"] = _user_relative(name, str(cfg["path"]))
    if cfg["source"] not in ("file", "sequential") and not cfg.get("columns"):
        raise ConfigError(f"dataset {name!r}: `columns` is missing")
    return cfg


def _user_relative(name: str, path: str) -> str:
    """A file dataset's `path`: relative to the directory of its YAML for a config from the config search
    path (the user's own, beside their data), as written (relative to the repository) for conf/."""
    src = config_file("dataset", name)
    if src.parent.parent == conf_dir() or Path(os.path.expanduser(path)).is_absolute():
        return path
    return str(src.parent / path)


def flat_config(name: str) -> dict:
    """dataset_config, refusing a sequential (subject + event) dataset: the flat loader cannot read it."""
    cfg = dataset_config(name)
    if cfg["source"] == "sequential":
        raise ConfigError(f"dataset {name!r} is a sequential (subject + event) dataset: it has no flat table. "
                          "Use it in a sequential study (`holdbench run sequential`), or give `holdbench "
                          "evaluate`/`check` its pairs of files (--train-subjects, --train-events, "
                          "--holdout-subjects, --holdout-events, --synthetic-subjects, --synthetic-events)")
    return cfg


def dataset_schema(name: str) -> Schema:
    """Schema of a dataset; for a file dataset it is inferred from the file (docs/definitions/paper.md §1)."""
    cfg = flat_config(name)
    if cfg["source"] == "file":
        return _file_schema(cfg, _read_user_file(cfg))
    return _config_schema(cfg)


def _config_schema(cfg: dict) -> Schema:
    return Schema.from_mapping(cfg["name"], cfg["columns"], cfg.get("target"), cfg.get("n_rows"),
                               cfg.get("sensitive"), cfg.get("quasi_identifiers") or ())


def load_dataset(name: str, use_cache: bool = True) -> pd.DataFrame:
    """The canonical table of a dataset (validated; cached as parquet)."""
    return _load_table(name, use_cache)[0]


def load_dataset_and_schema(name: str, use_cache: bool = True) -> tuple[pd.DataFrame, Schema]:
    """load_dataset(name) and dataset_schema(name) together: a file dataset whose cache is cold is read once,
    its schema inferred from the file it loads, not read a second time for the schema."""
    df, schema = _load_table(name, use_cache)
    return df, (schema if schema is not None else dataset_schema(name))


def _load_table(name: str, use_cache: bool) -> tuple[pd.DataFrame, Schema | None]:
    """(the canonical table, its schema when the table was built from its sources; None when read from the
    cache)."""
    cfg = flat_config(name)
    key = _cache_key(cfg)
    cached = cache_dir() / f"{name}-{key}.parquet"
    if use_cache and cached.exists():
        df = _read_cache(cached, cfg)
        if df is not None:
            return df, None
    df, schema = _load_uncached(cfg)
    df = schema.coerce(df, f"dataset {name!r}")
    _validate(df, schema, cfg)
    if use_cache:
        try:
            write_parquet(cached, df)
        except OSError as exc:
            log.warning("could not write cache %s: %s", cached, exc)
    return df, schema


def _read_cache(path: Path, cfg: dict) -> pd.DataFrame | None:
    """The cached table, or None when the file is damaged (truncated, emptied, other columns):
    it is then rebuilt from the raw files, never trusted."""
    try:
        df = read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a damaged file
        log.warning("dataset cache %s is damaged (%s); rebuilding it", path, type(exc).__name__)
        return None
    expected = [str(c) for c in (cfg.get("columns") or {})]
    n_rows = cfg.get("n_rows") if cfg["source"] != "file" else None
    if (expected and list(df.columns) != expected) or (n_rows is not None and len(df) != int(n_rows)) \
            or len(df) == 0:
        log.warning("dataset cache %s does not hold the table its config describes; rebuilding it", path)
        return None
    return df


def _load_uncached(cfg: dict) -> tuple[pd.DataFrame, Schema]:
    name, source = cfg["name"], cfg["source"]
    if source == "demo":
        schema = _config_schema(cfg)
        return make_demo(int(cfg["n_rows"]), int(cfg.get("seed", 0))), schema
    if source == "file":
        df = _read_user_file(cfg)
        return df, _file_schema(cfg, df)
    schema = _config_schema(cfg)
    paths = _raw_paths(cfg)
    if paths is not None:
        parser = _parsers.PARSERS.get(cfg.get("parser", ""))
        if parser is None:
            raise ConfigError(f"dataset {name!r}: unknown parser {cfg.get('parser')!r}")
        return parser(paths, schema.names), schema
    return _uci.map_to_canonical(_uci_raw(cfg), schema, cfg.get("uci") or {}), schema


def _raw_paths(cfg: dict) -> list[Path] | None:
    """Paths of the raw files (plain or .gz) if all are present, else None."""
    found = []
    for fname in cfg.get("files") or []:
        candidates = [data_dir() / fname, data_dir() / f"{fname}.gz"]
        hit = next((p for p in candidates if p.exists()), None)
        if hit is None:
            return None
        found.append(hit)
    return found or None


def _uci_copy(cfg: dict) -> Path:
    return data_dir() / f"{cfg['name']}.ucimlrepo.csv.gz"


def _uci_raw(cfg: dict) -> pd.DataFrame:
    """The ucimlrepo table: the saved copy, else a download saved for next time."""
    copy = _uci_copy(cfg)
    if copy.exists():
        return pd.read_csv(copy, keep_default_na=False, na_values=[""])
    try:
        frame = _uci.fetch(cfg["uci_id"])
    except Exception as exc:  # no network, registry down, unknown id: all end the same way
        files = ", ".join(cfg.get("files") or [])
        raise DataUnavailable(
            f"dataset {cfg['name']!r}: raw files not found in {data_dir()} (expected: {files}, "
            f"plain or .gz) and the download through ucimlrepo (UCI id {cfg.get('uci_id')}) failed: "
            f"{type(exc).__name__}: {exc}. Put the files there or set HOLDBENCH_DATA_DIR."
        ) from exc
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(copy, index=False)
    except OSError as exc:
        log.warning("could not save the downloaded table to %s: %s", copy, exc)
    return frame


def _read_user_file(cfg: dict) -> pd.DataFrame:
    path = Path(os.path.expanduser(str(cfg["path"])))
    if not path.is_absolute():
        path = REPO_ROOT / path
    if not path.exists():
        raise DataUnavailable(f"dataset {cfg['name']!r}: file {path} does not exist")
    try:
        header = _parsers.text_header(path, cfg.get("format"), cfg.get("sep"))
        df = _parsers.parse_file(path, cfg.get("format"), cfg.get("sep"))
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"dataset {cfg['name']!r}: cannot read {path}: {exc}") from exc
    if header is not None:
        bad = sorted({h for h in header if header.count(h) > 1 or not h.strip()})
        if bad:
            raise SchemaError(f"dataset {cfg['name']!r}: {path}: duplicate or empty column names {bad}")
    drop = [str(c) for c in cfg.get("drop") or []]
    unknown = [c for c in drop if c not in df.columns]
    if unknown:
        raise SchemaError(f"dataset {cfg['name']!r}: drop names {unknown}, which {path} has not (its columns: "
                          f"{[str(c) for c in df.columns]})")
    df = df.drop(columns=drop)
    if df.empty or len(df.columns) == 0:
        raise SchemaError(f"dataset {cfg['name']!r}: {path} holds no rows or no columns"
                          + (f" besides the dropped {drop}" if drop else ""))
    return df


def _file_schema(cfg: dict, df: pd.DataFrame) -> Schema:
    names = [str(c) for c in df.columns]
    dupes = sorted({c for c in names if names.count(c) > 1 or c.startswith("Unnamed:")})
    if dupes:
        raise SchemaError(f"dataset {cfg['name']!r}: {cfg['path']}: duplicate or empty column names {dupes}")
    return Schema.infer(cfg["name"], df, cfg.get("target"), cfg.get("overrides"), cfg.get("sensitive"),
                        cfg.get("quasi_identifiers") or (), cfg.get("drop") or ())


def _validate(df: pd.DataFrame, schema: Schema, cfg: dict) -> None:
    name = cfg["name"]
    expected = cfg.get("n_rows")
    if cfg["source"] != "file" and expected is not None and len(df) != int(expected):
        raise SchemaError(f"dataset {name!r}: {len(df)} rows, the config expects {expected}")
    if len(df) < int(cfg.get("min_rows", 4)):
        raise SchemaError(
            f"dataset {name!r}: {len(df)} row(s); a 50/50 split needs at least {cfg.get('min_rows', 4)}"
        )
    empty = [c for c in df.columns if df[c].isna().all()]
    if empty:
        raise SchemaError(f"dataset {name!r}: column(s) {empty} hold no values at all")
    sparse = {c: int(df[c].notna().sum()) for c in df.columns if df[c].notna().sum() < 2}
    if sparse:
        raise SchemaError(f"dataset {name!r}: column(s) {sorted(sparse)} hold fewer than two values "
                          f"({sparse}); a column needs at least two to be split and compared. "
                          "Drop it or fill it")


#: how a file dataset is read, in its cache key: a table cached by an older reading (its date columns as text) is
#: read again, never trusted
_FILE_READING = "dates as days since 1970-01-01"


def _cache_key(cfg: dict) -> str:
    """Changes when the config or the raw files change (size and mtime)."""
    parts = [json.dumps(cfg, sort_keys=True, default=str)]
    if cfg["source"] == "uci":
        paths = _raw_paths(cfg) or ([_uci_copy(cfg)] if _uci_copy(cfg).exists() else [])
    elif cfg["source"] == "file":
        p = Path(os.path.expanduser(str(cfg["path"])))
        paths = [p if p.is_absolute() else REPO_ROOT / p]
        parts.append(_FILE_READING)
    else:
        paths = []
    for p in paths:
        if p.exists():
            st = p.stat()
            parts.append(f"{p.resolve()}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]

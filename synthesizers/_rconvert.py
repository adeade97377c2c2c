"""pandas <-> R data.frame conversion for R synthesizers, with missing values as R's NA.

Why not pandas2ri: its automatic conversion sends a float NaN as NaN, which R code such as
synthpop's `syn()` does not treat as missing ("missing value where TRUE/FALSE needed"),
and on the way back it leaves integer NA as -2147483648, character and logical NA as
rpy2 objects that `isna()` does not see, and the row names as a string index. Here every
column is built explicitly from the schema and read back by its R type, so both
directions are under our control:

    schema dtype   R vector                  missing value
    str            factor, levels in R's     NA (NA_character_ before factor())
                   own order (see below)
    int            integer (double if a      NA_integer_
                   value exceeds R's int32)
    float          double                    NA_real_ (not NaN)
    bool           logical                   NA

A str column becomes a factor through R's own `factor()`, so its levels are in the order R gives them
(`sort()` in the R session's collation: ICU's or the locale's, where "a" < "A" < "B" and "e" < "é" < "f"),
not Python's byte order ("A" < "B" < "a" < "é"): synthpop's results depend on the level order (CART
splits and the level codes), and this way the bridge gives what synthpop run directly in R gives,
on any table. `r_collation()` says which collation that was (recorded with every synthpop cell).

rpy2 is imported lazily (through `require_r`), so importing this module never needs R.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from holdbench.contracts.schema import Column, Schema
from holdbench.synthesizers.base import SynthesizerUnavailable

if TYPE_CHECKING:
    from rpy2.robjects.vectors import DataFrame as RDataFrame

#: R's integers are 32-bit and INT_MIN is NA_integer_
R_INT_MAX = 2**31 - 1
INSTALL_HINT = (
    "install R and rpy2: `apt-get install r-base-core` (or your platform's R), "
    "`pip install 'holdbench[r]'` (rpy2>=3.5,<3.6)"
)


def _import_robjects():
    """Import rpy2.robjects, undoing its LD_LIBRARY_PATH change for later subprocesses.

    rpy2 puts R's and the system's library dirs first on LD_LIBRARY_PATH; a Python started
    afterwards (Snakemake's jobs, the harness's stages) then loads the system libpython and
    loses its site-packages. The libraries this process needs are already loaded.
    """
    import os

    saved = os.environ.get("LD_LIBRARY_PATH")
    import rpy2.robjects as ro

    if saved is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = saved
    return ro


def r_unavailable_reason(packages: Iterable[str] = ()) -> str | None:
    """None when rpy2 imports, R starts and every R package named loads; else why not."""
    packages = list(packages)
    calls = ", ".join(f'install.packages("{p}")' for p in packages)
    then = f", then in R {calls} (from CRAN)" if packages else ""
    try:
        ro = _import_robjects()
    except Exception as exc:  # noqa: BLE001 - ImportError, or R_HOME/libR errors from rpy2's import
        return f"rpy2/R not usable ({type(exc).__name__}: {exc}); {INSTALL_HINT}{then}"
    loads = ro.r("function(p) suppressWarnings(requireNamespace(p, quietly = TRUE))")
    missing = [p for p in packages if not bool(loads(p)[0])]
    if missing:
        calls = ", ".join(f'install.packages("{p}")' for p in missing)
        return f"R package(s) {missing} not installed: in R run {calls} (from CRAN)"
    return None


def require_r(packages: Iterable[str] = ()) -> None:
    """Raise SynthesizerUnavailable with install instructions unless R and `packages` load."""
    reason = r_unavailable_reason(packages)
    if reason is not None:
        raise SynthesizerUnavailable(reason)


_R_RESERVED = {"if", "else", "repeat", "while", "function", "for", "next", "break", "TRUE", "FALSE", "NULL",
               "Inf", "NaN", "NA", "NA_integer_", "NA_real_", "NA_character_", "NA_complex_", "in"}


def r_names(names: Iterable[str]) -> dict[str, str]:
    """column -> a syntactic, unique R name (letters, digits, '.', '_'; starts with a letter or
    a '.' not followed by a digit; not a reserved word). Valid names are kept as they are."""
    import re

    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        r = re.sub(r"[^A-Za-z0-9._]", ".", str(name)) or "X"
        if not re.match(r"^([A-Za-z]|\.(?![0-9]))", r) or r in _R_RESERVED:
            r = "X" + r
        base, i = r, 1
        while r in used:
            r, i = f"{base}.{i}", i + 1
        used.add(r)
        out[str(name)] = r
    return out


def to_r(df: pd.DataFrame, schema: Schema, names: dict[str, str] | None = None) -> RDataFrame:
    """An R data.frame with the schema's columns in order, typed and NA'd as in the table above;
    `names` (from r_names) renames the columns for R."""
    import rpy2.robjects as ro
    from rpy2.robjects.conversion import localconverter

    schema.check_columns(df, "to_r")
    names = names or {c: c for c in schema.names}
    with localconverter(ro.default_converter):
        columns = {names[col.name]: _to_r_vector(df[col.name], col) for col in schema.columns}
        return ro.vectors.DataFrame(columns)


def from_r(rdf, schema: Schema, source: str = "R data.frame", names: dict[str, str] | None = None) -> pd.DataFrame:
    """The R data.frame as a pandas frame in schema order with canonical dtypes.

    Each column is read by its R type (factor, character, integer, double, logical), its
    missing values found with R's `is.na` (which also catches NaN), and the result coerced
    with `schema.coerce`: integer columns returned as doubles become ints again, row names
    are dropped for a 0..n-1 index.
    """
    import rpy2.robjects as ro
    from rpy2.robjects.conversion import localconverter

    names = names or {c: c for c in schema.names}
    back = {r: c for c, r in names.items()}
    with localconverter(ro.default_converter):
        rdf = ro.vectors.DataFrame(rdf)
        got = [back.get(str(n), str(n)) for n in rdf.names]
        schema.check_columns(pd.DataFrame(columns=got), source)
        out = {col.name: _from_r_vector(rdf.rx2(names[col.name])) for col in schema.columns}
    return schema.coerce(pd.DataFrame(out), source)


def r_collation() -> str:
    """The collation R orders factor levels by in this session, e.g. "LC_COLLATE=C.UTF-8; ICU collator root"
    (ICU's collator where R uses ICU, else the C library's for LC_COLLATE)."""
    ro = _import_robjects()
    return str(ro.r('''local({
        icu <- if (capabilities("ICU")) tryCatch(icuGetCollate(), error = function(e) "") else ""
        how <- if (!nzchar(icu) || icu == "ICU not in use") "; ICU not in use" else paste0("; ICU collator ", icu)
        paste0("LC_COLLATE=", Sys.getlocale("LC_COLLATE"), how)
    })''')[0])


def _to_r_vector(s: pd.Series, col: Column):
    from rpy2.rinterface import NA_Character, NA_Integer, NA_Logical, NA_Real
    from rpy2.robjects.vectors import BoolVector, FactorVector, FloatVector, IntVector, StrVector

    missing = s.isna().to_numpy()
    if col.dtype == "str":
        import rpy2.robjects as ro

        text = [NA_Character if m else str(v) for v, m in zip(s.to_numpy(dtype=object), missing)]
        # R's factor(): the levels in R's own collation order, as synthpop run in R would have them
        return FactorVector(ro.baseenv["factor"](StrVector(text)))
    if col.dtype == "bool":
        return BoolVector([NA_Logical if m else bool(v) for v, m in zip(s.to_numpy(dtype=object), missing)])
    numbers = pd.to_numeric(s.astype(object).where(~missing, np.nan)).to_numpy(dtype=float)
    present = numbers[~missing]
    fits_int = present.size == 0 or (np.abs(present).max() <= R_INT_MAX and np.all(present == np.round(present)))
    if col.dtype == "int" and fits_int:
        return IntVector(np.where(missing, int(NA_Integer), np.nan_to_num(numbers)).astype(np.int32))
    return FloatVector(np.where(missing, float(NA_Real), numbers))


def _from_r_vector(vec) -> pd.Series:
    import rpy2.robjects as ro

    missing = np.asarray(ro.baseenv["is.na"](vec)).astype(bool)
    rclass = list(ro.baseenv["class"](vec))
    rtype = ro.baseenv["typeof"](vec)[0]
    if "factor" in rclass:
        levels = np.array([str(v) for v in ro.baseenv["levels"](vec)], dtype=object)
        codes = np.asarray(vec).astype(np.int64)
        values = levels[np.where(missing, 1, codes) - 1]
        return pd.Series(np.where(missing, np.nan, values), dtype=object)
    if rtype == "character":
        values = np.array([None if m else str(v) for v, m in zip(vec, missing)], dtype=object)
        return pd.Series(np.where(missing, np.nan, values), dtype=object)
    if rtype == "logical":
        bits = np.asarray(vec)
        return pd.Series(pd.arrays.BooleanArray(np.where(missing, 0, bits).astype(bool), missing))
    if rtype in ("integer", "double"):
        values = np.asarray(vec).astype(float)
        return pd.Series(np.where(missing, np.nan, values))
    raise TypeError(f"cannot read an R column of type {rtype!r} (class {rclass})")

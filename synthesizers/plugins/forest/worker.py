"""The `forest` plug-in's worker: arfpy's adversarial random forest and ForestDiffusion inside `.venv-forest`.

Run by the shared generator worker (synthesizers/plugins/holdbench_worker.py), which reads the inputs,
seeds numpy's and Python's global RNGs from the cell's seed before every stage (arfpy has no seed
argument), and writes the result. Imports only the standard library, numpy, pandas and the plug-in's
libraries.
"""

import numpy as np
import pandas as pd

#: method -> (import name, distribution name) of its library
LIBRARIES = {"arf": ("arfpy", "arfpy"), "forest_diffusion": ("ForestDiffusion", "ForestDiffusion")}
MISSING_FLAG = "__holdbench_missing__"


# ------------------------------------------------------------------ adversarial random forest (arfpy)
def _fit_arf(train, cfg, p):
    from arfpy import arf

    x = train.copy()
    for c in cfg["categorical"]:
        x[c] = x[c].astype(object)  # arfpy models object columns as factors
    flagged = []
    for c in cfg["numeric"]:  # arfpy does not take NaN: a missing flag plus the column's minimum
        if x[c].isna().any():
            x[c + MISSING_FLAG] = np.where(x[c].isna(), "1", "0")
            x[c] = x[c].fillna(x[c].min() if x[c].notna().any() else 0.0)
            flagged.append(c)
    model = arf.arf(x=x, num_trees=int(p["num_trees"]), delta=float(p["delta"]), max_iters=int(p["max_iters"]),
                    early_stop=True, verbose=False, min_node_size=int(p["min_node_size"]),
                    random_state=int(cfg["seed"]) % 2**32, n_jobs=1)
    model.forde(dist=str(p["dist"]), oob=False, alpha=float(p["alpha"]))
    return {"arf": model, "flagged": flagged}, {}


def _sample_arf(model, n, cfg):
    out = model["arf"].forge(n=n)
    for c in model["flagged"]:
        flag = out.pop(c + MISSING_FLAG).astype(str)
        out[c] = out[c].astype(float).where(flag != "1")
    return out


# ------------------------------------------------------------------ ForestDiffusion (flow or vp diffusion)
def _fit_forest_diffusion(train, cfg, p):
    from ForestDiffusion import ForestDiffusionModel

    columns = list(train.columns)
    levels = {c: sorted(train[c].unique()) for c in cfg["categorical"]}
    x = np.column_stack([train[c].map({v: i for i, v in enumerate(levels[c])}).to_numpy(float) if c in levels
                         else train[c].to_numpy(float) for c in columns])
    cat = [i for i, c in enumerate(columns) if c in levels and len(levels[c]) > 2]
    binary = [i for i, c in enumerate(columns) if c in levels and len(levels[c]) == 2]
    integer = [i for i, c in enumerate(columns) if c in cfg["integer"]]
    const = [c for c in levels if len(levels[c]) == 1]
    model = ForestDiffusionModel(
        x, n_t=int(p["n_t"]), duplicate_K=int(p["duplicate_K"]), diffusion_type=str(p["diffusion_type"]),
        model="xgboost", n_estimators=int(p["n_estimators"]), max_depth=int(p["max_depth"]),
        cat_indexes=cat, bin_indexes=binary, int_indexes=integer, n_jobs=1, n_batch=0,
        seed=int(cfg["seed"]) % 2**32)
    return {"model": model, "columns": columns, "levels": levels, "const": const}, {}


def _sample_forest_diffusion(model, n, cfg):
    x = model["model"].generate(batch_size=n)
    out = {}
    for i, c in enumerate(model["columns"]):
        if c in model["levels"]:
            lv = model["levels"][c]
            codes = np.clip(np.rint(np.nan_to_num(x[:, i], nan=0.0)), 0, len(lv) - 1).astype(int)
            out[c] = np.asarray(lv, dtype=object)[codes]
        else:
            out[c] = x[:, i]
    return pd.DataFrame(out)


METHODS = {"arf": (_fit_arf, _sample_arf), "forest_diffusion": (_fit_forest_diffusion, _sample_forest_diffusion)}

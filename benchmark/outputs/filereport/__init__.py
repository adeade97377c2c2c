"""`holdbench report` on files: T, H and any number of S to report.html, report.json and summary.md.

    from holdbench.benchmark.outputs.filereport import build_report
    outcome = build_report("T.csv", "H.csv", {"a": "S1.csv", "b": "S2.csv"}, "out/", target="income")
    outcome.exit_code  # 0 every S passes the gates, 1 one fails

Every number comes from holdbench.metrics (the families of a metrics config, as `holdbench evaluate`
runs them) and the gates from holdbench.benchmark.outputs.gates (as `holdbench check` judges); the
report draws and explains them. Nothing is sampled beyond what the metrics config itself samples.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    """What build_report wrote and its verdict."""

    exit_code: int
    html: Path
    json: Path
    summary: Path
    verdicts: dict


def build_report(train: str, holdout: str, synthetic: dict[str, str], out: str | Path, *,
                 target: str | None = None, dataset: str | None = None, metrics: str | None = None,
                 gates: str | None = None, skip: tuple[str, ...] = (), overrides: tuple[str, ...] = (),
                 from_json: dict[str, str] | None = None, unmask: bool = False, n_jobs: int | None = None,
                 seed: int | None = None, values: str = "pandas", sep: str | None = None,
                 max_rows: int | None = None, strict: bool = False, drop: tuple[str, ...] = (),
                 log=None) -> Outcome:
    """Read T, H and each S (named), evaluate, judge and write DIR/report.html, report.json and summary.md.

    from_json: {S name: evaluation JSON of `holdbench evaluate --out`}: that S's metric families are read
    from it instead of recomputed (its artifacts too; the report's own views are still computed).
    drop: columns of T left out of T, H and every S before anything is measured."""
    from holdbench.benchmark.data.sequential_values import dates_text
    from holdbench.benchmark.outputs.filereport import compute, inputs as inp, render
    from holdbench.benchmark.outputs.filereport.diagnostics import identifier_text
    from holdbench.benchmark.outputs.gates import DEFAULT_GATES, load_gates

    say = log or (lambda msg: None)
    train, holdout = str(train), str(holdout)
    synthetic = {str(k): str(v) for k, v in synthetic.items()}
    started = time.process_time()
    out = Path(out)
    prepare_out(out, [train, holdout, *synthetic.values()])
    unknown = sorted(set(from_json or {}) - set(synthetic))
    if unknown:
        raise ValueError(f"--from-json names {unknown}, which are not among the synthetic files {list(synthetic)}")
    cfg, families = compute.metrics_config(metrics, list(skip), list(overrides), n_jobs, seed, False)
    capped = any(f.name == "utility" for f in families) and _with_design_cap(overrides) != list(overrides)
    if capped:
        cfg, families = compute.metrics_config(metrics, list(skip), _with_design_cap(overrides), n_jobs, seed, False)
    specs = _specs(families)
    gate_set = load_gates(gates or DEFAULT_GATES["flat"])
    from holdbench.benchmark.outputs.gates import check_metrics

    check_metrics(gate_set, specs)
    saved = {n: read_evaluation(p, synthetic[n]) for n, p in (from_json or {}).items()}
    say(f"reading T, H and {len(synthetic)} synthetic file(s)")
    data = inp.read_flat(train, holdout, synthetic, dataset=dataset, target=target, values=values, sep=sep,
                         max_rows=max_rows or inp.MAX_SYNTHETIC_ROWS, drop=list(drop))
    shared = compute.Shared(data)
    if data.datetimes:
        say(dates_text(data.datetimes))
    if data.identifiers:
        say(identifier_text(data.identifiers))
    if log is not None:  # each family says on stderr when it starts and how long it took
        from holdbench.benchmark.cli.evaluate import _announce

        for family in families:
            _announce(family)
    evaluations = []
    for name in synthetic:
        if name in saved:
            say(f"S {name}: metrics from {from_json[name]}")
            ev = compute.Evaluation(name, saved[name][0], saved[name][1])
        else:
            say(f"S {name}: metric families {', '.join(f.name for f in families)}")
            ev = compute.evaluate_flat(data, name, families, cfg)
        say(f"S {name}: column, pair, diagnostic and exposure views")
        compute.views(data, shared, ev, int(cfg.get("n_jobs", 1)), unmask)
        evaluations.append(ev)
    rep, extra = render.assemble(data, shared, evaluations, specs, gate_set, cfg,
                                 {"train": train, "holdout": holdout, "synthetic": dict(synthetic),
                                  "from_json": dict(from_json or {}), "target": data.roles["target"],
                                  "dataset": dataset, "metrics": metrics or "default", "unmask": unmask,
                                  "skip": list(skip),
                                  "overrides": _with_design_cap(overrides) if capped else list(overrides),
                                  "values": values, "drop": list(drop)})
    code = exit_code(rep, strict)
    rep["exit_code"] = code
    rep["cpu_seconds"] = time.process_time() - started
    paths = render.write(out, rep, extra, specs)
    return Outcome(code, *paths, {n: s["verdict"] for n, s in rep["synthetic"].items()})


#: the pMSE design a report allows unless --set says otherwise (MB): a larger design is fitted at a lower degree,
#: stated in pmse_reason. The paper's tables stay at degree 3 under it; a million-row S would need 7.5 GB at degree 3
REPORT_DESIGN_MB = 1024


def _with_design_cap(overrides) -> list[str]:
    """The --set overrides, with families.utility.max_design_mb=REPORT_DESIGN_MB unless they set it."""
    out = list(overrides)
    if not any(o.split("=", 1)[0].strip() == "families.utility.max_design_mb" for o in out):
        out.append(f"families.utility.max_design_mb={REPORT_DESIGN_MB}")
    return out


def exit_code(rep: dict, strict: bool = False) -> int:
    """`holdbench check`'s reading: 1 when a gate of any S fails (with strict also when one is n/a), else 0."""
    for s in rep["synthetic"].values():
        rows = s["verdict"]["rows"]
        if any(r["verdict"] == "FAIL" for r in rows) or (strict and any(r["verdict"] == "n/a" for r in rows)):
            return 1
    return 0


def _specs(families: list) -> list:
    from holdbench.metrics.registry import specs_of

    return [sp for f in families for sp in specs_of(f.result_type)]


def prepare_out(out: Path, inputs: list[str]) -> None:
    """--out is a directory: refused when it is a file, holds one of the inputs' paths or cannot be created
    (tried, not made: nothing is written before the report is)."""
    from holdbench.contracts.io import probe_directory

    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} exists and is not a directory; name a directory for report.html, "
                         "report.json and summary.md")
    for name in ("report.html", "report.json", "summary.md"):
        if any((out / name).resolve() == Path(p).resolve() for p in inputs):
            raise ValueError(f"--out {out}: {name} would overwrite an input file")
    try:
        probe_directory(out)
    except OSError as exc:  # a read-only place, a missing mount, a file in the path
        raise ValueError(f"--out {out}: cannot create the directory ({exc.strerror or exc}: {exc.filename or out})") \
            from exc


def read_evaluation(path: str, synthetic: str | None) -> tuple[dict, dict]:
    """(metrics, artifacts) of an evaluation JSON (`holdbench evaluate --out`); it must be of S `synthetic`
    when one is named."""
    import json

    import pandas as pd

    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"--from-json {path}: cannot be read as JSON: {exc}") from None
    if not isinstance(d, dict) or "families" not in d:
        raise ValueError(f"--from-json {path}: not an evaluation JSON of `holdbench evaluate --out`")
    if synthetic and d.get("synthetic") and Path(d["synthetic"]).resolve() != Path(synthetic).resolve():
        raise ValueError(f"--from-json {path}: it evaluates {d['synthetic']}, not {synthetic}")
    arts = {k: pd.DataFrame(v) for k, v in (d.pop("artifacts", None) or {}).items()}
    if not arts:
        raise ValueError(f"--from-json {path}: it holds no artifact tables (the gates' DCR test needs "
                         "dcr_histogram); write it again with `holdbench evaluate --out`")
    return d, arts

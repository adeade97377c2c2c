"""`holdbench check`: D2.2 quality gates on a study's cells or on three files; non-zero on a failure.

    holdbench check paper_published                          every cell of a study
    holdbench check paper_published --cell adult/seed0/ctgan  one cell (repeatable)
    holdbench check --train T.csv --holdout H.csv --synthetic S.csv [b=S2.parquet DIR ...]
    ... --gates conf/gates/release.yaml  (or a name under conf/gates/; default: default)

Exit status: 0 when no target fails, 1 when one does (with --strict also when a target could
not be judged), 2 for a usage error (unknown study, cell, gates file or metric).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

import pandas as pd

from holdbench.benchmark.cli._pairs import (
    add_pair_arguments,
    check_pair_args,
    evaluate_each_pair,
    pair_files,
    pair_mode,
)
from holdbench.benchmark.cli.evaluate import add_drop_argument, add_max_rows_argument, check_max_rows
from holdbench.benchmark.outputs.results import study_dir, unfinished_cells
from holdbench.benchmark.layout import canonical


def register(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "check",
        help="quality gates (ANITA D2.2) on a study's cells or on three files; exit 1 on a failure",
        description="Judge cells against the targets of a gates file (conf/gates/default.yaml: S's DCR and "
                    "NNDR to T not systematically smaller than the holdout's, and the DCR share interval; "
                    "add thresholds on any registry metric). Prints target, value, threshold and verdict; "
                    "exits 1 when a target fails, so a pipeline can stop a release.",
    )
    p.add_argument("study", nargs="?", help="a study name (results/<study>) or a study directory")
    p.add_argument("--cell", action="append", default=[], metavar="DATASET/seedK/SYNTHESIZER",
                   help="check only this cell, e.g. adult/seed0/ctgan (repeatable)")
    p.add_argument("--gates", help="conf/gates/<name>.yaml or a path (default: default; sequential for a "
                                   "sequential study or subject + event pairs)")
    p.add_argument("--strict", action="store_true", help="a target that cannot be judged (n/a) fails too")
    p.add_argument("--out", help="write the verdict table to this CSV file")
    p.add_argument("--train", help="training table T (file mode, with --holdout and --synthetic)")
    p.add_argument("--holdout", help="holdout table H (file mode)")
    p.add_argument("--synthetic", nargs="+", default=[], metavar="[NAME=]FILE",
                   help="file mode: one or more synthetic tables S, or folders of them (each table file in it but T and H), each "
                        "judged as a cell named after its file (or NAME); exit 1 when any fails")
    p.add_argument("--dataset", help="file mode: column kinds and roles from this dataset's config")
    p.add_argument("--metrics", help="file mode: metrics config conf/metrics/<name>.yaml (default: default; "
                                     "sequential for subject + event pairs)")
    add_pair_arguments(p, several_synthetic=True)
    p.add_argument("--from-json", nargs="+", default=[], metavar="FILE",
                   help="judge the evaluation JSON(s) `holdbench evaluate --out FILE` wrote, without computing "
                        "again; one cell per file, named after its S")
    p.add_argument("--skip", action="append", default=[], metavar="FAMILY",
                   help="file mode: leave out a metric family of the config (repeatable)")
    p.add_argument("--values", choices=("pandas", "lenient", "strict"), default="pandas",
                   help="file mode: how values of H and S not of T's column type are read (as holdbench evaluate; "
                        "strict: such a value is an error)")
    add_drop_argument(p)
    add_max_rows_argument(p)
    p.set_defaults(func=run)
    return p


_SEED = re.compile(r"^(?:seed)?(\d+)$")


def cell_key(text: str, study: str, have) -> tuple[str, str, int] | None:
    """(dataset, synthesizer, seed) of the cell `text` names, in any of its spellings: the canonical
    DATASET/seedK/SYNTHESIZER (its directory under results/<study>/, the name in the run's progress
    lines), with or without the study in front (the report's and status.json's cell id), and
    DATASET/SYNTHESIZER/seedK or DATASET/SYNTHESIZER/K (older MLflow run names and examples).
    None when no cell of `have` (keys (dataset, synthesizer, seed)) has that name."""
    parts = text.strip().strip("/").split("/")
    if len(parts) == 4 and parts[0] == study:
        parts = parts[1:]
    if len(parts) != 3:
        return None
    dataset, a, b = parts
    for seed_part, synth in ((a, b), (b, a)):
        m = _SEED.match(seed_part)
        if m and (dataset, synth, int(m.group(1))) in have:
            return dataset, synth, int(m.group(1))
    return None


def _example(have) -> str:
    return canonical(*next(iter(have))) if have else "adult/seed0/ctgan"


def _select(results, wanted: list[str]):
    """StudyResults restricted to the --cell selection (all cells when none is given)."""
    if not wanted:
        return results
    from dataclasses import replace

    have = {(c.dataset, c.synthesizer, c.seed): c for c in results.cells}
    keys, missing = [], []
    for text in wanted:
        key = cell_key(text, results.name, have)
        if key is None:
            missing.append(text)
        else:
            keys.append(key)
    if missing:
        raise ValueError(f"--cell: no cell {', '.join(missing)} in study {results.name!r} (a cell is named "
                         f"DATASET/seedK/SYNTHESIZER, its directory under results/{results.name}/, e.g. "
                         f"{_example(have)}; DATASET/SYNTHESIZER/K and DATASET/SYNTHESIZER/seedK work too)")
    cells = [have[k] for k in dict.fromkeys(keys)]
    return replace(results, cells=cells)




def _unfinished(results, selected: bool):
    """(results without the interrupted cells, the lines naming them and the cells that never ran).

    An interrupted cell (a directory without status.json: its job was stopped) and a never-run cell
    (declared by study.json, no directory) are not failures of the synthesizer: they are left out of
    the verdicts and named, with the command that finishes them."""
    from dataclasses import replace

    interrupted, never = unfinished_cells(results)
    if selected:
        never = []
    lines = []
    if interrupted:
        lines.append(f"{len(interrupted)} cell(s) interrupted (stopped before they finished; not judged): "
                     + ", ".join(canonical(c.dataset, c.synthesizer, c.seed) for c in interrupted))
    if never:
        lines.append(f"{len(never)} cell(s) never ran: " + ", ".join(never[:20]) + (" ..." if len(never) > 20 else ""))
    if lines:
        lines.append(f"finish them with the same command: holdbench run {results.name}")
    gone = {id(c) for c in interrupted}
    kept = [c for c in results.cells if id(c) not in gone]
    return replace(results, cells=kept), ["", *lines] if lines else []


def _file_results(args: argparse.Namespace, gates):
    """A one-cell StudyResults from evaluating three files, as `holdbench evaluate` would."""
    from holdbench.benchmark.config import (
        build_metric_families,
        check_metrics_config,
        did_you_mean,
        load_group,
        to_container,
    )
    from holdbench.benchmark.outputs.filereport.compute import Evaluation
    from holdbench.benchmark.outputs.filereport.verdicts import file_results
    from holdbench.metrics.evaluate import evaluate
    from holdbench.metrics.registry import specs_of

    sequential = pair_mode(args)
    if sequential:
        check_pair_args(args, ("train", "holdout", "synthetic"))
    elif not (args.train and args.holdout and args.synthetic):
        raise ValueError("file mode needs --train, --holdout and --synthetic, or the subject + event pairs "
                         "--train-subjects, --train-events, ... (or name a study)")
    args.metrics = args.metrics or ("sequential" if sequential else "default")
    cfg = to_container(load_group("metrics", args.metrics))
    check_metrics_config(args.metrics, cfg)
    present = {k: v for k, v in (cfg.get("families") or {}).items() if v is not None}
    unknown = sorted(set(args.skip) - set(present))
    if unknown:
        raise ValueError(f"--skip: no metric family {unknown} in metrics config {args.metrics!r}"
                         f"{did_you_mean(unknown, present)} (has: {sorted(present)})")
    cfg["families"] = {k: v for k, v in present.items() if k not in set(args.skip)}
    if not cfg["families"]:
        raise ValueError("every metric family was skipped: nothing to compute")
    families = build_metric_families(cfg)
    from holdbench.benchmark.cli.evaluate import check_family_kinds

    check_family_kinds(args.metrics, families, sequential)
    specs = [spec for f in families for spec in specs_of(f.result_type)]
    from holdbench.benchmark.outputs.gates import check_metrics

    check_metrics(gates, specs)  # a misspelt metric fails before the (slow) evaluation
    if sequential:  # each synthetic pair (several: --synthetic-events S1 S2 ...) evaluated as `evaluate` does one
        several = len(args.synthetic_events) > 1
        _, results = evaluate_each_pair(args, families, cfg,
                                        (lambda name: print(f"[holdbench] S {name}", file=sys.stderr)) if several
                                        else None)
        return file_results([Evaluation(name, res.to_dict(), res.artifacts()) for name, res in results.items()],
                            specs, "sequential", args.dataset)
    # T, H and each S read exactly as `holdbench evaluate` reads them (T's schema or the dataset's, H and S typed by
    # the harness's output check at pandas' reading, dates as days, --drop and the dataset's `drop` left out), and
    # evaluated as it evaluates them: `check` on files judges the numbers `evaluate` prints for each S
    from holdbench.benchmark.cli.evaluate import (
        raw_synthetic,
        read_inputs,
        read_synthetic,
        value_notes,
        values_heading,
    )
    from holdbench.benchmark.cli._files import check_files

    files = synthetic_files(args.synthetic, (args.train, args.holdout))
    # every file's columns and size before any S is evaluated: a bad third S stops the run before the first
    check_files(args.train, args.holdout, files, None, args.max_rows, None, list(args.drop), args.dataset)
    train, holdout, _, schema, notes = read_inputs(argparse.Namespace(  # T and H once, each S below
        train=args.train, holdout=args.holdout, synthetic=None, holdout_row=True, dataset=args.dataset,
        values=args.values, sep=None, drop=args.drop))
    roles = {"target": schema.target, "sensitive": schema.sensitive,
             "quasi_identifiers": tuple(schema.quasi_identifiers)}
    # what reading noticed (values not of T's column type read as missing, mixed types, dates, --drop), as
    # `holdbench evaluate` prints it: a gate passed on an S whose text was read as missing says so
    noticed = value_notes(notes, {"holdout": f"holdout {args.holdout}"}, heading=False)
    synthetic = {}  # every S read and typed before any is evaluated (as the file report does): a value --values
    for name, path in files.items():  # strict refuses in the last S stops the run before the first is evaluated
        who = f"synthetic {path}"
        synthetic[name], s_notes = read_synthetic(raw_synthetic(path, notes, None, who), schema, args.values, who)
        noticed += value_notes({"values": args.values, **{f"synthetic_{k}": v for k, v in s_notes.items()}},
                               {"synthetic": who}, heading=False)
    evaluations = []
    for name, frame in synthetic.items():
        if len(files) > 1:
            print(f"[holdbench] S {name} ({files[name]})", file=sys.stderr)
        res = evaluate(train, holdout, frame, schema.kinds, families=families, n_jobs=int(cfg.get("n_jobs", 1)),
                       seed=int(cfg.get("seed", 0)), on_error="na", **roles)
        evaluations.append(Evaluation(name, res.to_dict(), res.artifacts()))
    if noticed:
        print("\n".join(["", values_heading(args.values), *noticed, ""]))
    return file_results(evaluations, specs, "flat", args.dataset)


def synthetic_files(items: list[str], inputs: tuple[str, ...] = ()) -> dict[str, str]:
    """{cell name: path} of the --synthetic items: `NAME=PATH` is named NAME, a file after its file name (as the
    cells of `--from-json` and of one file always were), a folder's table files after theirs (but the files of
    `inputs`, T and H)."""
    from holdbench.benchmark.cli._names import split_name
    from holdbench.benchmark.outputs.filereport.inputs import named_paths

    out: dict[str, str] = {}
    for item in items:
        named = split_name(item)[0] is not None
        for name, path in named_paths([item], inputs).items():
            key = name if named else Path(path).name
            if key in out:
                raise ValueError(f"--synthetic: two files are named {key!r} ({out[key]} and {path}); name them "
                                 "apart with NAME=PATH")
            out[key] = path
    return out


def _run_from_json(args: argparse.Namespace) -> int:
    """`holdbench check --from-json m.json [m2.json ...]`: the gates on saved evaluations (their metrics and artifact
    tables), one cell per file."""
    from holdbench.benchmark.config import build_metric_families, load_group, to_container
    from holdbench.benchmark.outputs.filereport import read_evaluation
    from holdbench.benchmark.outputs.filereport.compute import Evaluation
    from holdbench.benchmark.outputs.filereport.verdicts import file_results
    from holdbench.benchmark.outputs.gates import DEFAULT_GATES, load_gates
    from holdbench.metrics.registry import specs_of

    other = [o for o in ("study", "train", "holdout", "synthetic", "cell", "drop", "max_rows")
             if getattr(args, o, None)] + (["values"] if args.values != "pandas" else [])
    if other or pair_mode(args):
        raise ValueError(f"--from-json judges a saved evaluation; it takes no {', '.join(other) or 'pair options'}")
    evaluations, saved, kinds, datasets, seen = [], set(), set(), set(), {}
    for path in args.from_json:
        metrics, artifacts = read_evaluation(path, None)
        kinds.add("sequential" if any(str(k).startswith("seq_") for k in metrics) else "flat")
        saved |= set(str(metrics.get("families") or "").split(","))
        datasets.add(metrics.get("dataset"))
        name = Path(str(metrics.get("synthetic") or metrics.get("synthetic_events") or path)).name
        if name in seen:
            raise ValueError(f"--from-json: {seen[name]} and {path} are evaluations of two S named {name!r}; "
                             "check them apart")
        seen[name] = path
        evaluations.append(Evaluation(name, metrics, artifacts))
    if len(kinds) > 1:
        raise ValueError("--from-json: evaluations of flat tables and of subject + event pairs together; check "
                         "them apart")
    kind = kinds.pop()
    cfg = to_container(load_group("metrics", args.metrics or ("sequential" if kind == "sequential" else "default")))
    families = build_metric_families({**cfg, "families": {k: v for k, v in (cfg.get("families") or {}).items()
                                                          if v is not None and k in saved}})
    specs = [sp for f in families for sp in specs_of(f.result_type)]
    gates = load_gates(args.gates or DEFAULT_GATES[kind])
    results = file_results(evaluations, specs, kind, datasets.pop() if len(datasets) == 1 else None)
    return _judge(args, results, gates, [])


def value_text(value: float, signed: bool) -> str:
    """A test's effect with its sign; a metric's value as it is."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if signed:
        return f"{value:+.4f}"
    return f"{value:.4f}" if abs(value) < 10 else f"{value:.4g}"


def render(table: pd.DataFrame) -> str:
    """The verdict table as fixed-width text: cell, target, value, threshold, verdict, detail."""
    rows = [("cell", "target", "value", "threshold", "verdict", "detail")]
    for _, r in table.iterrows():
        rows.append((canonical(r["dataset"], r["synthesizer"], r["seed"]), str(r["target"]), value_text(r["value"], not math.isnan(r["pvalue"])),
                     str(r["threshold"]), str(r["verdict"]), str(r["detail"])))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:5], widths)) + "  " + row[5] for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def run(args: argparse.Namespace) -> int:
    from holdbench.benchmark.outputs.gates import DEFAULT_GATES, default_gates, load_gates

    if args.from_json:
        return _run_from_json(args)
    file_mode = any((args.train, args.holdout, args.synthetic)) or pair_mode(args)
    if file_mode and args.study:
        raise ValueError("name a study or give --train/--holdout/--synthetic (or the pairs), not both")
    if not file_mode and not args.study:
        raise ValueError("name a study (holdbench check <study>) or give --train, --holdout and --synthetic "
                         "(or the subject + event pairs --train-subjects, --train-events, ...)")
    if file_mode and args.cell:
        raise ValueError("--cell selects cells of a study; it does not apply to --train/--holdout/--synthetic")
    if args.drop and (not file_mode or pair_mode(args)):
        raise ValueError("--drop applies to flat files (--train, --holdout, --synthetic); a study's dataset config "
                         "leaves columns out with `drop:`")
    flat = [o for o, v in (("--max-rows", args.max_rows is not None), ("--values", args.values != "pandas")) if v]
    if flat and (not file_mode or pair_mode(args)):
        raise ValueError(f"{' and '.join(flat)} appl{'ies' if len(flat) == 1 else 'y'} to flat files (--train, "
                         "--holdout, --synthetic)")
    check_max_rows(args.max_rows)
    from holdbench.benchmark.cli.evaluate import check_out

    inputs = pair_files(args) if pair_mode(args) else [args.train, args.holdout, *args.synthetic]
    check_out(args.out, [p for p in inputs if p], what="CSV file")
    unfinished: list[str] = []
    if file_mode:
        gates = load_gates(args.gates or DEFAULT_GATES["sequential" if pair_mode(args) else "flat"])
        results = _file_results(args, gates)
    else:
        from holdbench.benchmark.outputs.results import load_results

        results = load_results(study_dir(args.study))
        gates = load_gates(args.gates or default_gates(results.study))
        results = _select(results, args.cell)
        results, unfinished = _unfinished(results, bool(args.cell))
    return _judge(args, results, gates, unfinished)


def _judge(args: argparse.Namespace, results, gates, unfinished: list[str]) -> int:
    """Print the verdict table of `results` under `gates` (and write --out); 1 when a target fails."""
    from holdbench.benchmark.outputs.gates import FAIL, NA, PASS, cell_verdicts, verdicts

    table = verdicts(results, gates)
    print(f"holdbench check: {gates.source} on {len(results.cells)} cell(s) of {results.name}")
    from holdbench.benchmark.outputs.gates import verdict_name

    print("gates (these decide; other pass/FAIL metrics are information): "
          + "; ".join(f"{t.name} = {verdict_name(t, results.specs)}" for t in gates.targets))
    print(render(table))
    if args.out:
        from holdbench.contracts.io import write_csv

        write_csv(args.out, table)
    per_cell = cell_verdicts(table)
    counts = {v: int((per_cell["verdict"] == v).sum()) for v in (PASS, FAIL, NA)}
    judged = table[~table["reference"].astype(bool)]
    unjudged = int((judged["verdict"] == NA).sum())
    failed = int((judged["verdict"] == FAIL).sum()) + (unjudged if args.strict else 0)
    print(f"\n{len(per_cell)} cell(s): {counts[PASS]} pass, {counts[FAIL]} FAIL, {counts[NA]} n/a"
          + (f"; {unjudged} target(s) n/a count as failures (--strict)" if args.strict and unjudged
             else f"; {unjudged} target(s) n/a, not judged (--strict fails them)" if unjudged else ""))
    if results.name == "files" and len(per_cell) > 1:  # several S files: which ones pass, which fail
        for verdict in (PASS, FAIL, NA):
            names = per_cell.loc[per_cell["verdict"] == verdict, "synthesizer"].astype(str).tolist()
            if names:
                print(f"  {verdict}: {', '.join(names)}")
    for line in unfinished:
        print(line)
    if unfinished and args.strict:
        failed += 1
        print("unfinished cells count as failures (--strict)")
    if failed:
        print("quality gates FAILED", file=sys.stderr)
        return 1
    return 0

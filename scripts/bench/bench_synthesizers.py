"""Fit/sample seconds and peak memory of each synthesizer on adult's T (the paper's split).

Each synthesizer runs in its own subprocess (one thread), so the peak RSS is its own
(ru_maxrss of the child, which includes the interpreter, the libraries and the data).
Fit CPU seconds next to the wall-clock ones show when another process shared the core.
Fast synthesizers run their full config; the neural ones (and the MOSTLY AI engine) run
`--epochs` epochs and the fit time of their default length (300 epochs for SDV, at most
100 for the MOSTLY AI engine) is extrapolated from the seconds per epoch measured between
the first and the last logged epoch (the preprocessing and the first epoch are counted
once; for the MOSTLY AI engine, which logs no epoch lines, the whole fit is spread over
the epochs, an overestimate). Every run samples `--n` rows (50,000 as in
the paper), and the output goes through check_output.

    python scripts/bench/bench_synthesizers.py                    # everything
    python scripts/bench/bench_synthesizers.py --only ctgan --epochs 3
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("HOLDBENCH_SHARED_DIR", REPO.parent / "shared")).resolve()
PAPER = SHARED / "datasets" / "paper_study"

#: run with their full config
FULL = ["gaussian_copula", *(f"flip{k}0" for k in range(1, 10)), "holdout"]
#: run for a few epochs: the config overrides that set their number ({e}) and log every epoch
EPOCHS = {
    "ctgan": ["epochs={e}", "log_every=1"],
    "tvae": ["epochs={e}", "log_every=1"],
    "copulagan": ["epochs={e}", "log_every=1"],
    "mostly_ai": ["max_epochs={e}"],
}
#: the other engineer's Python CART and R synthpop, when they exist
OPTIONAL = ["cart", "synthpop"]
#: the default training length the extrapolation targets (SDV: 300 epochs; MOSTLY AI: at most 100)
FULL_EPOCHS = {"ctgan": 300, "tvae": 300, "copulagan": 300, "mostly_ai": 100}

if importlib.util.find_spec("benchmark") is None:  # holdbench not installed: run from the checkout
    sys.path.insert(0, str(REPO))

_EPOCH_LINE = re.compile(r"epoch (\d+)/(\d+), .*, ([\d.]+) s$")
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def lineup() -> list[str]:
    names = FULL + list(EPOCHS)
    if importlib.util.find_spec("holdbench.synthesizers.cart") is not None:
        names += [n for n in OPTIONAL if (REPO / "conf" / "synthesizer" / f"{n}.yaml").exists()]
    return names


# -- child ---------------------------------------------------------------------------

class _EpochTimes(logging.Handler):
    """Notes (epoch, wall seconds since training started, process CPU seconds) per progress line."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.marks: list[tuple[int, float, float]] = []

    def emit(self, record: logging.LogRecord) -> None:
        match = _EPOCH_LINE.search(record.getMessage())
        if match:
            self.marks.append((int(match.group(1)), float(match.group(3)), time.process_time()))

    def per_epoch(self) -> tuple[float, float] | None:
        """Wall and CPU seconds per epoch between the first and the last logged epoch."""
        if len(self.marks) < 2:
            return None
        (e0, w0, c0), (e1, w1, c1) = self.marks[0], self.marks[-1]
        return (w1 - w0) / (e1 - e0), (c1 - c0) / (e1 - e0)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(name: str, epochs: int, n: int, seed: int) -> dict:
    """Fit and sample one synthesizer in this process; return its figures."""
    import pandas as pd

    from holdbench.benchmark.config import build_synthesizer, synthesizer_config
    from holdbench.contracts.schema import Schema
    from holdbench.synthesizers.base import FitContext, SynthesizerUnavailable
    from holdbench.benchmark.cell.checks import check_output

    raw_t = pd.read_csv(PAPER / "adult_trn.csv.gz")
    schema = Schema.infer("adult", raw_t, target="income")
    train = schema.coerce(raw_t, "adult T")
    holdout = schema.coerce(pd.read_csv(PAPER / "adult_val.csv.gz"), "adult H")
    overrides = [o.format(e=epochs) for o in EPOCHS.get(name, [])]
    synth = build_synthesizer(synthesizer_config(name, overrides=overrides))
    ctx = FitContext(schema, seed, "adult", holdout if synth.needs_holdout else None)
    times = _EpochTimes()
    logging.getLogger("holdbench.synth").addHandler(times)
    logging.getLogger("holdbench.synth").setLevel(logging.INFO)
    result = {"name": name, "rows": len(train), "rss_before_mib": round(_peak_rss_mib(), 1)}
    try:
        start, cpu = time.perf_counter(), time.process_time()
        synth.fit(train, ctx)
        result["fit_s"] = time.perf_counter() - start
        result["fit_cpu_s"] = time.process_time() - cpu
        start = time.perf_counter()
        out = synth.sample(n, seed)
        result["sample_s"] = time.perf_counter() - start
    except SynthesizerUnavailable as exc:
        return {**result, "status": f"skipped: {str(exc).splitlines()[0][:200]}"}
    expected = len(holdout) if synth.holdout_rule else n
    check_output(out, schema, expected, name, values=getattr(synth, "output_values", "strict"))
    result.update(status="ok", n=len(out), peak_rss_mib=round(_peak_rss_mib(), 1))
    if name in EPOCHS:
        # with >= 2 logged epochs the first one (warm-up) and the preprocessing are kept out
        # of the per-epoch figure; otherwise the whole fit is spread over the epochs
        wall, cpu = times.per_epoch() or (result["fit_s"] / epochs, result["fit_cpu_s"] / epochs)
        full = FULL_EPOCHS[name]
        result.update(epochs=epochs, full_epochs=full, s_per_epoch=wall, cpu_s_per_epoch=cpu)
        result["full_fit_est_s"] = result["fit_s"] + (full - epochs) * wall
        result["full_fit_est_cpu_s"] = result["fit_cpu_s"] + (full - epochs) * cpu
    return result


# -- parent --------------------------------------------------------------------------

def run_in_subprocess(name: str, args: argparse.Namespace) -> dict:
    env = {**os.environ, **{v: "1" for v in _THREAD_VARS}, "HF_HUB_OFFLINE": "1"}
    cmd = [args.python, __file__, "--child", name, "--epochs", str(args.epochs), "--n", str(args.n),
           "--seed", str(args.seed)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, env=env, timeout=args.timeout, cwd=REPO, check=False
        )
    except subprocess.TimeoutExpired:
        return {"name": name, "status": f"timeout after {args.timeout} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"name": name, "status": f"error: {tail[:100]}"}
    return json.loads(lines[-1])


def _fmt(value, digits=1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def table(results: list[dict]) -> str:
    """A markdown table; the reasons of skipped or failed runs follow it as notes."""
    head = ("synthesizer", "status", "fit s", "fit CPU s", "sample s", "peak RSS MiB", "epochs",
            "s/epoch", "CPU s/epoch", "full epochs", "est. full fit s", "est. full fit CPU s")
    rows, notes = [], []
    for r in results:
        status, _, reason = r["status"].partition(": ")
        if reason:
            notes.append(f"- {r['name']}: {r['status']}")
        rows.append((
            r["name"], status, _fmt(r.get("fit_s"), 2), _fmt(r.get("fit_cpu_s"), 2), _fmt(r.get("sample_s"), 2),
            _fmt(r.get("peak_rss_mib"), 0), str(r.get("epochs", "")), _fmt(r.get("s_per_epoch"), 2),
            _fmt(r.get("cpu_s_per_epoch"), 2), str(r.get("full_epochs", "")), _fmt(r.get("full_fit_est_s"), 0),
            _fmt(r.get("full_fit_est_cpu_s"), 0),
        ))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    lines = ["| " + " | ".join(str(x).ljust(w) for x, w in zip(row, widths)) + " |" for row in [head, *rows]]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines + ([""] + notes if notes else []))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this synthesizer (repeatable)")
    parser.add_argument("--epochs", type=int, default=2, help="epochs for the neural synthesizers (default 2)")
    parser.add_argument("--n", type=int, default=50_000, help="rows to sample (default 50000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per synthesizer")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the children (e.g. a venv)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(run_one(args.child, args.epochs, args.n, args.seed)))
        return 0
    if not (PAPER / "adult_trn.csv.gz").exists():
        parser.error(f"adult's T is not at {PAPER / 'adult_trn.csv.gz'} (set HOLDBENCH_SHARED_DIR)")
    names = args.only or lineup()
    results = []
    for name in names:
        res = run_in_subprocess(name, args)
        print(f"{name}: {res['status']} fit {_fmt(res.get('fit_s'), 2)} s", file=sys.stderr, flush=True)
        results.append(res)
    print(f"adult T: {results[0].get('rows', '?')} rows; n = {args.n}; one thread per run\n")
    print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

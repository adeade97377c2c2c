"""Cost and scores of the model-based sequential synthesizers, PAR and MOSTLY AI in two stages (not a test).

Data: a sequential dataset split by subject with seed 0 (baseball: T ~10,000 players / ~55,000 rows).

  epochs   PAR's CPU seconds per epoch against the number of training subjects: on seeded samples of T
           of each size, a fit of 1 and of 3 epochs, per epoch = the difference / 2 (the setup cancels).
  measure  one synthesizer (seq_par or seq_mostly) with the given settings on all of T: CPU and wall seconds
           of fit and of sampling |T| subjects (seed 1), peak RSS, and holdbench.metrics.sequential's scores of S
           against T and H (seq_F1..3 ratios, coherence ratio, length ratio, subject DCR share, IMS),
           plus the synthesizer's info(); one JSON line. seq_mostly needs the engine (run it in the
           engine's venv, README "Installing the MOSTLY AI engine").

CPU is time.process_time on one thread (OMP_NUM_THREADS=1, torch.set_num_threads(1)); the machine may
be shared, so note the load average printed with the results.

Usage: HOLDBENCH_DATA_DIR=../shared/datasets python scripts/bench/bench_sequential_models.py epochs
           [--dataset baseball] [--sizes 500,1000,2000]
       HOLDBENCH_DATA_DIR=../shared/datasets python scripts/bench/bench_sequential_models.py measure seq_par
           [--dataset baseball] epochs=80 max_subjects=1000
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch

from holdbench.benchmark.data.sequential import load_sequential, split_by_subject
from holdbench.metrics.sequential import SequentialLayout, evaluate_sequential
from holdbench.synthesizers.sequential import SequentialContext
from tests.sequential.conftest import sample_subjects

SCORES = ("seq_F1_ratio", "seq_F2_ratio", "seq_F3_ratio", "seq_coherence_ratio", "seq_length_ratio",
          "seq_lengths_copied", "seq_dcr_share", "seq_dcr_share_ci_low", "seq_dcr_share_ci_high", "seq_ims",
          "seq_ims_holdout")


def _split(name: str):
    data = load_sequential(name)
    t, h = split_by_subject(data, 0)
    spec = data.spec
    return spec, t, h, SequentialContext(spec.key, spec.subject_schema, spec.event_schema, 0, name,
                                         order=spec.order)


def epochs(name: str, sizes: list[int]) -> None:
    from holdbench.synthesizers.sequential_par import PAR

    _, t, _, ctx = _split(name)
    for n in sizes:
        part = sample_subjects(t, n, 0)
        cpu = {}
        for e in (1, 3):
            start = time.process_time()
            PAR(epochs=e).fit(part.subjects, part.events, ctx)
            cpu[e] = time.process_time() - start
        print(f"{name} subjects={n} events={part.n_events} fit1={cpu[1]:.1f}s fit3={cpu[3]:.1f}s "
              f"per_epoch={(cpu[3] - cpu[1]) / 2:.2f}s load={os.getloadavg()[0]:.1f}", flush=True)


def measure(which: str, name: str, settings: dict) -> None:
    if which == "seq_par":
        from holdbench.synthesizers.sequential_par import PAR as synthesizer
    else:
        from holdbench.synthesizers.sequential_mostly import MostlySequential as synthesizer
    spec, t, h, ctx = _split(name)
    synth = synthesizer(**settings)
    c0, w0 = time.process_time(), time.time()
    synth.fit(t.subjects, t.events, ctx)
    fit_cpu, fit_wall = time.process_time() - c0, time.time() - w0
    c0, w0 = time.process_time(), time.time()
    subjects, events = synth.sample(t.n_subjects, 1)
    sample_cpu, sample_wall = time.process_time() - c0, time.time() - w0
    layout = SequentialLayout(spec.key, spec.subject_schema.kinds, spec.event_schema.kinds, spec.n_events_privacy)
    r = evaluate_sequential((t.subjects, t.events), (h.subjects, h.events), (subjects, events), layout, seed=0)
    out = {"synthesizer": which, "dataset": name, "settings": settings, "T_subjects": t.n_subjects,
           "T_events": t.n_events, "S_events": len(events), "fit_cpu_s": round(fit_cpu, 1),
           "fit_wall_s": round(fit_wall, 1), "sample_cpu_s": round(sample_cpu, 1),
           "sample_wall_s": round(sample_wall, 1),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
           "load": round(os.getloadavg()[0], 1),
           **{f: (getattr(r, f) if isinstance(getattr(r, f), bool) else round(float(getattr(r, f)), 4))
              for f in SCORES},
           "info": synth.info()}
    print(json.dumps(out, default=str), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("epochs")
    p.add_argument("--dataset", default="baseball")
    p.add_argument("--sizes", default="500,1000,2000")
    m = sub.add_parser("measure")
    m.add_argument("synthesizer", choices=("seq_par", "seq_mostly"))
    m.add_argument("settings", nargs="*", help="constructor arguments as key=value (value read as JSON)")
    m.add_argument("--dataset", default="baseball")
    args = parser.parse_args()
    torch.set_num_threads(1)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for noisy in ("mostlyai", "sdv", "rdt", "copulas", "deepecho", "SingleTableSynthesizer"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if args.command == "epochs":
        epochs(args.dataset, [int(x) for x in args.sizes.split(",")])
    else:
        settings = {k: json.loads(v) for k, v in (s.split("=", 1) for s in args.settings)}
        measure(args.synthesizer, args.dataset, settings)


if __name__ == "__main__":
    main()

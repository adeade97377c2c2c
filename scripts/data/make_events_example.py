"""Write a no-context sequential example as event files, ready for `holdbench evaluate --train-events ...`.

    python scripts/data/make_events_example.py OUT_DIR [--source nlswork|transactions] [--seed 0]

`nlswork` (default): the shipped NLS Young Women interviews without their subject attributes, as the
`nlswork_events` dataset reads them (conf/dataset/nlswork_events.yaml: key `idcode`, `order: row`),
split 50/50 over women with the harness's own split (seed --seed). Needs $HOLDBENCH_DATA_DIR.
`transactions`: a seeded generator, no data needed: accounts with a channel, an amount and an ISO
timestamp per event, rows in time order within an account (--accounts, default 2,000, for T and for H,
drawn independently).

Either way it writes OUT_DIR/train.csv, OUT_DIR/holdout.csv and three synthetic files made from T by
the sequential baselines (seed --seed): synthetic_copy.csv (T's sequences resampled: the leak),
synthetic_flip30.csv (30% of event cells replaced) and synthetic_shuffled.csv (the copy with its rows
shuffled: its row order is lost, which `seq_keys_interleaved` reports), and prints the command that
evaluates one of them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from holdbench.benchmark.data.sequential import (
    from_frames,
    load_sequential,
    parse_spec,
    split_by_subject,
    synthesizer_context,
)
from holdbench.contracts.dates import days_to_datetimes
from holdbench.synthesizers.sequential import Copy, SequentialFlip

TRANSACTIONS = {"source": "sequential", "sequential": {
    "key": "account", "n_events_privacy": 3,
    "events": {"file": "transactions.csv", "order": "row",
               "columns": {"booked_at": {"kind": "datetime"}, "channel": {"kind": "categorical", "dtype": "str"},
                           "amount": {"kind": "numeric", "dtype": "float"}}, "time": "booked_at"}}}


def transactions(n_accounts: int, seed: int, first_key: int = 0) -> pd.DataFrame:
    """Seeded accounts: 1-12 events each, a sticky channel, amounts by channel, gaps of hours to weeks."""
    rng = np.random.default_rng(seed)
    channels = np.array(["card", "online", "transfer", "cash"])
    rows = []
    for k in range(n_accounts):
        t = pd.Timestamp("2024-01-01") + pd.Timedelta(minutes=int(rng.integers(0, 60 * 24 * 60)))
        ch = int(rng.integers(0, 4))
        for _ in range(int(rng.integers(1, 13))):
            if rng.random() < 0.35:
                ch = int(rng.choice(4, p=[0.45, 0.3, 0.15, 0.1]))
            amount = round(float(rng.lognormal([3.0, 3.5, 5.5, 2.5][ch], 0.8)), 2)
            rows.append({"account": f"acc{first_key + k:05d}", "booked_at": t.strftime("%Y-%m-%d %H:%M"),
                         "channel": channels[ch], "amount": amount})
            t += pd.Timedelta(minutes=int(60 * rng.gamma(0.7, 60)) + 5)
    return pd.DataFrame(rows)


def _with_dates(events: pd.DataFrame, spec) -> pd.DataFrame:
    """Datetime columns back as text (the loader holds days since 1970)."""
    out = events.copy()
    for column, _ in spec.datetimes:
        out[column] = days_to_datetimes(out[column]).dt.strftime("%Y-%m-%d %H:%M")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--source", choices=("nlswork", "transactions"), default="nlswork")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--accounts", type=int, default=2000, help="transactions: accounts in T and in H (default 2000)")
    args = ap.parse_args(argv)
    if args.source == "nlswork":
        data = load_sequential("nlswork_events")
        train, holdout = split_by_subject(data, args.seed)
    else:
        spec = parse_spec("transactions", TRANSACTIONS)
        train = from_frames(spec, None, transactions(args.accounts, args.seed))
        holdout = from_frames(spec, None, transactions(args.accounts, args.seed + 1, first_key=args.accounts))
    spec = train.spec
    args.out.mkdir(parents=True, exist_ok=True)
    tables = {"train": train.events, "holdout": holdout.events}
    ctx = synthesizer_context(spec, args.seed)
    for name, synth in (("copy", Copy()), ("flip30", SequentialFlip(0.3))):
        synth.fit(train.subjects, train.events, ctx)
        tables[f"synthetic_{name}"] = synth.sample(train.n_subjects, args.seed)[1]
    tables["synthetic_shuffled"] = tables["synthetic_copy"].sample(frac=1, random_state=args.seed)
    for name, events in tables.items():
        _with_dates(events, spec).to_csv(args.out / f"{name}.csv", index=False)
    print(f"wrote {', '.join(f'{n}.csv' for n in tables)} to {args.out} ({args.source}: T {train.n_subjects:,} "
          f"sequences, {train.n_events:,} events; H {holdout.n_subjects:,})")
    print(f"evaluate one: holdbench evaluate --train-events {args.out}/train.csv --holdout-events "
          f"{args.out}/holdout.csv --synthetic-events {args.out}/synthetic_flip30.csv --key {spec.key} --order row")
    return 0


if __name__ == "__main__":
    sys.exit(main())

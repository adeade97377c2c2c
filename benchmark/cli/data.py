"""`holdbench datasets` and `holdbench load`: list configs, load and cache a dataset."""

from __future__ import annotations

import time

from holdbench.benchmark.config import available


def register(sub) -> None:
    p = sub.add_parser("datasets", help="list the dataset, synthesizer and study configs")
    p.set_defaults(func=_list)
    p = sub.add_parser("load", help="load (and cache) datasets, print their shape and kinds")
    p.add_argument("names", nargs="+", help="dataset config names")
    p.add_argument("--no-cache", action="store_true", help="parse the raw files even if cached")
    p.set_defaults(func=_load)


def _list(args) -> int:
    for group in ("dataset", "synthesizer", "study"):
        print(f"{group}: {', '.join(available(group))}")
    return 0


def _load(args) -> int:
    from holdbench.benchmark.data.tables import dataset_config, load_dataset_and_schema
    from holdbench.benchmark.outputs.filereport.diagnostics import DATASET_DROP, identifier_columns, identifier_text

    for name in args.names:
        t0 = time.perf_counter()
        if dataset_config(name)["source"] == "sequential":
            from holdbench.benchmark.data.sequential import load_sequential

            data = load_sequential(name)  # every check of both files (not cached: read in a few seconds)
            spec = data.spec
            attrs = f"{len(spec.subject_columns)} columns" if spec.has_subjects else "no attributes"
            print(f"{name}: {data.n_subjects:,} subjects x {attrs}, {data.n_events:,} "
                  f"events x {len(spec.event_columns)} columns (key {spec.key!r}, order {spec.order_label}) "
                  f"in {time.perf_counter() - t0:.2f} s")
            continue
        df, schema = load_dataset_and_schema(name, use_cache=not args.no_cache)
        secs = time.perf_counter() - t0
        kinds = schema.kinds
        n_cat = sum(k == "categorical" for k in kinds.values())
        print(f"{name}: {len(df):,} rows x {df.shape[1]} columns "
              f"({n_cat} categorical, {len(kinds) - n_cat} numeric) in {secs:.2f} s")
        found = identifier_columns(df, schema.kinds, schema.dates)
        if found:
            print(f"{name}: WARNING " + identifier_text(found, "the table", DATASET_DROP))
        if schema.dates:
            print(f"{name}: column(s) {', '.join(schema.dates)} hold dates or times, read as days since "
                  "1970-01-01 (a time of day is a fraction of a day)")
    return 0

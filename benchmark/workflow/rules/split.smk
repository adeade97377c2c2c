rule split:
    """Seeded 50/50 split (or the provided split files) of one dataset."""
    input:
        lambda wc: PLAN.snapshot(L.split_config(wc.dataset)),
        lambda wc: PLAN.redo_inputs("split", wc.dataset, wc.seed),
    output:
        train=L.train("{dataset}", "{seed}"),
        holdout=L.holdout("{dataset}", "{seed}"),
        schema=L.schema("{dataset}", "{seed}"),
    log:
        L.log("split", "{dataset}", "{seed}"),
    benchmark:
        L.benchmark("split", "{dataset}", "{seed}")
    priority: FINISH_PRIORITY
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{PY} split --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed} 2> {log}"

rule split:
    """Seeded 50/50 split (or the provided split files) of one dataset; of a sequential one, over subjects
    (T's and H's subject and event tables)."""
    input:
        lambda wc: PLAN.snapshot(L.split_config(wc.dataset)),
        lambda wc: PLAN.redo_inputs("split", wc.dataset, wc.seed),
    output:
        **L.split_outputs("{dataset}", "{seed}", STUDY.sequential),
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

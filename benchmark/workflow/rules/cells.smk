def _cell(name):
    return L.cell_file("{dataset}", "{seed}", "{synth}", name)


rule generate:
    """Fit on T and sample, in an isolated process with a timeout and a memory limit.

    Always succeeds as a job: a failure is recorded in generate.json (status, reason).
    """
    input:
        **L.split_outputs("{dataset}", "{seed}", STUDY.sequential),
        config=lambda wc: PLAN.snapshot(L.synth_config(wc.synth)),
        redo=lambda wc: PLAN.redo_inputs("generate", wc.dataset, wc.seed, wc.synth),
    output:
        _cell(GENERATE_JSON),
    log:
        L.log("generate", "{dataset}", "{seed}", "{synth}"),
    benchmark:
        L.benchmark("generate", "{dataset}", "{seed}", "{synth}")
    threads: 1
    priority: lambda wc: PLAN.priority(wc.synth)
    resources:
        mem_mb=int(STUDY.memory_gb * 1024),
        runtime=max(1, int(STUDY.timeout_seconds // 60) + 1),
    shell:
        "{PY} generate --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed}"
        " --synthesizer {wildcards.synth} > {log} 2>&1"


rule evaluate_shard:
    """One shard of a cell's shardable metric families (study option evaluate_shards > 1): privacy on
    a share of S's rows, fidelity on a share of the marginals; the partial results, always written
    (a failure recorded in them), are merged by the cell's evaluate job."""
    input:
        generated=_cell(GENERATE_JSON),
        metrics=lambda wc: PLAN.snapshot(L.metrics_config),
    output:
        temp(L.shard_file("{dataset}", "{seed}", "{synth}", "{shard}", STUDY.evaluate_shards)),
    log:
        L.log("evaluate_shard{shard}", "{dataset}", "{seed}", "{synth}"),
    benchmark:
        L.benchmark("evaluate_shard{shard}", "{dataset}", "{seed}", "{synth}")
    wildcard_constraints:
        shard=r"\d+",
    threads: STUDY.metrics.get("n_jobs", 1)
    priority: FINISH_PRIORITY
    resources:
        mem_mb=int(STUDY.memory_gb * 1024),
        runtime=max(1, int(STUDY.timeout_seconds // 60) + 1),
    shell:
        "{PY} evaluate_shard --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed}"
        " --synthesizer {wildcards.synth} --shard {wildcards.shard} --shards {STUDY.evaluate_shards} > {log} 2>&1"


rule evaluate:
    """Every metric family of the study on one cell (joblib inside); writes status.json whatever happened.
    With evaluate_shards > 1 the shardable families merge the evaluate_shard jobs' partial results."""
    input:
        generated=_cell(GENERATE_JSON),
        metrics=lambda wc: PLAN.snapshot(L.metrics_config),
        redo=lambda wc: PLAN.redo_inputs("evaluate", wc.dataset, wc.seed, wc.synth),
        shards=lambda wc: L.shard_files(wc.dataset, wc.seed, wc.synth, STUDY.evaluate_shards),
        audit=lambda wc: audit_inputs(wc.dataset, wc.seed, wc.synth),
    output:
        metrics=_cell(METRICS_JSON),
        marginals=_cell(MARGINALS),
        status=_cell(STATUS_JSON),
    log:
        L.log("evaluate", "{dataset}", "{seed}", "{synth}"),
    benchmark:
        L.benchmark("evaluate", "{dataset}", "{seed}", "{synth}")
    threads: STUDY.metrics.get("n_jobs", 1)
    priority: FINISH_PRIORITY
    resources:
        mem_mb=int(STUDY.memory_gb * 1024),
        runtime=max(1, int(STUDY.timeout_seconds // 60) + 1),
    shell:
        "{PY} evaluate --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed}"
        " --synthesizer {wildcards.synth} --shards {STUDY.evaluate_shards} 2> {log}"

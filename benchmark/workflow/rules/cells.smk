def _cell(path):
    return f"{R}/{{dataset}}/seed{{seed}}/{{synth}}/{path}"


rule generate:
    """Fit on T and sample, in an isolated process with a timeout and a memory limit.

    Always succeeds as a job: a failure is recorded in generate.json (status, reason).
    """
    input:
        train=f"{R}/{{dataset}}/seed{{seed}}/train.parquet",
        holdout=f"{R}/{{dataset}}/seed{{seed}}/holdout.parquet",
        schema=f"{R}/{{dataset}}/seed{{seed}}/schema.json",
        config=f"{R}/.config/synth-{{synth}}.json",
    output:
        _cell("generate.json"),
    log:
        f"{R}/logs/{{dataset}}/seed{{seed}}/{{synth}}.generate.log",
    benchmark:
        f"{R}/benchmarks/{{dataset}}/seed{{seed}}/{{synth}}.generate.tsv"
    threads: 1
    resources:
        mem_mb=int(STUDY.memory_gb * 1024),
        runtime=max(1, int(STUDY.timeout_seconds // 60) + 1),
    shell:
        "{PY} generate --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed}"
        " --synthesizer {wildcards.synth} > {log} 2>&1"


rule evaluate:
    """Fidelity and privacy of one cell (joblib inside); writes status.json whatever happened."""
    input:
        generated=_cell("generate.json"),
        metrics=f"{R}/.config/metrics.json",
    output:
        metrics=_cell("metrics.json"),
        marginals=_cell("marginals.csv"),
        status=_cell("status.json"),
    log:
        f"{R}/logs/{{dataset}}/seed{{seed}}/{{synth}}.evaluate.log",
    benchmark:
        f"{R}/benchmarks/{{dataset}}/seed{{seed}}/{{synth}}.evaluate.tsv"
    threads: STUDY.metrics.get("n_jobs", 1)
    resources:
        mem_mb=int(STUDY.memory_gb * 1024),
        runtime=max(1, int(STUDY.timeout_seconds // 60) + 1),
    shell:
        "{PY} evaluate --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed}"
        " --synthesizer {wildcards.synth} 2> {log}"

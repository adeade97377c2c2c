rule split:
    """Seeded 50/50 split (or the provided split files) of one dataset."""
    input:
        f"{R}/.config/split-{{dataset}}.json",
    output:
        train=f"{R}/{{dataset}}/seed{{seed}}/train.parquet",
        holdout=f"{R}/{{dataset}}/seed{{seed}}/holdout.parquet",
        schema=f"{R}/{{dataset}}/seed{{seed}}/schema.json",
    log:
        f"{R}/logs/{{dataset}}/seed{{seed}}/split.log",
    benchmark:
        f"{R}/benchmarks/{{dataset}}/seed{{seed}}/split.tsv"
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "{PY} split --study-dir {R} --dataset {wildcards.dataset} --seed {wildcards.seed} 2> {log}"

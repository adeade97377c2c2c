"""`holdbench compare STUDY REFERENCE`: a study beside another (benchmark/outputs/compare.py)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("compare", help="a study beside another (paper beside paper_published): metrics side by "
                                       "side, Spearman of the F3 ratios, CPU of generating vs evaluating")
    p.add_argument("study", help="the fresh study (results/<study>)")
    p.add_argument("reference", help="the study it is compared with, e.g. paper_published")
    p.add_argument("--pair", nargs="+", default=[], metavar="REF=FRESH",
                   help="pair a reference synthesizer with a fresh one (default: published_X stands for X)")
    p.set_defaults(func=_compare)


def _compare(args) -> int:
    from holdbench.benchmark.cli import UserError
    from holdbench.benchmark.outputs.results import study_dir
    from holdbench.benchmark.outputs.compare import compare, reference_label, render_markdown, write_comparison

    pairs = {}
    for item in args.pair:
        ref, sep, fresh = item.partition("=")
        if not sep or not ref or not fresh:
            raise UserError(f"--pair {item!r}: expected REF=FRESH, e.g. published_mostly=mostly_ai")
        pairs[ref] = fresh
    fresh_dir, ref_dir = study_dir(args.study), study_dir(args.reference)
    result = compare(fresh_dir, ref_dir, pairs)
    # the outputs are compare_<label>.{md,csv} in the study: a reference that is not beside the study is
    # labelled with a digest of its path too, so two references of one name do not overwrite each other
    fresh_name, ref_name = fresh_dir.resolve().name, ref_dir.resolve().name
    print(render_markdown(result, fresh_name, ref_name), end="")
    paths = write_comparison(result, fresh_dir, reference_label(ref_dir, fresh_dir))
    print(f"[holdbench] written: {paths['md']} and {paths['csv']}")
    return 0

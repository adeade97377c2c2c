"""The Results pages (docs/gen/results.py): generated from the files committed in results/published/,
every table as committed, every number traceable to a committed file, every table with its
provenance, and a missing or malformed provenance failing the build."""

from __future__ import annotations

import csv
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "results" / "published"
GEN = REPO / "docs" / "gen"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"d2b_{name}", GEN / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


results = _module("results")


def _csv(study: str, file: str) -> list[dict[str, str]]:
    with (PUBLISHED / study / file).open(newline="") as f:
        return list(csv.DictReader(f))


def _md_tables(page: str) -> list[list[list[str]]]:
    """Every Markdown table of a page as rows of cells (the separator line dropped, '–' as empty)."""
    tables, current = [], []
    for line in page.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
            if not all(re.fullmatch(r"-+:?", c) for c in cells):
                current.append(["" if c == "–" else c for c in cells])
        elif current:
            tables.append(current)
            current = []
    return tables


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return results.render_pages()


@pytest.fixture(scope="module")
def studies():
    return results.load_all()


def test_the_pages_of_the_plan_are_generated(pages):
    assert sorted(pages) == sorted(["results/index.md", "results/paper.md", "results/frontier.md",
                                    "results/sequential.md", "results/bale-quick.md", "results/performance.md",
                                    "results/concordance.md", "results/audit.md"])
    for page, text in pages.items():
        assert text.startswith("# "), page
        assert "<small>Provenance" in text, f"{page} shows no table"


def test_every_committed_file_is_listed_and_rendered(pages, studies):
    on_disk = {(d.name, p.name) for d in PUBLISHED.iterdir() if d.is_dir() for p in d.iterdir()
               if p.name != "provenance.json"}
    listed = {(t.study, t.file) for tables in studies.values() for t in tables}
    assert on_disk == listed
    for study, tables in studies.items():
        page = pages[results.STUDY_PAGE[study]]
        for t in tables:
            assert f"# {t.meta['title']}\n" in page, (study, t.file)
            assert results.footer(t.meta) in page, (study, t.file)


def test_every_table_is_rendered_exactly_as_committed(pages, studies):
    for study, tables in studies.items():
        rendered = _md_tables(pages[results.STUDY_PAGE[study]])
        for t in tables:
            group = t.meta.get("group_by")
            if group:
                k = t.columns.index(group)
                cols = t.columns[:k] + t.columns[k + 1:]
                expected = [[cols] + [r[:k] + r[k + 1:] for r in t.rows if r[k] == v]
                            for v in dict.fromkeys(r[k] for r in t.rows)]
            else:
                expected = [[t.columns] + t.rows]
            for block in expected:
                assert block in rendered, f"{study}/{t.file}: a table is not on its page as committed"
    n_expected = sum(len({r[t.columns.index(t.meta['group_by'])] for r in t.rows}) if t.meta.get("group_by") else 1
                     for tables in studies.values() for t in tables)
    assert sum(len(_md_tables(p)) for p in pages.values()) == n_expected  # no table that is not a committed file


def _decimals(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w.])\d+\.\d+", text))


def test_every_number_on_a_page_comes_from_a_committed_file(pages):
    committed = set()
    for path in PUBLISHED.rglob("*"):
        if path.is_file():
            committed |= _decimals(path.read_text())
    for page, text in pages.items():
        stray = _decimals(text) - committed
        assert not stray, f"{page}: numbers that no committed result file holds: {sorted(stray)}"


def test_prose_carries_no_run_diary(pages):
    for page, text in pages.items():
        prose = "\n".join(line for line in text.splitlines()
                          if not line.startswith(("|", "<small>Provenance", "Conditions:")))
        assert not re.search(r"\b[0-9a-f]{7,40}\b", prose), f"{page}: a commit hash in the prose"
        assert not re.search(r"\b\d{1,2}:\d{2}\b", prose), f"{page}: a clock time in the prose"
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b", prose), f"{page}: a date in the prose"


def test_pages_regenerate_identically_and_write_their_figures(tmp_path, pages):
    written = results.write_pages(tmp_path)
    for page, text in pages.items():
        assert (tmp_path / page).read_text() == text
    for match in re.finditer(r"!\[[^\]]*\]\((img/[^)]+)\)", "".join(pages.values())):
        assert (tmp_path / "results" / match.group(1)).is_file(), match.group(1)
    assert any(p.suffix == ".png" for p in written)


# ---------------------------------------------------------------- provenance fails loudly

def _copy(tmp_path: Path, study: str = "frontier") -> Path:
    published = tmp_path / "published"
    shutil.copytree(PUBLISHED / study, published / study)
    return published


def test_a_missing_provenance_fails_naming_the_file(tmp_path):
    published = _copy(tmp_path)
    (published / "frontier" / "provenance.json").unlink()
    with pytest.raises(results.ProvenanceError, match=r"frontier/provenance.json: missing"):
        results.render_pages(published)


@pytest.mark.parametrize("key", results.REQUIRED)
def test_a_provenance_without_a_required_key_fails_naming_it(tmp_path, key):
    published = _copy(tmp_path)
    path = published / "frontier" / "provenance.json"
    doc = json.loads(path.read_text())
    del doc["tables"][0][key]
    path.write_text(json.dumps(doc))
    with pytest.raises(results.ProvenanceError, match=rf"tables\[0\] has no '{key}'"):
        results.render_pages(published)


@pytest.mark.parametrize("change, message", [
    (lambda doc: doc["tables"][0].update(date="27 Nov"), "is not YYYY-MM-DD"),
    (lambda doc: doc["tables"][0].update(machine=""), "'machine' must be a non-empty string"),
    (lambda doc: doc["tables"][0].update(file="nothing.csv"), "'nothing.csv' does not exist"),
    (lambda doc: doc.update(study="paper"), "'study' must be 'frontier'"),
    (lambda doc: doc.update(tables=[]), "'tables' must be a non-empty list"),
])
def test_a_malformed_provenance_fails(tmp_path, change, message):
    published = _copy(tmp_path)
    path = published / "frontier" / "provenance.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    with pytest.raises(results.ProvenanceError, match=re.escape(message)):
        results.render_pages(published)


def test_unparsable_provenance_unlisted_csv_and_unknown_study_fail(tmp_path):
    published = _copy(tmp_path)
    (published / "frontier" / "extra.csv").write_text("a\n1\n")
    with pytest.raises(results.ProvenanceError, match="extra.csv not listed"):
        results.render_pages(published)
    (published / "frontier" / "extra.csv").unlink()
    (published / "frontier" / "provenance.json").write_text("{not json")
    with pytest.raises(results.ProvenanceError, match="not valid JSON"):
        results.render_pages(published)
    shutil.rmtree(published / "frontier")
    shutil.copytree(PUBLISHED / "frontier", published / "mystery")
    doc = json.loads((published / "mystery" / "provenance.json").read_text())
    (published / "mystery" / "provenance.json").write_text(json.dumps(dict(doc, study="mystery")))
    with pytest.raises(results.ProvenanceError, match="no results page for mystery"):
        results.render_pages(published)


def test_a_ragged_csv_fails_naming_the_line(tmp_path):
    published = _copy(tmp_path)
    path = published / "frontier" / "leaderboard.csv"
    path.write_text(path.read_text() + "adult,extra\n")
    with pytest.raises(results.ProvenanceError, match=r"leaderboard.csv: line \d+ has 2 fields"):
        results.render_pages(published)


# ---------------------------------------------------------------- the extracted files' own invariants

def _extracted(study: str, *files: str) -> None:
    """Skip unless these files are still the ones extracted from the README (an export replaces them)."""
    tables = {t["file"]: t for t in json.loads((PUBLISHED / study / "provenance.json").read_text())["tables"]}
    for f in files:
        if f not in tables or not tables[f]["source"].startswith("recorded in README.md"):
            pytest.skip(f"{study}/{f} is no longer the table extracted from the README")


def test_paper_cpu_shares_and_totals_add_up():
    _extracted("paper", "cpu.csv")
    rows = {r["dataset"]: r for r in _csv("paper", "cpu.csv")}
    for ds, r in rows.items():
        gen, ev = float(r["generate CPU s"]), float(r["evaluate CPU s"])
        assert abs(ev / (gen + ev) - float(r["evaluate share"])) <= 0.001, ds
    parts = [r for ds, r in rows.items() if ds != "all"]
    for col in ("generate CPU s", "evaluate CPU s"):  # per-dataset figures are rounded: the sum to 2 s
        assert abs(sum(float(r[col]) for r in parts) - float(rows["all"][col])) <= 2, col


def test_fit_time_table_is_the_frontier_cells_medians():
    """fit_time.csv (scripts/docs/fit_time_table.py) against the committed frontier cells, recomputed here."""
    board = _csv("frontier", "leaderboard.csv")
    fit = _csv("performance", "fit_time.csv")
    timed = {(r["dataset"], r["synthesizer"]) for r in board
             if r["status"] == "ok" and not re.fullmatch(r"holdout|flip\d+", r["synthesizer"])}
    assert {(r["dataset"], r["generator"]) for r in fit} == timed
    assert len(fit) == len(timed)
    for r in fit:
        cells = [c for c in board if (c["dataset"], c["synthesizer"]) == (r["dataset"], r["generator"])
                 and c["status"] == "ok"]
        assert int(r["seeds ok"]) == len(cells), r
        for col in ("fit s", "sample s"):
            values = sorted(float(c[col]) for c in cells)
            mid = len(values) // 2
            median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
            assert abs(float(r[col]) - median) <= 0.05 + 1e-9, (r, col)
        assert int(r["peak MB"]) == max(int(c["peak MB"]) for c in cells), r


def test_frontier_board_is_every_cell_of_the_study_config_and_holdouts_are_one():
    import yaml

    _extracted("sequential", "leaderboard.csv")
    study = yaml.safe_load((REPO / "conf" / "study" / "frontier.yaml").read_text())
    board = _csv("frontier", "leaderboard.csv")
    cells = {(r["dataset"], r["synthesizer"], int(r["seed"])) for r in board}
    assert len(cells) == len(board)
    expected = {(d, s, seed) for d in study["datasets"] for s in study["synthesizers"] for seed in study["seeds"]}
    assert cells == expected
    for r in board:
        if r["synthesizer"] == "holdout":
            assert r["F3 ratio"] == "1.000"
    for r in _csv("sequential", "leaderboard.csv"):
        if r["synthesizer"] == "seq_holdout":
            assert (r["seq F3 ratio"], r["coherence ratio"], r["length ratio"]) == ("1.00", "1.00", "1.00")


def test_extraction_reproduces_the_committed_files(tmp_path):
    """Re-run the extraction from the README in git history: byte for byte the committed files."""
    spec = importlib.util.spec_from_file_location("d2b_extract", REPO / "scripts" / "docs" / "extract_readme_results.py")
    extract = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extract)
    probe = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{extract.SOURCE_COMMIT}:README.md"], check=False,
                           capture_output=True)
    if probe.returncode:
        pytest.skip(f"git history without {extract.SOURCE_COMMIT} (a shallow clone): nothing to extract from")
    studies = extract.extract(extract.SOURCE_COMMIT, tmp_path)
    compared = 0
    for study, entries in studies.items():
        committed = {t["file"]: t for t in json.loads((PUBLISHED / study / "provenance.json").read_text())["tables"]}
        for entry in entries:
            mine = committed.get(entry["file"])
            if mine is not None and not mine["source"].startswith("recorded in README.md"):
                continue  # replaced by an export of a newer run
            assert mine == entry, f"{study}/{entry['file']}: provenance differs from the extraction's"
            assert (tmp_path / study / entry["file"]).read_bytes() == (PUBLISHED / study / entry["file"]).read_bytes(), \
                f"{study}/{entry['file']}"
            compared += 1
    for study_dir in PUBLISHED.iterdir():  # every committed table that claims the README as source was extracted
        for t in json.loads((study_dir / "provenance.json").read_text())["tables"]:
            if t["source"].startswith("recorded in README.md"):
                assert any(e["file"] == t["file"] for e in studies.get(study_dir.name, [])), (study_dir.name, t["file"])
    assert compared >= 14  # replaced since: paper/spearman.csv (fresh_rows.py), the frontier board (an export), fit_time.csv,
    # the Bale & Quick board (exports merged into it)


# ---------------------------------------------------------------- the export path

def test_export_writes_the_committed_form_from_a_study_directory(tmp_path):
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.results import load_results

    from tests.benchmark.conftest import build_study

    export = _module("export_results")
    study = build_study(tmp_path / "results")
    loaded = load_results(study.path)
    write_leaderboard(loaded)
    out = tmp_path / "published" / "toy"
    out.mkdir(parents=True)
    old = {"title": "t", "run_commit": None, "machine": "m", "date": "2026-01-01", "source": "s"}
    (out / "provenance.json").write_text(json.dumps({"study": "toy", "tables": [
        dict(old, file="leaderboard.csv", command="holdbench run toy"),
        dict(old, file="cpu.csv", command="holdbench compare toy other"),
        dict(old, file="bench.csv", command="python scripts/bench/bench_x.py")]}))
    for name in ("leaderboard.csv", "cpu.csv", "bench.csv", "stray.csv"):
        (out / name).write_text("x\n1\n")
    export.export(study.path, out, machine_text="test machine")
    # the previous run's tables go, a benchmark script's table stays with its own provenance
    assert sorted(p.name for p in out.iterdir()) == ["bench.csv", "leaderboard.csv", "provenance.json"]
    assert [t["file"] for t in json.loads((out / "provenance.json").read_text())["tables"]] == \
        ["leaderboard.csv", "bench.csv"]
    (out / "bench.csv").unlink()
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert len(rows) == len(study.keys)
    heads = {sp.name: sp for sp in loaded.specs if sp.headline}
    assert "F3_ratio" in heads
    for r in rows:
        key = (r["dataset"], r["synthesizer"], int(r["seed"]))
        written = study.metrics.get(key) or {}
        for name, sp in heads.items():  # a cell without metrics.json (error, skipped) has empty values
            assert r[sp.label] == (f"{written[name]:.{sp.digits}f}" if name in written else ""), (key, name)
    doc = json.loads((out / "provenance.json").read_text())
    assert doc["tables"][0]["machine"] == "test machine"
    doc["tables"] = doc["tables"][:1]
    # the exported directory renders through the same page generator
    published = tmp_path / "published"
    (published / "toy").rename(published / "demo")
    doc["study"] = "demo"
    (published / "demo" / "provenance.json").write_text(json.dumps(doc))
    page = results.render_pages(published)["results/index.md"]
    assert "test machine" in page and "#### alpha" in page


def _exported_toy(tmp_path: Path):
    """The toy study exported into tmp_path/published/toy: (export module, out dir, the exported board's rows)."""
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.results import load_results

    from tests.benchmark.conftest import build_study

    export = _module("export_results")
    full = build_study(tmp_path / "a")
    write_leaderboard(load_results(full.path))
    out = tmp_path / "published" / "toy"
    export.export(full.path, out, machine_text="m")
    return export, out, list(csv.reader((out / "leaderboard.csv").open()))


def _partial_holdout_run(tmp_path: Path):
    """The toy study's holdout cells alone, with their leaderboard (what a partial run exports with --merge)."""
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.results import load_results

    from tests.benchmark.conftest import build_study

    partial = build_study(tmp_path / "b", synthesizers=["holdout"])
    write_leaderboard(load_results(partial.path))
    return partial


def test_export_merge_adds_a_partial_run_to_the_committed_leaderboard(tmp_path):
    export, out, exported = _exported_toy(tmp_path)
    header, committed = exported[0], exported[1:]
    value = header.index("F3 ratio") if "F3 ratio" in header else 4
    # the committed file differs from what the runs compute in one gauss row and one holdout row,
    # and holds a cell no run has
    edited = [list(r) for r in committed]
    gauss = next(i for i, r in enumerate(edited) if r[1] == "gauss" and r[3] == "ok")
    hold = next(i for i, r in enumerate(edited) if r[1] == "holdout" and r[3] == "ok")
    edited[gauss][value] = edited[hold][value] = "999"
    extra = ["alpha", "zz_old", "0", "ok", *[""] * (len(header) - 4)]
    with (out / "leaderboard.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([header, extra, *edited])
    doc = json.loads((out / "provenance.json").read_text())
    versions = doc["tables"][0]["versions"]
    changed = min(versions)
    doc["tables"][0].update(run_commit="abc1234", command="holdbench run toy --datasets alpha",
                            versions={**versions, changed: "0.0.0"})
    (out / "provenance.json").write_text(json.dumps(doc))
    partial = _partial_holdout_run(tmp_path)
    export.export(partial.path, out, machine_text="m", command="holdbench run toy --synthesizers holdout", merge=True)
    merged = list(csv.reader((out / "leaderboard.csv").open()))
    assert merged[0] == header
    rows = {tuple(r[:3]): r for r in merged[1:]}
    assert len(merged) - 1 == len(committed) + 1
    assert rows[tuple(committed[hold][:3])] == committed[hold]          # the run's cell replaced the edit
    assert rows[tuple(committed[gauss][:3])][value] == "999"            # a cell the run did not hold is kept
    assert rows[("alpha", "zz_old", "0")] == extra
    # study order: the run's synthesizers first, then the kept ones as they came
    assert [r[1] for r in merged[1:] if r[0] == "alpha" and r[2] == "0"] == ["holdout", "zz_old", "gauss", "ctgan"]
    entry = json.loads((out / "provenance.json").read_text())["tables"][0]
    assert entry["run_commit"].split(", ")[0] == "abc1234"
    assert entry["command"].startswith("holdbench run toy --datasets alpha; then holdbench run toy --synthesizers")
    assert changed not in entry["versions"] and set(entry["versions"]) == set(versions) - {changed}
    header[value] = "other"
    (out / "leaderboard.csv").write_text(",".join(header) + "\n")
    with pytest.raises(ValueError, match="differ from this run's"):
        export.export(partial.path, out, machine_text="m", merge=True)


def test_export_merge_adds_the_run_s_new_columns_empty_in_the_kept_rows_and_says_so(tmp_path):
    """A study whose metrics config computes more than when the committed rows ran (the audit study gained the
    F ratios): the merged board has the run's columns, the kept rows' new cells are empty, the note names them."""
    export, out, exported = _exported_toy(tmp_path)
    header, committed = exported[0], exported[1:]
    dropped = header.index("F3 ratio")
    older = [[v for i, v in enumerate(r) if i != dropped] for r in exported]  # the board before F3 was computed
    with (out / "leaderboard.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(older)
    partial = _partial_holdout_run(tmp_path)
    export.export(partial.path, out, machine_text="m", command="holdbench run toy --synthesizers holdout", merge=True)
    merged = list(csv.reader((out / "leaderboard.csv").open()))
    assert merged[0] == header
    for row in merged[1:]:
        before = next(r for r in committed if r[:3] == row[:3])
        if row[1] == "holdout":
            assert row == before  # the run's cell, F3 included
        else:
            assert row[dropped] == "" and row[:dropped] + row[dropped + 1:] == before[:dropped] + before[dropped + 1:]
    note = json.loads((out / "provenance.json").read_text())["tables"][0]["note"]
    kept = sorted({"/".join(r[:2]) for r in merged[1:] if r[1] != "holdout"})
    assert note.startswith("F3 ratio: not in the table of the earlier run(s)") and all(k in note for k in kept)
    assert "/holdout" not in note
    # columns the run lacks (or in another order) are still refused
    with (out / "leaderboard.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([[*header, "gone"], [*merged[1], ""]])
    with pytest.raises(ValueError, match="differ from this run's"):
        export.export(partial.path, out, machine_text="m", merge=True)


def test_a_later_merge_that_computes_the_missing_columns_drops_its_cells_from_the_note(tmp_path):
    """The audit's DP cells re-run with the F ratios: the note stops naming the cells that have them now (it
    named them all still), keeps its other parts, and goes once no kept row lacks them."""
    from holdbench.benchmark.outputs.leaderboard import write_leaderboard
    from holdbench.benchmark.outputs.results import load_results

    from tests.benchmark.conftest import build_study

    export, out, exported = _exported_toy(tmp_path)
    dropped = exported[0].index("F3 ratio")
    with (out / "leaderboard.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([[v for i, v in enumerate(r) if i != dropped] for r in exported])
    doc = json.loads((out / "provenance.json").read_text())
    doc["tables"][0]["note"] = "Timings from two machines"
    (out / "provenance.json").write_text(json.dumps(doc))

    def note() -> str | None:
        return json.loads((out / "provenance.json").read_text())["tables"][0].get("note")

    export.export(_partial_holdout_run(tmp_path).path, out, machine_text="m", merge=True)
    assert note().startswith("Timings from two machines; F3 ratio: not in the table of the earlier run(s), so "
                             "empty for ") and "alpha/gauss" in note()
    # a note written in the earlier wording of that part is pruned the same way (and rewritten in today's)
    doc = json.loads((out / "provenance.json").read_text())
    doc["tables"][0]["note"] = note().replace("not in the table of the earlier run(s), so empty for",
                                              "not computed by the earlier run(s), whose metrics config did not "
                                              "have them, so empty for")
    (out / "provenance.json").write_text(json.dumps(doc))
    gauss = build_study(tmp_path / "c", synthesizers=["gauss"])
    write_leaderboard(load_results(gauss.path))
    export.export(gauss.path, out, machine_text="m", merge=True)
    assert note().startswith("Timings from two machines; F3 ratio: not in the table of the earlier run(s)")
    assert "/gauss" not in note() and "alpha/ctgan" in note() and "/holdout" not in note()
    export.export(tmp_path / "a" / "toy", out, machine_text="m", merge=True)  # every cell again
    assert note() == "Timings from two machines"
    assert list(csv.reader((out / "leaderboard.csv").open())) == exported


def test_a_merge_into_rows_of_another_source_names_both_sources(tmp_path):
    """Rows recorded elsewhere (the README before the docs site) merged with an export: the entry's source says
    it is an export now and where the kept rows came from; a second merge does not repeat it."""
    export, out, _ = _exported_toy(tmp_path)
    doc = json.loads((out / "provenance.json").read_text())
    doc["tables"][0]["source"] = "recorded in README.md at abc1234 before the docs site existed"
    (out / "provenance.json").write_text(json.dumps(doc))
    partial = _partial_holdout_run(tmp_path)
    for _ in range(2):
        export.export(partial.path, out, machine_text="m", merge=True)
        source = json.loads((out / "provenance.json").read_text())["tables"][0]["source"]
        assert source == ("exported from the study's leaderboard.csv by docs/gen/export_results.py; regenerate "
                          "with `holdbench run toy` + `python docs/gen/export_results.py`; the rows kept from the "
                          "earlier run(s): recorded in README.md at abc1234 before the docs site existed")
    # a kept source that ends in the same "regenerate with ..." clause does not say it twice
    doc = json.loads((out / "provenance.json").read_text())
    how = "regenerate with `holdbench run toy` + `python docs/gen/export_results.py`"
    doc["tables"][0]["source"] = f"recorded in README.md at abc1234; {how}"
    (out / "provenance.json").write_text(json.dumps(doc))
    export.export(partial.path, out, machine_text="m", merge=True)
    assert json.loads((out / "provenance.json").read_text())["tables"][0]["source"] == (
        f"exported from the study's leaderboard.csv by docs/gen/export_results.py; {how}; the rows kept from the "
        "earlier run(s): recorded in README.md at abc1234")


def test_export_refuses_a_directory_without_a_leaderboard(tmp_path):
    export = _module("export_results")
    with pytest.raises(FileNotFoundError, match="leaderboard.csv"):
        export.export(tmp_path, tmp_path / "out")


def test_export_note_is_the_entry_note_and_a_merge_keeps_its_empty_column_parts(tmp_path):
    """--note sets the leaderboard entry's note; a merge with --note replaces the note's own text but keeps the
    "not in the table of the earlier run(s)" part naming the rows still kept; an empty --note is refused."""
    export, out, exported = _exported_toy(tmp_path)

    def note() -> str | None:
        return json.loads((out / "provenance.json").read_text())["tables"][0].get("note")

    assert note() is None
    export.export(tmp_path / "a" / "toy", out, machine_text="m", note="split 50/50; 20 rows")
    assert note() == "split 50/50; 20 rows"
    dropped = exported[0].index("F3 ratio")
    with (out / "leaderboard.csv").open("w", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows([[v for i, v in enumerate(r) if i != dropped] for r in exported])
    export.export(_partial_holdout_run(tmp_path).path, out, machine_text="m", merge=True, note="a new text")
    assert note().startswith("a new text; F3 ratio: not in the table of the earlier run(s), so empty for ")
    assert "split 50/50" not in note() and "/holdout" not in note() and "alpha/gauss" in note()
    with pytest.raises(ValueError, match="--note is empty"):
        export.export(tmp_path / "a" / "toy", out, machine_text="m", note="  ")

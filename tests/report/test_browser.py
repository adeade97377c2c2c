"""`holdbench report`'s HTML in a real browser: Debian's headless Chromium, driven by Playwright.

Two reports are built, from small tables (`holdbench report --train --holdout --synthetic --out`) and from
event files with two S (`--train-events … --synthetic-events A B --key --order row`), each opened from
disk, and each must: load with no console error, no uncaught exception and no request that leaves the
file (the report is self-contained); show every `figure.hb-figure` with a non-zero size holding an SVG
with drawn elements or a loaded image; and sort a `table.hb-sortable` when its header is clicked. A
full-page screenshot is kept in test-artifacts/browser/ (git ignores the folder).

Needs Chromium at /usr/bin/chromium (`apt-get install chromium`, .ci/install.sh) and the `playwright`
Python package (pip install -e .[dev]); Playwright never downloads a browser here. Skipped without
them on a developer's machine; under CI=true a missing browser or package FAILS the test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("HOLDBENCH_TEST_ARTIFACTS", REPO / "test-artifacts")) / "browser"
CHROMIUM = os.environ.get("HOLDBENCH_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def _missing(why: str):
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {why}: the report's browser test must run in CI")
    pytest.skip(why)


def small_tables(n: int = 400, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """T, H from one seeded population (two numeric, three categorical columns); S = T with a tenth of
    its cells redrawn from T's column (a flip baseline)."""
    rng = np.random.default_rng(seed)
    m = 2 * n
    group = rng.choice(["a", "b", "c", "d"], m, p=[0.4, 0.3, 0.2, 0.1])
    age = np.round(rng.normal(40, 12, m) + (group == "a") * 5).clip(18, 90).astype(int)
    income = np.round(np.exp(rng.normal(10, 0.5, m) + (age - 40) / 100), 2)
    df = pd.DataFrame({"age": age, "income": income, "group": group,
                       "region": rng.choice(["north", "south", "east", "west"], m),
                       "member": np.where(rng.random(m) < 0.3 + 0.4 * (group == "b"), "yes", "no")})
    t, h = df.iloc[:n].reset_index(drop=True), df.iloc[n:].reset_index(drop=True)
    s = t.copy()
    for col in s.columns:
        flip = rng.random(n) < 0.1
        s.loc[flip, col] = rng.choice(t[col].to_numpy(), int(flip.sum()))
    return t, h, s


def _flat_argv(d: Path) -> list[str]:
    for name, df in zip(("train", "holdout", "flip10"), small_tables(), strict=True):
        df.to_csv(d / f"{name}.csv", index=False)
    return ["--train", str(d / "train.csv"), "--holdout", str(d / "holdout.csv"), "--synthetic", str(d / "flip10.csv")]


def _sequential_argv(d: Path) -> list[str]:
    """Event files without subject attributes, two S (a copy of T and a fresh draw): the sequences section
    with its length and coherence figures per S."""
    from tests.sequential.test_sequential_cli_events import _events

    for role, seed in (("train", 0), ("holdout", 1), ("fresh", 2)):
        _events(120, seed).to_csv(d / f"{role}.csv", index=False)
    (d / "copy.csv").write_bytes((d / "train.csv").read_bytes())
    return ["--train-events", str(d / "train.csv"), "--holdout-events", str(d / "holdout.csv"),
            "--synthetic-events", str(d / "copy.csv"), str(d / "fresh.csv"), "--key", "account", "--order", "row",
            "--skip", "subject_legal", "--set", "families.subject_attacks.n_bootstrap=20"]


@pytest.fixture(scope="module", params=["flat", "sequential"])
def report_html(request, tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp(f"browser-report-{request.param}")
    inputs = _flat_argv(d) if request.param == "flat" else _sequential_argv(d)
    out = d / "report"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from holdbench.benchmark.cli import main; sys.exit(main(sys.argv[1:]))",
         "report", *inputs, "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False)
    # 0 = gates passed, 1 = a gate failed (both write the report); anything else is an error
    assert proc.returncode in (0, 1), f"holdbench report exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    html = out / "report.html"
    assert html.is_file(), f"no {html}; stderr:\n{proc.stderr[-2000:]}"
    return html


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).is_file():
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install -e .[dev])")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture()
def opened(browser, report_html):
    """(page, console errors, uncaught exceptions, requests that are not the file itself)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors, exceptions, requests = [], [], []
    page.on("console", lambda m: errors.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: exceptions.append(str(e)))
    url = report_html.as_uri()
    page.on("request", lambda r: requests.append(r.url) if not r.url.startswith(("data:", url)) else None)
    page.goto(url, wait_until="load")
    yield page, errors, exceptions, requests
    page.close()


def test_report_renders_every_figure_with_no_console_error(opened, report_html):
    page, errors, exceptions, requests = opened
    assert page.title().strip(), "the report has no <title>"
    figures = page.locator("figure.hb-figure")
    n = figures.count()
    assert n >= 3, f"expected the report's figures (figure.hb-figure), found {n}"
    ids = page.eval_on_selector_all("figure.hb-figure", "els => els.map(e => e.id)")
    assert all(ids) and len(set(ids)) == len(ids), f"figure ids missing or repeated: {ids}"
    empty = []
    for i in range(n):
        fig = figures.nth(i)
        fig.scroll_into_view_if_needed()
        box = fig.bounding_box()
        drawn = fig.evaluate("""f => {
            const svg = f.querySelector('svg');
            if (svg) { const r = svg.getBoundingClientRect();
                       return r.width > 0 && r.height > 0 &&
                              svg.querySelectorAll('path,rect,circle,line,polyline,polygon,text,use,image').length > 0; }
            const img = f.querySelector('img');
            return !!img && img.complete && img.naturalWidth > 0 && img.naturalHeight > 0;
        }""")
        if not box or box["width"] <= 0 or box["height"] <= 0 or not drawn:
            empty.append(ids[i])
    assert not empty, f"figures with no size or nothing drawn: {empty}"
    assert not errors, f"console errors: {errors}"
    assert not exceptions, f"uncaught exceptions: {exceptions}"
    assert not requests, f"the report fetched something besides itself: {requests[:5]}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{report_html.parent.parent.name}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def _column(page, table_index: int, col: int) -> list[str]:
    return page.eval_on_selector_all(
        "table.hb-sortable",
        f"""ts => Array.from(ts[{table_index}].tBodies[0].rows).map(r => r.cells[{col}] ? r.cells[{col}].innerText.trim() : '')""")


def _key(text: str):
    number = re.sub(r"[,\s%]", "", text).replace("−", "-")
    try:
        return (0, float(number), "")
    except ValueError:
        return (1, 0.0, text.lower())


def test_sortable_table_sorts_when_its_header_is_clicked(opened):
    page = opened[0]
    tables = page.locator("table.hb-sortable")
    assert tables.count() >= 1, "the report has no table.hb-sortable"
    # the first sortable table and column whose values are not already in order and have no ties
    for ti in range(tables.count()):
        headers = tables.nth(ti).locator("thead th")
        for col in range(headers.count()):
            values = _column(page, ti, col)
            keys = [_key(v) for v in values]
            if len(values) >= 3 and len(set(keys)) == len(keys) and keys != sorted(keys) \
                    and keys != sorted(keys, reverse=True):
                header = headers.nth(col)
                header.click()
                first = [_key(v) for v in _column(page, ti, col)]
                header.click()
                second = [_key(v) for v in _column(page, ti, col)]
                assert sorted(first) == sorted(keys), "sorting lost or changed rows"
                orders = (sorted(keys), sorted(keys, reverse=True))
                assert first in orders and second in orders and first != second, \
                    f"table {ti} column {col} not sorted by two clicks: {first} then {second}"
                return
    pytest.fail("no table.hb-sortable has a column with distinct values out of order to sort")

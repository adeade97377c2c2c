"""Every runnable code block of README.md and docs/ is fetched by a test (tests/docs_blocks.py)."""

from __future__ import annotations

import re

from tests.docs_blocks import EXECUTABLE, REPO, blocks, first_line, pages

_CALL = re.compile(r"""\bblock\(\s*(["'])(?P<page>[^"']+)\1\s*,\s*(["'])(?P<first>.+?)\3\s*\)""")


def _claimed() -> set[tuple[str, str]]:
    out = set()
    for test in (REPO / "tests").rglob("*.py"):
        for m in _CALL.finditer(test.read_text()):
            out.add((m.group("page"), m.group("first").strip()))
    return out


def test_every_runnable_block_is_run_by_a_test():
    claimed = _claimed()
    missing = [f"{page.relative_to(REPO)}: {first_line(body)!r}" for page in pages()
               for lang, body in blocks(page)
               if lang in EXECUTABLE and (str(page.relative_to(REPO)), first_line(body)) not in claimed]
    assert missing == [], "code blocks no test runs (run them in a test, or mark them `text`):\n" + "\n".join(missing)


def test_every_claimed_block_exists():
    have = {(str(p.relative_to(REPO)), first_line(b)) for p in pages() for _, b in blocks(p)}
    assert sorted(_claimed() - have) == []


def test_the_check_sees_an_unclaimed_block(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n\n```python\n# nobody runs me\nprint(1)\n```\n\n```text\nillustration\n```\n")
    assert [(lang, first_line(b)) for lang, b in blocks(page)] == [("python", "# nobody runs me"), ("text", "illustration")]

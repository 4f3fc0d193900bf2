"""Every relative link of README.md and docs/*.md resolves: ``[text](path)`` names a file of the
repository and ``[text](path#anchor)`` a heading of that page (GitHub's anchors). Links inside
code blocks and to other sites are not checked."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+\s+(.*?)\s*$", re.MULTILINE)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but ``-`` and ``_`` dropped,
    spaces as ``-``."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (outside code blocks)."""
    return {anchor(h) for h in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))}


def broken(pages: list[Path]) -> list[str]:
    """``page: link`` for each relative link of ``pages`` that names no file, or no heading of
    the page it names."""
    out = []
    for page in pages:
        for url in LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
            if re.match(r"[a-z][a-z0-9+.-]*:", url):
                continue
            path, _, frag = url.partition("#")
            target = (page.parent / path) if path else page
            if not target.exists():
                out.append(f"{page.name}: {url} (no such file)")
            elif frag and target.suffix == ".md" and frag not in anchors(target):
                out.append(f"{page.name}: {url} (no such heading)")
    return out


def test_every_doc_link_resolves() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert broken(pages) == []


def test_a_broken_link_is_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# B\n\n## Formats and rounds\n")
    page = tmp_path / "a.md"
    page.write_text("# A\n\n[ok](b.md#formats-and-rounds) [site](https://x.org/y.md)\n"
                    "[gone](c.md) [no heading](b.md#formats) [own](#a) [own, missing](#z)\n"
                    "```\n[in code](nothing.md)\n```\n")
    assert broken([page]) == ["a.md: c.md (no such file)", "a.md: b.md#formats (no such heading)",
                              "a.md: #z (no such heading)"]

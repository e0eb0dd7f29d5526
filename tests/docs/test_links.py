"""Every link between the docs pages leads somewhere: the page exists and so does the heading it names."""

from __future__ import annotations

import re
from pathlib import Path

from tests.docs.pages import REPOSITORY, documentation_pages

LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (?P<title>.+)$", re.M)
FENCED = re.compile(r"^ *```.*?^ *```", re.M | re.S)


def anchor(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = title.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {anchor(match["title"]) for match in HEADING.finditer(FENCED.sub("", page.read_text()))}


def test_every_anchor_is_made_the_way_github_makes_it():
    assert anchor("Precedence: constructor < code < file") == "precedence-constructor--code--file"
    assert anchor("Names exported by `pb_headless`") == "names-exported-by-pb_headless"
    assert anchor("4. The site: `app.py`") == "4-the-site-apppy"


def test_every_link_between_pages_names_a_page_and_a_heading_that_exist():
    broken = []
    for page in [*documentation_pages(), REPOSITORY / "CHANGELOG.md"]:
        for match in LINK.finditer(FENCED.sub("", page.read_text())):
            target = match["target"]
            if re.match(r"^[a-z]+:", target):
                continue  # an absolute address (https:, mailto:)
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(REPOSITORY)}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                broken.append(f"{page.relative_to(REPOSITORY)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)

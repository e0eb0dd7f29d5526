"""Every example in README.md and docs/*.md runs as the page shows it (the convention: docs/writing-docs.md).

Files a page shows are the repository's files or the page's own; Python fragments compile, and those
that are code (not entries of a declaration) run; commands, requests and servers run as a reader runs
them — in a clean shell, each page on a fresh site of its own (the example site as `bash scripts/site`
runs it, or the host the page itself defines) — and print what the page shows.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tests.docs.matching import difference
from tests.docs.pages import REPOSITORY, Block, blocks, documentation_pages
from tests.docs.running import PORT_OPTION, SITE_PORT, SITE_SCRIPT, PageRun, page_run, start_example_site

pytestmark = pytest.mark.slow
PAGES = documentation_pages()


def page_id(page: Path) -> str:
    return str(page.relative_to(REPOSITORY))


def every_block() -> list[Block]:
    return [block for page in PAGES for block in blocks(page)]


def test_the_convention_is_written_down_in_the_docs():
    convention = (REPOSITORY / "docs" / "writing-docs.md").read_text()
    for marker in ("<!-- file:", "<!-- excerpt:", "<!-- fragment -->", "<!-- server -->", "<!-- not run:"):
        assert marker in convention


def test_every_python_block_says_whether_it_is_a_file_an_excerpt_or_a_fragment():
    unmarked = [
        block.where
        for block in every_block()
        if block.lang == "python" and block.marker not in ("file", "excerpt", "fragment")
    ]
    assert not unmarked, (
        "mark each Python block <!-- file: PATH -->, <!-- excerpt: PATH --> or "
        f"<!-- fragment --> (docs/writing-docs.md): {unmarked}"
    )


def test_a_block_the_suite_does_not_run_says_why():
    silent = [block.where for block in every_block() if block.marker == "not run" and not block.argument]
    assert not silent, f"<!-- not run: REASON --> needs its reason: {silent}"


def test_every_file_a_page_shows_from_the_repository_is_that_file():
    for block in every_block():
        if block.is_repository_file:
            shown_file = (REPOSITORY / block.argument).read_text()
            assert shown_file == block.body, f"{block.where}: {block.argument} differs"


def test_every_excerpt_is_in_its_file():
    for block in every_block():
        if block.marker == "excerpt":
            source = (REPOSITORY / block.argument).read_text()
            indented = (textwrap.indent(block.body, " " * width) for width in range(0, 13, 4))
            assert any(candidate in source for candidate in indented), f"{block.where}: not in the file"


def test_every_python_fragment_and_page_file_compiles():
    for block in every_block():
        if block.lang == "python" and (block.marker == "fragment" or block.is_page_file):
            compiles(block)


def compiles(block: Block) -> None:
    source = textwrap.dedent(block.body)
    for candidate in (source, "{\n" + source + "\n}"):  # a fragment may be entries of a declaration dict
        try:
            compile(candidate, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST)
            return
        except SyntaxError as error:
            first = error
    raise AssertionError(f"{block.where}: does not compile: {first}")


def is_code(block: Block) -> bool:
    """A fragment that compiles on its own is code, and runs; entries of a declaration dict only compile."""
    if block.lang != "python" or block.marker != "fragment":
        return False
    try:
        compile(
            textwrap.dedent(block.body),
            block.where,
            "exec",
            flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST,
        )
    except SyntaxError:
        return False
    return True


def runs(page: Path) -> bool:
    return any(
        block.is_command or block.is_request or block.marker == "server" or is_code(block)
        for block in blocks(page)
    )


def server_port(block: Block) -> int:
    named = PORT_OPTION.search(block.body)
    return int(named["port"]) if named else SITE_PORT


def test_a_page_that_starts_a_server_gives_it_a_port_of_its_own():
    """A reader keeps `bash scripts/site` running (port 8000) while trying another page's server, and may
    keep that one running too: no page's server takes the example site's port or another page's."""
    taken: dict[int, str] = {}
    for block in every_block():
        if block.marker != "server":
            continue
        port = server_port(block)
        assert port != SITE_PORT or SITE_SCRIPT in block.body, (
            f"{block.where}: port {port} is the example site's (`bash scripts/site`); give the server another"
        )
        assert port not in taken, f"{block.where}: port {port} is taken by the server of {taken[port]} too"
        taken[port] = block.where


@pytest.mark.parametrize("page", [page for page in PAGES if runs(page)], ids=page_id)
def test_every_command_on_the_page_runs_and_prints_what_the_page_shows(page, tmp_path):
    shown = blocks(page)
    with page_run(tmp_path) as run:
        if any(block.is_page_file for block in shown):
            run.cwd = tmp_path
        if not any(block.marker == "server" for block in shown):
            start_example_site(run)
        for block in shown:
            step(run, block)


def step(run: PageRun, block: Block) -> None:
    if block.is_page_file:
        target = run.cwd / block.argument
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.body)
    elif block.marker == "server":
        run.start(block)
    elif is_code(block):
        run.execute(block)
    elif block.is_command or block.is_request:
        printed = run.run(block) if block.is_command else run.request(block)
        if block.output is not None:
            found = difference(block.output.lang, block.output.body, printed)
            assert found is None, f"{block.where}: {block.body}\n{found}"

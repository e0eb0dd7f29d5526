"""`pb-headless openapi` prints the document the site serves: components, constructor tables and
custom routes included, whether the host hands its API over (PB_APP) or the site folder is read."""

from __future__ import annotations

import json

import pytest

from examples.site.definitions import create_content_table
from pb_headless.constructor import ApiTab, ApiTabStore, ConstructorField
from tests.cli.console import SITE_HOOK, assert_refused, run
from tests.site.harness import copy_site_folder, open_site
from tests.support.databases import open_database, url_for

COMPONENT = "tests.site.satellite"  # publishes `writers` in code
SERVER = "http://testserver"


async def publish_constructor_table(database) -> None:
    await create_content_table(database, "Events", [ConstructorField("name", "string", required=True)])
    await ApiTabStore(database).save("ct_events", ApiTab(enabled=True, fields=("name",)))


def document(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
async def test_with_the_hosts_hook_it_prints_exactly_what_the_site_serves(kind, tmp_path):
    async with open_database(kind, tmp_path, installed=False):
        url = url_for(kind, tmp_path)
        async with open_site(url, components=(COMPONENT,)) as browser:
            await publish_constructor_table(browser.site.database)
            served = await browser.get("/mgr/pb/openapi.json?ctx=mgr")
            assert served.status_code == 200
            printed = run(
                "openapi",
                "--server",
                SERVER,
                database=url,
                env={"PB_APP": SITE_HOOK, "PB_COMPONENTS": COMPONENT},
            )
    assert document(printed) == served.json()
    paths = document(printed)["paths"]
    for path in ("/objects/articles", "/objects/writers", "/objects/events", "/reports/categories"):
        assert path in paths, sorted(paths)


async def test_the_app_option_names_the_hook_as_the_variable_does(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    async with open_site(url) as browser:
        await publish_constructor_table(browser.site.database)
    printed = document(run("openapi", "--app", SITE_HOOK, database=url))
    assert "/objects/events" in printed["paths"]
    assert printed["servers"][0]["url"] == "http://127.0.0.1:8000/api/pb/v1"


async def test_without_a_hook_it_reads_the_site_folder_and_the_components(tmp_path):
    site = copy_site_folder(tmp_path / "site")  # its api.py imports core.App.models from the site folder
    url = f"sqlite:///{tmp_path}/site.db"
    async with open_site(url, site_dir=site):
        pass
    printed = run("openapi", database=url, env={"PB_SITE_DIR": str(site), "PB_COMPONENTS": COMPONENT})
    paths = document(printed)["paths"]
    assert {"/objects/articles", "/objects/authors", "/objects/writers", "/reports/categories"} <= set(paths)
    assert printed.stderr == ""


async def test_an_api_file_in_a_site_folder_puts_that_folder_on_the_import_path(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    url = f"sqlite:///{tmp_path}/site.db"
    assert run("install", database=url).returncode == 0
    printed = run("openapi", "--api-file", str(site / "core" / "App" / "api.py"), database=url, cwd=tmp_path)
    assert "/objects/articles" in document(printed)["paths"]


async def test_without_a_declaration_file_it_warns_and_prints_the_component_objects(tmp_path):
    url = f"sqlite:///{tmp_path}/site.db"
    async with open_site(url, logged_in=False):  # the tables the component publishes
        pass
    printed = run("openapi", database=url, env={"PB_COMPONENTS": COMPONENT})
    assert "/objects/writers" in document(printed)["paths"]
    warning = printed.stderr.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("pb-headless: warning: no declaration file")


def test_a_broken_declaration_file_is_one_line_naming_the_file(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    api_file = site / "core" / "App" / "api.py"
    api_file.write_text(api_file.read_text() + "\ndef broken(:\n")
    url = f"sqlite:///{tmp_path}/site.db"
    assert run("install", database=url).returncode == 0
    line = assert_refused(run("openapi", database=url, env={"PB_SITE_DIR": str(site)}))
    assert str(api_file) in line and "SyntaxError" in line


@pytest.mark.parametrize(
    ("hook", "fragment"),
    [
        ("examples.site.console", "is not MODULE:ATTRIBUTE"),
        ("no_such_module_here:api", "no module named"),
        ("examples.site.console:nothing", "no callable 'nothing'"),
        ("examples.site.config:EXAMPLE_DIR", "no callable"),
        ("builtins:repr", "returned str, not a HeadlessAPI"),
    ],
)
def test_a_bad_hook_is_one_line(tmp_path, hook, fragment):
    url = f"sqlite:///{tmp_path}/site.db"
    assert run("install", database=url).returncode == 0
    assert_refused(run("openapi", database=url, env={"PB_APP": hook}), fragment)


async def test_components_of_the_entry_point_group_are_in_the_document(tmp_path):
    # An installed distribution announcing a component, as a satellite package's metadata does.
    packages = tmp_path / "packages"
    info = packages / "pb_writers-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pb-writers\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[pb_headless.components]\nwriters = {COMPONENT}:setup\n")
    url = f"sqlite:///{tmp_path}/site.db"
    async with open_site(url, logged_in=False):  # the tables the component publishes
        pass
    printed = run("openapi", database=url, env={"PYTHONPATH": str(packages)})
    assert "/objects/writers" in document(printed)["paths"]

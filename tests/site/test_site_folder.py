"""The site folder and the environment: PB_SITE_DIR's core/App files, custom routes, PB_COMPONENTS."""

from __future__ import annotations

from pathlib import Path

import pytest

from examples.site.config import EXAMPLE_DIR, ConfigError, SiteConfig
from tests.site.harness import copy_site_folder, open_site


async def test_the_configuration_comes_from_the_environment(tmp_path):
    site = copy_site_folder(tmp_path / "site")
    config = SiteConfig.from_environment(
        {
            "PB_SITE_DIR": str(site),
            "PB_REDIS_URL": "redis://127.0.0.1:6379/0",
            "PB_TRUSTED_PROXIES": "10.0.0.0/8",
            "PB_COMPONENTS": "shop.api, blog.api,",
            "PB_DOCS_VIEWER_URL": "https://cdn.example/swagger",
            "PB_SECRET_KEY": "k" * 40,
        }
    )
    assert config.site_dir == site.resolve()
    assert config.database_url == f"sqlite:///{site.resolve() / 'site.db'}"
    assert config.components == ("shop.api", "blog.api")
    assert (config.redis_url, config.trusted_proxies) == ("redis://127.0.0.1:6379/0", "10.0.0.0/8")
    assert config.docs_viewer_url == "https://cdn.example/swagger" and config.secret_key == "k" * 40
    assert SiteConfig.from_environment({}).site_dir == EXAMPLE_DIR


async def test_a_site_folder_without_a_declaration_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="PB_SITE_DIR"):
        SiteConfig.from_environment({"PB_SITE_DIR": str(tmp_path)})


async def test_the_custom_routes_of_the_site_folder_are_served_behind_their_guard(sqlite_database):
    async with open_site(str(sqlite_database.url)) as browser:
        reader = await browser.create_token("reader", "articles.read")
        other = await browser.create_token("other", "authors.read")
        answer = await browser.api("/reports/categories", reader)
        refused = await browser.api("/reports/categories", other)
    assert answer.status_code == 200
    assert answer.json()["data"] == [
        {"category": "guides", "articles": 1},
        {"category": "news", "articles": 2},
        {"category": "reviews", "articles": 1},
    ]
    assert refused.status_code == 403 and refused.json()["required_scope"] == "articles.read"


async def test_components_named_in_the_environment_register_their_objects(sqlite_database):
    async with open_site(str(sqlite_database.url), components=("tests.site.satellite",)) as browser:
        plain = await browser.create_token("app", "writers.read")
        listing = await browser.api("/objects/writers?sort=name", plain)
    assert [row["name"] for row in listing.json()["data"]] == ["Anna Pavlova", "Борис Иванов"]


async def test_another_site_folder_is_served_with_its_own_declarations(sqlite_database, tmp_path):
    site: Path = copy_site_folder(tmp_path / "site")
    api_file = site / "core" / "App" / "api.py"
    api_file.write_text(api_file.read_text().replace('API = {\n    "articles"', 'API = {\n    "posts"'))
    async with open_site(str(sqlite_database.url), site_dir=site) as browser:
        plain = await browser.create_token("app", "posts.read,articles.read")
        objects = [item["name"] for item in (await browser.api("/objects", plain)).json()["data"]]
        assert objects == ["posts"]
        assert (await browser.api("/objects/posts/2", plain)).json()["data"]["title"] == "Новости компании"
    async with open_site(str(sqlite_database.url)) as browser:  # the example's own folder again, same process
        plain = await browser.create_token("again", "articles.read")
        assert (await browser.api("/objects/articles/2", plain)).status_code == 200

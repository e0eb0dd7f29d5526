"""What the example site hands to the console script `pb-headless`: its own API, built on the
console's database, so `pb-headless openapi` prints what the site serves (constructor tables and
components included) and `token create --user ID` checks the id among the site's users.

    export PB_APP=examples.site.console:headless_api    # from the repository's root
"""

from __future__ import annotations

from databases import Database

from examples.site.app import build_api
from examples.site.config import SiteConfig
from examples.site.site_folder import SiteFolder
from examples.site.users import UserStore
from pb_headless import HeadlessAPI


def headless_api(database: Database) -> HeadlessAPI:
    """The site's API as `create_site` builds it, configured from the same environment."""
    config = SiteConfig.from_environment()
    folder = SiteFolder(config.site_dir)
    folder.activate()
    return build_api(config, folder, database, UserStore(database))

"""The site's configuration, read from the environment only (docs/library.md: env wins over any file)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

EXAMPLE_DIR = Path(__file__).resolve().parent
DEFAULT_DATABASE_FILE = "site.db"


class ConfigError(ValueError):
    """A configuration value cannot be used; the message names the variable."""


@dataclass(frozen=True)
class SiteConfig:
    """Everything the site reads from its environment; see docs/example-site.md for each variable."""

    site_dir: Path = EXAMPLE_DIR
    database_url: str = ""
    redis_url: str | None = None
    trusted_proxies: str = ""
    components: tuple[str, ...] = ()
    docs_viewer_url: str | None = None
    secret_key: str | None = None
    drain_seconds: float = 0.0  # after SIGTERM, before shutting down (examples/site/draining.py)

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", f"sqlite:///{self.site_dir / DEFAULT_DATABASE_FILE}")

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, *, declarations: bool = True
    ) -> SiteConfig:
        """`declarations=False` (for `init`, which writes a starting one) accepts a site folder
        without core/App/api.py."""
        env = os.environ if environ is None else environ
        site_dir = Path(env.get("PB_SITE_DIR") or EXAMPLE_DIR).expanduser().resolve()
        if not site_dir.is_dir():
            raise ConfigError(f"PB_SITE_DIR: the folder {site_dir} does not exist")
        if declarations and not (site_dir / "core" / "App" / "api.py").is_file():
            raise ConfigError(
                f"PB_SITE_DIR: {site_dir} has no core/App/api.py (`python -m examples.site init` writes one)"
            )
        database_url = (env.get("PB_DATABASE_URL") or "").strip()
        if database_url:
            check_database_url(database_url)
        return cls(
            site_dir=site_dir,
            database_url=database_url,
            redis_url=(env.get("PB_REDIS_URL") or "").strip() or None,
            trusted_proxies=(env.get("PB_TRUSTED_PROXIES") or "").strip(),
            components=tuple(
                name.strip() for name in (env.get("PB_COMPONENTS") or "").split(",") if name.strip()
            ),
            docs_viewer_url=(env.get("PB_DOCS_VIEWER_URL") or "").strip() or None,
            secret_key=(env.get("PB_SECRET_KEY") or "").strip() or None,
            drain_seconds=drain_seconds(env.get("PB_DRAIN_SECONDS") or ""),
        )

    @property
    def app_dir(self) -> Path:
        return self.site_dir / "core" / "App"

    @property
    def database_label(self) -> str:
        """The database as the console shows it: never a password."""
        scheme, _, rest = self.database_url.partition("://")
        credentials, at, host = rest.rpartition("@")
        if at and ":" in credentials:
            return f"{scheme}://{credentials.split(':', 1)[0]}:***@{host}"
        return self.database_url


def drain_seconds(written: str) -> float:
    if not written.strip():
        return 0.0
    try:
        seconds = float(written)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 300:
        raise ConfigError(f"PB_DRAIN_SECONDS: {written!r} is not a number of seconds from 0 to 300")
    return seconds


def check_database_url(url: str) -> None:
    """Refuse what cannot work before connecting: a non-URL, or a SQLite file in a missing folder
    (aiosqlite would report that only from its worker thread)."""
    if "://" not in url:
        raise ConfigError(f"PB_DATABASE_URL: {url!r} is not a URL such as sqlite:///site.db")
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :].split("?", 1)[0]
        if path and path != ":memory:" and not Path(path).parent.is_dir():
            raise ConfigError(f"PB_DATABASE_URL: the folder {Path(path).parent} does not exist")

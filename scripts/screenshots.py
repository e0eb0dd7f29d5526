#!/usr/bin/env python
"""Screenshots of every administration page of examples/site at 1280 px and 390 px wide.

    .venv/bin/python scripts/screenshots.py [OUTPUT_FOLDER]     (default: /tmp/pb-screenshots)

Starts a fresh site on SQLite, signs in, makes a table, records and a token through the pages
themselves, and writes `<page>-1280.png` and `<page>-390.png` (full page) for each page, plus the
docs page with Swagger UI (swagger-ui-dist from the npm registry, served locally) and its
fallback. Prints each page's width overflow, which must be 0. The PNG files are not committed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.browser.site_tour import PAGES, create_token, overflow, populate, running_site, sign_in
from tests.openapi.serving import free_port, serving

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
WIDTHS = {1280: 800, 390: 844}


def swagger_files(folder: Path) -> Path | None:
    done = subprocess.run(
        ["npm", "install", "--prefix", str(folder), "--ignore-scripts", "--no-audit", "--no-fund",
         "--loglevel", "error", "swagger-ui-dist@5"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    files = folder / "node_modules" / "swagger-ui-dist"
    return files if done.returncode == 0 and (files / "swagger-ui-bundle.js").exists() else None


def shoot(browser, url: str, out: Path, only_fallback: bool = False) -> list[str]:
    problems = []
    for width, height in WIDTHS.items():
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        sign_in(page, url)
        if only_fallback:
            page.route("**/swagger-ui-bundle.js", lambda route: route.abort("internetdisconnected"))
            page.goto(f"{url}/mgr/pb/docs?ctx=mgr")
            page.locator("#viewer-fallback").wait_for(state="visible", timeout=8000)
            shots = [("docs-fallback", page)]
        else:
            shots = []
        for name, path in [] if only_fallback else PAGES:
            page.goto(url + path)
            if name == "docs":
                page.wait_for_selector(".swagger-ui .opblock", timeout=20000)
                page.locator(".opblock-summary").first.click()
                page.wait_for_timeout(500)
            page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
            page.screenshot(path=str(out / f"{name}-{width}-top.png"))  # the first screen, readable
            if overflow(page) > 0:
                problems.append(f"{name} at {width}px is {overflow(page)}px too wide: {widest(page)}")
        for name, shot in shots:
            shot.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
        if not only_fallback:
            create_token(page, url, f"shown at {width}", ["*"])
            page.screenshot(path=str(out / f"token-reveal-{width}.png"), full_page=True)
            page.reload()
            page.screenshot(path=str(out / f"token-reveal-again-{width}.png"), full_page=True)
            page.goto(f"{url}/mgr/logout")  # a GET: answered 405, just to see nothing breaks
        context.close()
    return problems


def widest(page) -> str:
    """The elements sticking out of the viewport, to know what to fix."""
    return str(
        page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .slice(-4).map(e => e.tagName.toLowerCase() + '.' + [...e.classList].join('.')
                        + ' ' + Math.round(e.getBoundingClientRect().right))""")
    )


def main() -> int:
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/pb-screenshots")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        files = swagger_files(work / "npm")
        if files is None:
            print("npm could not install swagger-ui-dist: the docs page shows its fallback", file=sys.stderr)
        port = free_port()
        viewer = f"http://127.0.0.1:{port}"
        static = [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory",
                  str(files or work)]  # fmt: skip
        with (
            serving(static, f"{viewer}/", work / "viewer.log"),
            running_site(work / "site", viewer) as site,
            sync_playwright() as playwright,
        ):
            if True:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                page = browser.new_page()
                page.goto(f"{site.url}/mgr/login")
                page.screenshot(path=str(out / "login-1280.png"), full_page=True)
                sign_in(page, site.url)
                page.goto(f"{site.url}/mgr/constructor")
                page.screenshot(path=str(out / "constructor-empty-1280.png"), full_page=True)
                page.goto(f"{site.url}/mgr/pb/tables")
                page.screenshot(path=str(out / "api-tabs-empty-1280.png"), full_page=True)
                populate(page, site.url)
                problems = shoot(browser, site.url, out) + shoot(browser, site.url, out, only_fallback=True)
                browser.close()
    for line in problems:
        print(line)
    print(f"screenshots in {out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

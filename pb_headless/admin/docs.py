"""The documentation endpoints of the administration area (docs/admin.md): the docs page and the full
document.

`/docs?ctx=mgr` serves Swagger UI, whose files come from a CDN, from `viewer_url`, or from the site
itself under `/viewer` when the `viewer` extra is installed (viewer.py); when they do not load, the
page explains that, says how to serve them from the site, and gives the specification's address.
`/openapi.json?ctx=mgr` serves the full document, with `servers` pointing at the API on this host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from pb_headless.admin.access import CurrentAdmin, admin_of, login_redirect
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer
from pb_headless.admin.viewer import LOCAL_PATH, Viewer
from pb_headless.admin.viewer import SWAGGER_UI_CDN as SWAGGER_UI_CDN  # where it was read from before
from pb_headless.errors import NotFound, Unauthorized, error_response
from pb_headless.http.responses import NO_STORE, json_response
from pb_headless.openapi import full_document

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

# How long the page waits for the viewer before it explains; docs/admin.md promises "a few seconds".
VIEWER_TIMEOUT_MS = 3000
CONTEXT = "mgr"
_NOT_FOUND_PAGE = "<!doctype html><title>Not found</title><p>Nothing was found at this address.</p>"
_SIGN_IN_PAGE = (
    "<!doctype html><title>Sign in required</title><p>Sign in to the administration area first.</p>"
)


def docs_routes(
    api: HeadlessAPI,
    current_admin: CurrentAdmin,
    login_url: str | None,
    viewer_url: str | None = None,
    renderer: Renderer | None = None,
    local_viewer: bool | None = None,
) -> list[BaseRoute]:
    """`/docs` and `/openapi.json` (and `/viewer/…` when the site serves the viewer's files), relative
    to where the host mounts the admin area (`/mgr/pb`).

    `renderer` is the admin app's (so the page shares the host's layout); alone, the page uses the
    library's own layout and needs no session. `local_viewer`: None serves the viewer's files from
    the site when the `viewer` extra is installed and no `viewer_url` is given; True requires them.
    """
    viewer = Viewer.choose(viewer_url, local_viewer)
    docs = DocsEndpoints(
        api, current_admin, login_url, viewer, renderer or Renderer((), None, sessionless=True)
    )
    routes: list[BaseRoute] = [
        Route("/docs", docs.page, methods=["GET"]),
        Route("/openapi.json", docs.specification, methods=["GET"]),
    ]
    if viewer.files is not None:
        routes.append(Mount(LOCAL_PATH, StaticFiles(directory=viewer.files), name="viewer"))
    return routes


class DocsEndpoints:
    def __init__(
        self,
        api: HeadlessAPI,
        current_admin: CurrentAdmin,
        login_url: str | None,
        viewer: Viewer | str,
        renderer: Renderer,
    ) -> None:
        self.api = api
        self.current_admin = current_admin
        self.login_url = login_url
        self.viewer = viewer if isinstance(viewer, Viewer) else Viewer.choose(viewer, False)
        self.renderer = renderer

    async def page(self, request: Request) -> Response:
        if request.query_params.get("ctx") != CONTEXT:
            return HTMLResponse(_NOT_FOUND_PAGE, status_code=404, headers=PAGE_HEADERS)
        admin = await admin_of(self.current_admin, request)
        if admin is None:
            if self.login_url is None:
                return HTMLResponse(_SIGN_IN_PAGE, status_code=401, headers=PAGE_HEADERS)
            return login_redirect(self.login_url, request)
        request.state.admin = admin
        root = request.scope.get("root_path", "").rstrip("/")
        origin = self.api.origin(request)
        context = {
            "spec_url": f"{origin}{root}/openapi.json?ctx={CONTEXT}",
            "api_url": f"{origin}{self.api.prefix}",
            "viewer_url": self.viewer.address(root),
            "viewer_remedy": self.viewer.remedy() if self.viewer.files is None else None,
            "timeout_ms": VIEWER_TIMEOUT_MS,
        }
        return self.renderer.page(request, "docs.html", context)

    async def specification(self, request: Request) -> Response:
        if request.query_params.get("ctx") != CONTEXT:
            return error_response(NotFound(), headers={"Cache-Control": NO_STORE})
        if await admin_of(self.current_admin, request) is None:
            return error_response(
                Unauthorized("Sign in to the administration area to read the specification.")
            )
        snapshot = await self.api.snapshot()  # the current registry version, as a request would see it
        document = full_document(self.api, f"{self.api.origin(request)}{self.api.prefix}", snapshot)
        return json_response(document, cache=NO_STORE)

"""The settings page of the `service_cors_*` keys (docs/cors-and-rate-limits.md), with their checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin.access import form_of, text
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer, flash
from pb_headless.cors import CorsPolicy
from pb_headless.settings import SETTING_CHECKS as CHECKS
from pb_headless.settings import is_on
from pb_headless.settings import setting_items as _items
from pb_headless.tables import DEFAULT_SETTINGS

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

KEYS = (
    "service_cors_origins",
    "service_cors_paths",
    "service_cors_methods",
    "service_cors_headers",
    "service_cors_credentials",
    "service_cors_max_age",
)


def values_from_form(form: FormData) -> tuple[dict[str, str], dict[str, str]]:
    """The submitted settings, normalised, and an error per key that failed its check."""
    values = {key: ",".join(_items(text(form, key))) for key in KEYS if key in CHECKS}
    values["service_cors_credentials"] = "yes" if text(form, "service_cors_credentials") else "no"
    errors = {key: problem for key in values if (problem := CHECKS[key](values[key]))}
    return values, errors


class CorsSettingsPage:
    """`/settings/cors`: shows the current values and the policy's warnings; saves what changed."""

    def __init__(self, api: HeadlessAPI, renderer: Renderer) -> None:
        self.settings = api.settings
        self.renderer = renderer

    def routes(self, guard: Callable[[Any], Any]) -> list[Route]:
        return [
            Route("/settings/cors", guard(self.show), methods=["GET"]),
            Route("/settings/cors", guard(self.save), methods=["POST"]),
        ]

    async def show(
        self, request: Request, *, values: dict[str, str] | None = None, errors: dict[str, str] | None = None
    ) -> Response:
        stored = await self._current()
        shown = values or stored
        policy = CorsPolicy.from_settings(stored)
        return self.renderer.page(
            request,
            "cors.html",
            {
                "values": shown,
                "errors": errors or {},
                "credentials": is_on(shown.get("service_cors_credentials")),
                "warnings": policy.warnings(),
                "enabled": policy.enabled,
                "defaults": DEFAULT_SETTINGS,
            },
            422 if errors else 200,
        )

    async def save(self, request: Request) -> Response:
        values, errors = values_from_form(form_of(request))
        if errors:
            return await self.show(request, values=values, errors=errors)
        stored = await self._current()
        for key, value in values.items():
            if (
                stored.get(key) != value
            ):  # each write moves the shared version; skip the ones that did not change
                await self.settings.set(key, value)
        flash(request, "CORS settings saved.")
        return RedirectResponse(request.url.path, status_code=303, headers=PAGE_HEADERS)

    async def _current(self) -> dict[str, str]:
        stored = await self.settings.all()
        return {
            key: stored.get(key, "" if key == "service_cors_origins" else DEFAULT_SETTINGS[key])
            for key in KEYS
        }

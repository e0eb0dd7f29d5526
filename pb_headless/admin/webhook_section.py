"""The webhooks section: list endpoints, create one (its secret shown once), edit, enable/disable,
delete, send a test event, the delivery log with redeliver, and the switch for private destinations
(docs/webhooks.md).

Create follows post/redirect/get like a token's: the POST answers 303 to a page that shows the secret
once (`reveal.py`), so a reload never creates a second endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pb_headless.admin import reveal
from pb_headless.admin.access import form_of, text
from pb_headless.admin.rendering import PAGE_HEADERS, Renderer, flash
from pb_headless.settings import is_on
from pb_headless.webhooks.destinations import ALLOW_PRIVATE_SETTING, private_destination_warning
from pb_headless.webhooks.signing import SECRET_PREFIX
from pb_headless.webhooks.store import EVENTS, WebhookError, WebhookStore

if TYPE_CHECKING:
    from pb_headless.api.application import HeadlessAPI

ACTIONS = {"enable": "enabled", "disable": "disabled", "delete": "deleted"}


def _is_secret(plain: str) -> bool:
    return plain.startswith(SECRET_PREFIX) and plain.isascii() and len(plain) < 100


class WebhookSection:
    """Pages under `/webhooks`; every one is wrapped by `Access.page` in `AdminApp`."""

    def __init__(self, api: HeadlessAPI, renderer: Renderer) -> None:
        self.api = api
        self.store = WebhookStore(api.database)
        self.renderer = renderer

    def routes(self, guard: Callable[[Any], Any]) -> list[Route]:
        return [
            Route("/webhooks", guard(self.index), methods=["GET"]),
            Route("/webhooks", guard(self.create), methods=["POST"]),
            Route("/webhooks/secret", guard(self.secret), methods=["GET"]),
            Route("/webhooks/action", guard(self.action), methods=["POST"]),
            Route("/webhooks/edit", guard(self.edit), methods=["GET", "POST"]),
            Route("/webhooks/test", guard(self.test_event), methods=["POST"]),
            Route("/webhooks/deliveries", guard(self.deliveries), methods=["GET"]),
            Route("/webhooks/redeliver", guard(self.redeliver), methods=["POST"]),
            Route("/webhooks/private", guard(self.private), methods=["POST"]),
        ]

    async def index(
        self, request: Request, *, error: str | None = None, values: dict[str, Any] | None = None
    ) -> Response:
        context = {
            "webhooks": await self.store.list(),
            "objects": await self._published(),
            "events": EVENTS,
            "allow_private": is_on(await self.api.settings.get(ALLOW_PRIVATE_SETTING)),
            "error": error,
            "values": values or {"objects": [], "events": list(EVENTS)},
        }
        return self.renderer.page(request, "webhooks.html", context, 422 if error else 200)

    async def create(self, request: Request) -> Response:
        values = _values(form_of(request))
        try:
            webhook, secret = await self.store.create(
                values["name"], **_fields(values), known=await self._catalog()
            )
        except WebhookError as error:
            return await self.index(request, error=_sentence(error), values=values)
        allowed = is_on(await self.api.settings.get(ALLOW_PRIVATE_SETTING))
        warning = private_destination_warning(webhook.url, allowed)
        query = reveal.remember(request, webhook.name, secret, reissued=False, warnings=_sentences(warning))
        return self._to(request, f"/webhooks/secret?{query}")

    async def secret(self, request: Request) -> Response:
        shown = reveal.take(request, accepts=_is_secret)
        name = shown.name if shown else request.query_params.get("name", "")
        return self.renderer.page(
            request, "webhook_secret.html", {"shown": shown, "name": name}, 200 if shown else 410
        )

    async def action(self, request: Request) -> Response:
        form = form_of(request)
        name, action = text(form, "name"), text(form, "action")
        if action not in ACTIONS:
            return self.renderer.error(request, 400, "Bad request", "Unknown action.")
        try:
            await getattr(self.store, action)(name)
        except WebhookError as error:
            flash(request, _sentence(error), "error")
        else:
            flash(request, f"Webhook “{name}” {ACTIONS[action]}.")
        return self._to(request, "/webhooks")

    async def edit(self, request: Request) -> Response:
        """The endpoint's form (URL, objects, events, filter, enabled); saving keeps its secret and log."""
        name = request.query_params.get("name", "")
        try:
            webhook = await self.store.get(name)
        except WebhookError:
            return self.renderer.error(request, 404, "Not found", f"There is no webhook named '{name}'.")
        values: dict[str, Any] = {**webhook.as_dict(), "objects": [o for o in webhook.objects if o != "*"]}
        error = None
        if request.method == "POST":
            values = {**_values(form_of(request)), "name": name}
            try:
                fields = _fields(values)
                await self.store.update(
                    name, **fields, enabled=values["enabled"], known=await self._catalog()
                )
            except WebhookError as refused:
                error = _sentence(refused)
            else:
                flash(request, f"Webhook “{name}” saved; its secret and its delivery log are kept.")
                return self._to(request, "/webhooks")
        context = {
            "webhook": webhook,
            "values": values,
            "objects": await self._published(),
            "events": EVENTS,
            "error": error,
        }
        return self.renderer.page(request, "webhook_edit.html", context, 422 if error else 200)

    async def test_event(self, request: Request) -> Response:
        """Send a test event now and say how the receiver answered; the log shows it too."""
        name = text(form_of(request), "name")
        try:
            delivery = await self.store.send_test(name, known=await self._published())
        except WebhookError as error:
            flash(request, _sentence(error), "error")
            return self._to(request, "/webhooks")
        if delivery.status == "success":
            flash(request, f"Test event {delivery.type} sent: answered {delivery.answer_code}.")
        else:
            flash(request, f"Test event {delivery.type} failed: {delivery.error}.", "error")
        return self._to(request, f"/webhooks/deliveries?name={quote(name)}")

    async def _published(self) -> list[str]:
        return sorted((await self.api.snapshot()).catalog)

    async def _catalog(self) -> dict[str, Any]:
        """The published objects by name: what a new endpoint's objects and filter are checked against."""
        return dict((await self.api.snapshot()).catalog)

    async def deliveries(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        try:
            webhook = await self.store.get(name)
        except WebhookError:
            return self.renderer.error(request, 404, "Not found", f"There is no webhook named '{name}'.")
        context = {"webhook": webhook, "deliveries": await self.store.deliveries(name)}
        return self.renderer.page(request, "webhook_deliveries.html", context)

    async def redeliver(self, request: Request) -> Response:
        form = form_of(request)
        name = text(form, "name")
        try:
            delivery = await self.store.redeliver(text(form, "delivery"))
        except WebhookError as error:
            flash(request, _sentence(error), "error")
        else:
            flash(request, f"Delivery {delivery.id} ({delivery.type}) will be tried again within seconds.")
        return self._to(request, f"/webhooks/deliveries?name={quote(name)}")

    async def private(self, request: Request) -> Response:
        allowed = text(form_of(request), "allow") == "yes"
        await self.api.settings.set(ALLOW_PRIVATE_SETTING, "yes" if allowed else "no")
        flash(request, "Private destinations are " + ("allowed." if allowed else "refused."))
        return self._to(request, "/webhooks")

    @staticmethod
    def _to(request: Request, path: str) -> Response:
        root = request.scope.get("root_path", "").rstrip("/")
        return RedirectResponse(root + path, status_code=303, headers=PAGE_HEADERS)


def _values(form: Any) -> dict[str, Any]:
    """What the create and edit forms hold, as they are shown again when refused."""
    return {
        "name": text(form, "name"),
        "url": text(form, "url"),
        "objects": [item for item in form.getlist("objects") if isinstance(item, str)],
        "events": [item for item in form.getlist("events") if isinstance(item, str)],
        "filter": text(form, "filter"),
        "enabled": text(form, "enabled") == "yes",  # the edit form's; a new endpoint is enabled
    }


def _fields(values: dict[str, Any]) -> dict[str, Any]:
    """The store's keyword arguments from the form's values: no object ticked is every object."""
    if not values["events"]:
        raise WebhookError("choose at least one event")
    return {
        "url": values["url"],
        "objects": values["objects"] or "*",
        "events": values["events"],
        "filter": values["filter"],  # empty: none
    }


def _sentences(warning: str | None) -> tuple[str, ...]:
    return (_sentence(ValueError(warning)),) if warning else ()


def _sentence(error: Exception) -> str:
    message = str(error).strip()
    message = message[:1].upper() + message[1:]
    return message if message.endswith((".", "!", "?")) else message + "."

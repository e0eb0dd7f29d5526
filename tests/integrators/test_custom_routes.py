"""docs/integrators.md: "Integrators may add their own routes … next to the generic ones": what they see
and answer."""

import logging
from decimal import Decimal

import sqlalchemy as sa
from starlette.responses import PlainTextResponse

from pb_headless import BadRequest, NotFound, ValidationFailed, route
from tests.support.demo import articles, authors

API = "/api/pb/v1"
USERS = {"7": {"id": 7, "username": "editor"}, "8": None}  # 8: a user the host has blocked


def load_user(user_id):
    return USERS.get(user_id)


@route("GET", "/whoami", guard="ApiAuth")
async def whoami(request):
    """Who the request runs as."""
    user = request.state.user
    return {
        "token": request.state.token.name,
        "scopes": list(request.state.principal.token.scopes),
        "user": user["username"] if user else None,
        "user_id": request.state.token.user_id,
    }


@route("GET", "/reports/authors", guard="ApiAuth:reports.read")
async def articles_per_author(request):
    """Published articles per author, with their total price: a join and an aggregate."""
    query = (
        sa.select(
            authors.c.name,
            sa.func.count(articles.c.id).label("articles"),
            sa.cast(sa.func.sum(articles.c.price), sa.Numeric(12, 2)).label("total_price"),
        )
        .select_from(articles.join(authors, articles.c.author_id == authors.c.id))
        .where(articles.c.published.is_(True))
        .group_by(authors.c.name)
        .order_by(authors.c.name)
    )
    return {"data": [dict(row._mapping) for row in await request.state.database.fetch_all(query)]}


@route("GET", "/articles/{article_id:int}/summary", guard="ApiAuth:articles.read")
async def article_summary(request):
    article_id = request.path_params["article_id"]
    row = await request.state.database.fetch_one(
        sa.select(articles.c.title).where(articles.c.id == article_id, articles.c.published.is_(True))
    )
    if row is None:
        raise NotFound(f"There is no article {article_id}.")
    return {"id": article_id, "title": row.title}


@route("POST", "/articles/{article_id:int}/summary", guard="ApiAuth:articles.write")
async def check_summary(request):
    body = await request.json() if await request.body() else None
    if not isinstance(body, dict):
        raise BadRequest("Send a JSON object.")
    if not str(body.get("summary", "")).strip():
        raise ValidationFailed({"summary": ["The summary field is required."]})
    return {"accepted": body["summary"], "by": request.state.token.name}


@route("GET", "/texts/plain")
async def plain_text(request):
    return PlainTextResponse("plain words", headers={"X-Custom": "yes"})


@route("DELETE", "/texts/plain")
async def nothing(request):
    return None


@route("GET", "/texts/list")
def a_list(request):  # a plain function is accepted as well
    return [1, Decimal("2.50"), "three"]


@route("GET", "/broken")
async def broken(request):
    raise RuntimeError("SELECT secret FROM /srv/site/passwords")


ROUTES = [whoami, articles_per_author, article_summary, check_summary, plain_text, nothing, a_list, broken]


async def test_a_route_reads_the_token_and_its_acting_user_from_the_hosts_loader(database, routed_host):
    host = await routed_host(database, ROUTES, user_loader=load_user)
    plain = await host.token("reports.read", name="app", user_id=7)
    response = await host.client.get(API + "/whoami", headers=host.auth(plain))
    assert response.status_code == 200
    assert response.json() == {"token": "app", "scopes": ["reports.read"], "user": "editor", "user_id": "7"}


async def test_an_async_user_loader_is_awaited(sqlite_database, routed_host):
    async def load(user_id):
        return {"id": int(user_id), "username": f"user-{user_id}"}

    host = await routed_host(sqlite_database, ROUTES, user_loader=load)
    plain = await host.token("*", user_id=42)
    assert (await host.client.get(API + "/whoami", headers=host.auth(plain))).json()["user"] == "user-42"


async def test_a_token_whose_acting_user_is_blocked_or_gone_answers_401(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES, user_loader=load_user)
    for user_id in (8, 9):
        plain = await host.token("*", user_id=user_id)
        response = await host.client.get(API + "/whoami", headers=host.auth(plain))
        assert response.status_code == 401
        assert response.json()["error"] == "unauthorized"
        assert response.headers["www-authenticate"] == 'Bearer realm="pb_headless"'


async def test_a_token_without_an_acting_user_runs_as_nobody(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES, user_loader=load_user)
    plain = await host.token("*", name="service")
    assert (await host.client.get(API + "/whoami", headers=host.auth(plain))).json() == {
        "token": "service",
        "scopes": ["*"],
        "user": None,
        "user_id": None,
    }


async def test_a_route_runs_a_join_and_an_aggregate_on_the_same_database(database, routed_host):
    host = await routed_host(database, ROUTES)
    plain = await host.token("reports.read")
    response = await host.client.get(API + "/reports/authors", headers=host.auth(plain))
    assert response.status_code == 200
    # Anna: articles 1, 3, 6, 7 (5 is unpublished); Boris: article 2. Decimals render as strings.
    assert response.json() == {
        "data": [
            {"name": "Anna", "articles": 4, "total_price": "135.49"},
            {"name": "Boris", "articles": 1, "total_price": "10.00"},
        ]
    }
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "private, no-cache"


async def test_a_route_sees_rows_written_through_the_generic_endpoints(database, routed_host):
    host = await routed_host(database, ROUTES)
    plain = await host.token("*")
    await database.execute(
        articles.insert().values(id=20, title="Fresh", author_id=2, price=Decimal("1.50"), published=True)
    )
    response = await host.client.get(API + "/reports/authors", headers=host.auth(plain))
    assert response.json()["data"][1] == {"name": "Boris", "articles": 2, "total_price": "11.50"}


async def test_path_parameters_are_converted_and_errors_render_the_envelope(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token("articles.*")
    found = await host.client.get(API + "/articles/1/summary", headers=host.auth(plain))
    assert found.json() == {"id": 1, "title": "Hello world"}
    missing = await host.client.get(API + "/articles/5/summary", headers=host.auth(plain))
    assert missing.status_code == 404
    assert missing.json() == {"error": "not_found", "message": "There is no article 5."}
    not_an_int = await host.client.get(API + "/articles/abc/summary", headers=host.auth(plain))
    assert not_an_int.status_code == 404
    assert not_an_int.json()["error"] == "not_found"


async def test_a_validation_error_raised_in_a_route_is_a_422_with_details(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token("articles.*", name="writer")
    url = API + "/articles/1/summary"
    invalid = await host.client.post(url, headers=host.auth(plain), json={"summary": " "})
    assert invalid.status_code == 422
    assert invalid.json() == {
        "error": "validation_failed",
        "message": "The given data was invalid.",
        "details": {"summary": ["The summary field is required."]},
    }
    bad = await host.client.post(
        url, headers={**host.auth(plain), "Content-Type": "application/json"}, content=b"[1]"
    )
    assert bad.status_code == 400
    assert bad.json() == {"error": "bad_request", "message": "Send a JSON object."}
    ok = await host.client.post(url, headers=host.auth(plain), json={"summary": "Short"})
    assert ok.json() == {"accepted": "Short", "by": "writer"}


async def test_an_unexpected_exception_in_a_route_is_a_500_that_reveals_nothing(
    sqlite_database, routed_host, caplog
):
    host = await routed_host(sqlite_database, ROUTES)
    plain = await host.token("*")
    with caplog.at_level(logging.ERROR, logger="pb_headless"):
        response = await host.client.get(API + "/broken", headers=host.auth(plain))
    assert response.status_code == 500
    assert response.json()["error"] == "server_error"
    assert "SELECT" not in response.text and "/srv" not in response.text and "Traceback" not in response.text
    assert response.json()["request_id"] in caplog.text
    assert "x-ratelimit-limit" in response.headers


async def test_a_route_may_answer_with_a_response_a_list_or_nothing(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    auth = host.auth(await host.token("*"))
    text = await host.client.get(API + "/texts/plain", headers=auth)
    assert (text.status_code, text.text, text.headers["x-custom"]) == (200, "plain words", "yes")
    assert "x-ratelimit-remaining" in text.headers
    listed = await host.client.get(API + "/texts/list", headers=auth)
    assert listed.json() == [1, "2.50", "three"]
    deleted = await host.client.delete(API + "/texts/plain", headers=auth)
    assert (deleted.status_code, deleted.content) == (204, b"")


async def test_a_method_the_route_does_not_serve_answers_405_with_allow(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    auth = host.auth(await host.token("*"))
    response = await host.client.put(API + "/texts/plain", headers=auth)
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    assert response.headers["allow"] == "DELETE, GET, HEAD, OPTIONS"
    only_get = await host.client.patch(API + "/whoami", headers=auth)
    assert only_get.headers["allow"] == "GET, HEAD, OPTIONS"


async def test_head_works_where_get_does_and_a_trailing_slash_is_the_same_route(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    auth = host.auth(await host.token("*", name="t"))
    head = await host.client.head(API + "/whoami", headers=auth)
    assert (head.status_code, head.content) == (200, b"")
    slash = await host.client.get(API + "/whoami/", headers=auth)
    assert slash.json()["token"] == "t"


async def test_an_unknown_path_is_404_with_a_live_token_and_401_without(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    auth = host.auth(await host.token("*"))
    known_prefix = await host.client.get(API + "/whoami/more", headers=auth)
    assert (known_prefix.status_code, known_prefix.json()["error"]) == (404, "not_found")
    assert (await host.client.get(API + "/whoami/more")).status_code == 401


async def test_the_guard_runs_only_after_the_method_is_known(sqlite_database, routed_host):
    host = await routed_host(sqlite_database, ROUTES)
    auth = host.auth(await host.token("authors.read"))
    assert (await host.client.delete(API + "/reports/authors", headers=auth)).status_code == 405
    assert (await host.client.get(API + "/reports/authors", headers=auth)).status_code == 403


async def test_routes_come_from_a_module_or_a_file_of_the_site(sqlite_database, routed_host, tmp_path):
    routes_file = tmp_path / "routes.py"
    routes_file.write_text(
        "from dataclasses import dataclass\n"
        "from pb_headless import route\n\n"
        "@dataclass\nclass Greeting:\n    text: str\n\n"
        "@route('GET', '/hello', guard='ApiAuth')\n"
        "async def hello(request):\n    return {'greeting': Greeting('hi').text}\n"
    )
    host = await routed_host(sqlite_database, [routes_file, str(routes_file)])  # one route, given twice
    auth = host.auth(await host.token("*"))
    assert (await host.client.get(API + "/hello", headers=auth)).json() == {"greeting": "hi"}
    assert [definition.path for definition in host.api.routes] == ["/hello"]


def test_a_route_keeps_what_the_openapi_document_needs():
    definition = article_summary.__pb_route__[0]
    assert (definition.method, definition.path, definition.template) == (
        "GET",
        "/articles/{article_id:int}/summary",
        "/articles/{article_id}/summary",
    )
    assert definition.param_names == ("article_id",)
    assert articles_per_author.__pb_route__[0].summary.startswith("Published articles per author")
    assert articles_per_author.__pb_route__[0].guard.scope == "reports.read"

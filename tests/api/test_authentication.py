"""docs/authentication.md, docs/endpoints.md (order of checks) and docs/authentication.md, on every
database."""

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry
from pb_headless.tables import tokens as tokens_table
from tests.support.demo import create_demo, demo_registry

API = "/api/pb/v1"


def assert_unauthorized(response):
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert response.headers["www-authenticate"] == 'Bearer realm="pb_headless"'
    assert response.headers["cache-control"] == "no-store"
    assert set(response.json()) == {"error", "message"}


async def test_every_endpoint_but_health_answers_401_while_no_token_exists(demo):
    for path in ("/me", "/objects", "/objects/articles", "/objects/articles/1", "/openapi.json", "/nowhere"):
        assert_unauthorized(await demo.client.get(API + path))
    assert (await demo.client.get(API + "/health")).status_code == 200


async def test_every_endpoint_answers_401_while_no_object_is_published(database, host_factory):
    host = await host_factory(database, ApiRegistry())
    plain = await host.token("*")
    for path in ("/me", "/objects", "/objects/articles", "/nowhere"):
        assert_unauthorized(await host.client.get(API + path, headers=host.auth(plain)))


async def test_an_expired_or_disabled_last_token_makes_the_api_dormant_again(demo):
    plain = await demo.token("*", name="only")
    assert (await demo.client.get(API + "/me", headers=demo.auth(plain))).status_code == 200
    await demo.tokens.disable("only")
    assert_unauthorized(await demo.client.get(API + "/me", headers=demo.auth(plain)))


async def test_bearer_and_x_api_key_both_authenticate(demo):
    plain = await demo.token("*")
    for headers in (
        {"Authorization": f"Bearer {plain}"},
        {"Authorization": f"bearer {plain}"},
        {"Authorization": f"BEARER {plain}"},
        {"X-API-Key": plain},
        {"Authorization": f"Bearer {plain}", "X-API-Key": plain},
    ):
        response = await demo.client.get(API + "/me", headers=headers)
        assert response.status_code == 200, headers


async def test_two_different_tokens_in_the_two_headers_are_a_bad_request(demo):
    one, two = await demo.token("*"), await demo.token("*")
    response = await demo.client.get(
        API + "/me", headers={"Authorization": f"Bearer {one}", "X-API-Key": two}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "bad_request"


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer nonsense"},
        {"X-API-Key": "pb_" + "a" * 46},
        {"Authorization": "Token abc"},
    ],
)
async def test_a_missing_or_bad_token_is_401(demo, headers):
    await demo.token("*")
    assert_unauthorized(await demo.client.get(API + "/me", headers=headers))


async def test_disabled_expired_and_reissued_tokens_are_rejected_at_once(demo):
    disabled = await demo.token("*", name="disabled")
    await demo.tokens.disable("disabled")
    assert_unauthorized(await demo.client.get(API + "/me", headers=demo.auth(disabled)))

    expiring = await demo.token("*", name="expiring", expires_at=datetime.now(UTC) + timedelta(days=1))
    past = (datetime.now(UTC) - timedelta(seconds=5)).replace(tzinfo=None)
    await demo.database.execute(
        tokens_table.update().where(tokens_table.c.name == "expiring").values(expires_at=past)
    )
    assert_unauthorized(await demo.client.get(API + "/me", headers=demo.auth(expiring)))

    old = await demo.token("*", name="app")
    assert (await demo.client.get(API + "/me", headers=demo.auth(old))).status_code == 200
    _, new = await demo.tokens.reissue("app")
    assert_unauthorized(await demo.client.get(API + "/me", headers=demo.auth(old)))
    assert (await demo.client.get(API + "/me", headers=demo.auth(new))).status_code == 200


async def test_a_reenabled_token_works_again(demo):
    plain = await demo.token("*", name="app")
    await demo.token("*", name="other")
    await demo.tokens.disable("app")
    assert_unauthorized(await demo.client.get(API + "/me", headers=demo.auth(plain)))
    await demo.tokens.enable("app")
    assert (await demo.client.get(API + "/me", headers=demo.auth(plain))).status_code == 200


async def test_a_token_whose_acting_user_is_blocked_or_deleted_is_401(database, host_factory):
    await create_demo(database)
    users = {"1": {"id": 1, "username": "editor"}}
    host = await host_factory(database, demo_registry(), user_loader=lambda user_id: users.get(user_id))
    plain = await host.token("*", user_id=1)
    response = await host.client.get(API + "/me", headers=host.auth(plain))
    assert response.json()["data"]["user"] == {"id": 1, "username": "editor"}
    del users["1"]
    assert_unauthorized(await host.client.get(API + "/me", headers=host.auth(plain)))


async def test_an_async_user_loader_is_awaited(database, host_factory):
    await create_demo(database)

    async def load(user_id):
        return {"id": int(user_id), "username": "async-editor"}

    host = await host_factory(database, demo_registry(), user_loader=load)
    plain = await host.token("*", user_id="5")
    response = await host.client.get(API + "/me", headers=host.auth(plain))
    assert response.json()["data"]["user"] == {"id": 5, "username": "async-editor"}


async def test_an_object_the_token_cannot_reach_does_not_exist_for_it(demo):
    plain = await demo.token("authors.read")
    for path in ("/objects/articles", "/objects/articles/1", "/objects/nothing", "/objects/nothing/1"):
        response = await demo.client.get(API + path, headers=demo.auth(plain))
        assert response.status_code == 404, path
        assert response.json()["error"] == "unknown_object"


async def test_object_names_are_case_sensitive(demo):
    plain = await demo.token("*")
    response = await demo.client.get(API + "/objects/Articles", headers=demo.auth(plain))
    assert response.json()["error"] == "unknown_object"


async def test_a_token_reaching_an_object_without_the_operation_scope_gets_403(demo):
    plain = await demo.token("articles.write")
    response = await demo.client.get(API + "/objects/articles", headers=demo.auth(plain))
    assert response.status_code == 403
    assert response.json() == {
        "error": "forbidden",
        "message": response.json()["message"],
        "required_scope": "articles.read",
    }
    assert response.headers["cache-control"] == "no-store"


async def test_an_operation_the_object_does_not_allow_is_405_before_the_scope_check(demo):
    plain = await demo.token("authors.read")
    response = await demo.client.post(API + "/objects/authors", headers=demo.auth(plain), json={"name": "x"})
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    assert "GET" in response.headers["allow"] and "POST" not in response.headers["allow"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/objects/articles/1"),
        ("PATCH", "/objects/articles"),
        ("DELETE", "/objects/articles"),
        ("PUT", "/objects/articles"),
        ("PUT", "/objects/articles/1"),
        ("FOO", "/objects/articles"),
        ("TRACE", "/objects/articles/1"),
        ("POST", "/me"),
        ("DELETE", "/objects"),
    ],
)
async def test_a_method_a_path_does_not_serve_is_405_with_allow(demo, method, path):
    plain = await demo.token("*")
    response = await demo.client.request(method, API + path, headers=demo.auth(plain))
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
    assert response.headers["allow"]


async def test_an_unknown_path_is_401_without_a_token_and_404_with_one(demo):
    plain = await demo.token("*")
    assert_unauthorized(await demo.client.get(API + "/nothing/here"))
    response = await demo.client.get(API + "/nothing/here", headers=demo.auth(plain))
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


async def test_a_trailing_slash_addresses_the_same_resource(demo):
    plain = await demo.token("*")
    assert (await demo.client.get(API + "/me/", headers=demo.auth(plain))).status_code == 200
    assert (await demo.client.get(API + "/objects/", headers=demo.auth(plain))).status_code == 200


async def test_head_works_wherever_get_does(demo):
    plain = await demo.token("*")
    response = await demo.client.head(API + "/me", headers=demo.auth(plain))
    assert response.status_code == 200
    assert response.content == b""


async def test_last_used_at_is_recorded(demo):
    plain = await demo.token("*", name="app")
    await demo.client.get(API + "/me", headers=demo.auth(plain))
    used = await demo.database.fetch_val(
        sa.select(tokens_table.c.last_used_at).where(tokens_table.c.name == "app")
    )
    assert used is not None

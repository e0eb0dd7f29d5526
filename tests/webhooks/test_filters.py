"""A filtered endpoint (docs/webhooks.md, "Filtered endpoints"): `<object>.create|update` for a changed
row its filter selects now, `<object>.delete` with a null record for any other change of the object,
so a receiver drops a row that left the selection. A filter that does not apply is refused when the
endpoint is registered."""

from __future__ import annotations

import pytest

from pb_headless.webhooks.selection import WebhookError
from tests.support.demo import articles
from tests.webhooks.changes import create_row, delete_row, update_row

NEWS = "filter[category]=news"


def events(site) -> list[tuple[str, int, object]]:
    posts = sorted(site.receiver.received, key=lambda post: post.headers["webhook-timestamp"])
    return sorted(
        ((post.event["type"], post.event["data"]["id"], post.event["data"]["record"]) for post in posts),
        key=lambda event: event[1],
    )


async def catalog(site) -> dict:
    return dict((await site.host.api.snapshot()).catalog)


async def test_rows_selected_now_come_as_create_or_update_and_a_row_that_left_as_delete(site):
    await site.hook(objects="articles", filter=NEWS, known=await catalog(site))
    await update_row(site.database, articles, 1, {"views": 11})  # news, still news
    await update_row(site.database, articles, 6, {"category": "company"})  # left the selection
    await update_row(site.database, articles, 7, {"published": False})  # unpublished
    await create_row(
        site.database, articles, {"id": 8, "title": "Fresh", "category": "news", "published": True}
    )
    await update_row(site.database, articles, 2, {"category": "news"})  # entered the selection
    await delete_row(site.database, articles, 3)  # a sales article: never selected
    await create_row(
        site.database, articles, {"id": 9, "title": "Sale", "category": "sales", "published": True}
    )
    await site.deliver()

    found = [
        (kind, key, None if record is None else record["category"]) for kind, key, record in events(site)
    ]
    assert found == [
        ("articles.update", 1, "news"),
        ("articles.update", 2, "news"),
        ("articles.delete", 3, None),
        ("articles.delete", 6, None),
        ("articles.delete", 7, None),
        ("articles.create", 8, "news"),
    ]  # 9 was created outside the selection: the receiver cannot hold it, nothing is sent


async def test_a_change_to_a_row_that_matched_neither_before_nor_after_is_not_sent(site):
    """The log records which columns an update changed: an update that left the filtered columns of a
    row outside the selection alone is no news to the endpoint (docs/webhooks.md)."""
    await site.hook(objects="articles", filter=NEWS, known=await catalog(site))
    await update_row(site.database, articles, 2, {"views": 21})  # company before and after
    await update_row(site.database, articles, 4, {"title": "Retitled"})  # company before and after
    await update_row(site.database, articles, 3, {"category": "company"})  # sales → company: may have left
    await update_row(site.database, articles, 6, {"views": 61})  # news: selected
    await site.deliver()

    assert [(kind, key) for kind, key, _ in events(site)] == [("articles.delete", 3), ("articles.update", 6)]


async def test_an_endpoint_without_delete_among_its_events_is_not_told_of_a_row_that_left(site):
    await site.hook(objects="articles", filter=f"{NEWS}&search=hello", events="create,update")
    await update_row(site.database, articles, 1, {"views": 12})  # "Hello world": selected
    await update_row(site.database, articles, 6, {"views": 13})  # news without "hello"
    await update_row(site.database, articles, 7, {"category": "sales"})  # "Second hello" left
    await site.deliver()

    assert [(kind, key) for kind, key, _ in events(site)] == [("articles.update", 1)]


async def test_a_filter_that_does_not_apply_is_refused_when_the_endpoint_is_registered(sqlite_site):
    known = await catalog(sqlite_site)
    refusals = [
        ({"filter": NEWS}, "a filter applies to one object"),
        ({"objects": "articles,authors", "filter": NEWS}, "a filter applies to one object"),
        ({"objects": "articles", "filter": "filter[secret]=x"}, "articles does not filter by filter[secret]"),
        ({"objects": "articles", "filter": "filter[views]=many"}, "filter[views]"),
        ({"objects": "articles", "filter": "sort=title"}, "'sort' is not a filter"),
    ]
    for options, message in refusals:
        with pytest.raises(WebhookError, match=message.replace("[", r"\[").replace("]", r"\]")):
            await sqlite_site.store.create("refused", sqlite_site.receiver.url, known=known, **options)
    assert await sqlite_site.store.list() == []
    made, _ = await sqlite_site.store.create(
        "news", sqlite_site.receiver.url, objects="articles", filter=f"?{NEWS}", known=known
    )
    assert made.filter == NEWS
    edited = await sqlite_site.store.update("news", filter="filter[category][in]=news,sales", known=known)
    assert edited.filter == "filter[category][in]=news%2Csales"
    with pytest.raises(WebhookError, match="a filter applies to one object"):
        await sqlite_site.store.update("news", objects="*", known=known)
    cleared = await sqlite_site.store.update("news", filter="", objects="*", known=known)
    assert (cleared.filter, cleared.objects) == (None, ("*",))

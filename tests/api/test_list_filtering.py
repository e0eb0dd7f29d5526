"""`filter[...]` (docs/query.md), through HTTP, on
every database.

The demo's published articles are 1, 2, 3, 4, 6 and 7 (5 is unpublished); see tests/support/demo.py.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.support.demo import DECLARATIONS, articles

API = "/api/pb/v1/objects/articles"
PUBLISHED = [1, 2, 3, 4, 6, 7]


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


async def listing(host, query: str, status: int = 200) -> dict:
    response = await host.client.get(f"{API}?{query}", headers=host.headers)
    assert response.status_code == status, response.text
    return response.json()


async def ids(host, query: str) -> list[int]:
    """The ids a filter selects, all on one page."""
    body = await listing(host, f"{query}&limit=6&fields=id")
    assert "ignored" not in body["meta"], body["meta"]
    return [record["id"] for record in body["data"]]


async def add_article(host, id_: int, title: str, **values) -> None:
    await host.database.execute(articles.insert().values(id=id_, title=title, published=True, **values))


# -- eq, and how filters combine ----------------------------------------------------------------------


async def test_a_bare_filter_means_equals(reader):
    assert await ids(reader, "filter[category]=company") == [2, 4]
    assert await ids(reader, "filter[category][eq]=company") == [2, 4]


async def test_equals_works_on_unicode_text(reader):
    assert await ids(reader, "filter[title]=Новости компании") == [2]


async def test_several_filters_and_together(reader):
    assert await ids(reader, "filter[category]=news&filter[featured]=true") == [6]
    assert await ids(reader, "filter[views][gt]=15&filter[views][lt]=65") == [2, 3, 6]


async def test_the_same_filter_key_repeated_ands_too(reader):
    assert await ids(reader, "filter[category]=news&filter[category]=company") == []
    assert await ids(reader, "filter[views][gte]=20&filter[views][gte]=60") == [6, 7]


async def test_a_filter_never_reaches_an_unpublished_row(reader):
    assert await ids(reader, "filter[id]=5") == []
    assert await ids(reader, "filter[title]=Draft article") == []


# -- comparisons by type ------------------------------------------------------------------------------


async def test_integer_comparisons(reader):
    assert await ids(reader, "filter[views][gt]=30") == [6, 7]
    assert await ids(reader, "filter[views][gte]=30") == [3, 6, 7]
    assert await ids(reader, "filter[views][lt]=30") == [1, 2]
    assert await ids(reader, "filter[views][lte]=30") == [1, 2, 3]
    assert await ids(reader, "filter[views]=20") == [2]


async def test_decimal_comparisons_are_exact_and_numeric(reader):
    assert await ids(reader, "filter[price]=19.99") == [1]
    assert await ids(reader, "filter[price]=19.990") == [1]
    assert await ids(reader, "filter[price]=19.991") == []
    assert await ids(reader, "filter[price][gte]=10") == [1, 2, 6, 7]
    assert await ids(reader, "filter[price][lt]=10.00") == [3]
    assert await ids(reader, "filter[price][gt]=20") == [6]


async def test_decimal_values_beyond_the_column_still_compare_correctly(reader):
    huge = "9" * 100
    assert await ids(reader, f"filter[price][lt]={huge}") == [1, 2, 3, 6, 7]
    assert await ids(reader, f"filter[price][gte]={huge}") == []
    assert await ids(reader, f"filter[price][gt]=-{huge}") == [1, 2, 3, 6, 7]
    just_below = "19.98" + "9" * 70
    assert await ids(reader, f"filter[price][gt]={just_below}") == [1, 6]


async def test_number_comparisons(reader):
    assert await ids(reader, "filter[rating][gt]=4") == [1, 2, 3, 6, 7]
    assert await ids(reader, "filter[rating]=4.5") == [1, 2, 3, 6, 7]
    assert await ids(reader, "filter[rating][lt]=4.5") == []
    assert await ids(reader, "filter[rating][gte]=4.5e0") == [1, 2, 3, 6, 7]


async def test_booleans_read_true_false_1_and_0(reader):
    assert await ids(reader, "filter[featured]=true") == [2, 4, 6]
    assert await ids(reader, "filter[featured]=1") == [2, 4, 6]
    assert await ids(reader, "filter[featured]=false") == [1, 3]
    assert await ids(reader, "filter[featured]=0") == [1, 3]


async def test_dates_compare_as_dates(reader):
    assert await ids(reader, "filter[published_on]=2026-01-02") == [2]
    assert await ids(reader, "filter[published_on][gte]=2026-01-03") == [3, 4, 6]
    assert await ids(reader, "filter[published_on][between]=2026-01-02,2026-01-04") == [2, 3, 4]


async def test_a_datetime_with_an_offset_is_compared_in_utc(reader):
    # 14:00 at +02:00 is 12:00 UTC, the time every demo article was created.
    at_noon = quote("2026-01-03T14:00:00+02:00")
    assert await ids(reader, f"filter[created_at][gte]={at_noon}") == [3, 4, 6, 7]
    assert await ids(reader, f"filter[created_at][gt]={at_noon}") == [4, 6, 7]
    assert await ids(reader, "filter[created_at]=2026-01-02T12:00:00Z") == [2]


async def test_a_datetime_without_an_offset_is_utc(reader):
    assert await ids(reader, "filter[created_at]=2026-01-02T12:00:00") == [2]


async def test_a_plus_sent_unencoded_in_an_offset_still_reads_as_an_offset(reader):
    # `+` in a query string decodes to a space; a client that forgot to encode it meant the offset.
    assert await ids(reader, "filter[created_at]=2026-01-02T14:00:00+02:00") == [2]


async def test_a_date_alone_for_a_datetime_field_means_midnight_utc(reader):
    assert await ids(reader, "filter[created_at][lt]=2026-01-03") == [1, 2]
    assert await ids(reader, "filter[created_at][between]=2026-01-02,2026-01-03") == [2]


async def test_the_primary_key_is_filterable_like_any_integer(reader):
    assert await ids(reader, "filter[id][gte]=4") == [4, 6, 7]


# -- in, nin, between, null ---------------------------------------------------------------------------


async def test_in_takes_comma_separated_values(reader):
    assert await ids(reader, "filter[id][in]=1,3,5") == [1, 3]
    assert await ids(reader, "filter[category][in]=news,sales") == [1, 3, 6, 7]


async def test_in_takes_the_repeated_form_too(reader):
    assert await ids(reader, "filter[id][in][]=1&filter[id][in][]=3") == [1, 3]


async def test_the_repeated_form_carries_values_that_contain_commas(reader):
    await add_article(reader, 8, "Cats, dogs")
    repeated = "filter[title][in][]=Cats, dogs&filter[title][in][]=Hello world"
    assert await ids(reader, repeated) == [1, 8]
    assert await ids(reader, "filter[title][in]=Cats, dogs") == []  # split: "Cats" and " dogs"


async def test_nin_excludes_the_values(reader):
    assert await ids(reader, "filter[category][nin]=news,company") == [3]
    assert await ids(reader, "filter[id][nin][]=1&filter[id][nin][]=2") == [3, 4, 6, 7]


async def test_in_and_nin_take_up_to_one_hundred_values(reader):
    hundred = ",".join(str(number) for number in range(1, 101))
    assert await ids(reader, f"filter[id][in]={hundred}") == PUBLISHED
    assert await ids(reader, f"filter[id][nin]={hundred}") == []


@pytest.mark.parametrize("operator", ["in", "nin"])
async def test_more_than_one_hundred_values_answer_422(reader, operator):
    too_many = ",".join(str(number) for number in range(1, 102))
    body = await listing(reader, f"filter[id][{operator}]={too_many}", status=422)
    assert body["error"] == "validation_failed"
    assert body["details"] == {f"filter[id][{operator}]": ["must have at most 100 values"]}


async def test_more_than_one_hundred_repeated_values_answer_422(reader):
    too_many = "&".join(f"filter[id][in][]={number}" for number in range(1, 102))
    body = await listing(reader, too_many, status=422)
    assert body["details"] == {"filter[id][in][]": ["must have at most 100 values"]}


async def test_between_is_inclusive_at_both_ends(reader):
    assert await ids(reader, "filter[views][between]=20,60") == [2, 3, 6]
    assert await ids(reader, "filter[price][between]=5.50,19.99") == [1, 2, 3, 7]


@pytest.mark.parametrize("values", ["20", "20,30,40", "", "20,"])
async def test_between_without_exactly_two_values_answers_422(reader, values):
    body = await listing(reader, f"filter[views][between]={values}", status=422)
    details = body["details"]
    assert list(details) == ["filter[views][between]"]
    if values.count(",") != 1:
        assert details["filter[views][between]"] == ["must have exactly two values"]


async def test_null_true_or_1_is_is_null(reader):
    assert await ids(reader, "filter[views][null]=true") == [4]
    assert await ids(reader, "filter[views][null]=1") == [4]
    assert await ids(reader, "filter[featured][null]=true") == [7]


async def test_null_false_or_0_is_is_not_null(reader):
    assert await ids(reader, "filter[views][null]=false") == [1, 2, 3, 6, 7]
    assert await ids(reader, "filter[views][null]=0") == [1, 2, 3, 6, 7]


@pytest.mark.parametrize("value", ["yes", "", "null", "2"])
async def test_null_with_another_value_answers_422(reader, value):
    body = await listing(reader, f"filter[views][null]={value}", status=422)
    assert body["details"] == {"filter[views][null]": ["must be true, 1, false or 0"]}


async def test_the_string_null_given_to_another_operator_is_just_a_string(reader):
    await add_article(reader, 8, "null")
    assert await ids(reader, "filter[title]=null") == [8]
    assert await ids(reader, "filter[title][ne]=null") == PUBLISHED
    body = await listing(reader, "filter[views]=null", status=422)
    assert body["details"] == {"filter[views]": ["must be an integer"]}


async def test_ne_and_nin_do_not_match_null_as_in_sql(reader):
    assert await ids(reader, "filter[views][ne]=10") == [2, 3, 6, 7]  # 4 has no views
    assert await ids(reader, "filter[price][nin]=10.00") == [1, 3, 6]  # 4 has no price
    assert await ids(reader, "filter[featured][ne]=true") == [1, 3]  # 7 is neither


# -- like -------------------------------------------------------------------------------------------


async def test_like_is_a_case_insensitive_contains(reader):
    assert await ids(reader, "filter[title][like]=HELLO") == [1, 7]
    assert await ids(reader, "filter[title][like]=report") == [4]


async def test_like_folds_non_ascii_letters_on_every_database(reader):
    assert await ids(reader, "filter[title][like]=новости") == [2]
    assert await ids(reader, "filter[title][like]=НОВОСТИ") == [2]
    assert await ids(reader, "filter[title][like]=Компании") == [2]


async def test_like_takes_percent_and_underscore_literally(reader):
    assert await ids(reader, "filter[title][like]=%25") == [3]
    assert await ids(reader, "filter[title][like]=50%25") == [3]
    assert await ids(reader, "filter[title][like]=_") == [3]
    assert await ids(reader, "filter[title][like]=f_t") == [3]
    assert await ids(reader, "filter[title][like]=o_l") == []  # "world" has "orl", which `o_l` would match


async def test_like_takes_a_backslash_literally(reader):
    await add_article(reader, 8, "C:\\temp\\new")
    assert await ids(reader, "filter[title][like]=\\") == [8]
    assert await ids(reader, "filter[title][like]=\\n") == [8]
    assert await ids(reader, "filter[title][like]=:\\t") == [8]


async def test_like_on_a_field_that_is_not_text_is_ignored(reader):
    body = await listing(reader, "filter[views][like]=1&fields=id&limit=6")
    assert [record["id"] for record in body["data"]] == PUBLISHED
    assert body["meta"]["ignored"] == ["filter[views][like]"]


# -- what is ignored ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "filter[secret]",  # a column that is not published
        "filter[body]",  # published, but not filterable
        "filter[nope]",  # no such field
        "filter[title][regex]",  # no such operator
        "filter[title][eq][]",  # only in, nin and between take the repeated form
        "filter[author]",  # a relation, not a field
    ],
)
async def test_a_filter_outside_the_whitelist_is_ignored_and_named(reader, key):
    body = await listing(reader, f"{key}=secret-1&fields=id&limit=6")
    assert [record["id"] for record in body["data"]] == PUBLISHED
    assert body["meta"]["ignored"] == [key]


async def test_an_unpublished_field_cannot_be_probed_through_a_filter(reader):
    everything = await listing(reader, "filter[secret]=secret-1&fields=id&limit=6")
    nothing = await listing(reader, "filter[secret]=no-such-secret&fields=id&limit=6")
    assert everything["data"] == nothing["data"]
    assert everything["meta"]["total"] == nothing["meta"]["total"] == 6


# -- values that do not convert -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("filter[price][gte]", "abc", "must be a number"),
        ("filter[rating]", "4,5", "must be a number"),
        ("filter[views]", "1.5", "must be an integer"),
        ("filter[id]", "1 OR 1=1", "must be an integer"),
        ("filter[featured]", "yes", "must be true, false, 1 or 0"),
        ("filter[published_on]", "2026-13-01", "must be a date (YYYY-MM-DD)"),
        ("filter[published_on]", "yesterday", "must be a date (YYYY-MM-DD)"),
        ("filter[created_at][gt]", "noon", "must be a date-time (ISO 8601, e.g. 2024-05-01T12:00:00+00:00)"),
        ("filter[views][in]", "1,x", "must be an integer"),
    ],
)
async def test_a_value_that_does_not_convert_answers_422_keyed_by_the_parameter_as_written(
    reader, key, value, message
):
    response = await reader.client.get(f"{API}?{key}={quote(value)}", headers=reader.headers)
    assert response.status_code == 422
    assert response.json() == {
        "error": "validation_failed",
        "message": "The given data was invalid.",
        "details": {key: [message]},
    }


async def test_every_value_that_does_not_convert_is_named(reader):
    body = await listing(reader, "filter[price][gte]=abc&filter[views]=x&filter[title]=fine", status=422)
    assert body["details"] == {
        "filter[price][gte]": ["must be a number"],
        "filter[views]": ["must be an integer"],
    }


# -- the declaration's `query` ------------------------------------------------------------------------


async def test_the_declarations_query_narrows_every_filter(reader, host_factory):
    from pb_headless import ApiRegistry

    registry = ApiRegistry()
    registry.register(
        "articles",
        {**DECLARATIONS["articles"], "query": lambda select: select.where(articles.c.category != "sales")},
    )
    narrowed = await host_factory(reader.database, registry)
    narrowed.headers = reader.headers
    assert await ids(narrowed, "filter[id][in]=1,3,5") == [1]
    assert await ids(narrowed, "filter[title][like]=%25") == []
    body = await listing(narrowed, "limit=0")
    assert body["meta"]["total"] == 5

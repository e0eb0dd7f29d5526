"""`Prefer: handling=strict` (docs/query.md): a typo in a read's query string is a 400 naming it,
for clients that ask; without the header everything stays lenient."""

import pytest

API = "/api/pb/v1/objects/articles"
TYPOS = "filter[nonexistent]=1&sort=-titel&filter[views][gt3]=1"
NAMED = ["filter[nonexistent]", "sort=-titel", "filter[views][gt3]"]


@pytest.fixture
async def reader(demo):
    demo.headers = demo.auth(await demo.token("articles.read"))
    return demo


def preferring(reader, preference: str) -> dict[str, str]:
    return {**reader.headers, "Prefer": preference}


async def test_strict_handling_refuses_every_item_lenient_handling_would_ignore(reader):
    response = await reader.client.get(f"{API}?{TYPOS}", headers=preferring(reader, "handling=strict"))
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "bad_request"
    assert body["details"] == {"ignored": NAMED}
    assert "filter[nonexistent], sort=-titel, filter[views][gt3]" in body["message"]
    assert response.headers["preference-applied"] == "handling=strict"
    assert response.headers["cache-control"] == "private, no-cache"


async def test_a_strict_query_with_nothing_to_ignore_answers_as_usual_and_says_so(reader):
    plain = await reader.client.get(f"{API}?filter[category]=news", headers=reader.headers)
    strict = await reader.client.get(
        f"{API}?filter[category]=news", headers=preferring(reader, "handling=strict")
    )
    assert strict.status_code == 200
    assert strict.json() == plain.json()
    assert strict.headers["preference-applied"] == "handling=strict"
    assert "preference-applied" not in plain.headers


async def test_without_a_preference_or_with_lenient_handling_typos_are_only_named(reader):
    for headers in (reader.headers, preferring(reader, "handling=lenient")):
        response = await reader.client.get(f"{API}?{TYPOS}", headers=headers)
        assert response.status_code == 200
        assert response.json()["meta"]["ignored"] == NAMED
    assert response.headers["preference-applied"] == "handling=lenient"


@pytest.mark.parametrize(
    "preference",
    ["return=minimal, handling=strict", 'handling="strict"', "HANDLING=Strict", "handling=strict; x=1"],
)
async def test_the_preference_is_read_among_others_and_in_any_case(reader, preference):
    response = await reader.client.get(f"{API}?limit=abc", headers=preferring(reader, preference))
    assert response.status_code == 400
    assert response.json()["details"] == {"ignored": ["limit=abc"]}


async def test_the_first_handling_preference_counts_and_an_unknown_value_is_no_preference(reader):
    first = await reader.client.get(
        f"{API}?limit=abc", headers=preferring(reader, "handling=lenient, handling=strict")
    )
    assert first.status_code == 200 and first.headers["preference-applied"] == "handling=lenient"
    unknown = await reader.client.get(f"{API}?limit=abc", headers=preferring(reader, "handling=picky"))
    assert unknown.status_code == 200 and "preference-applied" not in unknown.headers


async def test_strict_handling_applies_to_show_too(reader):
    strict = preferring(reader, "handling=strict")
    refused = await reader.client.get(f"{API}/1?fields=titel&with=author.posts", headers=strict)
    assert refused.status_code == 400
    assert refused.json()["details"] == {"ignored": ["fields=titel", "with=author.posts"]}
    shown = await reader.client.get(f"{API}/1?fields=title", headers=strict)
    assert shown.status_code == 200 and shown.json()["data"] == {"id": 1, "title": "Hello world"}


async def test_a_limit_above_the_maximum_is_clamped_not_refused_under_strict_handling(reader):
    response = await reader.client.get(f"{API}?limit=1000000", headers=preferring(reader, "handling=strict"))
    assert response.status_code == 200
    assert response.json()["meta"]["limit"] == 6


async def test_a_limit_past_the_largest_number_is_refused_under_strict_handling(reader):
    written = "limit=99999999999999999999"
    response = await reader.client.get(f"{API}?{written}", headers=preferring(reader, "handling=strict"))
    assert response.status_code == 400
    assert response.json()["details"] == {"ignored": [written]}

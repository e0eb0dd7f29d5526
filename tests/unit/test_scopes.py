import pytest

from pb_headless.scopes import has_required_scope, is_valid_scope, scope_covers


@pytest.mark.parametrize(
    ("granted", "required"),
    [
        ("articles.read", "articles.read"),
        ("articles.*", "articles.read"),
        ("articles.*", "articles.write"),
        ("*", "articles.read"),
        ("*", "anything.at-all"),
    ],
)
def test_a_scope_covers_what_it_names(granted, required):
    assert scope_covers(granted, required)


@pytest.mark.parametrize(
    ("granted", "required"),
    [
        ("articles.read", "articles.write"),
        ("articles.read", "articles2.read"),
        ("articles.*", "articles2.read"),
        ("articles.*", "news.read"),
        ("article.*", "articles.read"),
        ("Articles.read", "articles.read"),
        ("articles.READ", "articles.read"),
        ("articles.*", "articles.read.more"),
        ("articles.re", "articles.read"),
        ("articles", "articles.read"),
    ],
)
def test_a_scope_covers_nothing_else(granted, required):
    assert not scope_covers(granted, required)


def test_group_wildcard_does_not_cover_a_longer_group_name():
    assert not has_required_scope(["articles.*"], "articles2.read")


def test_any_granted_scope_is_enough():
    assert has_required_scope(["news.read", "articles.write"], "articles.write")
    assert not has_required_scope([], "articles.read")


@pytest.mark.parametrize("scope", ["*", "articles.*", "articles.read", "my_group-1.do-it", "a.b"])
def test_well_formed_scopes_are_accepted(scope):
    assert is_valid_scope(scope)


@pytest.mark.parametrize(
    "scope",
    [
        "",
        "articles",
        "Articles.read",
        "a.b.c",
        "*.read",
        "a.*.b",
        " a.b",
        "a.b ",
        "а.b",
        "a..b",
        ".b",
        "a.",
        "**",
    ],
)
def test_malformed_scopes_are_refused(scope):
    assert not is_valid_scope(scope)

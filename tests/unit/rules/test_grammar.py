"""Rule strings: splitting on `|`, arguments, and the errors a declaration can make."""

from __future__ import annotations

from decimal import Decimal

import pytest

from pb_headless.rules import RuleError
from pb_headless.rules.errors import FieldRef
from pb_headless.rules.grammar import parse_rules, split_rules

REF = FieldRef("articles", "title")


def names(spec: str | list[str]) -> list[str]:
    return [rule.name for rule in parse_rules(spec, REF)]


def test_a_rule_string_splits_on_pipes_into_rules_in_order() -> None:
    assert names("required|string|max:200") == ["required", "string", "max"]


def test_spaces_around_rules_and_empty_segments_are_ignored() -> None:
    assert names(" required | string || ") == ["required", "string"]


def test_a_list_of_rule_strings_reads_as_if_joined_by_pipes() -> None:
    assert names(["required", "string|max:5"]) == ["required", "string", "max"]


def test_a_pipe_inside_a_regex_does_not_split_the_rule_string() -> None:
    assert split_rules("required|regex:/^(a|b)+$/|max:5", REF) == ["required", "regex:/^(a|b)+$/", "max:5"]


def test_a_regex_keeps_its_pattern_without_delimiters_and_its_flags() -> None:
    (rule,) = parse_rules("regex:/^A|b$/i", REF)
    assert (rule.source, rule.flags) == ("^A|b$", "i")
    assert rule.pattern is not None and rule.pattern.search("a")


def test_an_escaped_slash_inside_a_regex_does_not_end_the_pattern() -> None:
    (rule,) = parse_rules(r"regex:/^a\/b|c$/", REF)
    assert rule.source == r"^a\/b|c$"
    assert rule.pattern is not None and rule.pattern.search("a/b")


def test_a_regex_in_a_list_may_contain_pipes_too() -> None:
    rules = parse_rules(["required", "regex:/x|y/"], REF)
    assert [rule.source for rule in rules if rule.name == "regex"] == ["x|y"]


def test_a_regex_without_u_reads_digits_as_ascii_like_pcre() -> None:
    (ascii_rule,) = parse_rules(r"regex:/^\d+$/", REF)
    (unicode_rule,) = parse_rules(r"regex:/^\d+$/u", REF)
    assert ascii_rule.pattern is not None and not ascii_rule.pattern.search("٣")
    assert unicode_rule.pattern is not None and unicode_rule.pattern.search("٣")


def test_size_arguments_are_read_as_decimals() -> None:
    (between,) = parse_rules("between:1,2.5", REF)
    assert between.numbers == (Decimal(1), Decimal("2.5"))


def test_in_values_read_as_csv_so_a_quoted_value_may_hold_a_comma() -> None:
    (rule,) = parse_rules('in:"a,b",c', REF)
    assert rule.options == ("a,b", "c")


def test_an_unknown_rule_names_the_object_field_and_rule() -> None:
    with pytest.raises(RuleError) as caught:
        parse_rules("requird|string", REF)
    assert str(caught.value) == "object 'articles', field 'title': unknown rule 'requird'"


def test_rule_names_are_case_sensitive() -> None:
    with pytest.raises(RuleError, match="unknown rule 'Required'"):
        parse_rules("Required", REF)


@pytest.mark.parametrize(
    "spec",
    [
        "min:abc",
        "max:",
        "min",
        "size",
        "size:1,2",
        "between:1",
        "between:1,2,3",
        "between:5,1",
        "in:",
        "not_in",
        "required:yes",
        "max:1e3",
    ],
)
def test_a_malformed_argument_is_a_rule_error(spec: str) -> None:
    with pytest.raises(RuleError, match=r"^object 'articles', field 'title': "):
        parse_rules(spec, REF)


@pytest.mark.parametrize("spec", ["regex:abc", "regex:/abc", "regex:", "regex:/a/ junk", "regex:/a/e"])
def test_a_regex_not_in_slash_form_is_a_rule_error(spec: str) -> None:
    with pytest.raises(RuleError, match="regex"):
        parse_rules(spec, REF)


def test_a_regex_that_does_not_compile_is_a_rule_error() -> None:
    with pytest.raises(RuleError, match="does not compile"):
        parse_rules("regex:/(/", REF)


def test_a_rule_value_that_is_neither_a_string_nor_a_list_of_strings_is_a_rule_error() -> None:
    with pytest.raises(RuleError, match="expected a rule string"):
        parse_rules(42, REF)  # type: ignore[arg-type]

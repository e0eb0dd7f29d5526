"""Property tests: a value the JSON Schema accepts is one `validate` accepts, and the other way round.

`multipleOf` is read exactly, on the number as JSON writes it (`0.57` is a multiple of `0.01`), as the
JSON Schema specification and schemathesis read it; the jsonschema library divides floats and would
say no. Documented gaps are kept out of the generated values: the spellings `.5` and `1.` of a
numeric string (read by the validator as a query string reads them; the schema advertises the plain
form only) and a newline ending a numeric string (Python's `$`, which the jsonschema library uses,
matches before it; ECMAScript's and our check do not).
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, ValidationError, validators

from pb_headless.rules import Validator, compile_rules

TABLE = sa.Table(
    "things",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("title", sa.String(20), nullable=False),
    sa.Column("qty", sa.Integer),
    sa.Column("status", sa.String(10)),
    sa.Column("published_on", sa.Date),
    sa.Column("price", sa.Numeric(6, 2)),
    sa.Column("extra", sa.JSON),
    sa.Column("flag", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("code", sa.String(8), nullable=False, server_default="x"),
)
RULES = {
    "title": "required|min:3|regex:/^[a-z ]+$/",
    "qty": "integer|between:1,100",
    "status": "in:draft,published",
    "extra": "min:2",
    "code": "size:4|not_in:0000",
}
VALIDATOR: Validator = compile_rules(
    "things", dict(TABLE.c), [c.name for c in TABLE.c if c.name != "id"], RULES
)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(st.characters(exclude_characters="\x00"), max_size=6)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
UNADVERTISED = re.compile(r"-?(\.[0-9]+|[0-9]+\.)")  # read by the validator, not in the schema
FIELD_VALUES = {
    "title": json_values | st.text(alphabet="abc XY\t\n1\x00", max_size=25),
    "qty": json_values | st.integers(-5, 110) | st.integers(-5, 110).map(float),
    "status": json_values | st.sampled_from(["draft", "published", "Draft", ""]),
    "published_on": json_values | st.dates().map(str) | st.from_regex(r"\A2024-0[0-9]-[0-3][0-9]\Z"),
    "price": (
        st.none()
        | st.booleans()
        | st.lists(st.integers(), max_size=2)
        | st.integers(-(10**5), 10**5)
        | st.floats(-2e4, 2e4).map(lambda number: round(number, 2))
        | st.from_regex(r"\A-?[0-9 .]{0,9}\Z").filter(lambda text: not UNADVERTISED.fullmatch(text))
        | st.decimals(-(10**4), 10**4, allow_nan=False, allow_infinity=False).map(str)
    ),
    "extra": json_values,
    "flag": json_values,
    "code": json_values | st.sampled_from(["0000", "abcd", "ab"]),
}


def _exact_multiple_of(validator, step, instance, schema):  # type: ignore[no-untyped-def]
    if validator.is_type(instance, "number") and Decimal(repr(instance)) % Decimal(repr(step)) != 0:
        yield ValidationError(f"{instance!r} is not a multiple of {step!r}")


ExactValidator = validators.extend(Draft202012Validator, {"multipleOf": _exact_multiple_of})


def schema_accepts(schema: dict, value: object) -> bool:
    return ExactValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(value)


@pytest.mark.parametrize("field", sorted(FIELD_VALUES))
def test_a_field_schema_and_validate_agree_on_generated_values(field: str) -> None:
    schema = VALIDATOR.field_schema(field)

    @SETTINGS
    @given(FIELD_VALUES[field])
    def agree(value: object) -> None:
        valid = not VALIDATOR.validate({field: value}, partial=True).errors
        assert schema_accepts(schema, value) == valid, (value, schema)

    agree()


bodies = st.fixed_dictionaries(
    {},
    optional={
        **{field: values for field, values in FIELD_VALUES.items() if field != "price"},
        "price": st.integers(-10, 10) | st.floats(-99, 99).map(lambda number: round(number, 3)) | st.none(),
        "id": st.integers(),
        "unknown": json_values,
    },
)


@SETTINGS
@given(bodies, st.booleans())
def test_the_body_schema_and_validate_agree_on_generated_bodies(body: dict, partial: bool) -> None:
    valid = not VALIDATOR.validate(body, partial=partial).errors
    assert schema_accepts(VALIDATOR.json_schema(partial=partial), body) == valid

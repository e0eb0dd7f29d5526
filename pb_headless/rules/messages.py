"""Laravel-style English messages for validation failures."""

from __future__ import annotations

from decimal import Decimal

# One sentence per failure, keyed by rule (or by column kind for the implicit type checks).
_TEXT = {
    "required": "The {a} field is required.",
    "not_null": "The {a} field must not be null.",
    "string": "The {a} field must be a string.",
    "integer": "The {a} field must be an integer.",
    "numeric": "The {a} field must be a number.",
    "boolean": "The {a} field must be true or false.",
    "array": "The {a} field must be an array.",
    "email": "The {a} field must be a valid email address.",
    "url": "The {a} field must be a valid URL.",
    "uuid": "The {a} field must be a valid UUID.",
    "date": "The {a} field must be a valid date (YYYY-MM-DD).",
    # The accepted forms are docs/writes.md's; a client that sent `tomorrow` learns them here.
    "datetime": "The {a} field must be a valid date and time (YYYY-MM-DDTHH:MM[:SS][+HH:MM], or YYYY-MM-DD).",
    "time": "The {a} field must be a valid time.",
    "in": "The {a} field must be one of: {n}.",
    "not_in": "The {a} field must not be one of: {n}.",
    "regex": "The {a} field format is invalid.",
    "alpha": "The {a} field must only contain letters.",
    "alpha_num": "The {a} field must only contain letters and numbers.",
    "alpha_dash": "The {a} field must only contain letters, numbers, dashes, and underscores.",
    "null_character": "The {a} field must not contain null characters.",
    "decimal_places": "The {a} field must not have more than {n} decimal places.",
    "unique": "The {a} has already been taken.",
}

# The size rules read differently for a string (length), a number (value) and an array (count).
_SIZE_TEXT = {
    ("min", "string"): "The {a} field must be at least {n} characters.",
    ("min", "numeric"): "The {a} field must be at least {n}.",
    ("min", "array"): "The {a} field must have at least {n} items.",
    ("max", "string"): "The {a} field must not be greater than {n} characters.",
    ("max", "numeric"): "The {a} field must not be greater than {n}.",
    ("max", "array"): "The {a} field must not have more than {n} items.",
    ("between", "string"): "The {a} field must be between {n} and {m} characters.",
    ("between", "numeric"): "The {a} field must be between {n} and {m}.",
    ("between", "array"): "The {a} field must have between {n} and {m} items.",
    ("size", "string"): "The {a} field must be {n} characters.",
    ("size", "numeric"): "The {a} field must be {n}.",
    ("size", "array"): "The {a} field must contain {n} items.",
}


def attribute(field: str) -> str:
    """The field as a reader sees it: `published_at` reads `published at`."""
    return field.replace("_", " ")


def message(key: str, field: str, n: object = None) -> str:
    return _TEXT[key].format(a=attribute(field), n=n)


def options_message(key: str, field: str, values: tuple[object, ...]) -> str:
    """An `in` / `not_in` failure names the values, so a client can correct itself without the docs."""
    return _TEXT[key].format(a=attribute(field), n=", ".join(_shown(value) for value in values))


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    isoformat = getattr(value, "isoformat", None)
    return str(isoformat()) if callable(isoformat) else str(value)


def size_message(rule: str, measure: str, field: str, bounds: tuple[Decimal | int, ...]) -> str:
    """The message of a failed min/max/between/size rule; `measure` is string, numeric or array."""
    return _SIZE_TEXT[rule, measure].format(a=attribute(field), n=bounds[0], m=bounds[-1])

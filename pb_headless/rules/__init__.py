"""The validation rule engine for write bodies: Laravel-style rule strings, compiled once per object.

Pure: no HTTP and no database. `compile_rules` reads an object's columns and rule strings when the
object is registered (a bad declaration raises `RuleError`); the `Validator` it returns checks each
write body, converts the values for the columns, and describes the body as JSON Schema for OpenAPI.

Choices worth knowing (see docs for the whole list):

- Integer columns take JSON integers, and floats with no fraction (3.0), as JSON Schema counts them;
  `true` is never an integer. Ranges are the portable 16/32/64-bit ones of SmallInteger/Integer/BigInteger.
- Numeric columns take a number or a numeric string ("19.99", "+1", ".5"; no exponent: the grammar of
  `pb_headless.fields.text`, shared with query strings) and yield a Decimal
  (floats through `repr`, so 19.99 stays 19.99); precision and scale are enforced. Boolean takes
  only true/false. Strings may not hold NUL. DateTime values are stored in UTC.
- `required` (explicit) refuses null, blank strings, [] and {} as Laravel does; a NOT NULL column
  with no default is only implicitly required to be present and not null on create.
- Rules other than `required` check an empty string like any other value (Laravel would skip them).
"""

from pb_headless.rules.errors import RuleError
from pb_headless.rules.validator import ValidationResult, Validator, compile_rules

__all__ = ["RuleError", "ValidationResult", "Validator", "compile_rules"]

"""The two ways the library's tables stop a start: a step that failed, a version this code cannot serve."""


class MigrationError(RuntimeError):
    """A migration step failed; the message names the step, the cause and the version the tables stay at."""


class SchemaMismatch(RuntimeError):
    """The library's tables are at a version this code does not serve; the message says what to do."""

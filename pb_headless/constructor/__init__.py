"""The table constructor's publishing rules (docs/constructor.md).

A host defines its tables as `ConstructorTable`s and hands the registry a `ConstructorSource`; the
site owner's API-tab settings (`ApiTab`, kept by `ApiTabStore`) decide what each table publishes.
See docs/constructor.md.
"""

from pb_headless.constructor.kinds import FIELD_TYPES
from pb_headless.constructor.model import ApiTab, ConstructorError, ConstructorField, ConstructorTable
from pb_headless.constructor.publishing import declaration_for, rules_for, unpublished_reason, url_name_for
from pb_headless.constructor.schema import create_table, table_for
from pb_headless.constructor.source import ConstructorSource
from pb_headless.constructor.store import ApiTabStore
from pb_headless.constructor.transliteration import transliterate

__all__ = [
    "FIELD_TYPES",
    "ApiTab",
    "ApiTabStore",
    "ConstructorError",
    "ConstructorField",
    "ConstructorSource",
    "ConstructorTable",
    "create_table",
    "declaration_for",
    "rules_for",
    "table_for",
    "transliterate",
    "unpublished_reason",
    "url_name_for",
]

"""The registry of published objects: its sources, their precedence, and the compiled catalog."""

from pb_headless.registry.declaration import DECLARATION_KEYS, OPERATIONS, Declaration, DeclarationError
from pb_headless.registry.events import COMPONENT_GROUP, Events, OnServiceApiRegister, load_components
from pb_headless.registry.registry import ApiRegistry, Catalog
from pb_headless.registry.source import Source, SourceKind
from pb_headless.registry.spec import FieldSpec, ObjectSpec, RelationSpec, Through

__all__ = [
    "COMPONENT_GROUP",
    "DECLARATION_KEYS",
    "OPERATIONS",
    "ApiRegistry",
    "Catalog",
    "Declaration",
    "DeclarationError",
    "Events",
    "FieldSpec",
    "ObjectSpec",
    "OnServiceApiRegister",
    "RelationSpec",
    "Source",
    "SourceKind",
    "Through",
    "load_components",
]

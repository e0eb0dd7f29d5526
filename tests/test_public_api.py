"""The names integrators and hosts import are a contract (docs/library.md): this pins them.

As httpx does, `__all__` is compared with the names the package really exposes, so a name cannot leak
into the public surface (or drop out of it) unnoticed. Submodules are not names: they are reached by
their path, and only `pb_headless.admin` and `pb_headless.constructor` are public ones.
"""

import types

import pb_headless
import pb_headless.admin
import pb_headless.constructor


def exposed(module: types.ModuleType) -> list[str]:
    """The names a module answers to (its `dir()`, which includes names it loads on first use)."""
    return sorted(
        name
        for name in dir(module)
        if not name.startswith("_") and not isinstance(getattr(module, name), types.ModuleType)
    )


def test_the_public_names_are_exactly_these():
    assert sorted(pb_headless.__all__) == sorted(
        [
            "DECLARATION_KEYS",
            "ApiAuth",
            "ApiError",
            "ApiRegistry",
            "BadRequest",
            "CORSMiddleware",
            "DeclarationError",
            "Events",
            "Forbidden",
            "HeadlessAPI",
            "MethodNotAllowed",
            "NotFound",
            "OnServiceApiRegister",
            "PayloadTooLarge",
            "Principal",
            "RateLimited",
            "RequestTimeout",
            "RouteError",
            "ServiceUnavailable",
            "SettingsStore",
            "TokenError",
            "TokenInfo",
            "TokenStore",
            "Unauthorized",
            "UnknownObject",
            "UnsupportedMediaType",
            "ValidationFailed",
            "WebhookError",
            "WebhookOptions",
            "WebhookStore",
            "__version__",
            "install",
            "route",
        ]
    )


def test_all_is_exactly_what_each_public_module_exposes():
    for module in (pb_headless, pb_headless.admin, pb_headless.constructor):
        assert sorted(name for name in module.__all__ if name != "__version__") == exposed(module), module


def test_every_public_name_resolves():
    for name in pb_headless.__all__:
        assert getattr(pb_headless, name) is not None


def test_the_declaration_keys_are_specs_plus_table():
    assert {
        "model",
        "table",
        "fields",
        "filterable",
        "searchable",
        "sortable",
        "with",
        "per_page",
        "max_per_page",
        "default_sort",
        "query",
        "operations",
        "writable",
        "rules",
        "scopes",
    } == pb_headless.DECLARATION_KEYS


def test_the_registration_event_has_its_spec_name():
    assert pb_headless.OnServiceApiRegister == "OnServiceApiRegister"


def test_the_optional_modules_are_importable():
    import pb_headless.admin
    import pb_headless.constructor  # noqa: F401

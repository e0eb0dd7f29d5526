"""The names integrators and hosts import are a contract (CONTRACT §10): this pins them."""

import pb_headless


def test_the_public_names_are_exactly_these():
    assert sorted(pb_headless.__all__) == sorted([
        "DECLARATION_KEYS", "ApiAuth", "ApiError", "ApiRegistry", "BadRequest", "CORSMiddleware",
        "DeclarationError", "Events", "Forbidden", "HeadlessAPI", "MethodNotAllowed", "NotFound",
        "OnServiceApiRegister", "PayloadTooLarge", "Principal", "RateLimited", "RouteError", "ServiceUnavailable",
        "SettingsStore", "TokenError", "TokenInfo", "TokenStore", "Unauthorized", "UnknownObject",
        "UnsupportedMediaType", "ValidationFailed", "__version__", "install", "route",
    ])


def test_every_public_name_resolves():
    for name in pb_headless.__all__:
        assert getattr(pb_headless, name) is not None


def test_the_declaration_keys_are_specs_plus_table():
    assert pb_headless.DECLARATION_KEYS == {
        "model", "table", "fields", "filterable", "searchable", "sortable", "with", "per_page", "max_per_page",
        "default_sort", "query", "operations", "writable", "rules", "scopes"}


def test_the_registration_event_has_its_spec_name():
    assert pb_headless.OnServiceApiRegister == "OnServiceApiRegister"


def test_the_optional_modules_are_importable():
    import pb_headless.admin  # noqa: F401
    import pb_headless.constructor  # noqa: F401

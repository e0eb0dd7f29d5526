"""`OnServiceApiRegister` (docs/declarations.md): satellites subscribe through `setup(events)` and
register objects."""

import sys
import tomllib

import pytest
import sqlalchemy as sa

from pb_headless import ApiRegistry, DeclarationError, Events, HeadlessAPI, OnServiceApiRegister
from pb_headless.registry import COMPONENT_GROUP
from tests.integrators.example_site import SITE

SATELLITE = SITE / "satellite"
MODULE = "examples.integrators.satellite.pb_reviews"

things = sa.Table(
    "component_things",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(50)),
)


@pytest.fixture
def forget_pb_reviews():
    yield
    for name in [name for name in sys.modules if name == "pb_reviews" or name.startswith("pb_reviews.")]:
        del sys.modules[name]


async def test_the_handler_receives_the_registry_each_time_it_is_built(sqlite_database):
    registry = ApiRegistry()
    seen = []
    registry.events.on(OnServiceApiRegister, seen.append)
    await registry.build(sqlite_database)
    await registry.build(sqlite_database)
    assert seen == [registry, registry]


async def test_a_satellite_named_by_module_publishes_its_object(sqlite_database, host_factory):
    from examples.integrators.satellite.pb_reviews import install

    await install(sqlite_database)
    registry = ApiRegistry()
    assert registry.load_components([MODULE]) == [MODULE]
    host = await host_factory(sqlite_database, registry)
    plain = await host.token("reviews.read")
    answer = await host.client.get("/api/pb/v1/objects", headers=host.auth(plain))
    assert [item["name"] for item in answer.json()["data"]] == ["reviews"]


async def test_an_installed_satellite_is_found_through_its_entry_point(
    sqlite_database, tmp_path, monkeypatch, forget_pb_reviews
):
    declared = tomllib.loads((SATELLITE / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared == {COMPONENT_GROUP: {"reviews": "pb_reviews:setup"}}
    # What `pip install examples/integrators/satellite` leaves behind, without installing anything.
    dist_info = tmp_path / "pb_reviews-0.1.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: pb-reviews\nVersion: 0.1.0\n")
    entries = declared[COMPONENT_GROUP].items()
    lines = [f"[{COMPONENT_GROUP}]", *(f"{name} = {value}" for name, value in entries)]
    (dist_info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(SATELLITE))
    registry = ApiRegistry()
    assert registry.load_components() == ["reviews"]
    await sys.modules["pb_reviews"].install(sqlite_database)
    assert list(await registry.build(sqlite_database)) == ["reviews"]


def test_a_component_that_cannot_be_imported_is_named(tmp_path):
    with pytest.raises(DeclarationError, match=r"component 'examples\.integrators\.nowhere': cannot load"):
        ApiRegistry().load_components(["examples.integrators.nowhere"])
    with pytest.raises(DeclarationError, match=r"component 'examples\.integrators': .*defines no setup"):
        ApiRegistry().load_components(["examples.integrators"])


async def test_a_bad_table_declaration_from_a_component_stops_the_start_naming_component_object_and_key(
    sqlite_database, tmp_path, monkeypatch
):
    (tmp_path / "pb_broken_component.py").write_text(
        "def setup(events):\n"
        "    events.on('OnServiceApiRegister', lambda registry: registry.register(\n"
        "        'broken', {'table': 'component_things', 'fields': ['name', 'colour']}))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "pb_broken_component", raising=False)
    await sqlite_database.execute(sa.schema.CreateTable(things))
    registry = ApiRegistry()
    registry.load_components(["pb_broken_component"])
    with pytest.raises(DeclarationError) as refused:
        await HeadlessAPI(sqlite_database, registry).startup()
    message = str(refused.value)
    assert "component 'pb_broken_component'" in message
    assert "object 'broken'" in message and "key 'fields'" in message and "colour" in message
    sys.modules.pop("pb_broken_component", None)


async def test_a_handler_the_host_subscribed_itself_fails_with_its_own_error(sqlite_database):
    events = Events()

    def register(registry):
        registry.register("things", {"model": things, "fields": ["nope"]})

    events.on(OnServiceApiRegister, register)
    with pytest.raises(DeclarationError, match=r"^code: object 'things', key 'fields'"):
        await ApiRegistry(events).build(sqlite_database)


async def test_registrations_made_by_the_event_do_not_rebuild_the_catalog_on_every_request(sqlite_database):
    registry = ApiRegistry()
    declaration = {"model": things, "fields": ["name"]}
    registry.events.on(OnServiceApiRegister, lambda r: r.register("things", declaration))
    api = HeadlessAPI(sqlite_database, registry)
    first = await api.snapshot()
    assert await api.snapshot() is first


async def test_a_components_handler_runs_under_the_components_name(sqlite_database, tmp_path, monkeypatch):
    """What a component's handler registers names the component as its source; what the code's own
    handler registers, code."""
    (tmp_path / "pb_named_component.py").write_text(
        "from tests.integrators.test_components import things\n"
        "DECLARATION = {'model': things, 'fields': ['name']}\n"
        "def setup(events):\n"
        "    events.on('OnServiceApiRegister', lambda r: r.register('from_component', DECLARATION))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = ApiRegistry()
    registry.load_components(["pb_named_component"])
    declaration = {"model": things, "fields": ["name"]}
    registry.events.on(OnServiceApiRegister, lambda r: r.register("from_code", declaration))
    catalog = await registry.build(sqlite_database)
    assert str(catalog["from_component"].source) == "component 'pb_named_component'"
    assert str(catalog["from_code"].source) == "code"
    registry.register("afterwards", declaration)
    assert str((await registry.build(sqlite_database))["afterwards"].source) == "code"
    sys.modules.pop("pb_named_component", None)

"""A satellite component for the tests: named in PB_COMPONENTS, it publishes an object in code."""

from pb_headless import OnServiceApiRegister


def publish_writers(registry):
    registry.register("writers", {"table": "authors", "fields": ["name"], "sortable": ["name"]})


def setup(events):
    events.on(OnServiceApiRegister, publish_writers)

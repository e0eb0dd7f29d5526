"""pb_reviews: a satellite component that publishes product reviews through pb_headless."""

from pb_headless import OnServiceApiRegister

from .models import install, reviews

__all__ = ["install", "reviews", "setup"]


def register_objects(registry):
    """Called each time the registry is (re)built: publish the reviews object."""
    registry.register(
        "reviews",
        {
            "model": reviews,
            "fields": ["product_id", "rating", "body"],
            "filterable": ["product_id", "rating"],
            "sortable": ["rating"],
            "default_sort": "-rating",
            "operations": ["list", "show", "create"],
            "writable": ["product_id", "rating", "body"],
            "rules": {
                "product_id": "required|integer",
                "rating": "required|integer|between:1,5",
                "body": "required|string|max:2000",
            },
        },
    )


def setup(events):
    """The entry point: subscribe to the registration event."""
    events.on(OnServiceApiRegister, register_objects)

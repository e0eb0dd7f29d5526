"""The recipe site's declaration file: which data the API publishes (`ApiRegistry.load_file` reads `API`)."""

from examples.raw_asgi_host.models import recipes

API = {
    "recipes": {
        "model": recipes,
        "fields": ["title", "minutes", "vegetarian"],
        "filterable": ["minutes", "vegetarian"],
        "searchable": ["title"],
        "sortable": ["title", "minutes"],
    },
}

"""The bookshop's declaration file: which data the API publishes (`ApiRegistry.load_file` reads `API`)."""

from examples.starlette_host.models import books

API = {
    "books": {
        "model": books,
        "fields": ["title", "author", "year", "price"],
        "filterable": ["author", "year"],
        "searchable": ["title", "author"],
        "sortable": ["title", "year", "price"],
        "default_sort": "title",
    },
}

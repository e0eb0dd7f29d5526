"""The record shop's declaration file: which data the API publishes (`ApiRegistry.load_file` reads `API`)."""

from examples.fastapi_host.models import records

API = {
    "records": {
        "model": records,
        "fields": ["title", "artist", "genre", "price"],
        "filterable": ["artist", "genre"],
        "searchable": ["title", "artist"],
        "sortable": ["title", "price"],
    },
}

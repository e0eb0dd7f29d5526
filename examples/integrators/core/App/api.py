"""The site's declaration file: `API` maps each published object's name to its declaration."""

from core.App.models import products

API = {
    "products": {
        "model": products,
        "fields": ["name", "category", "price"],
        "filterable": ["category", "price"],
        "searchable": ["name"],
        "sortable": ["name", "price"],
        "default_sort": "name",
        "per_page": 10,
        "max_per_page": 50,
        # Served rows are narrowed further than `published`: nothing free is listed.
        "query": lambda select: select.where(products.c.price > 0),
        # Tokens for the shop's app carry catalog.read instead of products.read.
        "scopes": {"read": "catalog.read", "write": "catalog.write"},
    },
}

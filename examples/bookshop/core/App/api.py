from core.App.models import books

API = {
    "books": {
        "model": books,
        "fields": ["title", "summary", "genre", "price", "pages", "released_on", "writer_id"],
        "filterable": ["genre", "price", "pages"],
        "searchable": ["title", "summary"],
        "sortable": ["title", "pages"],
        "with": ["writer:id,name", "reviews:stars,text"],
        "per_page": 10,
        "max_per_page": 50,
        "default_sort": "-pages",
        "query": lambda select: select.where(books.c.price > 0),
        "operations": ["list", "show", "create", "update"],
        "writable": ["title", "genre", "price", "pages"],
        "rules": {"title": "required|string|max:200", "pages": "nullable|integer|min:1"},
        "scopes": {"read": "catalog.read", "write": "catalog.write"},
    },
    "writers": {"model": "core.App.models:writers", "fields": ["name"]},
}

"""What the example site publishes through its API: the site owner's declaration file.

`API` maps an object name (the `{name}` of /api/pb/v1/objects/{name}) to its declaration; the keys
are those of docs/declarations.md. A name here wins over a constructor table of the same name.
"""

from core.App.models import articles, authors

API = {
    "articles": {
        "model": articles,
        "fields": ["title", "body", "category", "price", "views", "featured", "published_at", "author_id"],
        "filterable": [
            "id",
            "title",
            "category",
            "price",
            "views",
            "featured",
            "published_at",
            "author_id",
            "author.name",
        ],
        "searchable": ["title", "body"],
        "sortable": ["id", "title", "price", "views", "published_at"],
        "default_sort": "-published_at",
        "with": ["author:id,name"],
        "per_page": 10,
        "max_per_page": 50,
        "operations": ["list", "show", "create", "update", "delete"],
        "writable": [
            "title",
            "body",
            "category",
            "price",
            "featured",
            "published_at",
            "author_id",
            "published",
        ],
        "rules": {
            "title": "required|string|max:200",
            "body": "nullable|string",
            "category": "nullable|in:news,guides,reviews",
            "price": "nullable|numeric|min:0",
            "featured": "boolean",
            "published_at": "nullable|date",
            "author_id": "nullable|integer",
            "published": "boolean",
        },
    },
    "authors": {
        "model": authors,
        "fields": ["name", "bio"],
        "filterable": ["id", "name", "articles.title"],
        "searchable": ["name", "bio"],
        "sortable": ["id", "name"],
        "with": ["articles:id,title,published_at"],
    },
}

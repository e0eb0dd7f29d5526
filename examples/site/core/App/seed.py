"""Demo rows `init` puts in each table of models.py that is still empty (parents first).

Every example in README.md and docs/ runs against these rows (docs/example-site.md lists them), so a
change here is a change to the documented outputs. Article 5 is the draft the docs explain: it is
never listed, counted, shown or loaded through the API.
"""

from datetime import datetime
from decimal import Decimal

from core.App.models import articles, authors

AUTHORS = [
    {"id": 1, "name": "Anna Pavlova", "bio": "Writes about the city and its people.", "published": True},
    {"id": 2, "name": "Борис Иванов", "bio": "Пишет о технике и науке.", "published": True},
]

ARTICLES = [
    {
        "id": 1,
        "title": "Welcome to the example site",
        "category": "news",
        "price": None,
        "body": "This site is served by Starlette; its articles are also published at /api/pb/v1.",
        "published_at": datetime(2026, 1, 10, 9, 0),
        "author_id": 1,
        "views": 120,
        "featured": True,
        "published": True,
    },
    {
        "id": 2,
        "title": "Новости компании",
        "category": "news",
        "price": None,
        "body": "Большие новости: сайт теперь отдаёт статьи через JSON API.",
        "published_at": datetime(2026, 1, 12, 12, 30),
        "author_id": 2,
        "views": 45,
        "featured": False,
        "published": True,
    },
    {
        "id": 3,
        "title": "A guide to filters",
        "category": "guides",
        "price": Decimal("9.99"),
        "body": "Try ?filter[category]=guides, ?search=filters or ?sort=-price on the articles list.",
        "published_at": datetime(2026, 1, 15, 8, 0),
        "author_id": 1,
        "views": 300,
        "featured": True,
        "published": True,
    },
    {
        "id": 4,
        "title": "Обзор: кофемашина за 19 990 ₽",
        "category": "reviews",
        "price": Decimal("19990.00"),
        "body": "Честный обзор недорогой кофемашины.",
        "published_at": datetime(2026, 1, 20, 18, 45),
        "author_id": 2,
        "views": None,
        "featured": False,
        "published": True,
    },
    {
        "id": 5,
        "title": "Draft: not published yet",
        "category": "news",
        "price": None,
        "body": "Neither the site nor the API shows this row until it is published.",
        "published_at": None,
        "author_id": 1,
        "views": None,
        "featured": False,
        "published": False,
    },
]

ROWS = [(authors, AUTHORS), (articles, ARTICLES)]

"""core/App/api.py"""

from core.App.models import Article, Tag

API = {
    "articles": {"model": Article, "fields": ["title"], "with": ["tags"]},
    "tags": {"model": Tag, "fields": ["name"], "with": ["articles"]},
}

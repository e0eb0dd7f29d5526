"""The public, server-rendered pages: the home page listing published articles, and an article page."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from databases import Database
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from examples.site.records import row_id
from examples.site.rendering import Templates
from examples.site.site_folder import SiteFolder

PAGE_SIZE = 20


class PublicPages:
    """Reads the site folder's `articles` (and `authors`) tables; a site without them shows a bare home."""

    def __init__(self, database: Database, folder: SiteFolder, templates: Templates) -> None:
        self.database = database
        self.folder = folder
        self.templates = templates

    def routes(self) -> list[Route]:
        return [
            Route("/", self.home, methods=["GET"]),
            Route("/articles/{article_id}", self.article, methods=["GET"]),
        ]

    async def home(self, request: Request) -> Response:
        articles = self.folder.table("articles")
        rows = await self.database.fetch_all(self._select().limit(PAGE_SIZE)) if articles is not None else []
        return self.templates.page(
            request,
            "home.html",
            {"articles": [self._article(row) for row in rows], "has_articles": articles is not None},
        )

    async def article(self, request: Request) -> Response:
        articles = self.folder.table("articles")
        article_id = row_id(request.path_params["article_id"])
        if articles is None or article_id is None:
            return self.templates.page(request, "not_found.html", status_code=404)
        row = await self.database.fetch_one(self._select().where(articles.c.id == article_id))
        if row is None:
            return self.templates.page(request, "not_found.html", status_code=404)
        return self.templates.page(request, "article.html", {"article": self._article(row)})

    def _select(self) -> sa.Select[Any]:
        articles, authors = self.folder.table("articles"), self.folder.table("authors")
        assert articles is not None
        columns: list[Any] = [articles]
        source: Any = articles
        if authors is not None and "author_id" in articles.c:
            columns.append(authors.c.name.label("author_name"))
            source = articles.outerjoin(authors, articles.c.author_id == authors.c.id)
        query = sa.select(*columns).select_from(source)
        if "published" in articles.c:
            query = query.where(articles.c.published.is_(True))
        order = articles.c.published_at.desc() if "published_at" in articles.c else articles.c.id.desc()
        return query.order_by(order, articles.c.id.desc())

    @staticmethod
    def _article(row: Any) -> dict[str, Any]:
        return dict(row._mapping)

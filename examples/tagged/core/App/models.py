"""core/App/models.py"""

import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


article_tags = sa.Table(
    "article_tags",
    Base.metadata,
    sa.Column("article_id", sa.ForeignKey("articles.id"), primary_key=True),
    sa.Column("tag_id", sa.ForeignKey("tags.id"), primary_key=True),
)


class Article(Base):
    __tablename__ = "articles"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(sa.String(200))
    tags: Mapped[list["Tag"]] = relationship(secondary=article_tags, back_populates="articles")


class Tag(Base):
    __tablename__ = "tags"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(sa.String(50))
    articles: Mapped[list[Article]] = relationship(secondary=article_tags, back_populates="tags")

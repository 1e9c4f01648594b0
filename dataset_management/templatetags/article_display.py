"""How pages name an article: `{{ row.title|or_first_words:row.abstract }}`."""

from __future__ import annotations

from typing import Any

from django import template

from dataset_management.articles import title_or_first_words
from dataset_management.source_fields import source_fields_shown

register = template.Library()


@register.filter
def or_first_words(title: Any, text: Any) -> str:
    """The title, else the first words of `text` (dataset_management.articles)."""
    return title_or_first_words(title=title, text=text)


@register.filter
def source_fields(record: Any) -> list[tuple[str, str]]:
    """Every non-empty field of a row's original record (dataset_management.source_fields)."""
    return source_fields_shown(record)

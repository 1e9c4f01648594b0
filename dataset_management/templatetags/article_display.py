"""How pages name an article: `{{ row.title|or_first_words:row.abstract }}`."""

from __future__ import annotations

from typing import Any

from django import template

from dataset_management.articles import title_or_first_words

register = template.Library()


@register.filter
def or_first_words(title: Any, text: Any) -> str:
    """The title, else the first words of `text` (dataset_management.articles)."""
    return title_or_first_words(title=title, text=text)

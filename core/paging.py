"""Paging for list pages: past PER_PAGE rows a list is paged, so its render time stops growing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

PER_PAGE = 100


def page_of(items: QuerySet | Sequence[Any], number: str | None, *,
            per_page: int | None = None) -> Page:
    """One page of a list (a queryset, or a list already in memory); a bad or too-high number
    gives the nearest real page. `per_page` defaults to PER_PAGE as it is when called."""
    return Paginator(items, per_page or PER_PAGE).get_page(number)

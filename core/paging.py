"""Paging for list pages: past PER_PAGE rows a list is paged, so its render time stops growing."""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet

PER_PAGE = 100


def page_of(queryset: QuerySet, number: str | None) -> Page:
    """One page of a list; a bad or too-high number gives the nearest real page."""
    return Paginator(queryset, PER_PAGE).get_page(number)

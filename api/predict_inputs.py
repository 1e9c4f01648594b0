"""The text a route takes (a text to classify or explain, an article's title and abstract, a
description), capped at MAX_TEXT_CHARS so an oversized one is refused, naming the cap, before
any model reads it or any row keeps it; and the articles the predict route reads."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework import serializers

from classification.engine.types import article_text


def text_cap_message() -> str:
    return (f"At most {settings.MAX_TEXT_CHARS:,} characters per text (MAX_TEXT_CHARS); "
            "nothing was read or kept.")


def capped_text(**options: Any) -> serializers.CharField:
    """A text refused past MAX_TEXT_CHARS, naming the cap, before any model reads it."""
    return serializers.CharField(max_length=settings.MAX_TEXT_CHARS,
                                 error_messages={"max_length": text_cap_message()}, **options)


class ArticleSerializer(serializers.Serializer):
    title = capped_text(required=False, allow_blank=True, default="")
    abstract = capped_text(required=False, allow_blank=True, default="")
    # Metadata a model trained with it reads beside the text (engine/metadata.py); each may be
    # left out, and a model trained on text only ignores them.
    journal = serializers.CharField(required=False, allow_blank=True, max_length=500,
                                    help_text="The journal's name.")
    mesh = serializers.ListField(child=serializers.CharField(max_length=500), required=False,
                                 max_length=200, help_text="MeSH headings.")
    publication_types = serializers.ListField(
        child=serializers.CharField(max_length=500), required=False, max_length=50,
        help_text="Publication types, e.g. Randomized Controlled Trial.")
    keywords = serializers.ListField(child=serializers.CharField(max_length=500),
                                     required=False, max_length=200, help_text="Keywords.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if len(article_text(attrs["title"], attrs["abstract"])) > settings.MAX_TEXT_CHARS:
            raise serializers.ValidationError(text_cap_message())
        return attrs

"""Transformers and embedding models read metadata as a short sentence before the text, capped
so a long MeSH list cannot push the abstract out of max_length; an empty article stays empty
(predict refuses it: metadata alone is not an article)."""

from __future__ import annotations

from classification.engine import metadata
from classification.engine.types import article_text_with_metadata


def test_the_prefix_names_each_field_in_plain_words() -> None:
    meta = {"journal": ["The Lancet"], "mesh": ["Neoplasms", "Humans"],
            "publication_types": ["Randomized Controlled Trial"]}
    text = article_text_with_metadata("Title", "Abstract", meta, fields=list(metadata.FIELDS))
    assert text == ("Journal: The Lancet. MeSH: Neoplasms; Humans. Type: Randomized Controlled "
                    "Trial.\nTitle\n\nAbstract")


def test_long_lists_and_values_are_capped() -> None:
    meta = {"mesh": [f"Heading {i}" for i in range(40)], "keywords": ["x" * 300]}
    prefix = metadata.metadata_prefix(meta, fields=["mesh", "keywords"])
    assert prefix.count(";") == metadata.PREFIX_MAX_VALUES["mesh"] - 1
    assert len(prefix) < 400


def test_no_fields_or_no_metadata_give_the_article_text_itself() -> None:
    assert article_text_with_metadata("T", "A", {"journal": ["J"]}) == "T\n\nA"
    assert article_text_with_metadata("T", "A", None, fields=["journal"]) == "T\n\nA"
    assert article_text_with_metadata("", "", {"journal": ["J"]}, fields=["journal"]) == ""

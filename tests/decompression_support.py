"""Decompression bombs for the tests, built in seconds whatever their inflated size.

A gzip file may hold several members one after the other, and every gzip reader (Python's,
gunzip) inflates them as one stream; so a bomb of N GiB of spaces is one member of 64 MiB of
spaces, compressed once, and written N * 16 times. The result is a valid .xml.gz that any tool
inflates to the full size.
"""

from __future__ import annotations

import gzip
from pathlib import Path

SPACES_MEMBER_BYTES = 64 << 20

PROLOGUE = (b'<?xml version="1.0" encoding="UTF-8"?>\n'
            b'<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2024//EN"'
            b' "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_240101.dtd">\n'
            b"<PubmedArticleSet>\n")
EPILOGUE = b"</PubmedArticleSet>\n"


def article_xml(number: int, *, abstract: str | None = None) -> bytes:
    """One small but real-shaped PubmedArticle."""
    text = abstract if abstract is not None else (
        f"Article {number} studies how patients with condition {number % 7} respond to "
        f"treatment {number % 5} over {number % 11 + 1} months.")
    return (f"<PubmedArticle><MedlineCitation Status=\"MEDLINE\"><PMID Version=\"1\">"
            f"{30000000 + number}</PMID><Article><Journal><Title>Journal {number % 3}</Title>"
            f"<JournalIssue><PubDate><Year>2020</Year></PubDate></JournalIssue></Journal>"
            f"<ArticleTitle>Title of article {number}</ArticleTitle><Abstract><AbstractText>"
            f"{text}</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle>\n"
            ).encode()


def articles_xml(count: int) -> bytes:
    return b"".join(article_xml(i) for i in range(1, count + 1))


def gzip_bomb(path: Path, *, articles: int, spaces_gib: int) -> Path:
    """`articles` articles, then `spaces_gib` GiB of spaces, then the closing tag, gzipped."""
    spaces = gzip.compress(b" " * SPACES_MEMBER_BYTES, compresslevel=9)
    with path.open("wb") as out:
        out.write(gzip.compress(PROLOGUE + articles_xml(articles)))
        for _ in range(spaces_gib * (1 << 30) // SPACES_MEMBER_BYTES):
            out.write(spaces)
        out.write(gzip.compress(EPILOGUE))
    return path


def pubmed_gz(path: Path, *, articles: int) -> Path:
    """An ordinary (non-hostile) .xml.gz of `articles` articles."""
    path.write_bytes(gzip.compress(PROLOGUE + articles_xml(articles) + EPILOGUE))
    return path

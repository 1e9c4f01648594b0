"""A PubMed XML file that declares entities (the "billion laughs" bomb, an external entity that
would read a local file), has an internal DTD, is malformed, or is another XML (efetch's error
answer, an esearch result) is refused with a one-line reason, and nothing is kept."""

from __future__ import annotations

import io

import pytest

from dataset_management.models import Dataset
from dataset_management.readers import XML_REFUSED, DatasetFileError
from dataset_management.readers.pubmed_xml import DTD_REFUSED, pubmed_articles
from tests.plugins.datasets import FORMATS, media_files

pytestmark = pytest.mark.django_db
EFETCH = (FORMATS / "pubmed_efetch.xml").read_bytes()
_, _, BODY = EFETCH.partition(b"<PubmedArticleSet>")

LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE PubmedArticleSet [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article>
<ArticleTitle>&lol3;</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>
"""
EXTERNAL = (b'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [ <!ENTITY x SYSTEM '
            b'"file:///etc/passwd"> ]>\n<PubmedArticleSet>' + BODY.replace(
                b"Olivero", b"&x;"))
INTERNAL_SUBSET = (b'<?xml version="1.0"?>\n<!DOCTYPE PubmedArticleSet [ <!ELEMENT a ANY> ]>\n'
                   b"<PubmedArticleSet>" + BODY)


@pytest.mark.parametrize("body", [LAUGHS, EXTERNAL, INTERNAL_SUBSET],
                         ids=["billion-laughs", "external-entity", "internal-dtd"])
def test_declarations_are_refused_before_any_article(import_file, tmp_path, body):
    path = tmp_path / "pubmed.xml"
    path.write_bytes(body)
    with pytest.raises(DatasetFileError) as caught:
        import_file(path)
    assert caught.value.message == DTD_REFUSED
    assert Dataset.objects.count() == 0
    assert media_files() == set()


def test_an_undeclared_entity_is_a_parse_error_naming_its_line():
    body = EFETCH.replace(b"Olivero", b"&nbsp;Olivero")
    with pytest.raises(DatasetFileError, match=r"^The PubMed XML is malformed at line 4, "
                                               r"column 853: undefined entity &nbsp;\.$"):
        list(pubmed_articles(io.BytesIO(body)))


def test_a_truncated_file_names_where_it_breaks_and_keeps_nothing(import_file, tmp_path):
    path = tmp_path / "pubmed.xml"
    path.write_bytes(EFETCH[: len(EFETCH) - 500])
    with pytest.raises(DatasetFileError, match=r"^The PubMed XML is malformed at line \d+, "
                                               r"column \d+: unclosed token\.$"):
        import_file(path)
    assert Dataset.objects.count() == 0


@pytest.mark.parametrize(("body", "reason"), [
    (b'<?xml version="1.0"?>\n<eFetchResult><ERROR>Empty id list</ERROR></eFetchResult>',
     "The file is an E-utilities error answer (eFetchResult), not articles: check the query, "
     "or fetch it again."),
    (b'<?xml version="1.0"?>\n<eSearchResult><Count>0</Count></eSearchResult>',
     "The XML file's root is <eSearchResult>, not <PubmedArticleSet>: it is not PubMed XML."),
    (b'<?xml version="1.0"?>\n<PubmedArticleSet></PubmedArticleSet>',
     "The PubMed XML file holds no articles."),
])
def test_other_answers_are_named(import_file, tmp_path, body, reason):
    path = tmp_path / "answer.xml"
    path.write_bytes(body)
    with pytest.raises(DatasetFileError) as caught:
        import_file(path, filename="answer.xml")
    assert caught.value.message in (reason, XML_REFUSED)
    assert Dataset.objects.count() == 0


def test_the_parser_names_another_root_to_its_callers():
    with pytest.raises(DatasetFileError, match=r"root is <eSearchResult>"):
        list(pubmed_articles(io.BytesIO(b"<eSearchResult><Count>0</Count></eSearchResult>")))


def test_other_xml_and_html_are_still_named_as_unsupported(import_file, tmp_path):
    for name, body in (("data.xml", b'<?xml version="1.0"?><rows><row/></rows>'),
                       ("page.csv", b"<!DOCTYPE html><html><body>Search results</body></html>")):
        path = tmp_path / name
        path.write_bytes(body)
        with pytest.raises(DatasetFileError) as caught:
            import_file(path)
        assert caught.value.message == XML_REFUSED


def test_a_csv_that_mentions_pubmedarticle_is_still_a_csv(import_file, tmp_path):
    path = tmp_path / "a.csv"
    path.write_bytes(b"title,abstract,source\nA,An abstract about pubmedarticle tags,pubmed\n")
    assert import_file(path).file_format == "csv"

"""The E-utilities client against a local server replaying recorded NCBI answers: esearch with
history, efetch in pages by WebEnv/query_key (only the pages holding wanted PMIDs), a 429 that
names its Retry-After, a 500 then success, a malformed page, an empty result, a query over
esearch's 10,000, and the over-the-limit answer NCBI may send with a 200."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from dataset_management.readers.pubmed_xml import pubmed_articles
from literature.eutils import EutilsClient, EutilsConfig, EutilsError
from tests.eutils_support import (
    HTTP_500,
    RATE_LIMITED,
    Answer,
    ReplayServer,
    recorded,
    script_run,
    truncated,
)

ALL = ["12091962", "9997", "11748933", "11700088", "27797938"]


@pytest.fixture
def server() -> Iterator[ReplayServer]:
    with ReplayServer() as replay:
        yield replay


def client_for(server: ReplayServer, **config: object) -> EutilsClient:
    options = {"base_url": server.base_url, "page_size": 2, "email": "librarian@example.org",
               "backoff_base": 0.05, "retries": 3, **config}
    return EutilsClient(EutilsConfig(**options))  # type: ignore[arg-type]


def test_pages_are_fetched_by_history_in_order_with_the_polite_parameters(
        server: ReplayServer) -> None:
    server.play(script_run("esearch_run2.xml"))
    client = client_for(server, api_key="k-123")
    result = client.esearch(term="cancer", mindate="2001/01/01", maxdate="2017/12/31")
    assert (result.count, result.pmids) == (5, ALL)
    assert result.webenv == "MCID_6927d6e7fee3e90f880ec190"
    assert result.query_key == "1"
    articles = client.articles(result=result, wanted=set(ALL), parse=pubmed_articles)
    assert [a["pmid"] for a in articles] == ALL
    assert articles[0]["abstract"] == ""  # 12091962 has a title only
    assert articles[4]["abstract"].startswith("OBJECTIVE: Telomere shortening")
    search, *pages = server.requests
    assert search.params | {"term": "cancer", "usehistory": "y", "db": "pubmed",
                            "mindate": "2001/01/01", "maxdate": "2017/12/31",
                            "datetype": "pdat"} == search.params
    assert [(p.params["retstart"], p.params["retmax"]) for p in pages] == [
        ("0", "2"), ("2", "2"), ("4", "2")]
    for request in server.requests:
        assert request.params["tool"] == "medlitbot"
        assert request.params["email"] == "librarian@example.org"
        assert request.params["api_key"] == "k-123"
    assert all(p.params["WebEnv"] == result.webenv and p.params["query_key"] == "1"
               for p in pages)
    assert client.requests == 4


def test_only_the_pages_that_hold_new_pmids_are_fetched(server: ReplayServer) -> None:
    server.play(script_run("esearch_run2.xml"))
    client = client_for(server)
    result = client.esearch(term="cancer")
    articles = client.articles(result=result, wanted={"12091962", "9997"},
                               parse=pubmed_articles)
    assert [a["pmid"] for a in articles] == ["12091962", "9997"]
    assert [r.params.get("retstart") for r in server.calls("efetch.fcgi")] == ["0"]


def test_a_429_waits_its_retry_after_and_a_500_backs_off_then_both_succeed(
        server: ReplayServer) -> None:
    server.play(script_run("esearch_run2.xml",
                           p2=[RATE_LIMITED, HTTP_500, recorded("efetch_pubmed2.xml")]))
    client = client_for(server)
    result = client.esearch(term="cancer")
    articles = client.articles(result=result, wanted=set(ALL), parse=pubmed_articles)
    assert [a["pmid"] for a in articles] == ALL
    page2 = [r.at for r in server.calls("efetch.fcgi") if r.params["retstart"] == "2"]
    assert len(page2) == 3
    assert page2[1] - page2[0] >= 1.0  # Retry-After: 1
    assert 0.1 <= page2[2] - page2[1] < 1.0  # the second backoff step: 0.05 * 2


def test_an_answer_that_stays_5xx_fails_with_a_reason_naming_the_tries(
        server: ReplayServer) -> None:
    server.play(script_run("esearch_run2.xml", p0=[HTTP_500]))
    client = client_for(server, retries=2)
    result = client.esearch(term="cancer")
    with pytest.raises(EutilsError) as caught:
        client.articles(result=result, wanted={"9997"}, parse=pubmed_articles)
    assert caught.value.reason.startswith("PubMed kept failing on articles 1-2: HTTP 500 "
                                          "(Internal Server Error) after 3 tries")
    assert caught.value.reason.endswith("Nothing was imported.")
    assert len(server.calls("efetch.fcgi")) == 3


def test_a_malformed_page_is_fetched_again_then_refused_with_its_article_numbers(
        server: ReplayServer) -> None:
    server.play(script_run("esearch_run2.xml", p2=[truncated("efetch_pubmed2.xml")]))
    client = client_for(server)
    result = client.esearch(term="cancer")
    with pytest.raises(EutilsError) as caught:
        client.articles(result=result, wanted=set(ALL), parse=pubmed_articles)
    reason = caught.value.reason
    assert reason.startswith("PubMed's answer for articles 3-4 is not readable PubMed XML, "
                             "twice (The PubMed XML is malformed at line"), reason
    assert len([r for r in server.calls("efetch.fcgi") if r.params["retstart"] == "2"]) == 2


def test_a_malformed_page_once_is_read_on_the_second_try(server: ReplayServer) -> None:
    server.play(script_run("esearch_run2.xml", p2=[truncated("efetch_pubmed2.xml"),
                                                   recorded("efetch_pubmed2.xml")]))
    client = client_for(server)
    result = client.esearch(term="cancer")
    assert len(client.articles(result=result, wanted=set(ALL), parse=pubmed_articles)) == 5


def test_an_empty_result_asks_for_no_page(server: ReplayServer) -> None:
    server.play(script_run("esearch_empty.xml"))
    client = client_for(server)
    result = client.esearch(term="abcXYZ")
    assert (result.count, result.pmids) == (0, [])
    assert client.articles(result=result, wanted=set(), parse=pubmed_articles) == []
    assert server.calls("efetch.fcgi") == []


def test_a_query_past_esearchs_ten_thousand_is_refused_with_what_to_do(
        server: ReplayServer) -> None:
    server.play(script_run("esearch_too_many.xml"))
    with pytest.raises(EutilsError) as caught:
        client_for(server).esearch(term="cancer")
    assert caught.value.reason.startswith(
        "The query finds 42,249 articles; E-utilities returns at most the first 10,000")


def test_the_over_the_limit_answer_sent_with_a_200_is_retried_like_a_429(
        server: ReplayServer) -> None:
    over_limit_200 = Answer(200, RATE_LIMITED.body, RATE_LIMITED.headers)
    server.play(script_run("esearch_run2.xml",
                           p4=[over_limit_200, recorded("efetch_pubmed4.xml")]))
    client = client_for(server)
    result = client.esearch(term="cancer")
    started = time.monotonic()
    articles = client.articles(result=result, wanted={"27797938"}, parse=pubmed_articles)
    assert [a["pmid"] for a in articles] == ["27797938"]
    assert time.monotonic() - started >= 1.0  # it honoured the answer's Retry-After


def test_pmids_the_pages_did_not_hold_are_fetched_by_id(server: ReplayServer) -> None:
    # NCBI's order moved between the search and the fetch: page 0 now holds other articles.
    server.play(script_run("esearch_run2.xml", p0=[recorded("efetch_pubmed2.xml")]))
    client = client_for(server)
    result = client.esearch(term="cancer")
    articles = client.articles(result=result, wanted={"12091962", "9997"},
                               parse=pubmed_articles)
    assert [a["pmid"] for a in articles] == ["12091962", "9997"]
    by_id = [r for r in server.calls("efetch.fcgi") if "id" in r.params]
    assert [(r.method, r.params["id"]) for r in by_id] == [("POST", "12091962,9997")]


def test_a_search_error_answer_is_the_reason(server: ReplayServer) -> None:
    error = Answer(200, b'<?xml version="1.0" encoding="UTF-8" ?>\n<eSearchResult><ERROR>'
                        b"Invalid query syntax</ERROR></eSearchResult>")
    server.play(script_run("esearch_run2.xml"))
    server.script.esearch = [error]
    with pytest.raises(EutilsError) as caught:
        client_for(server).esearch(term="((")
    assert caught.value.reason == ("PubMed could not run the query: Invalid query syntax. "
                                   "Nothing was imported.")

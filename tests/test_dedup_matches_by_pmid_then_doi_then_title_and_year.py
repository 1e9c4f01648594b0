"""The matcher (dataset_management.dedup, no Django) normalises DOIs (case, https://doi.org/,
doi:, trailing punctuation), titles (case, punctuation, spacing, accents) and first authors'
surnames (any of PubMed's, RIS's and a CSV's spellings), then matches by PMID, then DOI, then
title + year (+ first author when both have one). What identifiers say is never overruled:
two PMIDs are two articles. A title match with anything disagreeing is a near match."""

from __future__ import annotations

import pytest

from dataset_management.dedup import (
    Matcher,
    doi_normalise,
    first_author_surname,
    record_keys,
    title_normalise,
)


@pytest.mark.parametrize(("raw", "doi"), [
    ("10.1056/NEJMoa1900001", "10.1056/nejmoa1900001"),
    ("https://doi.org/10.1056/NEJMOA1900001", "10.1056/nejmoa1900001"),
    ("http://dx.doi.org/10.1056/nejmoa1900001", "10.1056/nejmoa1900001"),
    ("doi: 10.1056/nejmoa1900001.", "10.1056/nejmoa1900001"),
    ("DOI:https://doi.org/10.1056/nejmoa1900001;", "10.1056/nejmoa1900001"),
    ("10.1016/S0140-6736(19)30001-2", "10.1016/s0140-6736(19)30001-2"),
    ("10.1002/abc(2019)).", "10.1002/abc(2019)"),  # an unopened parenthesis is punctuation
    ("10.1056/nejm [doi]", "10.1056/nejm"),
    ("not a doi", ""),
    ("", ""),
])
def test_dois_are_normalised(raw: str, doi: str) -> None:
    assert doi_normalise(raw) == doi


def test_titles_lose_case_punctuation_spacing_and_accents() -> None:
    assert title_normalise("Über-Risk:  a [Trial].") == "uber risk a trial"
    assert title_normalise("ÜBER RISK — A TRIAL") == "uber risk a trial"


@pytest.mark.parametrize("authors", [
    ["Müller, Klaus"], ["Muller K"], ["Müller KA"], ["Klaus Müller"], "Muller K; Schmidt P",
    ["Muller, K.", "Schmidt, P."], ["Müller K.A."],
])
def test_first_author_surname_is_read_from_every_spelling(authors) -> None:
    assert first_author_surname(authors) == "muller"


def test_particles_stay_in_the_surname() -> None:
    assert first_author_surname(["van der Berg, J"]) == "vanderberg"
    assert first_author_surname([]) == ""


TITLE = "Statin therapy and cardiovascular outcomes in older adults"


def matched(*records: dict) -> tuple[list[int], dict[str, int], set[tuple[int, int, str]]]:
    """Each record's article (as the number of the first record in it), what merged them,
    and the near pairs (as first records' numbers)."""
    m = Matcher()
    for record in records:
        m.add(record_keys(**record))
    result = m.finish()
    first = {}
    for number, group in enumerate(result.groups):
        first.setdefault(group, number)
    articles = [first[g] for g in result.groups]
    near = {(first[a], first[b], why) for a, b, why in result.near}
    return articles, dict(result.merged_by), near


def test_pmid_then_doi_then_title_and_year() -> None:
    articles, by, near = matched(
        {"pmid": "1", "title": TITLE, "year": "2019", "authors": ["Smith, John"]},
        {"pmid": "PMID: 1", "doi": "10.1/A"},              # the PMID: it learns the DOI
        {"doi": "https://doi.org/10.1/a."},                 # so a DOI-only copy joins it
        {"title": TITLE.upper() + ".", "year": "2019", "authors": ["Smith J"]},
    )
    assert articles == [0, 0, 0, 0]
    assert by == {"pmid": 1, "doi": 1, "title": 1}
    assert near == set()


def test_a_doi_only_copy_first_is_joined_when_a_record_shows_pmid_and_doi() -> None:
    articles, by, _ = matched({"doi": "10.1/x"}, {"pmid": "5", "title": TITLE},
                              {"pmid": "5", "doi": "10.1/X"})
    assert articles == [0, 0, 0]
    assert sum(by.values()) == 2


def test_a_title_match_that_disagrees_is_a_near_match() -> None:
    base = {"title": TITLE, "year": "2019", "authors": ["Smith J"]}
    articles, _, near = matched(base, {**base, "year": "2021"})
    assert articles == [0, 1]
    assert near == {(0, 1, "different year (2019 / 2021)")}
    _, _, near = matched(base, {**base, "authors": ["Jones M"]})
    assert near == {(0, 1, "different first author")}
    _, _, near = matched(base, {"title": TITLE})
    assert near == {(0, 1, "no year to compare")}
    # Only one side names an author: nothing disagrees, so it merges.
    assert matched(base, {"title": TITLE, "year": "2019"})[0] == [0, 0]


def test_two_pmids_are_two_articles_whatever_else_they_share() -> None:
    articles, _, near = matched({"pmid": "10", "doi": "10.1/x", "title": TITLE, "year": "2019"},
                                {"pmid": "11", "doi": "10.1/x", "title": TITLE, "year": "2019"})
    assert articles == [0, 1]
    assert near == set()


def test_a_record_that_fits_two_articles_is_listed_with_both_in_any_order() -> None:
    """Two PubMed records under one title, year and author, and a copy without identifiers:
    it could be either, so it is merged with neither, whichever file came first."""
    one = {"pmid": "10", "title": TITLE, "year": "2019", "authors": ["Smith J"]}
    two = {**one, "pmid": "11"}
    bare = {"title": TITLE.lower(), "year": "2019", "authors": ["Smith, John"]}
    for order in ([one, two, bare], [bare, one, two], [one, bare, two]):
        articles, _, near = matched(*order)
        assert len(set(articles)) == 3
        assert {why for *_, why in near} == {"fits two articles with this title"}
        assert len(near) == 2


def test_different_dois_under_one_title_are_listed_not_merged() -> None:
    articles, _, near = matched({"doi": "10.1101/2020.01.01.1", "title": TITLE, "year": "2020"},
                                {"doi": "10.1056/x", "title": TITLE, "year": "2020"})
    assert articles == [0, 1]
    assert near == {(0, 1, "different DOI")}


def test_short_generic_titles_never_match_by_title() -> None:
    articles, _, near = matched({"title": "Correction.", "year": "2021"},
                                {"title": "Correction", "year": "2021"})
    assert articles == [0, 1]
    assert near == set()

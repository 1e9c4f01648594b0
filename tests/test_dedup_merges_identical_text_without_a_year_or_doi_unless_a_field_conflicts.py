"""The matcher's text rules (dataset_management.dedup.RULES): the same normalised title and
abstract is one article with or without a year or DOI, and so is the same abstract of real
length (MIN_ABSTRACT_CHARS) under any title; a missing field never blocks these, a conflicting
one does (two DOIs, years more than one apart: a near match), and two PMIDs are two articles.
Each merged article records the rules that joined it."""

from __future__ import annotations

from dataset_management.dedup import MIN_ABSTRACT_CHARS, RULES_SHOWN, Matcher, record_keys

TITLE = "Statin therapy and cardiovascular outcomes in older adults"
ABSTRACT = ("In 4,200 adults over 75 years, statins lowered major cardiovascular events by a "
            "fifth over five years, with no excess of muscle or liver harm. ") * 3


def matched(*records: dict) -> tuple[list[int], dict[int, list[str]], set[tuple[int, int, str]]]:
    m = Matcher()
    for record in records:
        m.add(record_keys(**record))
    result = m.finish()
    first: dict[int, int] = {}
    for number, group in enumerate(result.groups):
        first.setdefault(group, number)
    rules = {first[root]: found for root, found in result.rules.items()}
    return ([first[g] for g in result.groups], rules,
            {(first[a], first[b], why) for a, b, why in result.near})


def test_same_title_and_abstract_merge_without_year_or_doi() -> None:
    ris = {"title": TITLE, "abstract": ABSTRACT, "year": "2019", "doi": "10.1/a"}
    csv = {"title": TITLE.upper() + ".", "abstract": ABSTRACT.replace(",", "")}
    articles, rules, near = matched(ris, csv)
    assert articles == [0, 0]
    assert rules == {0: ["title_abstract"]}
    assert near == set()


def test_a_long_abstract_alone_merges_a_short_one_does_not() -> None:
    assert len(ABSTRACT.replace(" ", "")) >= MIN_ABSTRACT_CHARS
    articles, rules, _ = matched({"title": TITLE, "abstract": ABSTRACT},
                                 {"title": "Statins in the elderly", "abstract": ABSTRACT})
    assert (articles, rules) == ([0, 0], {0: ["abstract"]})
    short = "Statins lowered events in older adults."
    articles, _, _ = matched({"title": TITLE + " one", "abstract": short},
                             {"title": "Statins in the elderly", "abstract": short})
    assert articles == [0, 1]


def test_conflicting_fields_block_the_match_and_list_a_near_match() -> None:
    base = {"title": TITLE, "abstract": ABSTRACT, "year": "2019", "doi": "10.1/a"}
    articles, _, near = matched(base, {**base, "doi": "10.1/b"})
    assert (articles, near) == ([0, 1], {(0, 1, "different DOI")})
    articles, _, near = matched(base, {**base, "doi": "", "year": "2022"})
    assert (articles, near) == ([0, 1], {(0, 1, "different year (2019 / 2022)")})
    articles, _, _ = matched(base, {**base, "doi": "", "year": "2020"})  # one apart: in print
    assert articles == [0, 0]
    articles, _, near = matched({**base, "pmid": "1"}, {**base, "pmid": "2", "doi": ""})
    assert (articles, near) == ([0, 1], set())


def test_the_rules_are_named_for_the_page_in_the_order_tried() -> None:
    assert [rule["name"] for rule in RULES_SHOWN] == [
        "pmid", "doi", "title_abstract", "abstract", "title"]

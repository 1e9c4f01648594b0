"""A collection's near matches reviewed in a few decisions: the pairs grouped by how alike
their texts are (dedup.BANDS), a choice for a whole band ("merge all", "keep all apart") and
per-pair choices that override it. The decisions are then applied together, as one new
version (collection.near_matches_decide through one import job), never a version per page.

Reads only the report's list (at most collection.MAX_NEAR_LISTED pairs): the page costs the
same for a collection of 1,000 articles or 1,000,000 (scripts/benchmark_near_matches.py).
"""

from __future__ import annotations

from typing import Any

from core.paging import page_of

from .collection import COUNTS_KEY, DECISIONS, near_matches_read
from .dedup import BANDS
from .merged_groups import GROUPS_KEY
from .near_diff import pair_diff

# Pairs from reports written before bands existed have no similarity: shown apart.
UNBANDED = "unbanded"
# The merges that can be undone: as many to a page.
MERGES_SHOWN = 50
PERSON_MERGES = ("confirmed", "by hand")  # merged_groups' "by"; else a dedup rule's name


def pair_band(pair: dict[str, Any]) -> str:
    return pair.get("band") or UNBANDED


def near_bands_list(*, pairs: list[dict[str, Any]], articles: int) -> list[dict[str, Any]]:
    """Each band that holds pairs, strongest first: its name, what it means, its pairs'
    indices and the articles left if all of them were merged (pairs joined transitively)."""
    described = [(name, says) for _, name, says in BANDS]
    described.append((UNBANDED, "Listed before similarity bands were kept"))
    out = []
    for name, says in described:
        indices = [i for i, pair in enumerate(pairs) if pair_band(pair) == name]
        if indices:
            merged = _articles_joined([pairs[i]["rows"] for i in indices])
            out.append({"name": name, "says": says, "count": len(indices),
                        "indices": indices, "articles_if_merged": articles - merged})
    return out


def _articles_joined(row_pairs: list[list[int]]) -> int:
    """How many articles fewer there are once these pairs are merged: rows joined minus the
    groups they form (a-b and b-c is one group of three: two fewer)."""
    parent: dict[int, int] = {}

    def find(row: int) -> int:
        while parent.setdefault(row, row) != row:
            parent[row] = parent[parent[row]]
            row = parent[row]
        return row

    for a, b in row_pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    return len(parent) - len({find(row) for row in list(parent)})


def near_review_decisions(*, pairs: list[dict[str, Any]], band_choices: dict[str, str],
                          pair_choices: dict[int, str]) -> dict[int, str]:
    """Pair index -> "merge" or "split": each chosen band's choice for its pairs, a pair's own
    choice over its band's. Unknown choices are ignored here (the view reads only these);
    collection.near_decisions_check refuses indices that name no pair."""
    decisions = {i: band_choices[pair_band(pair)] for i, pair in enumerate(pairs)
                 if band_choices.get(pair_band(pair)) in DECISIONS}
    decisions.update({i: d for i, d in pair_choices.items() if d in DECISIONS})
    return decisions


def near_pairs_shown(*, dataset: Any, pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The page's pairs: each side's row (near_matches_read) and their fields side by side,
    the differences marked (near_diff.pair_diff)."""
    return [{**pair, "fields": pair_diff(sides=pair["sides"])}
            for pair in near_matches_read(dataset=dataset, pairs=pairs)]


def _how(by: str) -> str:
    return by if by in PERSON_MERGES else f"automatic: same {by}"


def merged_groups_shown(*, dataset: Any, page: str | None) -> Any:
    """One page (MERGES_SHOWN) of the merges that can be undone, in row order: each with its
    index, row, how it was merged and its records' titles, years and source files."""
    groups = ((dataset.report or {}).get(COUNTS_KEY) or {}).get(GROUPS_KEY) or []
    shown = page_of(range(len(groups)), page, per_page=MERGES_SHOWN)
    shown.rows = [{"index": i, "row": groups[i]["row"], "by": _how(groups[i].get("by", "")),
                   "records": [{"title": record.get("title") or "(no title)",
                                "year": record.get("year") or "",
                                "sources": record.get("source_files") or []}
                               for record in groups[i].get("records") or []]}
                  for i in shown.object_list]
    return shown

"""Which records of a collection are the same article (no Django, no I/O).

Several exports of one search (PubMed, Embase, Scopus) hold the same articles written in
different ways. A record is matched, in this order:

1. by PMID;
2. by DOI, normalised (case, `https://doi.org/`, `doi:`, trailing punctuation);
3. by normalised title and year, and first author's surname when both records name one.

The first two are identifiers: equal means the same article, whatever the other fields say
(two PMIDs that differ mean two articles, and then nothing merges them). A title match is
weaker, so it merges only when nothing disagrees and only one article fits; the same title with
a different year, first author or DOI, without a year to compare, or fitting two articles, is a
near match that a person confirms or splits. Titles are judged once every record is in, so the
order of the files never changes the answer.

Memory: the index holds keys only (identifiers, a 12-byte digest of the title, a year and a
surname per article), never titles or abstracts, so a million records fit in a few hundred MB.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from array import array
from collections import Counter
from dataclasses import dataclass
from typing import Any

# A normalised title shorter than this, spaces left out ("editorial", "erratum", "case
# report") names many articles: it never matches by title, only by identifiers.
MIN_TITLE_CHARS = 20
# A title shared by more records than this is a series ("Annual report of the ... registry"):
# it never matches by title. Near matches are listed against the first few articles only.
MAX_TITLE_GROUP = 50
MAX_NEAR_PER_RECORD = 3
TITLE_DIGEST_BYTES = 12

_DOI_PREFIX = re.compile(
    r"^(?:https?://)?(?:dx\.)?(?:doi\.org/|doi:\s*|doi\s+)", re.IGNORECASE)
_DOI_TRAILING = ".,;:'\"]}>"
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_INITIALS = re.compile(r"^[A-Z](?:\.?-?[A-Z]){0,3}\.?$")
_YEAR = re.compile(r"\b(1[5-9]\d\d|2[01]\d\d)\b")


def doi_normalise(value: Any) -> str:
    """'https://doi.org/10.1000/ABC.' -> '10.1000/abc'; '' when it is no DOI (no '10.' prefix).

    DOIs are case-insensitive by definition (ISO 26324), so casefolding loses nothing."""
    text = str(value or "").strip()
    while True:  # "doi: https://doi.org/..." is seen in the wild
        stripped = _DOI_PREFIX.sub("", text, count=1).strip()
        if stripped == text:
            break
        text = stripped
    text = text.split()[0] if text.split() else ""
    text = text.casefold()
    while text and (text[-1] in _DOI_TRAILING or (text[-1] == ")" and
                                                  text.count("(") < text.count(")"))):
        text = text[:-1]  # a sentence's full stop, or a parenthesis the DOI did not open
    return text if text.startswith("10.") and "/" in text else ""


def pmid_normalise(value: Any) -> str:
    """'PMID: 00012345' -> '12345'; '' when it holds no number."""
    digits = re.sub(r"\D", "", str(value or ""))
    return digits.lstrip("0")


def _ascii_fold(text: str) -> str:
    """NFKD with the combining marks dropped: 'Müller' and 'Muller' are one spelling."""
    return "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c))


def title_normalise(value: Any) -> str:
    """Case, punctuation, spacing and accents set aside: 'Über-Risk:  a [Trial].' ->
    'uber risk a trial'."""
    return " ".join(_NOT_ALNUM.sub(" ", _ascii_fold(str(value or "")).casefold()).split())


def surname_normalise(author: Any) -> str:
    """The surname of one author as 'Smith, John', 'Smith JA', 'Smith J.A.' or 'John Smith',
    folded to letters: 'smith'. Particles stay: 'van der Berg, J' -> 'vanderberg'."""
    name = str(author or "").strip()
    if not name:
        return ""
    if "," in name:
        surname = name.split(",", 1)[0]
    else:
        parts = name.split()
        if len(parts) > 1 and _INITIALS.match(parts[-1]):
            surname = " ".join(parts[:-1])   # PubMed's "Smith JA"
        else:
            surname = parts[-1]              # "John Smith"
    return _NOT_ALNUM.sub("", _ascii_fold(surname).casefold())


def first_author_surname(authors: Any) -> str:
    if isinstance(authors, (list, tuple)):
        return surname_normalise(authors[0]) if authors else ""
    return surname_normalise(str(authors or "").split(";")[0])


def year_normalise(value: Any) -> str:
    found = _YEAR.search(str(value or ""))
    return found.group(1) if found else ""


@dataclass(frozen=True, slots=True)
class RecordKeys:
    """What the matcher compares; '' / b'' for what the record lacks."""

    pmid: str = ""
    doi: str = ""
    title: bytes = b""   # digest of the normalised title; b"" when absent or too short
    year: str = ""
    author: str = ""     # first author's normalised surname


def record_keys(*, pmid: Any = "", doi: Any = "", title: Any = "", year: Any = "",
                authors: Any = None) -> RecordKeys:
    """A record's keys from its raw fields (any export's spelling). The title is compared
    without its spaces too: "SGLT-2" and "SGLT2" differ only by where punctuation was."""
    normalised = title_normalise(title).replace(" ", "")
    digest = (hashlib.blake2b(normalised.encode(), digest_size=TITLE_DIGEST_BYTES).digest()
              if len(normalised) >= MIN_TITLE_CHARS else b"")
    return RecordKeys(pmid=pmid_normalise(pmid), doi=doi_normalise(doi), title=digest,
                      year=year_normalise(year), author=first_author_surname(authors))




@dataclass
class Matching:
    """The matcher's answer. `groups`: per record (in the order added), its article, named by
    the id of the article's first record's cluster; `merged_by`: how many records each key
    merged ('pmid', 'doi', 'title'); `near`: (article, article, why) for a person to judge."""

    groups: array
    merged_by: Counter
    near: list[tuple[int, int, str]]


@dataclass
class _Group:
    """Articles one title stands for, while its clusters are resolved: their keys together."""

    root: int
    pmid: str
    dois: set[str]
    year: str
    authors: set[str]


class Matcher:
    """Feed every record's keys with add(), then finish() once.

    While records stream in, identifiers join them (PMID, then DOI unless the PMIDs differ):
    only keys are kept. finish() then looks at each normalised title once, with every record
    known, so the order of the files cannot change the answer: a record without a PMID joins
    the one article its title, year and first author fit, and is a near match, never merged,
    when it fits two (two PubMed records under one title) or when anything disagrees.
    """

    def __init__(self) -> None:
        self.record_cluster = array("q")
        self.parent = array("q")  # union-find over clusters: two joined are one article
        self.pmid: list[str] = []
        self.doi: list[str] = []
        self.title: list[bytes] = []
        self.year: list[str] = []
        self.author: list[str] = []
        self._more_titles: dict[int, set[bytes]] = {}
        self._by_pmid: dict[str, int] = {}
        self._by_doi: dict[str, int] = {}
        self.merged_by: Counter = Counter()

    def __len__(self) -> int:
        return len(self.record_cluster)

    def add(self, keys: RecordKeys) -> int:
        """Take one record's keys; its number (0-based, in the order added)."""
        parent = self.parent
        by_pmid = _find(parent, self._by_pmid[keys.pmid]) if keys.pmid in self._by_pmid else None
        by_doi = _find(parent, self._by_doi[keys.doi]) if keys.doi in self._by_doi else None
        if by_doi is not None and _differ(self.pmid[by_doi], keys.pmid):
            by_doi = None  # one DOI on two PubMed records: the PMIDs decide
        if by_pmid is not None and by_doi is not None and by_pmid != by_doi:
            # The record's PMID is one article's, its DOI another's (a DOI-only copy came
            # first): the record shows they are one.
            self._join(by_pmid, by_doi)
            self.merged_by["doi"] += 1
        cluster = by_pmid if by_pmid is not None else by_doi
        if cluster is None:
            cluster = self._new(keys)
        else:
            cluster = _find(parent, cluster)
            self._learn(cluster, keys)
            self.merged_by["pmid" if by_pmid is not None else "doi"] += 1
        self.record_cluster.append(cluster)
        return len(self.record_cluster) - 1

    def _join(self, keep: int, other: int) -> None:
        _union(self.parent, keep, other)
        root = _find(self.parent, keep)
        gone = other if root == keep else keep
        self._learn(root, self.keys_of(gone))
        self._more_titles.setdefault(root, set()).update(self._more_titles.pop(gone, ()))

    def keys_of(self, cluster: int) -> RecordKeys:
        return RecordKeys(self.pmid[cluster], self.doi[cluster], self.title[cluster],
                          self.year[cluster], self.author[cluster])

    def finish(self) -> Matching:
        parent = self.parent
        by_title: dict[bytes, list[int]] = {}
        for cluster, title in enumerate(self.title):
            for each in (title, *self._more_titles.get(cluster, ())):
                if each:
                    by_title.setdefault(each, []).append(cluster)
        near: list[tuple[int, int, str]] = []
        for clusters in by_title.values():
            if 1 < len(clusters) <= MAX_TITLE_GROUP:
                self._resolve(clusters, parent, near)
        groups = array("q", (_find(parent, c) for c in self.record_cluster))
        near = [(_find(parent, a), _find(parent, b), why) for a, b, why in near]
        return Matching(groups, self.merged_by, [n for n in near if n[0] != n[1]])

    def _resolve(self, clusters: list[int], parent: array, near: list) -> None:
        """One title's clusters: those with a PMID first (each its own article), then those
        with a DOI, then the rest, each joining the one article it fits, if only one."""
        roots = list(dict.fromkeys(_find(parent, c) for c in clusters))
        groups: list[_Group] = []
        for cluster in sorted(roots, key=lambda c: (not self.pmid[c], not self.doi[c], c)):
            verdicts = [(group, self._verdict(group, cluster)) for group in groups]
            fits = [group for group, why in verdicts if why == ""]
            if len(fits) == 1:
                _union(parent, fits[0].root, cluster)
                self._absorb(fits[0], cluster)
                self.merged_by["title"] += 1
                continue
            listed = [(group.root, cluster, why or "fits two articles with this title")
                      for group, why in verdicts if why is not None]
            near.extend(listed[:MAX_NEAR_PER_RECORD])
            groups.append(_Group(cluster, self.pmid[cluster], {self.doi[cluster]} - {""},
                                 self.year[cluster], {self.author[cluster]} - {""}))

    def _verdict(self, group: _Group, cluster: int) -> str | None:
        """'' for the same article, a reason for a near match, None for another article."""
        if _differ(group.pmid, self.pmid[cluster]):
            return None  # two PubMed records: two articles, however alike their titles
        reasons = []
        doi = self.doi[cluster]
        if doi and group.dois and doi not in group.dois:
            reasons.append("different DOI")
        year = self.year[cluster]
        if not (group.year and year):
            reasons.append("no year to compare")
        elif group.year != year:
            reasons.append(f"different year ({group.year} / {year})")
        author = self.author[cluster]
        if author and group.authors and author not in group.authors:
            reasons.append("different first author")
        return ", ".join(reasons)

    def _absorb(self, group: _Group, cluster: int) -> None:
        group.pmid = group.pmid or self.pmid[cluster]
        group.dois |= {self.doi[cluster]} - {""}
        group.authors |= {self.author[cluster]} - {""}

    def _new(self, keys: RecordKeys) -> int:
        cluster = len(self.pmid)
        self.parent.append(cluster)
        self.pmid.append(keys.pmid)
        self.doi.append(keys.doi)
        self.title.append(keys.title)
        self.year.append(keys.year)
        self.author.append(keys.author)
        self._index(cluster, keys)
        return cluster

    def _learn(self, cluster: int, keys: RecordKeys) -> None:
        """The cluster takes what it lacked (a DOI from Embase, a PMID from PubMed), so the
        next export's copy matches it by either; a second title is kept for finish()."""
        for name in ("pmid", "doi", "title", "year", "author"):
            column = getattr(self, name)
            if not column[cluster] and getattr(keys, name):
                column[cluster] = getattr(keys, name)
        if keys.title and keys.title != self.title[cluster]:
            self._more_titles.setdefault(cluster, set()).add(keys.title)
        self._index(cluster, keys)

    def _index(self, cluster: int, keys: RecordKeys) -> None:
        if keys.pmid:
            self._by_pmid.setdefault(keys.pmid, cluster)
        if keys.doi:
            self._by_doi.setdefault(keys.doi, cluster)


def _find(parent: array, item: int) -> int:
    while parent[item] != item:
        parent[item] = parent[parent[item]]
        item = parent[item]
    return item


def _union(parent: array, keep: int, other: int) -> None:
    """`other`'s article becomes `keep`'s (the earlier cluster stays the name)."""
    a, b = _find(parent, keep), _find(parent, other)
    if a != b:
        parent[max(a, b)] = min(a, b)


def _differ(a: str, b: str) -> bool:
    """Both known and not equal: a missing value never disagrees."""
    return bool(a and b and a != b)

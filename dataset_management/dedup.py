"""Which records of a collection are the same article (no Django, no I/O).

Several exports of one search (PubMed, Embase, Scopus) hold the same articles written in
different ways. The rules are kept here, in RULES, in the order they are tried; the collection
page shows them (RULES_SHOWN) and each merged article records the rules that joined it:

1. pmid: the same PMID;
2. doi: the same DOI, normalised (case, `https://doi.org/`, `doi:`, trailing punctuation);
3. title_abstract: the same normalised title and abstract, with or without a year or DOI;
4. abstract: the same normalised abstract of real length (MIN_ABSTRACT_CHARS), whatever the
   titles say (a CSV that cut or reworded its titles);
5. title: the same normalised title and a year on both (one year apart at most), and the same
   first author when both name one.

The first two are identifiers: equal means the same article, whatever the other fields say
(two PMIDs that differ mean two articles, and then nothing merges them). The others compare
text. A missing field never blocks them (a CSV without years or DOIs still matches its RIS
twin on its title and abstract); a conflicting one does (CONFLICTS): two different DOIs,
years more than one apart. Only the title rule, the weakest, also asks for a year on both
sides and no other first author. A text match blocked so, or one record fitting two
articles, is a near match that a person confirms or splits. Text keys are judged once every
record is in, so the order of the files never changes the answer.

Memory: the index holds keys only (identifiers, three 12-byte digests, a year and a surname
per article), never titles or abstracts, so a million records fit in a few hundred MB.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# A normalised title shorter than this, spaces left out ("editorial", "erratum", "case
# report") names many articles: it never matches by title, only by identifiers.
MIN_TITLE_CHARS = 20
# A title shared by more records than this is a series ("Annual report of the ... registry"):
# it never matches by title. Near matches are listed against the first few articles only.
MAX_TITLE_GROUP = 50
MAX_NEAR_PER_RECORD = 3
TITLE_DIGEST_BYTES = 12
# An abstract alone says "same article" from this many letters and digits (spaces left out):
# about 50 words, past the boilerplate that many records share ("No abstract available.",
# "This corrects the article ...", a publisher's copyright line, which run under 150).
MIN_ABSTRACT_CHARS = 300
# Title and abstract together need this much abstract: a shared one-line placeholder under
# a shared title says no more than the title (which the title rule judges, with its year).
MIN_PAIRED_ABSTRACT_CHARS = 50
# Years of one article differ by one at most (online ahead of print, then the year).
YEARS_APART = 1
TEXT_RULES = ("title_abstract", "abstract", "title")
RULES = (
    ("pmid", "Same PMID: one article, whatever else differs. Two different PMIDs are two "
             "articles, and no other rule merges them."),
    ("doi", "Same DOI (case, https://doi.org/ and doi: set aside)."),
    ("title_abstract", "Same title and same abstract (case, punctuation, spacing and accents "
                       "set aside), with or without a year or DOI."),
    ("abstract", f"Same abstract of at least {MIN_ABSTRACT_CHARS} letters and digits, "
                 "whatever the titles."),
    ("title", "Same title of at least 20 letters and digits, a year on both (one apart at "
              "most), and the same first author when both name one."),
)
CONFLICTS = ("A missing year, DOI or author never blocks a match; a conflicting one does: two "
             "different DOIs, or years more than one apart. Such pairs, and a record that fits "
             "two articles, are listed as near matches for a person to confirm or split.")
_WHAT = {"title_abstract": "title and abstract", "abstract": "abstract", "title": "title"}
RULES_SHOWN = tuple({"name": name, "says": says} for name, says in RULES)

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
    if text.isascii():  # most records: nothing to fold, and abstracts are long
        return text
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
    title_abstract: bytes = b""  # digest of title and abstract; b"" without an abstract
    abstract: bytes = b""        # digest of the abstract; b"" when shorter than the rule's


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=TITLE_DIGEST_BYTES).digest()


def record_keys(*, pmid: Any = "", doi: Any = "", title: Any = "", year: Any = "",
                authors: Any = None, abstract: Any = "") -> RecordKeys:
    """A record's keys from its raw fields (any export's spelling). Texts are compared
    without their spaces too: "SGLT-2" and "SGLT2" differ only by where punctuation was."""
    normalised, summary = _squeezed(title), _squeezed(abstract)
    paired = bool(normalised) and len(summary) >= MIN_PAIRED_ABSTRACT_CHARS
    return RecordKeys(
        pmid=pmid_normalise(pmid), doi=doi_normalise(doi),
        title=_digest(normalised) if len(normalised) >= MIN_TITLE_CHARS else b"",
        year=year_normalise(year), author=first_author_surname(authors),
        title_abstract=_digest(normalised + "\x1f" + summary) if paired else b"",
        abstract=_digest(summary) if len(summary) >= MIN_ABSTRACT_CHARS else b"")


def _squeezed(value: Any) -> str:
    """title_normalise's text without its spaces, in one pass (abstracts are long)."""
    return _NOT_ALNUM.sub("", _ascii_fold(str(value or "")).casefold())


def text_similarity(a: str, b: str) -> float:
    """How alike two records' texts are, 0 to 1: the share of their words they have in common
    (Jaccard, over normalised title and abstract). It sorts near matches into BANDS."""
    left, right = set(title_normalise(a).split()), set(title_normalise(b).split())
    if not (left or right):
        return 1.0
    return len(left & right) / len(left | right)


# Near matches by how alike their texts are: (lowest similarity, name, what the page says).
BANDS = (
    (0.9, "high", "Almost the same text (90% of the words or more)"),
    (0.5, "medium", "Much the same text (50 to 90% of the words)"),
    (0.0, "low", "The same title, different text (under half the words)"),
)


def similarity_band(similarity: float) -> str:
    return next(name for lowest, name, _ in BANDS if similarity >= lowest)




@dataclass
class Matching:
    """The matcher's answer. `groups`: per record (in the order added), its article, named by
    the id of the article's first record's cluster; `merged_by`: how many records each rule
    merged (RULES' names); `rules`: per article with duplicates, the rules that joined it;
    `near`: (article, article, why) for a person to judge, each pair once."""

    groups: array
    merged_by: Counter
    near: list[tuple[int, int, str]]
    rules: dict[int, list[str]] = field(default_factory=dict)


@dataclass
class _Group:
    """Articles one text key stands for, while its clusters are resolved: their keys."""

    root: int
    pmid: str
    dois: set[str]
    year: str
    authors: set[str]


class Matcher:
    """Feed every record's keys with add(), then finish() once.

    While records stream in, identifiers join them (PMID, then DOI unless the PMIDs differ):
    only keys are kept. finish() then looks at each text key once per rule (TEXT_RULES, the
    strongest first), with every record known, so the order of the files cannot change the
    answer: a cluster joins the one article its text fits, and is a near match, never
    merged, when it fits two (two PubMed records under one title) or when anything conflicts.
    """

    def __init__(self) -> None:
        self.record_cluster = array("q")
        self.parent = array("q")  # union-find over clusters: two joined are one article
        self.pmid: list[str] = []
        self.doi: list[str] = []
        self.year: list[str] = []
        self.author: list[str] = []
        self.digests: dict[str, list[bytes]] = {rule: [] for rule in TEXT_RULES}
        self._more: dict[str, dict[int, set[bytes]]] = {rule: {} for rule in TEXT_RULES}
        self._by_pmid: dict[str, int] = {}
        self._by_doi: dict[str, int] = {}
        self._rules: dict[int, set[str]] = {}
        self.merged_by: Counter = Counter()

    @property
    def title(self) -> list[bytes]:
        return self.digests["title"]

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
            self._join(by_pmid, by_doi, rule="doi")
        cluster = by_pmid if by_pmid is not None else by_doi
        if cluster is None:
            cluster = self._new(keys)
        else:
            cluster = _find(parent, cluster)
            self._learn(cluster, keys)
            rule = "pmid" if by_pmid is not None else "doi"
            self.merged_by[rule] += 1
            self._rules.setdefault(cluster, set()).add(rule)
        self.record_cluster.append(cluster)
        return len(self.record_cluster) - 1

    def _join(self, keep: int, other: int, *, rule: str) -> None:
        _union(self.parent, keep, other)
        root = _find(self.parent, keep)
        gone = other if root == keep else keep
        self._learn(root, self.keys_of(gone))
        for more in self._more.values():
            more.setdefault(root, set()).update(more.pop(gone, ()))
        self._rules.setdefault(root, set()).update({rule, *self._rules.pop(gone, ())})
        self.merged_by[rule] += 1

    def keys_of(self, cluster: int) -> RecordKeys:
        d = self.digests
        return RecordKeys(self.pmid[cluster], self.doi[cluster], d["title"][cluster],
                          self.year[cluster], self.author[cluster],
                          d["title_abstract"][cluster], d["abstract"][cluster])

    def finish(self) -> Matching:
        parent = self.parent
        near: list[tuple[int, int, str]] = []
        for rule in TEXT_RULES:
            by_key: dict[bytes, list[int]] = {}
            more = self._more[rule]
            for cluster, digest in enumerate(self.digests[rule]):
                for each in (digest, *more.get(cluster, ())):
                    if each:
                        by_key.setdefault(each, []).append(cluster)
            for clusters in by_key.values():
                if 1 < len(clusters) <= MAX_TITLE_GROUP:
                    self._resolve(clusters, parent, near, rule)
        groups = array("q", (_find(parent, c) for c in self.record_cluster))
        seen: set[tuple[int, int]] = set()
        pairs = []
        for a, b, why in near:
            a, b = _find(parent, a), _find(parent, b)
            pair = (min(a, b), max(a, b))
            if a != b and pair not in seen:  # one pair once, with the strongest rule's reason
                seen.add(pair)
                pairs.append((*pair, why))
        rules: dict[int, set[str]] = {}
        for cluster, joined in self._rules.items():
            rules.setdefault(_find(parent, cluster), set()).update(joined)
        order = [name for name, _ in RULES]
        return Matching(groups, self.merged_by, pairs,
                        {root: sorted(found, key=order.index) for root, found in rules.items()})

    def _resolve(self, clusters: list[int], parent: array, near: list, rule: str) -> None:
        """One text key's clusters: those with a PMID first (each its own article), then those
        with a DOI, then the rest, each joining the one article it fits, if only one."""
        roots = list(dict.fromkeys(_find(parent, c) for c in clusters))
        if len(roots) < 2:
            return
        groups: list[_Group] = []
        for cluster in sorted(roots, key=lambda c: (not self.pmid[c], not self.doi[c], c)):
            verdicts = [(group, self._verdict(group, cluster, rule)) for group in groups]
            fits = [group for group, why in verdicts if why == ""]
            if len(fits) == 1:
                self._absorb(fits[0], cluster, rule)
                continue
            listed = [(group.root, cluster, why or f"fits two articles with this {_WHAT[rule]}")
                      for group, why in verdicts if why is not None]
            near.extend(listed[:MAX_NEAR_PER_RECORD])
            groups.append(_Group(cluster, self.pmid[cluster], {self.doi[cluster]} - {""},
                                 self.year[cluster], {self.author[cluster]} - {""}))

    def _verdict(self, group: _Group, cluster: int, rule: str) -> str | None:
        """'' for the same article, a reason for a near match, None for another article."""
        if _differ(group.pmid, self.pmid[cluster]):
            return None  # two PubMed records: two articles, however alike their texts
        reasons = []
        doi = self.doi[cluster]
        if doi and group.dois and doi not in group.dois:
            reasons.append("different DOI")
        year = self.year[cluster]
        if group.year and year and abs(int(group.year) - int(year)) > YEARS_APART:
            reasons.append(f"different year ({group.year} / {year})")
        elif rule == "title" and not (group.year and year):
            reasons.append("no year to compare")
        author = self.author[cluster]
        if rule == "title" and author and group.authors and author not in group.authors:
            reasons.append("different first author")
        return ", ".join(reasons)

    def _absorb(self, group: _Group, cluster: int, rule: str) -> None:
        """`cluster` joins `group`'s article; the article's root learns what it lacked, so a
        later rule compares the keys of the whole article."""
        group.pmid = group.pmid or self.pmid[cluster]
        group.dois |= {self.doi[cluster]} - {""}
        group.authors |= {self.author[cluster]} - {""}
        group.year = group.year or self.year[cluster]
        self._join(group.root, cluster, rule=rule)
        group.root = _find(self.parent, group.root)

    def _new(self, keys: RecordKeys) -> int:
        cluster = len(self.pmid)
        self.parent.append(cluster)
        self.pmid.append(keys.pmid)
        self.doi.append(keys.doi)
        self.year.append(keys.year)
        self.author.append(keys.author)
        for rule in TEXT_RULES:
            self.digests[rule].append(getattr(keys, rule))
        self._index(cluster, keys)
        return cluster

    def _learn(self, cluster: int, keys: RecordKeys) -> None:
        """The cluster takes what it lacked (a DOI from Embase, a PMID from PubMed), so the
        next export's copy matches it by either; a second text is kept for finish()."""
        for name in ("pmid", "doi", "year", "author"):
            column = getattr(self, name)
            if not column[cluster] and getattr(keys, name):
                column[cluster] = getattr(keys, name)
        for rule in TEXT_RULES:
            column, value = self.digests[rule], getattr(keys, rule)
            if not column[cluster]:
                column[cluster] = value
            elif value and value != column[cluster]:
                self._more[rule].setdefault(cluster, set()).add(value)
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

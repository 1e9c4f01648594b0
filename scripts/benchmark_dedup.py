"""Precision and recall of a collection's duplicate merging, on a planted set built from the demo.

    .venv/bin/python scripts/benchmark_dedup.py [--originals 10000] [--planted 1000] [--seed 7]

Distinct articles are made from the demo's titles and abstracts (a qualifier tells the demo's
2,855 titles apart when more are asked for), each with a synthetic PMID, DOI, year, first
author and journal (some without a PMID, some without a DOI, some with neither). Then, per
kind, `--planted` copies of distinct articles are planted:

- doi:   the DOI only, in capitals or behind https://doi.org/, doi: or a full stop;
- pmid:  the PMID only ("PMID: n" in the CSV), the title in capitals, some without a year;
- title: no identifier, the title's punctuation, case, spacing and accents changed, the same
         year, the first author written another way (or missing);
- near:  no identifier, the same title, a year two or three apart: to be listed, never merged;

plus `--planted / 2` hard negatives: a different article under an existing title and year, with
its own PMID (two PubMed records): never to be merged. Half of all copies end their abstract
with a publisher's line, as database exports do. Everything is written as a MEDLINE .nbib (the
records with a PMID), a RIS and a CSV file, read back through the app's own readers, and matched
by dataset_management.dedup as the collection merge does. The baseline is what the import found
before collections: rows whose whole text (title + abstract) is equal under
dataset_management.normalize.text_key.

Precision and recall are over pairs of records (two records of one article are a true pair).
The run also times collection_merge on the three files (records/s, peak memory of this process).
Last line: JSON.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classification.engine.types import article_text  # noqa: E402
from dataset_management.articles import articles_read  # noqa: E402
from dataset_management.collection_merge import Source, collection_merge  # noqa: E402
from dataset_management.dedup import Matcher, record_keys, title_normalise  # noqa: E402
from dataset_management.normalize import text_key  # noqa: E402

DEMO = ROOT / "demo_data" / "medlit_challenge.csv"
QUALIFIERS = ["", "a follow-up study", "in children", "in older adults", "a cohort study",
              "a randomised trial", "a systematic review", "in primary care", "a pilot study",
              "in low-income countries", "a registry analysis", "a case series"]
SURNAMES = ["Smith", "García", "Nguyen", "Müller", "O'Brien", "Kowalski", "Chen", "Patel",
            "Jones", "Rossi", "van der Berg", "Haddad", "Kim", "Okafor", "Larsen", "Novák",
            "Silva", "Yamamoto", "Dubois", "Ivanova", "Cohen", "Singh", "Andersson", "Fischer"]
GIVEN = ["John", "Maria", "Thi", "Klaus", "Siobhan", "Anna", "Wei", "Anika", "Mark", "Giulia"]
JOURNALS = ["Lancet", "BMJ", "JAMA", "Circulation", "Neurology", "Hepatology", "Kidney Int"]
PUBLISHER = " Copyright © {year} Elsevier Ltd. All rights reserved."


@dataclass
class Rec:
    truth: int               # the article it is: equal truth, same article
    kind: str                # original, doi, pmid, title, near, negative
    title: str
    abstract: str
    year: str = ""
    authors: list[str] = field(default_factory=list)
    journal: str = ""
    pmid: str = ""
    doi: str = ""
    of: int = -1             # the original it was copied from (its title, for a negative)


def demo_articles() -> list[tuple[str, str]]:
    with DEMO.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))
    seen: set[str] = set()
    out = []
    for row in rows:
        title = " ".join(row["title"].split())
        key = title_normalise(title)
        if len(key.replace(" ", "")) >= 20 and key not in seen:  # a findable, unique title
            seen.add(key)
            out.append((title, " ".join(row["abstract"].split())))
    return out


def originals(n: int, rng: random.Random) -> list[Rec]:
    base = demo_articles()
    out = []
    for i in range(n):
        title, abstract = base[i % len(base)]
        qualifier = QUALIFIERS[(i // len(base)) % len(QUALIFIERS)]
        if qualifier:
            title = f"{title.rstrip('.')}: {qualifier}"
        rec = Rec(truth=i, kind="original", title=title, abstract=abstract,
                  year=str(rng.randint(1990, 2024)), journal=rng.choice(JOURNALS),
                  authors=[f"{rng.choice(SURNAMES)}, {rng.choice(GIVEN)}"
                           for _ in range(rng.randint(1, 4))])
        ids = rng.random()
        rec.pmid = str(20_000_000 + i) if ids < 0.75 else ""
        rec.doi = f"10.{1000 + i % 700}/med.{i:06d}" if 0.15 < ids < 0.95 else ""
        out.append(rec)
    return out


def short_author(full: str) -> str:
    """'Müller, Klaus' -> 'Müller K' (PubMed's AU)."""
    surname, _, given = full.partition(", ")
    return f"{surname} {given[:1]}"


def punctuate(title: str, rng: random.Random) -> str:
    """The same title as another database prints it."""
    t = title.replace(":", rng.choice([" -", " —", ";", ":"])).replace("-", " ")
    t = t.upper() if rng.random() < 0.3 else t.lower() if rng.random() < 0.5 else t
    t = t.replace(" ", "  ", 1) + rng.choice([".", "", " .", "?"])
    return t.replace("e", "é", 1) if rng.random() < 0.2 else t


def copy(rec: Rec, kind: str, rng: random.Random, **changes: object) -> Rec:
    abstract = rec.abstract + (PUBLISHER.format(year=rec.year) if rng.random() < 0.5 else "")
    out = Rec(truth=rec.truth, kind=kind, title=rec.title, abstract=abstract, year=rec.year,
              authors=list(rec.authors), journal=rec.journal, of=rec.truth)
    for name, value in changes.items():
        setattr(out, name, value)
    return out


def planted(base: list[Rec], k: int, rng: random.Random, *, overlap: bool = False) -> list[Rec]:
    """Each original gets at most one planted copy (or one negative), so every copy has one
    right answer. With `overlap` each kind samples all originals: a title copy of an article
    that also has a negative under its title and year then fits two articles and is listed
    as a near match, not merged (as it must be), which shows as lost recall."""
    pool = rng.sample(base, len(base))
    used: set[int] = set()

    def take(n: int, wanted=lambda rec: True) -> list[Rec]:
        if overlap:
            return rng.sample([rec for rec in pool if wanted(rec)], n)
        picked = [rec for rec in pool if rec.truth not in used and wanted(rec)][:n]
        used.update(rec.truth for rec in picked)
        return picked

    out = []
    for rec in take(k, lambda rec: bool(rec.doi)):
        doi = rng.choice([rec.doi.upper(), f"https://doi.org/{rec.doi}",
                          f"doi: {rec.doi}.", f"http://dx.doi.org/{rec.doi.upper()}"])
        out.append(copy(rec, "doi", rng, doi=doi, authors=[short_author(rec.authors[0])]))
    for rec in take(k, lambda rec: bool(rec.pmid)):
        out.append(copy(rec, "pmid", rng, pmid=rec.pmid, title=rec.title.upper(),
                        year=rec.year if rng.random() < 0.5 else ""))
    for rec in take(k):
        authors = [short_author(rec.authors[0])] if rng.random() < 0.5 else []
        out.append(copy(rec, "title", rng, title=punctuate(rec.title, rng), authors=authors))
    for rec in take(k):
        # Years more than one apart: one apart is one article (ahead of print, then in
        # print; dedup.YEARS_APART), so its copy would rightly merge.
        out.append(copy(rec, "near", rng, year=str(int(rec.year) + rng.choice([-3, -2, 2, 3]))))
    for j, rec in enumerate(take(k // 2, lambda rec: bool(rec.pmid))):
        out.append(Rec(truth=len(base) + j, kind="negative", title=rec.title,
                       abstract=f"A different report under the same title, number {j}.",
                       year=rec.year, authors=list(rec.authors), pmid=str(40_000_000 + j),
                       of=rec.truth))
    return out


def write_files(records: list[Rec], folder: Path,
                rng: random.Random) -> list[tuple[Path, list[Rec]]]:
    """Records with a PMID go to any of the three files, others to the RIS or the CSV."""
    files: dict[str, list[Rec]] = {"search.nbib": [], "search.ris": [], "search.csv": []}
    for rec in records:
        names = list(files) if rec.pmid and not rec.pmid.startswith("PMID") else list(files)[1:]
        files[rng.choice(names)].append(rec)
    writers = {"search.nbib": _nbib, "search.ris": _ris, "search.csv": _csv}
    out = []
    for name, recs in files.items():
        writers[name](folder / name, recs)
        out.append((folder / name, recs))
    return out


def _nbib(path: Path, recs: list[Rec]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in recs:
            f.write(f"PMID- {r.pmid}\nTI  - {r.title}\nAB  - {r.abstract}\n")
            f.writelines(f"FAU - {a}\n" for a in r.authors)
            f.write((f"DP  - {r.year}\n" if r.year else "") + f"JT  - {r.journal}\n")
            f.write((f"AID - {r.doi} [doi]\n" if r.doi else "") + "\n")


def _ris(path: Path, recs: list[Rec]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in recs:
            f.write(f"TY  - JOUR\nTI  - {r.title}\nAB  - {r.abstract}\n")
            f.writelines(f"AU  - {a}\n" for a in r.authors)
            f.write((f"PY  - {r.year}\n" if r.year else "") + (f"DO  - {r.doi}\n" if r.doi else ""))
            f.write(f"AN  - {r.pmid}\nDB  - MEDLINE\n" if r.pmid else "")
            f.write("ER  - \n\n")


def _csv(path: Path, recs: list[Rec]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(["title", "abstract", "authors", "year", "journal", "doi", "pmid"])
        for r in recs:
            out.writerow([r.title, r.abstract, "; ".join(r.authors), r.year, r.journal, r.doi,
                          f"PMID: {r.pmid}" if r.pmid else ""])


def match(files: list[tuple[Path, list[Rec]]]) -> tuple[list[tuple[Rec, int]], list, list]:
    """Each record with the article the matcher put it in, the near pairs, and the baseline's
    groups (equal text_key), reading the files as the collection merge does."""
    matcher, recs_in_order, baseline = Matcher(), [], []
    for path, recs in files:
        with articles_read(path=path, filename=path.name, overrides={"unlabelled": True}) as arts:
            for rec, article in zip(recs, arts, strict=True):
                ids, cit = article.identifiers, article.citation
                matcher.add(record_keys(pmid=ids.get("pmid"), doi=ids.get("doi"),
                                        title=article.title, year=cit.get("year"),
                                        authors=cit.get("authors")))
                recs_in_order.append(rec)
                baseline.append((rec, text_key(article_text(article.title, article.abstract))))
    matching = matcher.finish()
    assigned = list(zip(recs_in_order, matching.groups, strict=True))
    return assigned, [(a, b) for a, b, _ in matching.near], baseline


def pair_scores(assigned: list[tuple[Rec, object]]) -> dict[str, float | int]:
    """Pairwise precision and recall of a grouping against the truth. A near copy (another
    year) is to be listed for a person, not merged: for merging it is an article of its own."""
    def pairs(n: int) -> int:
        return n * (n - 1) // 2
    by_group: dict[object, Counter] = defaultdict(Counter)
    truth = Counter()
    for i, (rec, group) in enumerate(assigned):
        key = ("near", i) if rec.kind == "near" else rec.truth
        by_group[group][key] += 1
        truth[key] += 1
    predicted = sum(pairs(sum(c.values())) for c in by_group.values())
    correct = sum(pairs(n) for c in by_group.values() for n in c.values())
    true_pairs = sum(pairs(n) for n in truth.values())
    false_merges = sum(sum(c.values()) - max(c.values()) for c in by_group.values())
    return {"precision": round(correct / predicted, 4) if predicted else 1.0,
            "recall": round(correct / true_pairs, 4) if true_pairs else 1.0,
            "pairs_predicted": predicted, "pairs_true": true_pairs,
            "records_in_a_wrong_group": false_merges}


def kind_recall(assigned: list[tuple[Rec, int]]) -> dict[str, float]:
    """Per planted kind, the share handled right: doi, pmid, title copies merged with their
    original; near copies and negatives kept apart from it."""
    cluster_of_original = {rec.truth: c for rec, c in assigned if rec.kind == "original"}
    out = {}
    for kind in ("doi", "pmid", "title", "near", "negative"):
        copies = [(rec, c) for rec, c in assigned if rec.kind == kind]
        merged = sum(c == cluster_of_original[rec.of] for rec, c in copies)
        right = len(copies) - merged if kind in ("near", "negative") else merged
        out[kind] = round(right / len(copies), 4) if copies else 1.0
    return out


def near_recall(assigned: list[tuple[Rec, int]], near: list[tuple[int, int]]) -> float:
    cluster_of_original = {rec.truth: c for rec, c in assigned if rec.kind == "original"}
    listed = {frozenset(p) for p in near}
    copies = [(rec, c) for rec, c in assigned if rec.kind == "near"]
    found = sum(frozenset((c, cluster_of_original[rec.of])) in listed for rec, c in copies)
    return round(found / len(copies), 4) if copies else 1.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--originals", type=int, default=10_000)
    parser.add_argument("--planted", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--overlap", action="store_true",
                        help="plant every kind on any original (some get two copies)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    base = originals(args.originals, rng)
    records = base + planted(base, args.planted, rng, overlap=args.overlap)
    rng.shuffle(records)
    with tempfile.TemporaryDirectory(prefix="medlitbot-dedup-") as scratch:
        files = write_files(records, Path(scratch), rng)
        assigned, near, baseline = match(files)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t0 = time.perf_counter()
        merged = collection_merge(
            sources=[Source(p, p.name, {"unlabelled": True}) for p, _ in files],
            out=Path(scratch) / "merged.jsonl", caps={})
        seconds = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ours, old = pair_scores(assigned), pair_scores(baseline)
    kinds = kind_recall(assigned)
    result = {
        "records": len(records), "files": {p.name: len(r) for p, r in files},
        "merging": ours, "baseline_text_key": old, "copies_merged_by_kind": kinds,
        "near_pairs_listed_recall": near_recall(assigned, near),
        "recall_gain_over_baseline": round(ours["recall"] / old["recall"], 2)
        if old["recall"] else None,
        "merge_seconds": round(seconds, 2), "merge_records_per_s": round(len(records) / seconds),
        "duplicates_removed": merged.duplicates_removed, "near_listed": len(merged.near),
        "peak_rss_mb": round(peak, 1), "rss_before_merge_mb": round(before, 1),
    }
    print(f"{len(records)} records in 3 files ({result['files']})")
    print(f"merging:  precision {ours['precision']:.4f}  recall {ours['recall']:.4f}  "
          f"({ours['records_in_a_wrong_group']} records in a wrong group)")
    print(f"baseline: precision {old['precision']:.4f}  recall {old['recall']:.4f}  "
          "(equal normalised text, what the import found before)")
    print(f"handled right, by kind (doi/pmid/title merged, near/negative kept apart): {kinds}")
    print(f"near pairs listed for a person: {result['near_pairs_listed_recall']:.4f} of planted")
    print(f"collection_merge: {seconds:.2f} s, {result['merge_records_per_s']} records/s, "
          f"peak RSS {peak:.0f} MB")
    print(json.dumps(result))


if __name__ == "__main__":
    main()

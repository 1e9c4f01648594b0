"""Three exports of one search (PubMed MEDLINE, Embase RIS, Scopus CSV) with planted duplicates
become one dataset through `import_dataset FILE FILE FILE`: copies found by PMID only, by a DOI
written in another case with a prefix and a full stop, and by a title with other punctuation,
case and accents (same year and first author) are merged, keeping every identifier, every
source file and the longest abstract; the same title in another year, or by another first
author, is listed as a near match, never merged; two PubMed records with the same title
(different PMIDs) and two "Correction." notices stay four articles. The command prints the
counts per file and ends with `duplicates_removed=N` then `dataset_id=N`; the counts stay in
the report, where the PRISMA export finds them."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from dataset_management.collection import COUNTS_KEY
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_iter
from tests.plugins.datasets import ROOT, media_files

pytestmark = pytest.mark.django_db

DEDUP = ROOT / "tests" / "fixtures" / "dedup"
FILES = [DEDUP / "pubmed_search.nbib", DEDUP / "embase_search.ris", DEDUP / "scopus_search.csv"]


def run(*paths: Path, extra: tuple[str, ...] = ()) -> list[str]:
    out = StringIO()
    call_command("import_dataset", *map(str, paths), "--name", "Living review", "--owner",
                 "alice", "--unlabelled", *extra, stdout=out)
    return out.getvalue().splitlines()


def rows_by_title(dataset: Dataset) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for row in dataset_rows_iter(dataset=dataset):
        found.setdefault(row["title"].casefold().rstrip("."), []).append(row)
    return found


def test_three_formats_merge_into_one_dataset_with_counts_per_file(media_root, user) -> None:
    lines = run(*FILES)
    dataset = Dataset.objects.get()
    assert lines[-2:] == ["duplicates_removed=6", f"dataset_id={dataset.pk}"]
    # Each duplicate is counted in the file it came from (collection_counts' rule): PubMed's
    # file is first and has no repeats of its own.
    assert ("pubmed_search.nbib (nbib): 7 identified, 0 duplicates removed, 7 articles added, "
            "0 near matches to confirm") in lines
    assert ("embase_search.ris (ris): 8 identified, 3 duplicates removed, 5 articles added, "
            "1 near matches to confirm") in lines
    assert ("scopus_search.csv (csv): 6 identified, 3 duplicates removed, 3 articles added, "
            "1 near matches to confirm") in lines
    assert "In all: 21 identified, 6 duplicates removed, 2 near matches to confirm" in lines
    assert dataset.row_count == 15
    counts = dataset.report[COUNTS_KEY]
    assert (counts["records_identified"], counts["duplicates_removed"]) == (21, 6)
    assert counts["merged_by"] == {"doi": 2, "pmid": 1, "title": 3}
    # The validation report counts every record read; the PRISMA export reads its drops.
    assert dataset.report["rows_read"] == 21
    assert sum(n for why, n in dataset.report["dropped_by_reason"].items()
               if "duplic" in why) == 6


def test_each_kind_of_planted_duplicate_is_merged_keeping_everything(media_root, user) -> None:
    run(*FILES)
    rows = rows_by_title(rows_dataset := Dataset.objects.get())
    statin = rows["statin therapy and cardiovascular outcomes in older adults"]
    assert len(statin) == 1  # DOI in capitals behind https://doi.org/, no PMID
    assert statin[0]["identifiers"] == {"pmid": "31000001", "doi": "10.1056/NEJMoa1900001"}
    assert statin[0]["record"]["source_files"] == ["pubmed_search.nbib", "embase_search.ris"]
    assert statin[0]["abstract"].startswith("In 4,200 adults over 75")  # the longest kept
    epilepsy = rows["deep brain stimulation for refractory epilepsy: a randomised trial"]
    assert len(epilepsy) == 1  # "doi:10.1016/s0140-6736(19)30001-2." matched
    hepatitis = rows["hepatitis c elimination in people who inject drugs"]
    assert len(hepatitis) == 1  # "PMID: 31000003" only, title in lower case
    assert hepatitis[0]["record"]["source_files"] == ["pubmed_search.nbib",
                                                      "scopus_search.csv"]
    melanoma = [r for t, group in rows.items() if t.startswith("immunotherapy") for r in group]
    assert len(melanoma) == 1  # "—" for ":", "Muller K" for "Müller, Klaus"
    assert melanoma[0]["identifiers"] == {"pmid": "31000004"}
    assert "412 patients" in melanoma[0]["abstract"]  # the CSV's longer abstract won
    assert melanoma[0]["title"] == "Immunotherapy Response in Metastatic Melanoma — A Cohort Study"
    stroke = [r for t, group in rows.items() if t.startswith("early mobilisation") for r in group]
    assert len(stroke) == 1  # RIS and CSV, no identifiers at all: title, year and author
    sglt = [r for t, group in rows.items() if t.startswith("renal outcomes") for r in group]
    assert len(sglt) == 1  # within one file: "SGLT-2 ... type-2 diabetes."
    assert rows_dataset.row_count == 15


def test_near_matches_and_distinct_articles_are_never_merged(media_root, user) -> None:
    run(*FILES)
    dataset = Dataset.objects.get()
    rows = rows_by_title(dataset)
    assert len(rows["atrial fibrillation screening with wearable devices"]) == 2  # 2019 / 2021
    vitamin = "vitamin d supplementation and fracture risk in postmenopausal women"
    assert len(rows[vitamin]) == 2  # Patel / Jones
    assert len(rows["annual report of the national cardiac surgery registry"]) == 2  # 2 PMIDs
    assert len(rows["correction"]) == 2  # short, generic: never matched by title
    near = dataset.report[COUNTS_KEY]["near_matches"]
    by_id = {row["row_id"]: row for group in rows.values() for row in group}
    reasons = {by_id[pair["rows"][0]]["title"].casefold().rstrip("."): pair["reason"]
               for pair in near}
    assert reasons == {"atrial fibrillation screening with wearable devices":
                       "different year (2019 / 2021)", vitamin: "different first author"}


def test_one_unreadable_file_refuses_the_collection_naming_it(media_root, user,
                                                              tmp_path) -> None:
    broken = tmp_path / "broken.ris"
    broken.write_text("TY  - JOUR\nTI  - A title without its end\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"^broken\.ris: RIS record 1 .* no ER tag"):
        run(FILES[0], broken)
    assert Dataset.objects.count() == 0
    assert media_files() == set()


def test_one_file_imports_as_before_and_still_ends_with_both_lines(media_root, user) -> None:
    lines = run(FILES[1])
    dataset = Dataset.objects.get()
    assert lines[-2:] == ["duplicates_removed=0", f"dataset_id={dataset.pk}"]
    assert dataset.file_format == "ris"
    assert dataset.row_count == 8
    lines = run(FILES[1], extra=("--find-duplicates",))
    merged = Dataset.objects.latest("pk")
    assert lines[-2:] == ["duplicates_removed=1", f"dataset_id={merged.pk}"]
    assert merged.row_count == 7


def test_pubmed_xml_records_are_matched_by_their_pmid_and_doi(media_root, user,
                                                             tmp_path) -> None:
    efetch = ROOT / "tests" / "fixtures" / "formats" / "pubmed_efetch.xml"
    copy = tmp_path / "embase.ris"
    copy.write_text(  # the efetch file's two articles: one by its PMID, one by its DOI
        "TY  - JOUR\nTI  - Another title entirely for this record\nAB  - x\nAN  - 12091962\n"
        "DB  - MEDLINE\nER  - \n\nTY  - JOUR\nTI  - A title Embase wrote otherwise\nAB  - y\n"
        f"DO  - https://doi.org/{second_doi(efetch).upper()}\nER  - \n", encoding="utf-8")
    lines = run(efetch, copy)
    dataset = Dataset.objects.get()
    assert lines[-2:] == ["duplicates_removed=2", f"dataset_id={dataset.pk}"]
    assert dataset.report[COUNTS_KEY]["merged_by"] == {"pmid": 1, "doi": 1}
    assert dataset.row_count == 2


def second_doi(path: Path) -> str:
    from dataset_management.articles import articles_read

    with articles_read(path=path, filename=path.name, overrides={"unlabelled": True}) as found:
        return [article.identifiers.get("doi", "") for article in found][1]


def test_labelled_files_keep_every_label_of_a_merged_article(media_root, user,
                                                            tmp_path) -> None:
    def write(name: str, rows: list[tuple[str, str, str]]) -> Path:
        path = tmp_path / name
        path.write_text("title,abstract,doi,label\n" + "".join(
            f"{t},{a},{d},{label}\n" for t, a, d, label in
            [(f"Unrelated article number {i} on the heart", f"Text {i}.", "", "cardio|neuro"[
                (i % 2) * 7:(i % 2) * 7 + 6]) for i in range(8)] + rows), encoding="utf-8")
        return path

    first = write("a.csv", [("Gliomas and seizures in adults", "Long abstract here.",
                             "10.1/glioma", "onco")])
    second = write("b.csv", [("GLIOMAS AND SEIZURES IN ADULTS", "Short.", "doi:10.1/GLIOMA",
                              "neuro")])
    out = StringIO()
    call_command("import_dataset", str(first), str(second), "--name", "Labelled",
                 "--owner", "alice", stdout=out)
    dataset = Dataset.objects.get()
    glioma = [r for r in dataset_rows_iter(dataset=dataset) if r["identifiers"].get("doi")]
    assert [sorted(r["labels"]) for r in glioma] == [["neuro", "onco"]]
    assert glioma[0]["abstract"] == "Long abstract here."
    assert dataset.label_names == ["cardio", "neuro", "onco"]
    lines = out.getvalue().splitlines()
    assert lines[-2] == "duplicates_removed=1"
    # The 8 rows both files share have no year and no identifier: listed, not merged.
    assert "In all: 18 identified, 1 duplicates removed, 8 near matches to confirm" in lines

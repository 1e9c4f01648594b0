"""Exports a paper can cite (issue 35, item 3): every exported decision row carries its record
- record id, PMID and DOI, the title or (with none) the first sentence, authors, year and
journal, the stage and the exclusion reason; the abstract in JSON Lines and RIS; RIS's TI is
never empty and Zotero's reader (rispy) reads every field back. For a dataset and for a finished
batch alike."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from screening import export, fulltext, services
from screening.models import ScreeningSession
from screening.visibility import SIGHT_ALL
from tests.export_support import ris_parse, run_batch
from tests.pdf_support import report_attach
from tests.screening_review_support import CITED_ROWS, cited_dataset_make, jsonl_records
from tests.screening_support import team, trained_model_make  # noqa: F401

pytestmark = pytest.mark.django_db
REASONS = ["Wrong population", "Not a trial"]


@pytest.fixture
def decided(team) -> ScreeningSession:  # noqa: F811
    """One reviewer: two records excluded with a reason, one included and taken to full text,
    where it is excluded with a reason too; the fourth left undecided."""
    session = services.session_create(user=team.maintainer, dataset=cited_dataset_make(team),
                                      name="Cite", labels=["oncological"])
    ScreeningSession.objects.filter(pk=session.pk).update(exclusion_reasons=REASONS)
    session.refresh_from_db()
    first, second, third, _ = session.records.order_by("position")
    for record, reason in ((first, REASONS[0]), (second, REASONS[1])):
        services.decision_record(user=team.reviewer, record=record,
                                 values={"oncological": "no"}, reasons={"oncological": reason})
    services.decision_record(user=team.reviewer, record=third, values={"oncological": "yes"},
                             note="looks eligible")
    third.refresh_from_db()  # final yes at title/abstract: at full text now
    report_attach(user=team.reviewer, record=third)  # decided on a retrieved report only
    fulltext.fulltext_decision_record(user=team.reviewer, record=third,
                                      values={"oncological": "no"},
                                      reasons={"oncological": REASONS[1]},
                                      note="placebo arm only")
    return session


def test_every_csv_row_carries_its_record_stage_and_reason(decided) -> None:
    rows = list(csv.DictReader(io.StringIO("".join(export.export_csv(decided,
                                                                     sight=SIGHT_ALL)))))
    by_pmid = {pmid: row for pmid, *_ in CITED_ROWS for row in rows if row["pmid"] == pmid}
    assert len(by_pmid) == 4
    for pmid, doi, authors, year, journal, abstract in CITED_ROWS:
        row = by_pmid[pmid]
        assert row["doi"] == doi
        assert row["year"] == year
        assert row["journal"] == journal
        assert row["authors"] == authors.replace(", ", "; ")
        assert row["title"] == abstract.split(". ")[0] + "."  # no title column: first sentence
        assert row["record_id"].isdigit()
        assert row["id"] == pmid
    staged = [(r["stage"], r["value"], r["exclusion_reason"]) for r in rows
              if r["reviewer"] == "rita"]
    assert sorted(staged) == sorted([
        ("title_abstract", "no", REASONS[0]), ("title_abstract", "no", REASONS[1]),
        ("title_abstract", "yes", ""), ("full_text", "no", REASONS[1])])
    full_text = next(r for r in rows if r["stage"] == "full_text")
    assert (full_text["final"], full_text["final_exclusion_reason"]) == ("no", REASONS[1])
    assert full_text["note"] == "placebo arm only"


def test_json_lines_carry_the_abstract_the_citation_and_both_stages(decided) -> None:
    lines = jsonl_records("".join(export.export_jsonl(decided, sight=SIGHT_ALL)))
    assert len(lines) == 4
    for line in lines:
        pmid, doi, authors, year, journal, abstract = next(
            row for row in CITED_ROWS if row[0] == line["pmid"])
        assert line["abstract"] == abstract
        assert line["doi"] == doi
        assert (line["authors"], line["year"], line["journal"]) == (authors.split(", "),
                                                                    year, journal)
        assert line["identifiers"] == {"record_id": line["record_id"], "pmid": pmid, "doi": doi}
        assert line["source_url"] == f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
    reached = [line for line in lines if line["fulltext"]]
    assert len(reached) == 1
    assert reached[0]["labels"]["oncological"]["final"] == "yes"
    assert reached[0]["fulltext"]["oncological"]["final"] == "no"
    assert reached[0]["fulltext"]["oncological"]["exclusion_reason"] == REASONS[1]
    excluded = [line["labels"]["oncological"]["exclusion_reason"] for line in lines
                if line["labels"]["oncological"]["final"] == "no"]
    assert sorted(excluded) == sorted(REASONS)


def test_ris_reads_back_with_title_authors_year_journal_doi_and_abstract(decided) -> None:
    entries = ris_parse("".join(export.export_ris(decided, sight=SIGHT_ALL)))
    assert len(entries) == 4
    for entry in entries:
        pmid, doi, authors, year, journal, abstract = next(
            row for row in CITED_ROWS if row[5] == entry["abstract"])
        assert entry["title"] == abstract.split(". ")[0] + "."
        assert entry["authors"] == authors.split(", ")
        assert (entry["year"], entry["doi"]) == (year, doi)
        assert entry["journal_name"] == journal
        assert entry["accession_number"] == pmid
        assert entry["urls"] == [f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"]
    notes = " ".join(n for e in entries for n in e.get("notes", []))
    assert f"oncological (full text): rita said no ({REASONS[1]})" in notes
    keywords = [k for e in entries for k in e.get("keywords", [])]
    assert f"oncological: exclude - {REASONS[0]}" in keywords
    assert f"oncological (full text): exclude - {REASONS[1]}" in keywords


def test_a_record_with_no_text_at_all_still_has_a_ris_title(decided) -> None:
    record = decided.records.order_by("position").last()
    record.title, record.abstract = "", ""
    record.save(update_fields=["title", "abstract"])
    entries = ris_parse("".join(export.export_ris(decided, sight=SIGHT_ALL)))
    assert all(entry["title"].strip() for entry in entries)
    assert f"Record {record.position + 1}" in [entry["title"] for entry in entries]


def test_a_batch_sessions_exports_cite_its_articles(team, tfidf_artifact,  # noqa: F811
                                                    tmp_path: Path) -> None:
    articles = [
        {"pmid": "555", "doi": "10.1000/b.5", "title": "Glioma resection outcomes",
         "abstract": "Tumour control at a year.", "authors": "Ng A; Roy B", "year": "2017",
         "journal": "Brain"},
        {"pmid": "666", "title": "", "abstract": "Statins cut events. In older adults too.",
         "year": "2016"},
    ]
    path = tmp_path / "articles.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in articles), encoding="utf-8")
    batch = run_batch(owner=team.owner, path=path,
                      ml_model=trained_model_make(team, tfidf_artifact, name="Batch model"))
    session = services.session_create(user=team.maintainer, batch=batch, name="B",
                                      labels=["oncological"])
    rows = list(csv.DictReader(io.StringIO("".join(export.export_csv(session,
                                                                     sight=SIGHT_ALL)))))
    assert [(r["pmid"], r["doi"], r["title"], r["year"]) for r in rows] == [
        ("555", "10.1000/b.5", "Glioma resection outcomes", "2017"),
        ("666", "", "Statins cut events.", "2016")]
    assert rows[0]["journal"] == "Brain"
    assert "Ng A" in rows[0]["authors"]
    entries = ris_parse("".join(export.export_ris(session, sight=SIGHT_ALL)))
    assert [e["title"] for e in entries] == ["Glioma resection outcomes", "Statins cut events."]
    assert entries[1]["abstract"] == "Statins cut events. In older adults too."

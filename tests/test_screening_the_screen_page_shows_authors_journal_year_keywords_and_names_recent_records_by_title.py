"""The screen page for a day's work (issue 50): each record comes with its authors, year,
journal and keywords (which matter most for a record without an abstract), the list of the
reviewer's last decisions names records by their title (or first sentence), and the keywords
never carry the field a dataset's labels were read from (earlier screening decisions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files import File
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from dataset_management.services import dataset_create_from_upload
from screening import services
from tests.screening_support import FORMATS, team_make

pytestmark = pytest.mark.django_db

CSV = (
    "title,abstract,authors,journal,year,keywords,label\n"
    "Statins after infarction,Statins lowered events.,Smith J; Doe AB,Heart Journal,2021,"
    "statins; secondary prevention,cardiovascular\n"
    ",Lithium clearance fell in older adults. It rose again after rehydration.,Khan A,"
    "Renal Letters,2019,lithium,neurological\n"
)


def _session(owner: Any, dataset: Any) -> Any:
    return services.session_create(user=owner, dataset=dataset, name="Day",
                                   labels=["relevant"], ranker_every=1000)


def _client(person: Any) -> Client:
    client = Client()
    client.force_login(person)
    return client


def _next(client: Client, session: Any, exclude: list[int] = ()) -> dict[str, Any]:
    response = client.get(reverse("screening:next_json", args=[session.pk]),
                          {"exclude": ",".join(map(str, exclude))})
    assert response.status_code == 200, response.content
    return response.json()["record"]


def test_each_record_comes_with_its_authors_year_journal_and_keywords(
    user: Any, media_root: Path,
) -> None:
    team = team_make(user)
    dataset = dataset_create_from_upload(owner=user, project=team.project, name="Cited",
                                         uploaded_file=SimpleUploadedFile("cited.csv",
                                                                          CSV.encode()))
    session = _session(team.maintainer, dataset)
    rita = _client(team.reviewer)
    first = _next(rita, session)
    second = _next(rita, session, exclude=[first["id"]])
    by_title = {r["title_shown"]: r["citation"] for r in (first, second)}
    assert by_title == {
        "Statins after infarction": {
            "authors": ["Smith J", "Doe AB"], "year": "2021", "journal": "Heart Journal",
            "keywords": ["statins", "secondary prevention"]},
        # No title: the first sentence names it.
        "Lithium clearance fell in older adults.": {
            "authors": ["Khan A"], "year": "2019", "journal": "Renal Letters",
            "keywords": ["lithium"]},
    }
    page = rita.get(reverse("screening:screen", args=[session.pk])).content.decode()
    for part in ('id="record-citation"', 'id="record-authors"', 'id="record-year"',
                 'id="record-journal"', 'id="record-keywords"', 'class="abstract screen-abstract"',
                 'id="screen-actions"'):
        assert part in page


def test_the_recent_decisions_name_each_record_by_its_title(user: Any, media_root: Path) -> None:
    team = team_make(user)
    dataset = dataset_create_from_upload(owner=user, project=team.project, name="Cited",
                                         uploaded_file=SimpleUploadedFile("cited.csv",
                                                                          CSV.encode()))
    session = _session(team.maintainer, dataset)
    rita = _client(team.reviewer)
    for _ in range(2):
        record = _next(rita, session)
        response = rita.post(reverse("screening:decide_json", args=[session.pk]),
                             json.dumps({"record": record["id"],
                                         "values": {"relevant": "yes"}}),
                             content_type="application/json")
        assert response.status_code == 200, response.content
    recent = rita.get(reverse("screening:recent_json", args=[session.pk])).json()["records"]
    assert sorted(r["title_shown"] for r in recent) == [
        "Lithium clearance fell in older adults.", "Statins after infarction"]
    assert all(r["citation"]["journal"] for r in recent)


def test_mesh_headings_are_keywords_without_their_subheadings(
    user: Any, media_root: Path,
) -> None:
    team = team_make(user)
    with (FORMATS / "pubmed.nbib").open("rb") as handle:
        dataset = dataset_create_from_upload(owner=user, project=team.project, name="MEDLINE",
                                             uploaded_file=File(handle, name="pubmed.nbib"),
                                             mapping={"unlabelled": True})
    session = _session(team.maintainer, dataset)
    keywords = [r.citation.get("keywords") for r in session.records.order_by("position")]
    assert keywords[0] == ["Cardiovascular"]
    assert all(k and all("/" not in w and "*" not in w for w in k) for k in keywords)


def test_keywords_that_held_the_datasets_labels_are_not_shown(
    user: Any, media_root: Path,
) -> None:
    """A RIS library screened before keeps its decisions in KW ("include", "exclude"): they
    are the dataset's labels, and a reviewer reading them would see the earlier answer."""
    team = team_make(user)
    with (FORMATS / "screened_kw_labels.ris").open("rb") as handle:
        dataset = dataset_create_from_upload(
            owner=user, project=team.project, name="Screened",
            uploaded_file=File(handle, name="screened_kw_labels.ris"))
    assert dataset.label_field == "keywords"
    session = _session(team.maintainer, dataset)
    rita = _client(team.reviewer)
    record = _next(rita, session)
    assert record["citation"] == {"authors": ["Smith, J."], "year": "2021",
                                  "journal": "Test Journal", "keywords": []}
    assert not any(r.citation.get("keywords") for r in session.records.all())

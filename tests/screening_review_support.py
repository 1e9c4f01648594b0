"""Set-up for the review-side screening tests (blindness, conflicts, exports, PRISMA): a team
(tests.screening_support) and a dataset whose rows carry PMIDs, DOIs, authors, years and
journals but no title, as a PubMed CSV export with only an abstract column does."""

from __future__ import annotations

import json
from typing import Any

from django.core.files.base import ContentFile
from django.test import Client
from django.urls import reverse

from dataset_management.services import dataset_create_from_upload
from screening import selectors, services

CITED_ROWS = [
    # pmid, doi, authors, year, journal, abstract
    ("31000001", "10.1000/onc.1", "Smith J, Doe AB", "2019", "BMJ",
     "Tumour growth slowed under the new regimen. Survival rose at five years."),
    ("31000002", "10.1000/card.2", "Lee K", "2020", "Lancet",
     "Heart failure admissions fell after the programme. Costs were unchanged."),
    ("31000003", "10.1000/neuro.3", "Garcia M, Chen L", "2021", "JAMA",
     "Stroke patients walked sooner with gait training. Falls were fewer."),
    ("31000004", "10.1000/liver.4", "Okafor N", "2018", "Hepatology",
     "Cirrhosis progression slowed in treated patients. Liver stiffness dropped."),
]


def cited_dataset_make(team: Any, rows: list[tuple[str, ...]] = CITED_ROWS) -> Any:
    lines = ["pmid,doi,authors,year,journal,abstract"]  # unlabelled: the team decides
    for pmid, doi, authors, year, journal, abstract in rows:
        lines.append(f'{pmid},{doi},"{authors}",{year},{journal},"{abstract}"')
    return dataset_create_from_upload(
        owner=team.owner, project=team.project, name="Cited",
        uploaded_file=ContentFile("\n".join(lines).encode(), name="cited.csv"))


def dual_session_make(team: Any, dataset: Any, **options: Any) -> Any:
    return services.session_create(user=team.maintainer, dataset=dataset, name="Dual",
                                   labels=["oncological"], reviewers_per_record=2, **options)


def both_decide(team: Any, session: Any, first: str, second: str) -> Any:
    """Rita then Remy decide the next record; their notes name who wrote them."""
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record,
                             values={"oncological": first}, note="note-by-rita")
    services.decision_record(user=team.reviewer2, record=record,
                             values={"oncological": second}, note="note-by-remy")
    record.refresh_from_db()
    return record


def client_of(person: Any) -> Client:
    client = Client()
    client.force_login(person)
    return client


def export_text(person: Any, session: Any, fmt: str) -> str:
    """A download through the page and through the API must say the same: both are read."""
    client = client_of(person)
    page = client.get(reverse("screening:export", args=[session.pk, fmt]))
    api = client.get(reverse("api:screening_export", args=[session.pk, fmt]))
    assert page.status_code == api.status_code == 200, (page.status_code, api.status_code)
    page_text = b"".join(page.streaming_content).decode()
    assert page_text == b"".join(api.streaming_content).decode()
    return page_text


def jsonl_records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()[1:] if line.strip()]

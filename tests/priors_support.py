"""Set-up for the prior-knowledge and skip tests: a single-reviewer session over six records
with titles, PMIDs and DOIs, so priors can be chosen by search, ids, PMIDs or a file."""

from __future__ import annotations

from typing import Any

from django.core.files.base import ContentFile
from rest_framework.test import APIClient

from dataset_management.services import dataset_create_from_upload
from screening import services

ROWS = [
    # pmid, doi, title, abstract
    ("31000001", "10.1000/onc.1", "Chemotherapy for lung cancer", "Tumour growth slowed."),
    ("31000002", "10.1000/card.2", "Heart failure programme", "Admissions fell."),
    ("31000003", "10.1000/neuro.3", "Gait training after stroke", "Patients walked sooner."),
    ("31000004", "10.1000/liver.4", "Cirrhosis progression", "Liver stiffness dropped."),
    ("31000005", "10.1000/onc.5", "Radiotherapy of breast cancer", "Recurrence fell."),
    ("31000006", "10.1000/skin.6", "Eczema in children", "Itch was relieved."),
]


def titled_session_make(team: Any, **options: Any) -> Any:
    lines = ["pmid,doi,title,abstract"]
    lines += [f'{p},{d},"{t}","{a}"' for p, d, t, a in ROWS]
    dataset = dataset_create_from_upload(
        owner=team.owner, project=team.project, name="Titled",
        uploaded_file=ContentFile("\n".join(lines).encode(), name="titled.csv"))
    return services.session_create(user=team.maintainer, dataset=dataset, name="Priors",
                                   labels=["oncological"], **options)


def api_of(person: Any) -> APIClient:
    api = APIClient()
    api.force_authenticate(person)
    return api


def record_of(session: Any, pmid: str) -> Any:
    return next(r for r in session.records.all() if r.identifiers.get("pmid") == pmid)

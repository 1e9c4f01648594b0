"""A finished batch is a collection to screen: its classified articles (texts and ids) become
the records, PRISMA counts what the batch read and skipped, the exports work, and the session
outlives the batch's deletion (batches are purged after a week). A batch that has not completed,
two collections or none, each is refused with a message and nothing is made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from classification.batches.services import batch_job_delete
from classification.models import BatchJob
from projects.middleware import SESSION_KEY
from screening import export, selectors, services
from screening.models import Record, ScreeningSession
from screening.visibility import SIGHT_ALL
from tests.export_support import run_batch
from tests.screening_support import team, trained_model_make  # noqa: F401

pytestmark = pytest.mark.django_db

ARTICLES = [
    {"pmid": "111", "title": "Glioma resection outcomes", "abstract": "Tumour control at a year."},
    {"pmid": "222", "title": "Statins after infarction", "abstract": "Fewer cardiac events."},
    {"pmid": "333", "title": "", "abstract": ""},
    {"pmid": "444", "title": "Breast cancer screening", "abstract": "Mammography in women."},
]


@pytest.fixture
def batch(team, tfidf_artifact, tmp_path: Path) -> BatchJob:  # noqa: F811
    model = trained_model_make(team, tfidf_artifact, name="Batch model")
    path = tmp_path / "articles.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in ARTICLES), encoding="utf-8")
    return run_batch(owner=team.owner, ml_model=model, path=path)


def test_a_batch_becomes_records_with_their_ids_and_prisma_counts_what_it_read(
        team, batch) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, batch=batch, name="",
                                      labels=["oncological"])
    assert (session.source, session.dataset_id, session.batch_id) == ("batch", None, batch.pk)
    assert session.project_id == batch.project_id
    assert session.name.startswith("articles.jsonl (classified by Batch model)")
    records = list(Record.objects.filter(session=session).order_by("position"))
    assert [(r.ext_id, r.title) for r in records] == [
        ("111", "Glioma resection outcomes"), ("222", "Statins after infarction"),
        ("444", "Breast cancer screening")]
    assert all(r.truth is None for r in records)  # a prediction is no decision
    prisma = export.prisma_counts(session)
    assert prisma["source"] == "batch"
    assert (prisma["identified"], prisma["removed_without_text"]) == (4, 1)
    assert prisma["duplicates_removed"] == 0
    record = selectors.record_next(user=team.reviewer, session=session)
    services.decision_record(user=team.reviewer, record=record, values={"oncological": "yes"})
    header, *lines = [json.loads(line) for line in export.export_jsonl(session, sight=SIGHT_ALL)]
    assert header["prisma"]["identified"] == 4
    assert [line["id"] for line in lines] == ["111", "222", "444"]
    [decided] = [line for line in lines if line["id"] == record.ext_id]
    assert decided["labels"]["oncological"]["final"] == "yes"


def test_the_session_outlives_the_batch_and_keeps_its_counts(team, batch) -> None:  # noqa: F811
    session = services.session_create(user=team.maintainer, batch=batch, name="From batch",
                                      labels=["oncological"])
    batch_job_delete(batch=batch, actor=team.owner)
    session.refresh_from_db()
    assert session.batch_id is None
    assert session.collection_name.startswith("articles.jsonl")
    assert export.prisma_counts(session)["identified"] == 4
    # a header, 3 records
    assert "".join(export.export_csv(session, sight=SIGHT_ALL)).count("\r\n") == 4
    page = _client(team.maintainer).get(reverse("screening:detail", args=[session.pk]))
    assert "articles.jsonl (classified by Batch model)" in page.content.decode()


def test_a_batch_not_completed_two_collections_or_none_are_refused(team, batch) -> None:  # noqa: F811
    queued = BatchJob.objects.create(owner=team.owner, ml_model=batch.ml_model,
                                     project=team.project, filename="later.csv")
    with pytest.raises(services.ScreeningError, match="is queued: only a completed batch"):
        services.session_create(user=team.maintainer, batch=queued, name="x",
                                labels=["oncological"])
    with pytest.raises(services.ScreeningError, match="Choose one collection"):
        services.session_create(user=team.maintainer, batch=batch, dataset=team.dataset,
                                name="x", labels=["oncological"])
    with pytest.raises(services.ScreeningError, match="Choose one collection"):
        services.session_create(user=team.maintainer, name="x", labels=["oncological"])
    assert not ScreeningSession.objects.exists()
    assert not Record.objects.exists()


def test_the_database_holds_a_dataset_session_to_its_dataset_alone(team, batch) -> None:  # noqa: F811
    with pytest.raises(IntegrityError), transaction.atomic():
        ScreeningSession.objects.create(project=team.project, name="both", labels=["x"],
                                        dataset=team.dataset, batch=batch)
    with pytest.raises(IntegrityError), transaction.atomic():
        ScreeningSession.objects.create(project=team.project, name="none", labels=["x"])


def _client(person) -> Client:
    client = Client()
    client.force_login(person)
    return client


def test_the_form_and_the_api_offer_the_finished_batch(team, batch) -> None:  # noqa: F811
    boss = _client(team.maintainer)
    store = boss.session
    store[SESSION_KEY] = team.project.pk
    store.save()
    page = boss.get(reverse("screening:list")).content.decode()
    assert f'value="{batch.pk}"' in page
    assert "articles.jsonl · Batch model" in page
    both = boss.post(reverse("screening:list"), data={
        "name": "Both", "dataset": team.dataset.pk, "batch": batch.pk, "labels": "oncological",
        "order": "most_likely", "reviewers_per_record": 1, "ranker_every": 10,
        "recall_target": 0.95, "confidence": 0.95})
    assert both.status_code == 200
    assert "Choose one collection to screen" in both.content.decode()
    assert not ScreeningSession.objects.exists()
    api = APIClient()
    api.force_authenticate(team.maintainer)
    created = api.post("/api/screening/sessions/", {"name": "From batch", "batch": batch.pk.hex,
                                                    "labels": ["oncological"]}, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["collection"] == {"source": "batch", "name": body["collection"]["name"],
                                  "dataset": None, "batch": batch.pk.hex}
    assert body["records"] == 3

"""Find the best model also fine-tunes an adapted encoder: when its owner can see a finished
adapt model that read the search's dataset (training texts only, so never a validation or test
row), the search adds the `adapted` kind on the most recent such encoder, names it "MiniLM
adapted on <dataset>" on the job page, and its trial fine-tunes that encoder (the tiny BERT
here). With no such encoder, or only another person's, or a search narrowed to kinds that are
not transformers, nothing changes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from classification.engine.search import SearchClassifier
from classification.jobs import lifecycle, training
from classification.jobs.progress import ProgressWriter
from classification.jobs.searches import search_create
from classification.models import MLModel
from projects.services import project_personal

pytestmark = pytest.mark.django_db
CANDIDATES = ["tfidf_logreg", "minilm"]


@pytest.fixture(autouse=True)
def no_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lifecycle, "_enqueue", lambda **kw: None)


def adapted_encoder(owner: Any, dataset: Any, folder: Path, *, project_id: int | None = None,
                    training_only: bool = True, status: str = MLModel.Status.TRAINED,
                    name: str = "Slice · adapted minilm", minutes_ago: int = 0) -> MLModel:
    """An adapt model as adapt_job_create records its sources, its artifact `folder`."""
    return MLModel.objects.create(
        owner=owner, project_id=project_id or dataset.project_id, dataset=dataset, name=name,
        model_type="adapt", status=status, artifact_path=str(folder),
        trained_at=timezone.now() - timezone.timedelta(minutes=minutes_ago),
        parameters={"adapt_base": "minilm", "adapt_datasets": [str(dataset.pk)],
                    "adapt_batches": [], "adapt_training_only": training_only})


def test_the_search_fine_tunes_the_latest_encoder_adapted_on_its_dataset(
        user: Any, alice_client: Any, slice_dataset: Any, tiny_bert_dir: Path,
        tmp_path: Path) -> None:
    adapted_encoder(user, slice_dataset, tmp_path / "gone", name="Older", minutes_ago=60)
    latest = adapted_encoder(user, slice_dataset, tiny_bert_dir, name="Latest")

    job = search_create(owner=user, dataset=slice_dataset, time_budget_minutes=0.1,
                        candidates=CANDIDATES, ensemble=False)
    assert job.config["search_candidates"] == [*CANDIDATES, "adapted"]
    assert job.config["search_adapted_encoder"] == {
        "id": latest.pk, "name": "Latest", "label": "MiniLM adapted on Slice"}
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content
    assert "This search also fine-tunes MiniLM adapted on Slice" in page.decode()

    # The worker points the adapted kind, and it alone, at the encoder's folder on its node.
    config = training.build_config(job, ProgressWriter(job, interval=60.0))
    assert (config.encoder_model_id, config.model_path) == (latest.pk, str(tiny_bert_dir))
    config.search_storage = ""  # the study in the job's folder, not the test's database
    config.search_candidates = ["adapted"]
    config.epochs, config.max_length, config.batch_size = 1, 64, 16
    train, val = (training.load_split(slice_dataset, s) for s in ("train", "validation"))
    search = SearchClassifier()
    metrics = search.fit(train, val, config, lambda _event: None, lambda: False)

    assert metrics["search"]["winner"]["model_type"] == "adapted"
    tiny = json.loads((tiny_bert_dir / "config.json").read_text(encoding="utf-8"))
    assert search.winner is not None
    assert search.winner.model.config.vocab_size == tiny["vocab_size"]  # not MiniLM's 30,522
    assert search.winner.model.config.hidden_size == tiny["hidden_size"]


def test_an_encoder_whose_files_are_gone_is_skipped_with_the_reason(
        user: Any, slice_dataset: Any, tmp_path: Path) -> None:
    adapted_encoder(user, slice_dataset, tmp_path / "deleted-since")
    job = search_create(owner=user, dataset=slice_dataset, time_budget_minutes=0.1,
                        candidates=["tfidf_logreg", "minilm"], ensemble=False)
    config = training.build_config(job, ProgressWriter(job, interval=60.0))
    assert config.model_path is None
    config.search_storage, config.search_candidates = "", ["tfidf_logreg", "adapted"]
    train, val = (training.load_split(slice_dataset, s) for s in ("train", "validation"))
    metrics = SearchClassifier().fit(train, val, config, lambda _event: None, lambda: False)
    assert metrics["search"]["winner"]["model_type"] == "tfidf_logreg"
    assert "adapted encoder's files are not on this machine" in (
        metrics["search"]["not_tried"]["adapted"])


@pytest.mark.parametrize("case", ["none", "other dataset", "validation read", "still adapting",
                                  "foreign", "no transformer asked"])
def test_nothing_changes_without_an_encoder_of_its_own_adapted_on_the_dataset(
        case: str, user: Any, other_user: Any, slice_dataset: Any, tiny_bert_dir: Path,
        request: pytest.FixtureRequest) -> None:
    candidates = ["tfidf_logreg"] if case == "no transformer asked" else CANDIDATES
    if case == "other dataset":
        adapted_encoder(user, request.getfixturevalue("small_dataset"), tiny_bert_dir)
    elif case == "foreign":
        # Bob's encoder names Alice's dataset among its sources, in a project Alice is not in.
        theirs = project_personal(user=other_user)
        adapted_encoder(other_user, slice_dataset, tiny_bert_dir, project_id=theirs.pk)
    elif case != "none":
        adapted_encoder(user, slice_dataset, tiny_bert_dir,
                        training_only=case != "validation read",
                        status=(MLModel.Status.TRAINING if case == "still adapting"
                                else MLModel.Status.TRAINED))
    if case == "no transformer asked":
        adapted_encoder(user, slice_dataset, tiny_bert_dir)

    job = search_create(owner=user, dataset=slice_dataset, time_budget_minutes=1,
                        candidates=candidates)
    assert job.config["search_candidates"] == candidates
    assert "search_adapted_encoder" not in job.config
    config = training.build_config(job, ProgressWriter(job, interval=60.0))
    assert (config.encoder_model_id, config.model_path) == (0, None)


def test_a_search_started_over_the_api_gets_the_adapted_kind_too(
        user: Any, api_token: str, slice_dataset: Any, tiny_bert_dir: Path) -> None:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    latest = adapted_encoder(user, slice_dataset, tiny_bert_dir, name="Latest")
    response = api.post("/api/jobs/", {
        "dataset": slice_dataset.pk, "model_type": "search",
        "config": {"time_budget_minutes": 1, "search_candidates": CANDIDATES}}, format="json")
    assert response.status_code == 201, response.content
    config = response.json()["config"]
    assert config["search_candidates"] == [*CANDIDATES, "adapted"]
    assert config["search_adapted_encoder"]["id"] == latest.pk

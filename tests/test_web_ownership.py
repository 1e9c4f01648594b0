"""Every page and endpoint is scoped to its project: someone who is not a member gets 404,
never the data (Alice's rows are in her personal project, which Bob is not in)."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices_things(user, rows):
    dataset = rows.dataset(user, name="Alice private set")
    model = rows.model(user, dataset, name="Alice private model")
    job = rows.job(model, status="failed", reason="boom")
    return dataset, model, job


def page_urls(dataset, model, job) -> list[str]:
    return [
        reverse("datasets:detail", args=[dataset.pk]),
        reverse("classification:model_detail", args=[model.pk]),
        reverse("classification:model_download", args=[model.pk]),
        reverse("classification:job_detail", args=[job.pk]),
        reverse("classification:job_progress", args=[job.pk]),
    ]


def post_urls(dataset, model, job) -> list[str]:
    return [
        reverse("datasets:delete", args=[dataset.pk]),
        reverse("classification:model_delete", args=[model.pk]),
        reverse("classification:model_evaluate", args=[model.pk]),
        reverse("classification:job_cancel", args=[job.pk]),
        reverse("classification:job_resume", args=[job.pk]),
    ]


def test_another_user_gets_404_on_every_page(bob_client, alices_things) -> None:
    for url in page_urls(*alices_things):
        response = bob_client.get(url)
        assert response.status_code == 404, url
        assert b"Alice private" not in response.content


def test_another_user_cannot_act_on_the_owners_things(bob_client, alices_things) -> None:
    from classification.models import MLModel, TrainingJob
    from dataset_management.models import Dataset

    dataset, model, job = alices_things
    for url in post_urls(*alices_things):
        assert bob_client.post(url).status_code == 404, url
    assert Dataset.objects.filter(pk=dataset.pk).exists()
    assert MLModel.objects.filter(pk=model.pk).exists()
    job.refresh_from_db()
    assert job.status == TrainingJob.Status.FAILED
    assert job.attempt == 1


def test_another_users_things_are_absent_from_lists_and_forms(bob_client, alices_things) -> None:
    for url in (reverse("dashboard"), reverse("datasets:list"),
                reverse("classification:model_list"), reverse("classification:model_new"),
                reverse("classification:classify"), reverse("classification:model_compare")):
        response = bob_client.get(url)
        assert response.status_code == 200, url
        assert b"Alice private" not in response.content, url


def test_compare_refuses_another_users_model(bob_client, alices_things) -> None:
    _, model, _ = alices_things
    response = bob_client.get(reverse("classification:model_compare"), {"ids": [model.pk]})
    assert response.status_code == 404


def test_cannot_train_on_another_users_dataset(bob_client, alices_things) -> None:
    from classification.models import MLModel

    dataset, _, _ = alices_things
    response = bob_client.post(reverse("classification:model_new"), {
        "dataset": dataset.pk, "model_type": "tfidf_logreg", "preset": "quick",
    })
    assert response.status_code == 200  # the form re-renders with an error
    assert "Select a valid choice" in response.content.decode()
    assert MLModel.objects.filter(owner__username="bob").count() == 0


def test_classify_cannot_use_another_users_model(bob_client, alices_things) -> None:
    _, model, _ = alices_things
    for data in ({"model": model.pk, "title": "Heart", "abstract": "Failure"},
                 {"model": model.pk, "title": "Heart", "label": "cardiovascular"}):
        for name in ("classify", "classify_explain"):
            response = bob_client.post(reverse(f"classification:{name}"), data)
            assert response.status_code == 404, name
            assert b"Alice private" not in response.content
    page = bob_client.get(reverse("classification:classify"))
    assert b"No trained model yet" in page.content


def test_the_owner_sees_them(alice_client, alices_things) -> None:
    _, model, job = alices_things
    model_url = reverse("classification:model_detail", args=[model.pk])
    assert alice_client.get(model_url).status_code == 200
    assert alice_client.get(reverse("classification:job_detail", args=[job.pk])).status_code == 200

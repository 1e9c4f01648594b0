"""The pages render what a person needs, from rows made directly (no training, no import)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from classification import estimates

pytestmark = pytest.mark.django_db


def test_pages_ask_anonymous_visitors_to_log_in(client) -> None:
    for url in (reverse("dashboard"), reverse("datasets:list"),
                reverse("classification:model_list"),
                reverse("classification:classify"), reverse("classification:model_new")):
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_login_page_renders_a_form_with_csrf(client) -> None:
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b"csrfmiddlewaretoken" in response.content
    assert b'name="password"' in response.content


def test_logging_in_lands_on_the_dashboard(client, user) -> None:
    response = client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"},
                           follow=True)
    assert response.redirect_chain[-1][0] == reverse("dashboard")
    assert b"Dashboard" in response.content


def test_dashboard_lists_running_jobs_models_and_datasets(alice_client, user, rows) -> None:
    dataset = rows.dataset(user, name="Cardio set")
    model = rows.model(user, dataset, name="Fast baseline")
    running = rows.model(user, dataset, name="Running BERT", status="training")
    job = rows.job(running)

    page = alice_client.get(reverse("dashboard")).content.decode()

    assert "Cardio set" in page
    assert "Fast baseline" in page
    assert reverse("classification:job_progress", args=[job.pk]) in page
    assert "42%" in page or ">42<" in page
    assert reverse("classification:model_detail", args=[model.pk]) in page


def test_job_page_shows_progress_controls_and_history(alice_client, user, rows) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), status="training"))

    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()

    assert "Training:" in page
    assert 'id="cancel-form"' in page
    assert 'id="cancel-form" hidden' not in page
    assert 'id="resume-form" hidden' in page
    assert "loss-chart" in page
    assert "f1-chart" in page
    assert '"eval_micro_f1": 0.6' in page  # the history is embedded for the first paint


def test_progress_endpoint_returns_the_live_fields(alice_client, user, rows) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), status="training"))
    url = reverse("classification:job_progress", args=[job.pk])

    data = alice_client.get(url).json()
    assert data["status"] == "running"
    assert data["progress"] == 42.0
    assert data["step"] == 12
    assert data["total_steps"] == 30
    assert data["phase_display"] == "Training"
    assert data["is_active"] is True
    assert data["is_resumable"] is False
    assert len(data["history"]) == 2
    assert "log_tail" not in data

    later = alice_client.get(url, {"since": 1, "log": 1}).json()
    assert later["history"] == [job.metrics_history[1]]
    assert later["log_tail"] == "epoch 1 done"


def test_progress_endpoint_is_one_query_after_auth(alice_client, user, rows,
                                                   django_assert_max_num_queries) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), status="training"))
    url = reverse("classification:job_progress", args=[job.pk])
    alice_client.get(url)  # warm the session
    # session + user + the job row
    with django_assert_max_num_queries(3):
        assert alice_client.get(url).status_code == 200


def test_progress_endpoint_answers_401_json_when_logged_out(client, user, rows) -> None:
    job = rows.job(rows.model(user, rows.dataset(user)))
    response = client.get(reverse("classification:job_progress", args=[job.pk]))
    assert response.status_code == 401
    assert response.json()["detail"]


def test_failed_job_explains_itself_and_offers_resume(alice_client, user, rows) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), status="failed"), status="failed",
                   reason="CUDA out of memory\nTraceback ...")
    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()
    assert "Training stopped with an error" in page
    assert "CUDA out of memory" in page
    assert 'id="resume-form" hidden' not in page
    assert 'id="cancel-form" hidden' in page


def test_model_page_shows_metrics_per_label_confusion_and_mistakes(alice_client, user,
                                                                   rows) -> None:
    model = rows.model(user, rows.dataset(user))
    url = reverse("classification:model_detail", args=[model.pk])
    page = alice_client.get(url).content.decode()
    assert "Micro-F1" in page
    assert "0.810" in page
    assert "cardiovascular" in page
    assert "neurological" in page
    assert "heatmap" in page
    assert "Most confident mistakes" in page
    assert "0.550" in page  # the tuned threshold for neurological


def test_model_list_and_compare(alice_client, user, rows) -> None:
    dataset = rows.dataset(user)
    a = rows.model(user, dataset, name="Model A")
    b = rows.model(user, dataset, name="Model B", metrics={"micro_f1": 0.5, "macro_f1": 0.4})
    listing = alice_client.get(reverse("classification:model_list")).content.decode()
    assert "Model A" in listing
    assert "Model B" in listing

    page = alice_client.get(reverse("classification:model_compare"),
                            {"ids": [a.pk, b.pk]}).content.decode()
    assert 'id="compare-table"' in page
    assert "0.810" in page
    assert "0.500" in page


def test_new_model_page_lists_types_with_availability_and_presets(alice_client, user,
                                                                  rows) -> None:
    rows.dataset(user, name="Trainable")
    page = alice_client.get(reverse("classification:model_new")).content.decode()
    assert "Trainable" in page
    assert "tfidf_logreg" in page
    assert "biobert" in page
    assert "Quick (M1-safe)" in page
    assert "Balanced" in page
    assert "Best" in page
    assert "<details" in page
    assert "Advanced parameters" in page
    for status in ("bundled",):
        assert status in page
    assert "estimate" in page.lower()


def test_classify_page_without_models_points_to_training(alice_client, user) -> None:
    page = alice_client.get(reverse("classification:classify")).content.decode()
    assert "No trained model yet" in page


def test_upload_page_has_csrf_and_the_size_limit(alice_client) -> None:
    page = alice_client.get(reverse("datasets:upload")).content.decode()
    assert "csrfmiddlewaretoken" in page
    assert 'enctype="multipart/form-data"' in page
    assert "MB" in page


def test_progress_history_follows_the_client_after_the_worker_trims_it(alice_client, user,
                                                                       rows) -> None:
    points = [{"kind": "loss", "step": s, "loss": 1 / s} for s in range(1, 11)]
    job = rows.job(rows.model(user, rows.dataset(user), status="training"),
                   metrics_history=points)
    url = reverse("classification:job_progress", args=[job.pk])
    # The client holds points up to step 10; the worker then keeps only the newest 10 points.
    job.metrics_history = [*points[2:], {"kind": "loss", "step": 11}, {"kind": "eval", "step": 11}]
    job.save()
    data = alice_client.get(url, {"since": 10, "last": "loss:10"}).json()
    assert [p["step"] for p in data["history"]] == [11, 11]
    assert data["history_reset"] is False
    # A client whose newest point is gone entirely gets everything and redraws.
    data = alice_client.get(url, {"since": 10, "last": "loss:1"}).json()
    assert data["history_reset"] is True
    assert len(data["history"]) == 10


def test_dashboard_rows_poll_without_the_history(alice_client, user, rows) -> None:
    job = rows.job(rows.model(user, rows.dataset(user), status="training"))
    url = reverse("classification:job_progress", args=[job.pk])
    data = alice_client.get(url, {"history": "0"}).json()
    assert data["history"] == []
    assert data["progress"] == 42.0
    page = alice_client.get(reverse("dashboard")).content.decode()
    assert f"{url}?history=0" in page


def test_new_model_page_words_availability_for_people(alice_client, user, rows) -> None:
    rows.dataset(user)
    page = alice_client.get(reverse("classification:model_new")).content.decode()
    assert 'data-availability="custom">your folder<' in page
    assert 'data-availability="tfidf_logreg">bundled<' in page


def test_new_model_estimates_use_speeds_measured_on_this_machine(alice_client, user,
                                                                 rows) -> None:
    from datetime import timedelta

    from django.utils import timezone

    dataset = rows.dataset(user, split_sizes={"train": 1000, "validation": 100, "test": 100})
    model = rows.model(user, dataset, model_type="minilm")
    now = timezone.now()
    rows.job(model, status="completed", current_epoch=2.0, config={"max_length": 256},
             started_at=now - timedelta(seconds=220), finished_at=now)
    response = alice_client.get(reverse("classification:model_new"))
    assert "measured from this machine" in response.content.decode()
    estimator = response.context["estimator"]
    threads = estimator["plan"]["threads"]
    # What the page computes for the same job at the measured rate is the job's real duration.
    assert estimates.training_estimate_seconds(
        model_type="minilm", sizes=dataset.split_sizes, epochs=2, max_length=256,
        p95_words=estimator["datasets"][str(dataset.pk)]["p95_words"],
        rate=estimator["rates"]["minilm"], threads=threads, device="cpu",
    ) == pytest.approx(220)


def test_compare_marks_the_best_score_of_models_on_the_same_rows(alice_client, user,
                                                                  rows) -> None:
    dataset = rows.dataset(user, name="Set A")
    a = rows.model(user, dataset, name="Model A")
    b = rows.model(user, dataset, name="Model B",
                   metrics={**a.metrics, "micro_f1": 0.5, "hamming_loss": 0.01})
    page = alice_client.get(reverse("classification:model_compare"),
                            {"ids": [a.pk, b.pk]}).content.decode()
    assert '<td class="num best">0.810</td>' in page  # micro-F1: higher wins
    assert '<td class="num best">0.010</td>' in page  # Hamming loss: lower wins
    assert 'id="not-ranked"' not in page


def test_compare_ranks_no_model_when_they_were_scored_on_different_datasets(alice_client, user,
                                                                            rows) -> None:
    a = rows.model(user, rows.dataset(user, name="Set A"), name="Model A")
    b = rows.model(user, rows.dataset(user, name="Set B"), name="Model B",
                   metrics={"micro_f1": 0.5, "hamming_loss": 0.01})
    page = alice_client.get(reverse("classification:model_compare"),
                            {"ids": [a.pk, b.pk]}).content.decode()
    assert 'class="num best"' not in page
    assert "Not ranked: these models were measured on different rows" in page
    assert "scored on different test rows, so their scores are not comparable" in page


def test_list_pages_run_a_fixed_number_of_queries(alice_client, user, rows,
                                                  django_assert_max_num_queries) -> None:
    dataset = rows.dataset(user)
    for i in range(25):
        rows.model(user, dataset, name=f"Model {i}")
        rows.dataset(user, name=f"Set {i}")
    rows.job(rows.model(user, dataset, status="training"))
    # session + user + the user's projects with their roles (one query: the current project,
    # the switcher and the buttons) + the page's own queries, whatever the number of rows
    for url, most in ((reverse("dashboard"), 10), (reverse("datasets:list"), 5),
                      (reverse("classification:model_list"), 5),
                      # the dataset's page also reads its saved searches' latest digest
                      (reverse("datasets:detail", args=[dataset.pk]), 9)):
        alice_client.get(url)
        with django_assert_max_num_queries(most):
            assert alice_client.get(url).status_code == 200, url


def test_long_lists_are_paged(alice_client, user, rows, monkeypatch) -> None:
    from core import paging

    dataset = rows.dataset(user, name="Set 0")
    for i in range(1, 5):
        rows.model(user, dataset, name=f"Paged model {i}")
        rows.dataset(user, name=f"Set {i}")
    monkeypatch.setattr(paging, "PER_PAGE", 3)
    first = alice_client.get(reverse("classification:model_list")).content.decode()
    second = alice_client.get(reverse("classification:model_list"), {"page": 2})
    sets = alice_client.get(reverse("datasets:list"), {"page": 99}).content.decode()
    assert "Page 1 of 2 · 4 in all" in first
    assert first.count(">Paged model") == 3
    assert second.content.decode().count(">Paged model") == 1
    assert "Page 2 of 2 · 5 in all" in sets  # a page past the end shows the last one

"""An import the maintenance sweep queued again says so for the rest of its life.

Its progress message is overwritten as soon as a worker picks it up again, so the row keeps
each restart (when and why) and the import's page, its progress JSON and the API show
"Restarted after its worker stopped (...) (attempt 2); its upload was kept." until it ends.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.files import File
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from dataset_management.import_maintenance import import_jobs_fail_stale
from dataset_management.imports import import_job_create
from dataset_management.models import ImportJob
from projects.services import project_personal

pytestmark = pytest.mark.django_db


def _queued(user: Any, tmp_path: Path) -> ImportJob:
    path = tmp_path / "small.csv"
    path.write_text("title,abstract,label\n" + "".join(
        f"Title {i},Heart and tumour study {i},{('cardiology', 'oncology')[i % 2]}\n"
        for i in range(20)))
    with path.open("rb") as handle:
        return import_job_create(owner=user, project=project_personal(user=user),
                                 uploaded_file=File(handle, name=path.name), name="small")


def _shown(user: Any, job: ImportJob) -> tuple[str, str, str]:
    page = Client()
    page.force_login(user)
    html = page.get(reverse("datasets:import_detail", args=[job.pk])).content.decode()
    polled = page.get(reverse("datasets:import_progress", args=[job.pk])).json()["restarted"]
    api = APIClient()
    api.force_authenticate(user)
    answer = api.get(reverse("api:dataset_import", args=[job.pk]))
    assert answer.status_code == 200, answer.content
    return html, polled, answer.json()["restarted"]


def test_an_import_whose_worker_stopped_names_why_and_its_attempt_after_it_runs_again(
        user: Any, media_root: Path, tmp_path: Path, clean_broker: None) -> None:
    job = _queued(user, tmp_path)
    html, polled, api = _shown(user, job)
    assert (polled, api) == ("", "")
    assert 'id="import-restarted" data-field="restarted" hidden' in html

    # A worker took it, read 1,200 rows, and was killed: its heartbeat went silent.
    heard = timezone.now() - timedelta(minutes=10)
    ImportJob.objects.filter(pk=job.pk).update(status="running", rows_read=1200,
                                               started_at=heard, heartbeat_at=heard)
    assert import_jobs_fail_stale() == "1 stale import(s) queued again"
    # The next worker takes it and writes its own progress over the sweep's message.
    ImportJob.objects.filter(pk=job.pk).update(status="running", message="Reading rows…",
                                               heartbeat_at=timezone.now())
    job.refresh_from_db()
    html, polled, api = _shown(user, job)
    expected = (f"Restarted after its worker stopped (killed or restarted) after 1,200 rows, at "
                f"{timezone.localtime(heard):%H:%M} (attempt 2); its upload was kept.")
    assert polled == api == expected
    assert expected in html
    restarts = job.options["restarts"]
    assert [r["cause"] for r in restarts] == ["its worker stopped"]


def test_an_import_never_restarted_says_nothing_of_it(user: Any, media_root: Path,
                                                      tmp_path: Path) -> None:
    job = _queued(user, tmp_path)
    ImportJob.objects.filter(pk=job.pk).update(status="running", heartbeat_at=timezone.now())
    assert import_jobs_fail_stale() == ""
    job.refresh_from_db()
    assert _shown(user, job)[1:] == ("", "")

"""After a stall, the job page's reason, the banner the Resume button leaves and the job's log
all say the same thing about where training restarts: from checkpoint-N when one was saved,
from the start when none was (no "Resumed from the last checkpoint" over a job that has none)."""

from __future__ import annotations

import shutil

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from classification import paths
from classification.models import TrainingJob
from classification.views.presenters import job_reason_plain

pytestmark = pytest.mark.django_db


def stalled_job(rows, user, *, checkpoint_step: int | None) -> TrainingJob:
    model = rows.model(user, rows.dataset(user), name="MiniLM stall", model_type="minilm",
                       status="training")
    job = rows.job(model, status="stalled", log_tail="step 11\nstep 12")
    folder = paths.job_output_dir(job.pk)
    shutil.rmtree(folder, ignore_errors=True)
    if checkpoint_step is not None:
        (folder / f"checkpoint-{checkpoint_step}").mkdir(parents=True)
        (folder / f"checkpoint-{checkpoint_step}" / paths.COMPLETE_MARKER).write_text("{}")
    # As the heartbeat watchdog writes it: once the process is gone, naming the resume point.
    job.reason = f"No heartbeat for 600 s; {paths.resume_note(job_id=job.pk)}"
    job.save(update_fields=["reason"])
    return job


def resume(client, job: TrainingJob) -> tuple[str, TrainingJob]:
    response = client.post(reverse("classification:job_resume", args=[job.pk]))
    assert response.status_code == 302
    banner = " ".join(str(m) for m in get_messages(response.wsgi_request))
    job.refresh_from_db()
    return banner, job


def test_a_stalled_job_without_a_checkpoint_says_it_starts_over_everywhere(
    alice_client, user, rows
) -> None:
    job = stalled_job(rows, user, checkpoint_step=None)

    reason = job_reason_plain(status=job.status, reason=job.reason)
    banner, job = resume(alice_client, job)

    assert "start over" in reason
    assert "checkpoint" not in reason.replace("nothing to resume from", "")
    assert "last checkpoint" not in reason
    assert banner == "Resumed from the start: no checkpoint was saved, so training starts over."
    assert "no checkpoint was saved, so training restarts from scratch" in job.log_tail
    assert job.checkpoint_path == ""
    shutil.rmtree(paths.job_output_dir(job.pk), ignore_errors=True)


def test_a_stalled_job_with_a_checkpoint_names_that_checkpoint_everywhere(
    alice_client, user, rows
) -> None:
    job = stalled_job(rows, user, checkpoint_step=12)

    reason = job_reason_plain(status=job.status, reason=job.reason)
    banner, job = resume(alice_client, job)

    assert "resume continues from checkpoint-12" in reason
    assert "start over" not in reason
    assert "starts over" not in reason
    assert banner == "Resumed from checkpoint-12: training continues from step 12."
    assert "continues from checkpoint-12" in job.log_tail
    assert job.checkpoint_path.endswith("checkpoint-12")
    shutil.rmtree(paths.job_output_dir(job.pk), ignore_errors=True)


def test_the_job_page_and_its_poll_show_the_reason_without_a_contrary_hint(
    alice_client, user, rows
) -> None:
    job = stalled_job(rows, user, checkpoint_step=None)

    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()
    poll = alice_client.get(reverse("classification:job_progress", args=[job.pk])).json()

    assert "nothing to resume from: it will start over" in page
    assert "continues from the last checkpoint" not in page
    assert poll["reason_plain"] == job_reason_plain(status="stalled", reason=job.reason)
    shutil.rmtree(paths.job_output_dir(job.pk), ignore_errors=True)


@pytest.mark.parametrize(("status", "reason", "expected"), [
    ("failed", "CUDA out of memory\nResume: nothing to resume from: it will start over.\nTrace",
     "Reason: CUDA out of memory Resume: nothing to resume from: it will start over."),
    ("cancelled", "Cancelled before a worker started it",
     "Resume continues from the newest saved checkpoint, or starts over without one."),
])
def test_a_failure_keeps_its_resume_line_and_a_reason_without_one_says_both_outcomes(
    status: str, reason: str, expected: str
) -> None:
    plain = job_reason_plain(status=status, reason=reason)

    assert plain.endswith(expected), plain
    assert "Trace" not in plain

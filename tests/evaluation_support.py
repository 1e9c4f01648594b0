"""Helpers shared by the evaluation tests: follow the job an evaluate request started."""

from __future__ import annotations

import re
from typing import Any

from classification import services
from classification.models import EvaluationJob

JOB_URL = re.compile(r"/evaluations/([0-9a-f]{32})/$")


def started_job(response: Any) -> EvaluationJob:
    """The evaluation a POST to the evaluate page (a redirect to its page) started."""
    assert response.status_code == 302, response.content.decode()[:500]
    match = JOB_URL.search(response["Location"])
    assert match, response["Location"]
    return EvaluationJob.objects.get(pk=match.group(1))


def run_here(response: Any) -> EvaluationJob:
    """Run, in this process, the job the request queued: the code the inference worker runs
    (under a test's rolled-back transaction no message is ever sent)."""
    job = started_job(response)
    services.evaluation_job_run(job_id=job.pk.hex)
    job.refresh_from_db()
    return job

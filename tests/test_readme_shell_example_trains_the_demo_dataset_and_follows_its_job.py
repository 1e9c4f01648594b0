"""The README's Django-shell example, run as written: it finds the demo dataset by name,
trains on it with a real worker, and follows that job (not some other one) to its end."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from classification.models import TrainingJob
from tests.job_support import FIXTURES, fast_env

pytestmark = [pytest.mark.worker, pytest.mark.timeout(300)]
README = Path(__file__).resolve().parents[1] / "README.md"


def readme_example() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- shell-example -->\n```python\n(.*?)```", text, re.S)
    assert match, "the README lost its marked shell example"
    return match.group(1)


def test_the_readme_shell_example_follows_its_own_job_to_completion(
    start_worker, import_file, user: Any, rows: Any,
) -> None:
    # An older dataset and a running job of someone else's model: the example must pick neither.
    rows.dataset(user, name="An older dataset")
    other = rows.model(user, name="Someone else's training", status="training")
    rows.job(other, status=TrainingJob.Status.RUNNING, progress_percentage=55.0)
    import_file(FIXTURES / "demo_slice.csv", name="Medical literature domains (demo)")
    start_worker(queues=(settings.QUEUE_TRAINING,), **fast_env())

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(readme_example(), {})  # the point is to run the README as written

    lines = printed.getvalue().strip().splitlines()
    assert lines[-1].startswith("completed")
    assert float(lines[-1].split()[-1]) > 0.5  # micro-F1 of the model it trained
    assert "55.0%" not in printed.getvalue()
    job = TrainingJob.objects.exclude(ml_model=other).get()
    assert job.ml_model.name == "From the shell"
    assert job.ml_model.dataset.name == "Medical literature domains (demo)"

"""The job page's log panel is drawn to open at its newest line (a stall or a failure is written
last): the panel carries data-follow="end", which static/js/job.js acts on at load and on every
poll, and the script scrolls it to its end before the first poll answers."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

JOB_JS = Path(__file__).resolve().parents[1] / "static" / "js" / "job.js"


def test_the_log_panel_carries_the_mark_that_opens_it_at_its_end(alice_client, user, rows) -> None:
    model = rows.model(user, rows.dataset(user), name="MiniLM", model_type="minilm")
    job = rows.job(model, status="stalled", log_tail="step 1\nstep 2\nmarked stalled")

    page = alice_client.get(reverse("classification:job_detail", args=[job.pk])).content.decode()

    panel = page[page.index('id="job-log"') - 40:page.index("</pre>", page.index('id="job-log"'))]
    assert 'data-follow="end"' in panel
    assert panel.rstrip().endswith("marked stalled")


def test_the_job_script_scrolls_the_log_to_its_end_on_load_and_keeps_following_it() -> None:
    script = JOB_JS.read_text()

    load = script.index('logBox = document.getElementById("job-log")')
    first_poll = script.index("poll();\n})")
    assert "logBox.scrollTop = logBox.scrollHeight" in script[load:first_poll]
    assert "if (follow) logBox.scrollTop = logBox.scrollHeight" in script

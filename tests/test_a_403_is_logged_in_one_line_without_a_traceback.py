"""An ordinary 403 (a viewer's forged POST, refused by the policy) writes one line to the log,
"Forbidden (Permission denied): /path", not a traceback: in the probe every refusal put a full
traceback in gunicorn.log. A real error still logs its traceback."""

from __future__ import annotations

import logging

import pytest
from django.urls import reverse

from projects import services

pytestmark = pytest.mark.django_db


def test_a_refused_post_logs_one_line(bob_client, other_user, user, caplog) -> None:
    project = services.project_create(user=user, name="Guarded")
    services.member_set(actor=user, project=project, member=other_user, role="viewer")
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = bob_client.post(reverse("projects:rename", args=[project.pk]),
                                   {"name": "Mine now"})
    assert response.status_code == 403
    (record,) = [r for r in caplog.records if r.name == "django.request"]
    assert record.getMessage() == f"Forbidden (Permission denied): /projects/{project.pk}/rename/"
    assert record.exc_info is None
    assert "Traceback" not in caplog.text


def test_a_server_error_keeps_its_traceback(caplog) -> None:
    logger = logging.getLogger("django.request")
    try:
        raise RuntimeError("a real fault")
    except RuntimeError:
        with caplog.at_level(logging.ERROR, logger="django.request"):
            logger.error("Internal Server Error: /x", exc_info=True,
                         extra={"status_code": 500})
    assert "Traceback" in caplog.text
    assert "a real fault" in caplog.text

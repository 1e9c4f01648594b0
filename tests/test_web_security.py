"""CSRF, escaping of user text, the upload limit, and production cookie/header settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "<script>alert('xss')</script>"

CSV = (
    "title;abstract;group\n"
    + "".join(
        f"Heart study {i};Cardiac outcomes in cohort {i} {SCRIPT if i == 0 else ''};"
        f"{'cardiovascular' if i % 2 else 'neurological'}\n"
        for i in range(40)
    )
).encode()


def test_forms_carry_a_csrf_token(alice_client, user, rows) -> None:
    model = rows.model(user, rows.dataset(user))
    job = rows.job(model, status="failed")
    for url in (reverse("datasets:upload"), reverse("classification:model_new"),
                reverse("classification:classify"),
                reverse("classification:job_detail", args=[job.pk]),
                reverse("classification:model_detail", args=[model.pk])):
        assert b"csrfmiddlewaretoken" in alice_client.get(url).content, url


def test_posts_without_a_csrf_token_are_refused(user, rows) -> None:
    job = rows.job(rows.model(user, rows.dataset(user)), status="running")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(reverse("classification:job_cancel", args=[job.pk])).status_code == 403
    assert client.post(reverse("datasets:upload"), {}).status_code == 403
    job.refresh_from_db()
    assert job.cancel_requested is False


def test_a_script_in_an_abstract_is_escaped_on_the_dataset_pages(alice_client, user) -> None:
    upload = SimpleUploadedFile("xss.csv", CSV, content_type="text/csv")
    preview = alice_client.post(reverse("datasets:upload"), {
        "file": upload, "name": "XSS set", "split_ratios": "0.8,0.1,0.1", "seed": 42,
    })
    assert preview.status_code == 200
    html = preview.content.decode()
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(&#x27;xss&#x27;)&lt;/script&gt;" in html

    from dataset_management.models import Dataset

    token = preview.context["staging"].token
    created = alice_client.post(reverse("datasets:upload_confirm"), {
        "token": token, "name": "XSS set", "split_ratios": "0.8,0.1,0.1", "seed": "42",
        "action": "create",
    }, follow=True)
    assert created.status_code == 200
    from tests.import_support import import_run_last

    import_run_last()  # what the worker's task runs
    dataset = Dataset.objects.get(owner=user)
    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert "&lt;script&gt;" in page
    assert SCRIPT not in page


def test_a_script_in_a_mistake_or_a_name_is_escaped_on_the_model_page(alice_client, user,
                                                                      rows) -> None:
    model = rows.model(user, rows.dataset(user, name=SCRIPT), name=f"Model {SCRIPT}")
    for url in (reverse("classification:model_detail", args=[model.pk]), reverse("dashboard"),
                reverse("classification:model_list"), reverse("datasets:list")):
        page = alice_client.get(url).content.decode()
        assert "<script>alert(" not in page, url


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_a_file_over_the_upload_limit_gets_a_clear_error(alice_client) -> None:
    big = SimpleUploadedFile("big.csv", b"title;abstract;group\n" + b"x;y;z\n" * 400)
    response = alice_client.post(reverse("datasets:upload"), {
        "file": big, "name": "Too big", "split_ratios": "0.8,0.1,0.1", "seed": 42,
    })
    # Cut off while it streams, before the form could see it (core/uploads.py).
    assert response.status_code == 413
    assert "larger than the limit of 0 MB" in response.content.decode()
    from dataset_management.models import Dataset

    assert not Dataset.objects.exists()


@override_settings(MAX_UPLOAD_SIZE=1024)
def test_the_api_enforces_the_upload_limit_too(api_token) -> None:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    big = SimpleUploadedFile("big.csv", b"title;abstract;group\n" + b"x;y;z\n" * 400)
    response = client.post("/api/datasets/", {"file": big, "name": "big"}, format="multipart")
    assert response.status_code == 413
    assert "limit" in json.dumps(response.json())


def test_production_settings_secure_cookies_and_headers() -> None:
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; "
        "print(json.dumps({k: getattr(s, k, None) for k in ['DEBUG', 'SESSION_COOKIE_SECURE', "
        "'CSRF_COOKIE_SECURE', 'SESSION_COOKIE_HTTPONLY', 'SECURE_CONTENT_TYPE_NOSNIFF', "
        "'X_FRAME_OPTIONS', 'SECURE_REFERRER_POLICY']}))"
    )
    # HTTPS=True: served behind a TLS proxy, as docs/deploy.md describes production.
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "medlitbot_project.settings",
           "DEBUG": "False", "SECRET_KEY": "x" * 60, "DATABASE_URL": "", "HTTPS": "True"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True, timeout=60)
    values = json.loads(out.stdout.strip().splitlines()[-1])
    assert values == {
        "DEBUG": False, "SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True, "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "X_FRAME_OPTIONS": "DENY", "SECURE_REFERRER_POLICY": "same-origin",
    }


def test_debug_false_refuses_the_default_secret_key() -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "medlitbot_project.settings",
           "DEBUG": "False", "SECRET_KEY": ""}
    out = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "SECRET_KEY" in out.stderr


@override_settings(SECURE_CONTENT_TYPE_NOSNIFF=True, X_FRAME_OPTIONS="DENY",
                   SECURE_REFERRER_POLICY="same-origin")
def test_responses_carry_the_security_headers(alice_client) -> None:
    response = alice_client.get(reverse("dashboard"))
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"


def test_pages_load_no_asset_from_another_host(alice_client, user, rows) -> None:
    model = rows.model(user, rows.dataset(user))
    job = rows.job(model)
    for url in (reverse("dashboard"), reverse("classification:job_detail", args=[job.pk]),
                reverse("classification:model_detail", args=[model.pk]), "/api/docs/"):
        html = alice_client.get(url).content.decode()
        assert "cdn." not in html, url
        assert "https://" not in html.split("</head>")[0], url


def test_a_model_folder_inside_medlitbots_own_data_is_refused(alice_client, user, rows,
                                                              settings, tmp_path,
                                                              api_token) -> None:
    from rest_framework.test import APIClient

    from classification.models import MLModel

    dataset = rows.dataset(user)
    user.is_staff = True  # only staff may name a folder at all (tests/test_training_settings_...)
    user.save(update_fields=["is_staff"])
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    someone_elses = settings.MODEL_ARTIFACT_ROOT / "models" / "7"
    someone_elses.mkdir(parents=True)
    (someone_elses / "config.json").write_text("{}")
    for path, words in ((str(someone_elses), "own data"),
                        (str(tmp_path / "nowhere"), "No folder at"),
                        ("relative/path", "full path"),
                        (str(tmp_path), "no config.json")):
        response = alice_client.post(reverse("classification:model_new"), {
            "dataset": dataset.pk, "model_type": "custom", "preset": "quick",
            "model_path": path,
        })
        assert response.status_code == 200
        assert words in response.content.decode(), path
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
        refused = api.post("/api/jobs/", {"dataset": dataset.pk, "model_type": "custom",
                                          "config": {"model_path": path}}, format="json")
        assert refused.status_code == 400
        assert words in json.dumps(refused.json()), path
    assert not MLModel.objects.exists()

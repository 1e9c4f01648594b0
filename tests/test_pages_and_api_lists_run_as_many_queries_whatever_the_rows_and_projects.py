"""Lists and detail pages cost a fixed number of SQL queries, however many rows, projects and
members there are: projects must not bring back the N+1 the owner-scoped pages had shed."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from api.tokens import token_create
from projects import services as project_services
from projects.models import Project


def _populate(alice: Any, rows: Any, *, projects: int, per_project: int) -> list[Project]:
    made = []
    start = Project.objects.count()
    for p in range(projects):
        project = project_services.project_create(user=alice, name=f"Team {start + p}")
        for m in range(3):
            colleague = get_user_model().objects.create_user(f"u{start + p}_{m}")
            project_services.member_set(actor=alice, project=project, member=colleague,
                                        role=("viewer", "reviewer", "maintainer")[m])
        for i in range(per_project):
            dataset = rows.dataset(alice, project=project, name=f"Set {p}.{i}")
            model = rows.model(alice, dataset, project=project, name=f"Model {p}.{i}")
            rows.job(model)
        made.append(project)
    return made


def _counts(alice: Any, first: Project) -> dict[str, int]:
    web = Client()
    web.force_login(alice)
    web.post("/projects/switch/", {"project": first.pk})
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=alice, name='q')[1]}")
    dataset = first.datasets.order_by("pk").first()
    model = first.ml_models.order_by("pk").first()
    job = model.training_jobs.first()
    pages = {
        "dashboard": "/", "datasets": "/datasets/", "dataset": f"/datasets/{dataset.pk}/",
        "models": "/models/", "model": f"/models/{model.pk}/", "job": f"/jobs/{job.pk}/",
        "classify": "/classify/", "projects": "/projects/", "project": f"/projects/{first.pk}/",
    }
    apis = {
        "api_datasets": "/api/datasets/", "api_models": "/api/models/", "api_jobs": "/api/jobs/",
        "api_batches": "/api/batches/", "api_projects": "/api/projects/",
        "api_members": f"/api/projects/{first.pk}/members/",
        "api_activity": f"/api/projects/{first.pk}/activity/",
    }
    counts = {}
    for name, url in [*pages.items(), *apis.items()]:
        client = web if name in pages else api
        client.get(url)  # warm: session, personal project
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        counts[name] = len(ctx.captured_queries)
    return counts


def test_query_counts_do_not_grow_with_rows_projects_or_members(user: Any, rows: Any) -> None:
    first = _populate(user, rows, projects=1, per_project=2)[0]
    small = _counts(user, first)
    _populate(user, rows, projects=4, per_project=6)
    rows.model(user, first.datasets.first(), project=first, name="One more in the first")
    large = _counts(user, first)
    grew = {name: (small[name], large[name]) for name in small if large[name] != small[name]}
    assert not grew, f"query counts grew (few rows, many rows): {grew}"

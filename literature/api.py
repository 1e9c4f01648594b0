"""Saved PubMed searches over the API: list and create (the page's form's checks), read, change
and delete one, start a run (202 and a Location to poll), and read a run with its digest.

The same selectors and services as the pages: a search outside your projects is a 404, an
action above your role a 403 naming the role.
"""

from __future__ import annotations

from typing import Any

from django.urls import path, reverse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from literature import api_schema as request_bodies
from literature import selectors, services
from literature.forms import SavedSearchForm, form_initial
from literature.models import SavedSearch, SearchRun
from projects import policy
from projects.services import project_personal_id

# search_body's "not given": None already means a search that has never run.
_LOOK_UP = object()


def search_body(search: SavedSearch, *, latest: Any = _LOOK_UP) -> dict[str, Any]:
    """The search with its latest run: `latest` when the caller read it already (a list reads
    every search's at once), else looked up here."""
    if latest is _LOOK_UP:
        latest = selectors.search_run_latest(search=search)
    return {
        "id": search.pk, "project": search.project_id, "name": search.name,
        "query": search.query, "mindate": search.mindate, "maxdate": search.maxdate,
        "collection": search.collection_id, "ml_model": search.ml_model_id,
        "schedule": search.schedule, "last_run_at": search.last_run_at,
        "next_run_at": search.next_run_at, "last_status": search.last_status,
        "reason": search.reason,
        "latest_run": run_body(latest) if latest is not None else None,
        "url": reverse("api:search_detail", args=[search.pk]),
    }


def run_body(run: SearchRun, *, with_items: bool = False) -> dict[str, Any]:
    body = {
        "id": run.pk, "search": run.search_id, "status": run.status,
        "status_display": run.get_status_display(), "trigger": run.trigger,
        "query": run.query, "found": run.found, "new": run.new, "imported": run.imported,
        "dataset": run.dataset_id, "batch": run.batch_id.hex if run.batch_id else None,
        "digest": run.digest, "predicted_counts": run.predicted_counts, "reason": run.reason,
        "emailed_to": run.emailed_to, "requests": run.requests,
        "created_at": run.created_at, "finished_at": run.finished_at,
        "is_active": run.is_active, "url": reverse("api:search_run", args=[run.pk]),
    }
    if with_items:
        body["pmids"] = run.pmids
        body["items"] = run.digest_items
    return body


def _form(request: Request, project: Any, initial: dict[str, Any] | None = None
          ) -> SavedSearchForm:
    if not isinstance(request.data, dict):
        raise ValidationError({"detail": "Send a JSON object."})
    data = {**(initial or {}), **{k: v for k, v in request.data.items() if v is not None}}
    form = SavedSearchForm(
        data, collections=selectors.collection_choices(user=request.user, project=project),
        models=selectors.model_choices(user=request.user, project=project))
    if not form.is_valid():
        raise ValidationError({("non_field_errors" if field == "__all__" else field):
                               [str(e) for e in found] for field, found in form.errors.items()})
    return form


def _refused(exc: services.SavedSearchError) -> ValidationError:
    return ValidationError({exc.field or "detail": [exc.message]})


class SearchListApi(generics.GenericAPIView):
    @extend_schema(summary="Saved PubMed searches in your projects (?project=<id>), by name, "
                           "paged: `{count, next, previous, results}`, `?page=`",
                   responses=request_bodies.SEARCH_ROWS)
    def get(self, request: Request) -> Response:
        project = request.query_params.get("project")
        searches = selectors.saved_search_list(
            user=request.user, project=int(project) if project and project.isdigit() else None)
        page = self.paginate_queryset(searches.order_by("name", "pk"))
        latest = selectors.search_runs_latest(searches=page)
        return self.get_paginated_response([search_body(s, latest=latest.get(s.pk))
                                            for s in page])

    @extend_schema(summary="Save a PubMed search (name, query, mindate, maxdate, collection, "
                           "ml_model, schedule; project defaults to your current one)",
                   request=request_bodies.SEARCH_CREATE,
                   examples=request_bodies.SEARCH_CREATE_EXAMPLES, responses=None)
    def post(self, request: Request) -> Response:
        raw = request.data.get("project") if isinstance(request.data, dict) else None
        project = (policy.project_get(user=request.user, project_id=raw) if raw is not None
                   else getattr(request, "project", None)
                   or project_personal_id(user_id=request.user.pk))
        form = _form(request, project)
        try:
            search = services.saved_search_create(user=request.user, project=project,
                                                  **form.search_kwargs())
        except services.SavedSearchError as exc:
            raise _refused(exc) from None
        response = Response(search_body(search), status=status.HTTP_201_CREATED)
        response["Location"] = request.build_absolute_uri(search_body(search)["url"])
        return response


class SearchDetailApi(APIView):
    @extend_schema(summary="A saved search with its latest run", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        return Response(search_body(selectors.saved_search_get(user=request.user, pk=pk)))

    @extend_schema(summary="Change a saved search (the fields given)",
                   request=request_bodies.SEARCH_CHANGE,
                   examples=request_bodies.SEARCH_CHANGE_EXAMPLES, responses=None)
    def patch(self, request: Request, pk: int) -> Response:
        search = selectors.saved_search_get(user=request.user, pk=pk,
                                            action=policy.Action.UPLOAD)
        form = _form(request, search.project_id, initial=form_initial(search))
        try:
            search = services.saved_search_update(user=request.user, search=search,
                                                  **form.search_kwargs())
        except services.SavedSearchError as exc:
            raise _refused(exc) from None
        return Response(search_body(search))

    @extend_schema(summary="Delete a saved search (its collection stays)", responses=None)
    def delete(self, request: Request, pk: int) -> Response:
        search = selectors.saved_search_get(user=request.user, pk=pk,
                                            action=policy.Action.DELETE)
        try:
            services.saved_search_delete(user=request.user, search=search)
        except services.SavedSearchError as exc:
            return Response({"detail": exc.message}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SearchRunsApi(generics.GenericAPIView):
    @extend_schema(summary="A saved search's runs, newest first (paged)",
                   responses=request_bodies.RUN_ROWS)
    def get(self, request: Request, pk: int) -> Response:
        search = selectors.saved_search_get(user=request.user, pk=pk)
        # The search was read through the policy, so its runs are the person's to see. The list
        # shows neither PMIDs nor digest items, which grow with the articles a run found.
        runs = (search.runs.select_related("dataset", "batch").defer("pmids", "digest_items")
                .order_by("-created_at", "-pk"))
        return self.get_paginated_response([run_body(r) for r in self.paginate_queryset(runs)])

    @extend_schema(summary="Run the search now: 202 and the run to poll (Location)",
                   request=None, responses=None)
    def post(self, request: Request, pk: int) -> Response:
        search = selectors.saved_search_get(user=request.user, pk=pk,
                                            action=policy.Action.UPLOAD)
        try:
            run = services.search_run_start(search=search, user=request.user)
        except services.SavedSearchError as exc:
            return Response({"detail": exc.message}, status=status.HTTP_409_CONFLICT)
        response = Response(run_body(run), status=status.HTTP_202_ACCEPTED)
        response["Location"] = request.build_absolute_uri(run_body(run)["url"])
        return response


class SearchRunApi(APIView):
    @extend_schema(summary="One run: its counts, digest and the new articles", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        return Response(run_body(selectors.search_run_get(user=request.user, pk=pk),
                                 with_items=True))


urlpatterns = [
    path("searches/", SearchListApi.as_view(), name="search_list"),
    path("searches/<int:pk>/", SearchDetailApi.as_view(), name="search_detail"),
    path("searches/<int:pk>/runs/", SearchRunsApi.as_view(), name="search_runs"),
    path("runs/<int:pk>/", SearchRunApi.as_view(), name="search_run"),
]

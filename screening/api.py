"""Screening over the API: sessions (created with the page's form's checks; read with agreement
and stopping), the next record, a decision, conflicts and their resolution, the exports, and
simulation runs (a job: 202 and a Location to poll). The same selectors and services as the pages;
a session outside your projects is a 404, an action above your role a 403 naming the role."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.urls import path, re_path, reverse
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from classification import selectors as classification_selectors
from dataset_management import selectors as dataset_selectors
from projects import policy
from screening import api_schema as request_bodies
from screening import (
    export,
    prisma_diagram,
    resolving,
    selectors,
    services,
    simulation_runs,
    visibility,
)
from screening.errors import ScreeningConflict
from screening.forms import SessionForm, SimulationForm


def _session(request: Request, pk: int, action: str = policy.Action.VIEW) -> Any:
    return selectors.session_get(user=request.user, pk=pk, action=action)


def conflict_response(exc: ScreeningConflict) -> Response:
    """A write refused by the record's state: 409 with the message and what stands in the way."""
    return Response({"detail": str(exc), **exc.facts}, status=status.HTTP_409_CONFLICT)


def _flag(value: Any) -> bool:
    return value is True or str(value).lower() in ("true", "1", "yes", "on")


class SessionListApi(generics.GenericAPIView):
    @extend_schema(summary="Screening sessions in your projects, newest first (paged: "
                           "`{count, next, previous, results}`, `?page=`)",
                   responses=request_bodies.SESSION_ROWS)
    def get(self, request: Request) -> Response:
        # The pk breaks ties between rows made in the same instant: pages never overlap.
        sessions = selectors.session_list(user=request.user).order_by("-created_at", "-pk")
        return self.get_paginated_response([
            {"id": s.pk, "name": s.name, "project": s.project_id, "labels": s.labels,
             "phase": s.phase} for s in self.paginate_queryset(sessions)])


SESSION_DEFAULTS = {"order": "most_likely", "reviewers_per_record": 1, "ranker_every": 10,
                    "recall_target": 0.95, "confidence": 0.95}
SIMULATION_DEFAULTS = {"recall_target": 0.95, "confidence": 0.95, "seeds": 5, "every": 10,
                       "patience": 50}


def _form_data(request: Request, defaults: dict[str, Any]) -> dict[str, Any]:
    """The JSON body as the page's form reads a POST: defaults for what it leaves out, a list
    of labels as the comma-separated text the form takes."""
    if not isinstance(request.data, dict):
        raise ValidationError({"detail": "Send a JSON object."})
    data = {**defaults, **{k: v for k, v in request.data.items() if v is not None}}
    if isinstance(data.get("labels"), list):
        data["labels"] = ",".join(str(label) for label in data["labels"])
    return data


def _form_errors(form: Any) -> ValidationError:
    errors = {("non_field_errors" if field == "__all__" else field): [str(e) for e in found]
              for field, found in form.errors.items()}
    return ValidationError(errors)


def _created(request: Request, body: dict[str, Any], url_name: str, pk: Any,
             code: int) -> Response:
    response = Response(body, status=code)
    response["Location"] = request.build_absolute_uri(reverse(f"api:{url_name}", args=[pk]))
    return response


class SessionCollectionApi(SessionListApi):
    @extend_schema(summary="Start a screening session on a dataset or a finished batch",
                   request=request_bodies.SESSION_CREATE,
                   examples=request_bodies.SESSION_CREATE_EXAMPLES, responses=None)
    def post(self, request: Request) -> Response:
        """The page's form validates it (a collection, the labels, a starting model that knows
        them...); 201 with the session at once: a starting model's scores arrive from the
        inference worker (`starting_scoring` says while they are on their way)."""
        user = request.user
        form = SessionForm(_form_data(request, SESSION_DEFAULTS),
                           datasets=dataset_selectors.dataset_list(user=user),
                           batches=selectors.collection_batches(user=user),
                           models=classification_selectors.mlmodel_trained_list(user=user))
        if not form.is_valid():
            raise _form_errors(form)
        try:
            session = services.session_create(user=user, **form.session_kwargs())
        except services.ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return _created(request, selectors.session_summary(session=session),
                        "screening_detail", session.pk, status.HTTP_201_CREATED)


def _simulation_body(run: Any, *, with_result: bool = False) -> dict[str, Any]:
    body = {"id": run.pk, "dataset": run.dataset_id, "label": run.label, "state": run.state,
            "error": run.error, "recall_target": run.recall_target,
            "confidence": run.confidence, "seeds": run.seeds, "every": run.every,
            "patience": run.patience, "created_at": run.created_at.isoformat(),
            "url": reverse("api:screening_simulation", args=[run.pk])}
    if with_result:
        body["result"] = run.result or None
    return body


class SimulationListApi(generics.GenericAPIView):
    @extend_schema(summary="Screening simulations in your projects, newest first (paged)",
                   responses=request_bodies.SIMULATION_ROWS)
    def get(self, request: Request) -> Response:
        runs = selectors.simulation_run_list(user=request.user).order_by("-created_at", "-pk")
        return self.get_paginated_response([_simulation_body(run) for run in
                                            self.paginate_queryset(runs)])

    @extend_schema(summary="Start a simulation run (a job on the inference queue)",
                   request=request_bodies.SIMULATION_CREATE,
                   examples=request_bodies.SIMULATION_CREATE_EXAMPLES, responses=None)
    def post(self, request: Request) -> Response:
        """202 with the job and a Location to poll; refused (400) unless the dataset is fully
        labelled for the label, as on the page."""
        form = SimulationForm(_form_data(request, SIMULATION_DEFAULTS),
                              datasets=dataset_selectors.dataset_list(user=request.user))
        if not form.is_valid():
            raise _form_errors(form)
        try:
            run = simulation_runs.simulation_run_create(user=request.user, **form.cleaned_data)
        except services.ScreeningError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return _created(request, _simulation_body(run), "screening_simulation", run.pk,
                        status.HTTP_202_ACCEPTED)


class SimulationDetailApi(APIView):
    @extend_schema(summary="A simulation: its state, then the summary and recall curves",
                   responses=None)
    def get(self, request: Request, pk: int) -> Response:
        run = selectors.simulation_run_get(user=request.user, pk=pk)
        return Response(_simulation_body(run, with_result=True))


class SessionDetailApi(APIView):
    @extend_schema(summary="A session: progress, agreement per label, stopping", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        return Response(visibility.summary_for(
            user=request.user, session=session,
            summary=selectors.session_summary(session=session)))


class NextRecordApi(APIView):
    @extend_schema(summary="The next record for you (blind to other reviewers)", responses=None)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk, policy.Action.SCREEN)
        record = selectors.record_next(user=request.user, session=session)
        return Response({"record": record and visibility.payload_for(
            user=request.user, session=session,
            payload=selectors.record_payload(record=record, user=request.user))})


class DecideApi(APIView):
    @extend_schema(summary="Decide yes/no/unsure per label for a record (`values`, optional "
                           "`reasons` per label for a no, `note`); `final` and `done` are "
                           "null while the session is blind to you; 409 for a change that "
                           "would take a record with full-text work out of full text",
                   request=request_bodies.DECIDE,
                   examples=request_bodies.DECIDE_EXAMPLES, responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk, policy.Action.SCREEN)
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(request.data.get("record", 0)))
            services.decision_record(user=request.user, record=record,
                                     values=dict(request.data.get("values") or {}),
                                     reasons=dict(request.data.get("reasons") or {}),
                                     note=str(request.data.get("note") or ""))
        except ScreeningConflict as exc:
            return conflict_response(exc)
        except (ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        record.refresh_from_db()
        # While blind the answer must not say whether the other reviewer agreed: no final.
        shown = visibility.session_sight(user=request.user, session=session).finals_shown
        return Response({"record": record.pk, "final": record.final if shown else None,
                         "done": record.done if shown else None})


def _conflict_body(conflict: dict[str, Any]) -> dict[str, Any]:
    """A conflict with its record in view: title (or first sentence), abstract, identifiers
    (record id, PMID, DOI...), citation and source link, and both decisions in full."""
    record, identity = conflict["record"], conflict["identity"]
    return {"record": {"id": record.pk, "row": identity["row"], "title": identity["title"],
                       "abstract": record.abstract, "identifiers": identity["identifiers"],
                       "authors": identity["authors"], "year": identity["year"],
                       "journal": identity["journal"], "source_url": identity["source_url"]},
            "record_id": record.pk, "label": conflict["label"],
            "stage": conflict.get("stage", "title_abstract"), "decisions": [
                {"reviewer": d.reviewer.get_username(), "value": d.value, "note": d.note,
                 "exclusion_reason": d.exclusion_reason,
                 "decided_at": d.decided_at.isoformat()} for d in conflict["decisions"]]}


class ConflictsApi(generics.GenericAPIView):
    @extend_schema(summary="A session's open conflicts with their records, in the records' "
                           "order (paged); maintainers and owners only while it is blind",
                   responses=request_bodies.CONFLICT_ROWS)
    def get(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        # A list in the records' order, label by label: the same on every request, so it pages.
        conflicts = self.paginate_queryset(visibility.conflicts_for(user=request.user,
                                                                    session=session))
        return self.get_paginated_response([_conflict_body(c) for c in conflicts])

    @extend_schema(summary="A maintainer's resolution of a conflict (record, label, value, "
                           "note; stage `full_text` with its required exclusion_reason). A "
                           "second resolution of the same conflict answers 409 with the "
                           "standing one (`resolution`: id, resolver, value, resolved_at) "
                           "unless it sends `replaces` (that id); one that would take the "
                           "record out of full text after work there answers 409 unless "
                           "`confirm_discard_fulltext=true` with a `reason`",
                   request=request_bodies.CONFLICT_RESOLVE,
                   examples=request_bodies.CONFLICT_RESOLVE_EXAMPLES, responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = _session(request, pk)
        try:
            record = selectors.record_get(user=request.user, session=session,
                                          pk=int(request.data.get("record", 0)))
            resolving.conflict_resolve_at(
                user=request.user, record=record,
                stage=str(request.data.get("stage") or "title_abstract"),
                label=str(request.data.get("label", "")),
                value=str(request.data.get("value", "")),
                reason=str(request.data.get("exclusion_reason") or ""),
                note=str(request.data.get("note") or ""),
                replaces=str(request.data.get("replaces") or ""),
                confirm_discard_fulltext=_flag(request.data.get("confirm_discard_fulltext")),
                discard_reason=str(request.data.get("reason") or ""))
        except ScreeningConflict as exc:
            return conflict_response(exc)
        except (ValueError, TypeError) as exc:
            raise ValidationError({"detail": str(exc)}) from None
        record.refresh_from_db()
        return Response({"record": record.pk, "final": record.final, "done": record.done,
                         "state": record.state})


class ExportApi(APIView):
    @extend_schema(summary="Decisions as csv, ris or jsonl (each person's own sight: blind "
                           "sessions show a reviewer only their decisions, a viewer only the "
                           "final ones); PRISMA counts, or the PRISMA 2020 diagram as SVG, PNG "
                           "(300 dpi) or PDF",
                   responses=None)
    def get(self, request: Request, pk: int, fmt: str) -> Any:
        session = _session(request, pk, policy.Action.DOWNLOAD)
        sight = visibility.session_sight(user=request.user, session=session)
        if fmt == "prisma":
            return Response(export.prisma_for(session, sight=sight))
        if fmt in ("prisma-svg", "prisma-png", "prisma-pdf"):
            counts = export.prisma_for(session, sight=sight)
            if fmt == "prisma-pdf":
                return HttpResponse(prisma_diagram.prisma_pdf(counts, title=session.name),
                                    content_type="application/pdf")
            if fmt == "prisma-svg":
                return HttpResponse(prisma_diagram.prisma_svg(counts, title=session.name),
                                    content_type="image/svg+xml; charset=utf-8")
            return HttpResponse(prisma_diagram.prisma_png(counts, title=session.name),
                                content_type="image/png")
        writer = {"csv": export.export_csv, "ris": export.export_ris,
                  "jsonl": export.export_jsonl}[fmt]
        return StreamingHttpResponse(writer(session, sight=sight),
                                     content_type="text/plain; charset=utf-8")


class BlindingApi(APIView):
    @extend_schema(summary="The owner ends a session's blinding (logged)", request=None,
                   responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = services.session_blinding_end(user=request.user, session=_session(request, pk))
        return Response({"id": session.pk, "blind": session.blind})


urlpatterns = [
    path("screening/", SessionListApi.as_view(), name="screening_list"),
    path("screening/sessions/", SessionCollectionApi.as_view(), name="screening_sessions"),
    path("screening/simulations/", SimulationListApi.as_view(), name="screening_simulations"),
    path("screening/simulations/<int:pk>/", SimulationDetailApi.as_view(),
         name="screening_simulation"),
    path("screening/<int:pk>/", SessionDetailApi.as_view(), name="screening_detail"),
    path("screening/<int:pk>/next/", NextRecordApi.as_view(), name="screening_next"),
    path("screening/<int:pk>/decide/", DecideApi.as_view(), name="screening_decide"),
    path("screening/<int:pk>/conflicts/", ConflictsApi.as_view(), name="screening_conflicts"),
    path("screening/<int:pk>/unblind/", BlindingApi.as_view(), name="screening_unblind"),
    re_path(r"^screening/(?P<pk>[0-9]+)/export/"
            r"(?P<fmt>csv|ris|jsonl|prisma|prisma-svg|prisma-png|prisma-pdf)/$",
            ExportApi.as_view(), name="screening_export"),
]

"""Dataset imports over the API: `POST /api/datasets/` (one file) and
`POST /api/datasets/collections/` (several, merged) answer 202 with an import to follow here.

An import belongs to the project it imports into: following it needs the viewer role there,
cancelling it the maintainer's (projects.policy), as for the dataset it makes.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api.predict_inputs import capped_text
from dataset_management import imports, selectors
from dataset_management.collection_jobs import collection_job_create
from dataset_management.import_restarts import import_restart_note
from dataset_management.models import ImportJob
from dataset_management.readers import DatasetFileError
from projects import policy
from projects.models import Project
from projects.services import project_personal


class ImportJobSerializer(serializers.ModelSerializer):
    """A dataset import, the same in the 202 of an upload, its detail and its cancel."""

    status_display = serializers.CharField(source="get_status_display", read_only=True)
    is_active = serializers.BooleanField(read_only=True)
    progress = serializers.SerializerMethodField(
        help_text="Percent of the file's bytes read (100 once completed); null while a "
        "workbook, read through its zip, is being read.")
    url = serializers.SerializerMethodField(help_text="This import, to poll until it ends.")
    files = serializers.SerializerMethodField(
        help_text="A collection's files, in the order merged; [] for one file.")
    dataset_url = serializers.SerializerMethodField(
        help_text="The dataset it made, once completed; null before.")
    restarted = serializers.SerializerMethodField(
        help_text="Why and how often maintenance queued it again (its worker stopped, or the "
        "job queue lost its message), with the attempt now under way; \"\" if it never was.")

    class Meta:
        model = ImportJob
        fields = [
            "id", "project", "name", "filename", "status", "status_display", "is_active",
            "progress", "rows_read", "bytes_read", "total_bytes", "files", "message", "reason",
            "cancel_requested", "dataset", "url", "dataset_url", "created_at", "started_at",
            "finished_at", "restarted",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "status": {"help_text": "queued, running, then completed, failed or cancelled."},
            "rows_read": {"help_text": "Records read so far, dropped ones included."},
            "message": {"help_text": "What the worker is doing now."},
            "reason": {"help_text": "Why it failed or was cancelled, in plain words."},
            "dataset": {"help_text": "The id of the dataset it made, once completed."},
        }

    def get_progress(self, job: ImportJob) -> float | None:
        fraction = job.fraction
        return None if fraction is None else round(100 * fraction, 1)

    def get_files(self, job: ImportJob) -> list[str]:
        collection = (job.options or {}).get("collection") or {}
        return [stored["name"] for stored in collection.get("files") or []]

    def get_restarted(self, job: ImportJob) -> str:
        return import_restart_note(job=job)

    def get_url(self, job: ImportJob) -> str:
        return reverse("api:dataset_import", args=[job.pk])

    def get_dataset_url(self, job: ImportJob) -> str | None:
        return reverse("api:dataset_detail", args=[job.dataset_id]) if job.dataset_id else None


def import_accepted(request: Request, job: ImportJob) -> Response:
    """202 with the import and a Location to poll."""
    body: dict[str, Any] = ImportJobSerializer(job).data
    response = Response(body, status=status.HTTP_202_ACCEPTED)
    response["Location"] = request.build_absolute_uri(body["url"])
    return response


class ImportJobDetailApi(APIView):
    """Where an import is: `status`, `progress`, rows and bytes read; `dataset` once completed
    (then `GET dataset_url`), `reason` once failed or cancelled."""

    @extend_schema(responses=ImportJobSerializer)
    def get(self, request: Request, pk: int) -> Response:
        job = selectors.import_job_get(user=request.user, pk=pk)
        return Response(ImportJobSerializer(job).data)


class ImportJobCancelApi(APIView):
    """Cancel an import: a queued one ends at once, a running one at its next chunk of rows
    (202; poll it). Nothing of a cancelled import is kept."""

    @extend_schema(request=None, responses={202: ImportJobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = selectors.import_job_get(user=request.user, pk=pk, action=policy.Action.CANCEL)
        return import_accepted(request, imports.import_job_cancel(user=request.user, job=job))


PROJECT_HELP = ("The id of the project it goes to (the maintainer role there). Required when "
                "you are in more than one project; otherwise your only project.")


class CollectionUploadSerializer(serializers.Serializer):
    files = serializers.ListField(
        child=serializers.FileField(), min_length=1,
        help_text="Two or more exports (any mix of the import's formats), merged into one "
        "dataset with their duplicates found (PMID, DOI, the same title and abstract, the same "
        "long abstract, then title, year and first author; a missing year or DOI never blocks "
        "a match, a conflicting one does).")
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="",
                                 help_text="Required for a new collection.")
    description = capped_text(required=False, allow_blank=True, default="")
    unlabelled = serializers.BooleanField(
        required=False, default=False,
        help_text="Import without labels, whatever the files hold. With `dataset`: the new "
        "version is prediction only, so new articles that carry no label are kept (a labelled "
        "collection refuses them otherwise).")
    project = serializers.IntegerField(
        required=False, min_value=1, help_text=PROJECT_HELP)
    dataset = serializers.IntegerField(
        required=False, min_value=1,
        help_text="Add the files to this collection instead: a new version of it, in its "
        "project (name, description and project are then its own).")


class CollectionCreateApi(APIView):
    """Several files as one collection, or files added to one (a new version): stored and
    queued, 202 with the import to follow as for one file; a file whose first records cannot
    be read (named), no name, or two files of one name is a 400 and nothing is kept."""

    parser_classes = [MultiPartParser]

    @extend_schema(request=CollectionUploadSerializer, responses={202: ImportJobSerializer})
    def post(self, request: Request) -> Response:
        data = CollectionUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        target: dict[str, Any] = {}
        if values.get("dataset") is not None:
            target["add_to"] = selectors.dataset_get(user=request.user, pk=values["dataset"],
                                                     action=policy.Action.UPLOAD)
        elif not values["name"].strip():
            raise ValidationError({"name": ["Give the collection a name."]})
        else:
            target["project"] = upload_project(user=request.user, project_id=values.get("project"))
        try:
            job = collection_job_create(
                owner=request.user, uploads=values["files"], name=values["name"],
                description=values["description"], unlabelled=values["unlabelled"], **target)
        except (DatasetFileError, ValueError) as exc:  # DiskFull: api.exceptions, 507
            raise ValidationError({"files": [getattr(exc, "message", str(exc))]}) from exc
        return import_accepted(request, job)


# Projects named in the 400 for an upload without `project`; more are counted, not named.
PROJECTS_NAMED = 20


def upload_project(*, user: Any, project_id: int | None) -> Project:
    """Where an upload (one file or a collection) goes: the project named; without one, the
    user's only project. A user in several projects is asked to choose (400 naming them):
    landing silently in one of them surprised people (issue 38). A user in none gets their
    personal project, made on first need. May they upload there: the caller's policy check."""
    projects = policy.scope(Project.objects.all(), user=user)
    if project_id is not None:
        project = projects.filter(pk=project_id).first()
        if project is None:
            raise ValidationError({"project": ["No such project."]})
        return project
    choices = list(projects.order_by("pk").values_list("pk", "name")[:PROJECTS_NAMED + 1])
    if not choices:
        return project_personal(user=user)
    if len(choices) == 1:
        return projects.get(pk=choices[0][0])
    named = "; ".join(f"{pk} ({name})" for pk, name in choices[:PROJECTS_NAMED])
    more = " and more" if len(choices) > PROJECTS_NAMED else ""
    raise ValidationError({"project": [
        f"You are in several projects; say which one with `project`: {named}{more}."]})

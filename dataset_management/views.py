from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.diskspace import DiskFull, disk_full_refused
from core.paging import page_of
from dataset_management import conflicts, imports, selectors, services
from dataset_management.dedup import CONFLICTS, RULES_SHOWN
from dataset_management.export import EXPORT_FORMATS, export_response
from dataset_management.export import dataset_export as dataset_export_make
from dataset_management.forms import DatasetConfirmForm, DatasetUploadForm
from dataset_management.mapping import MAPPING_FIELDS, label_missing_warning
from dataset_management.models import Dataset
from dataset_management.preview import dataset_preview
from dataset_management.readers import DatasetFileError, DatasetOverCapError
from dataset_management.report import (
    CONFLICTS_PER_PAGE,
    conflict_groups,
    conflicts_missing_note,
    report_summary,
)
from dataset_management.splitting import DEFAULT_RATIOS, split_ratios_validate
from dataset_management.staging import upload_discard, upload_open, upload_stage
from projects import policy
from projects.services import ProjectError

logger = logging.getLogger(__name__)


IMPORT_ERRORS = (DatasetFileError, ValueError)
MODELS_LISTED = 20  # the delete warning names this many models, then counts the rest


def _dataset(request: HttpRequest, pk: int, action: str = policy.Action.VIEW) -> Dataset:
    """404 outside the person's projects; 403 naming the role when theirs may not do `action`."""
    return selectors.dataset_get(user=request.user, pk=pk, action=action)


def _may_upload_here(request: HttpRequest) -> None:
    """An upload goes to the current project: the person's role there must allow it."""
    policy.require(user=request.user, action=policy.Action.UPLOAD, project=request.project)


@login_required
def dataset_list(request: HttpRequest) -> HttpResponse:
    """The current project's datasets; the buttons follow `may` (the context processor's)."""
    rows = selectors.dataset_list_rows(user=request.user, project=request.project)
    page = page_of(rows, request.GET.get("page"))
    return render(request, "datasets/list.html", {"datasets": page.object_list, "page": page})


@login_required
def dataset_upload(request: HttpRequest) -> HttpResponse:
    """Step 1: receive the file, stage it, and show what we detected."""
    _may_upload_here(request)
    form = DatasetUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        uploaded = form.cleaned_data["file"]
        try:
            token = upload_stage(owner_id=request.user.pk, uploaded_file=uploaded)
        except DiskFull as exc:
            return _disk_full(request, exc, token="", name=form.cleaned_data["name"],
                              description=form.cleaned_data.get("description", ""))
        return _preview(request, staging=_Staging(
            token=token, name=form.cleaned_data["name"],
            description=form.cleaned_data.get("description", ""),
            split_ratios=form.cleaned_data["split_ratios"], seed=form.cleaned_data["seed"],
            label_map=form.cleaned_data.get("label_map") or {},
        ), overrides=form.mapping_overrides())
    return render(request, "datasets/upload.html", {
        "form": form, "max_mb": settings.MAX_UPLOAD_SIZE // 1048576,
    }, status=400 if form.errors else 200)


@dataclass
class _Staging:
    """What the preview page carries between its requests besides the column choices."""

    token: str
    name: str
    description: str
    split_ratios: tuple[float, ...]
    seed: int
    label_map: dict[str, str]

    @classmethod
    def from_post(cls, post: Any) -> _Staging:
        try:
            raw = post.get("split_ratios", "").split(",")
            ratios = split_ratios_validate([float(x) for x in raw])
        except ValueError:
            ratios = DEFAULT_RATIOS
        try:
            label_map = json.loads(post.get("label_map") or "{}")
        except ValueError:
            label_map = {}
        return cls(
            token=post.get("token", ""),
            name=post.get("name", "").strip()[:200] or "Untitled dataset",
            description=post.get("description", ""),
            split_ratios=tuple(ratios),
            seed=int(post["seed"]) if str(post.get("seed", "")).isdigit() else 42,
            label_map=label_map if isinstance(label_map, dict) else {},
        )

    @property
    def split_ratios_text(self) -> str:
        return ",".join(f"{r:g}" for r in self.split_ratios)

    @property
    def label_map_json(self) -> str:
        return json.dumps(self.label_map) if self.label_map else ""


def _overrides(post: Any, staging: _Staging) -> dict[str, Any]:
    # An empty choice means "detect it"; the services ignore empty overrides.
    out = {key: post[name] for name, key in MAPPING_FIELDS.items() if post.get(name)}
    if post.get("map_unlabelled"):
        out["unlabelled"] = True
        out.pop("label_column", None)
    if staging.label_map:
        out["label_map"] = staging.label_map
    return out


def _preview(request: HttpRequest, *, staging: _Staging, overrides: dict[str, Any],
             error: str = "", confirm_form: DatasetConfirmForm | None = None) -> HttpResponse:
    staged = upload_open(owner_id=request.user.pk, token=staging.token)
    if staged is None:
        messages.error(request, "That upload has expired. Please upload the file again.")
        return redirect("datasets:upload")
    with staged:
        try:
            with disk_full_refused():  # the preview spools the file to a temporary folder
                preview = dataset_preview(uploaded_file=staged, mapping_overrides=overrides)
            if not preview.report.get("rows_sampled"):
                raise DatasetFileError("The file has a header but no data rows.")
        except DiskFull as exc:
            return _disk_full(request, exc, token=staging.token, name=staging.name,
                              description=staging.description)
        except IMPORT_ERRORS as exc:
            # The column choice is wrong: show what we detect, and why (no choice fixes a cap).
            if overrides and not isinstance(exc, DatasetOverCapError):
                return _preview(request, staging=staging, overrides={},
                                error=f"Those columns do not work: {exc}")
            return _refused(request, staging=staging, reason=str(exc))
    no_label = not preview.mapping.get("label") and not overrides.get("unlabelled")
    return render(request, "datasets/preview.html", {
        "staging": staging, "preview": preview, "error": error,
        "unlabelled": bool(overrides.get("unlabelled")),
        "label_warning": label_missing_warning(
            columns=preview.columns, option="the “Label column” choice, then re-check",
        ) if no_label else "",
        "confirm_form": confirm_form or DatasetConfirmForm(labelled=not no_label),
        "sample_labels": sorted(preview.report.get("label_counts_in_sample", {}).items(),
                                key=lambda kv: (-kv[1], kv[0])),
    }, status=400 if confirm_form is not None and confirm_form.errors else 200)


def _refused(request: HttpRequest, *, staging: _Staging, reason: str) -> HttpResponse:
    """Back to step 1 with why the file cannot be read; the staged copy goes."""
    upload_discard(owner_id=request.user.pk, token=staging.token)
    form = DatasetUploadForm(initial={"name": staging.name, "description": staging.description})
    return render(request, "datasets/upload.html", {
        "form": form, "read_error": reason, "max_mb": settings.MAX_UPLOAD_SIZE // 1048576,
    }, status=400)


@login_required
@require_POST
def dataset_upload_confirm(request: HttpRequest) -> HttpResponse:
    """Step 2: re-check with the person's overrides, or queue the staged file's import (its
    first rows are read again with the chosen columns, so a choice that cannot work comes back
    here at once; the rest is read by a worker)."""
    _may_upload_here(request)
    staging = _Staging.from_post(request.POST)
    overrides = _overrides(request.POST, staging)
    action = request.POST.get("action")
    if action == "cancel":
        upload_discard(owner_id=request.user.pk, token=staging.token)
        return redirect("datasets:list")
    if action != "create":
        return _preview(request, staging=staging, overrides=overrides)
    confirm = _confirm_form(request, staging=staging, overrides=overrides)
    if not confirm.is_valid():  # no labels, and "prediction only" not ticked: nothing created
        return _preview(request, staging=staging, overrides=overrides, confirm_form=confirm)
    staged = upload_open(owner_id=request.user.pk, token=staging.token)
    if staged is None:
        messages.error(request, "That upload has expired. Please upload the file again.")
        return redirect("datasets:upload")
    with staged:
        try:
            # Stored and queued: a worker reads the rows while the import page shows how far.
            job = imports.import_job_create(
                owner=request.user, project=request.project, uploaded_file=staged,
                name=staging.name, description=staging.description, mapping=overrides or None,
                split_ratios=staging.split_ratios, seed=staging.seed,
            )
        except DiskFull as exc:
            return _disk_full(request, exc, token=staging.token, name=staging.name,
                              description=staging.description)
        except DatasetOverCapError as exc:  # no column choice fixes it: the staged copy goes
            return _refused(request, staging=staging, reason=str(exc))
        except IMPORT_ERRORS as exc:
            return _preview(request, staging=staging, overrides=overrides,
                            error=f"The dataset could not be created: {exc}")
    upload_discard(owner_id=request.user.pk, token=staging.token)
    return redirect("datasets:import_detail", pk=job.pk)


@login_required
def import_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """An import's page: progress while a worker reads the file, then the dataset or the reason
    (static/js/dataset_import.js polls import_progress and follows the dataset when done)."""
    job = selectors.import_job_get(user=request.user, pk=pk)
    return render(request, "datasets/import_detail.html", {
        "job": job, "payload": _import_payload(job),
        "may": policy.actions_on(user=request.user, obj=job),
    })


@login_required
def import_progress(request: HttpRequest, pk: int) -> JsonResponse:
    job = selectors.import_job_get(user=request.user, pk=pk)
    return JsonResponse(_import_payload(job))


def _import_payload(job: Any) -> dict[str, Any]:
    payload = selectors.import_job_progress(job=job)
    payload["dataset_url"] = (reverse("datasets:detail", args=[job.dataset_id])
                              if job.dataset_id else "")
    return payload


@login_required
@require_POST
def import_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = selectors.import_job_get(user=request.user, pk=pk, action=policy.Action.CANCEL)
    job = imports.import_job_cancel(user=request.user, job=job)
    if job.is_active:
        messages.info(request, "Stopping the import: the worker stops at its next chunk of rows.")
    return redirect("datasets:import_detail", pk=job.pk)


def _confirm_form(request: HttpRequest, *, staging: _Staging,
                  overrides: dict[str, Any]) -> DatasetConfirmForm:
    """The create step's form. The file is read again only when the POST leaves open whether it
    has labels (no label column chosen, "prediction only" not ticked)."""
    labelled = True
    settled = (overrides.get("unlabelled") or overrides.get("label_column")
               or request.POST.get("prediction_only"))
    staged = None if settled else upload_open(owner_id=request.user.pk, token=staging.token)
    if staged is not None:
        with staged:
            try:
                with disk_full_refused():
                    preview = dataset_preview(uploaded_file=staged,
                                              mapping_overrides=overrides)
                labelled = bool(preview.mapping.get("label"))
            except (DiskFull, *IMPORT_ERRORS):
                pass  # creating meets the same problem next and says what it is
    return DatasetConfirmForm(request.POST, labelled=labelled)


def _disk_full(request: HttpRequest, exc: DiskFull, *, token: str, name: str,
               description: str) -> HttpResponse:
    """Back to step 1 with the reason; the staged copy goes too, as the message promises."""
    if token:
        upload_discard(owner_id=request.user.pk, token=token)
    logger.error("dataset upload by user %s: disk full (%s)", request.user.pk, exc.__cause__)
    messages.error(request, exc.message)
    form = DatasetUploadForm(initial={"name": name, "description": description})
    return render(request, "datasets/upload.html", {
        "form": form, "max_mb": settings.MAX_UPLOAD_SIZE // 1048576,
    }, status=507)


@login_required
def dataset_detail(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = _dataset(request, pk)
    # The dataset may be in another of the person's projects than the current one.
    may = policy.actions_on(user=request.user, obj=dataset)
    counts = dataset.label_counts or {}
    try:
        samples = selectors.dataset_sample_rows(dataset=dataset, n=12)
        histogram = _histogram_bars(selectors.dataset_length_histogram(dataset=dataset))
    except (OSError, ValueError):  # the rows file is gone or damaged: show what the row knows
        logger.warning("dataset %s: rows file %r unreadable", dataset.pk, dataset.rows_path)
        samples, histogram = None, _histogram_bars({})
    # Names only: each model row also carries its metrics JSON, tens of kB to decode.
    using = selectors.dataset_models_using(dataset=dataset, user=request.user)
    models_using = list(using.only("id", "name", "model_type", "dataset_id")[:MODELS_LISTED])
    return render(request, "datasets/detail.html", {
        "dataset": dataset,
        "may": may,
        "move_targets": (selectors.dataset_move_targets(user=request.user, dataset=dataset)
                         if may[policy.Action.MOVE] else ()),
        "samples": samples,
        "models_using": models_using,
        "models_more": (using.count() - MODELS_LISTED
                        if len(models_using) == MODELS_LISTED else 0),
        "summary": report_summary(dataset.report or {}),
        "dedup_rules": RULES_SHOWN, "dedup_conflicts": CONFLICTS,
        "charts": {
            "labels": list(counts.keys()),
            "counts": list(counts.values()),
            "histogram": histogram,
        },
    })


def _histogram_bars(histogram: dict[str, Any]) -> dict[str, Any]:
    """Bin edges [a, b, c] -> bar labels ["a-b", "b-c"] for the chart."""
    edges = histogram.get("edges") or []
    labels = [f"{edges[i]:.0f}–{edges[i + 1]:.0f}" for i in range(len(edges) - 1)]
    return {"labels": labels, "counts": histogram.get("counts") or [],
            "unit": histogram.get("unit", "words")}


@login_required
def dataset_export(request: HttpRequest, pk: int) -> HttpResponseBase:
    """The dataset's rows with their labels: ?format=csv (the default), ris or jsonl."""
    dataset = _dataset(request, pk, policy.Action.DOWNLOAD)
    fmt = request.GET.get("format", "csv")
    if fmt not in EXPORT_FORMATS or not selectors.dataset_rows_file(dataset=dataset).is_file():
        raise Http404("No such format, or the dataset's rows are gone.")
    return export_response(dataset_export_make(dataset=dataset, fmt=fmt,
                                               prefix=settings.EXPORT_LABEL_PREFIX))


@login_required
def dataset_conflicts(request: HttpRequest, pk: int) -> HttpResponse:
    """Every group of the same text with different labels, paged, with its rows' texts; and
    the rules that resolve them into a new dataset."""
    dataset = _dataset(request, pk)
    report = dataset.report or {}
    page = page_of(conflict_groups(report), request.GET.get("page"), per_page=CONFLICTS_PER_PAGE)
    return render(request, "datasets/conflicts.html", {
        "dataset": dataset,
        "may": policy.actions_on(user=request.user, obj=dataset),
        "page": page,
        "groups": conflicts.conflicts_groups_read(dataset=dataset, groups=list(page.object_list)),
        "summary": report_summary(report),
        "missing_note": conflicts_missing_note(report),
    })


@login_required
@require_POST
def dataset_resolve_conflicts(request: HttpRequest, pk: int) -> HttpResponse:
    # The resolved rows become a new dataset in the same project: an upload there.
    dataset = _dataset(request, pk, policy.Action.UPLOAD)
    try:
        resolved = conflicts.dataset_resolve_conflicts(
            dataset=dataset, rule=request.POST.get("rule", ""), user=request.user)
    except (ValueError, DatasetFileError) as exc:
        messages.error(request, str(exc))
        return redirect("datasets:detail", pk=dataset.pk)
    messages.success(request, f"Made “{resolved.name}” with the conflicts resolved.")
    return redirect("datasets:detail", pk=resolved.pk)


@login_required
@require_POST
def dataset_delete(request: HttpRequest, pk: int) -> HttpResponse:
    dataset = _dataset(request, pk, policy.Action.DELETE)
    name = dataset.name
    services.dataset_delete(dataset=dataset, user=request.user)
    messages.success(request, f"Deleted dataset “{name}”. Models trained on it still work.")
    return redirect("datasets:list")


@login_required
@require_POST
def dataset_move(request: HttpRequest, pk: int) -> HttpResponse:
    """Move the dataset with its models to another project the person maintains.

    A project they are not in is 404 like any other id; one where they may not upload is 403.
    """
    dataset = _dataset(request, pk, policy.Action.MOVE)
    target = policy.project_get(user=request.user, project_id=request.POST.get("project"),
                                action=policy.Action.UPLOAD)
    try:
        services.dataset_move(user=request.user, dataset=dataset, project=target)
    except ProjectError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Moved “{dataset.name}” and its models to “{target.name}”.")
    return redirect("datasets:detail", pk=dataset.pk)

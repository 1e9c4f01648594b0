"""Saved searches' pages: the list with the new-search form, a search with its runs and latest
digest (run it now, change it, delete it), and one run's digest with every new article.

Thin: reads through literature.selectors, writes through literature.services (their
SavedSearchError is the person's message), permissions through projects.policy.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from core.paging import page_of
from core.queueing import QueueUnavailable
from literature import selectors, services
from literature.forms import SavedSearchForm, form_initial
from literature.models import SavedSearch
from projects import policy
from projects.context import page_project_show


def _form(request: HttpRequest, project: object, **kwargs: object) -> SavedSearchForm:
    return SavedSearchForm(
        collections=selectors.collection_choices(user=request.user, project=project),
        models=selectors.model_choices(user=request.user, project=project), **kwargs)


def _apply(form: SavedSearchForm, write: object) -> SavedSearch | None:
    """Run `write(**kwargs)` for a valid form; a refusal becomes the form's error."""
    if not form.is_valid():
        return None
    try:
        return write(**form.search_kwargs())  # type: ignore[operator]
    except services.SavedSearchError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, exc.message)
    return None


@login_required
def search_list(request: HttpRequest) -> HttpResponse:
    project = request.project
    form = _form(request, project, data=request.POST or None)
    if request.method == "POST":
        search = _apply(form, lambda **kw: services.saved_search_create(
            user=request.user, project=project, **kw))
        if search is not None:
            return redirect("literature:detail", pk=search.pk)
    page = page_of(selectors.saved_search_list(user=request.user, project=project)
                   .order_by("name", "pk"), request.GET.get("page"))
    return render(request, "literature/list.html", {
        "searches": page.object_list, "page": page, "form": form, "section": "literature",
        "may_create": policy.can(user=request.user, action=policy.Action.UPLOAD,
                                 project=project)})


@login_required
def search_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The search, its runs and its latest digest; POST changes it (the form below)."""
    search = selectors.saved_search_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=search.project_id)
    form = _form(request, search.project_id, data=request.POST or None,
                 initial=form_initial(search))
    if request.method == "POST":
        policy.require(user=request.user, action=policy.Action.UPLOAD, obj=search)
        if _apply(form, lambda **kw: services.saved_search_update(
                user=request.user, search=search, **kw)) is not None:
            messages.success(request, "Saved.")
            return redirect("literature:detail", pk=search.pk)
    runs = selectors.search_run_list(search=search)
    return render(request, "literature/detail.html", {
        "search": search, "runs": runs, "latest": runs[0] if runs else None, "form": form,
        "section": "literature", "can": policy.actions_on(user=request.user, obj=search)})


@login_required
@require_POST
def search_run(request: HttpRequest, pk: int) -> HttpResponse:
    search = selectors.saved_search_get(user=request.user, pk=pk,
                                        action=policy.Action.UPLOAD)
    try:
        services.search_run_start(search=search, user=request.user)
    except services.SavedSearchError as exc:
        messages.error(request, exc.message)
    except QueueUnavailable as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, "Searching PubMed; the new articles appear below.")
    return redirect("literature:detail", pk=search.pk)


@login_required
@require_POST
def search_delete(request: HttpRequest, pk: int) -> HttpResponse:
    search = selectors.saved_search_get(user=request.user, pk=pk,
                                        action=policy.Action.DELETE)
    try:
        services.saved_search_delete(user=request.user, search=search)
    except services.SavedSearchError as exc:
        messages.error(request, exc.message)
        return redirect("literature:detail", pk=search.pk)
    messages.success(request, f"Deleted the search “{search.name}”; its collection stays.")
    return redirect("literature:list")


@login_required
@require_GET
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.search_run_get(user=request.user, pk=pk)
    page_project_show(request=request, project_id=run.search.project_id)
    return render(request, "literature/run.html", {"run": run, "search": run.search,
                                                   "section": "literature"})

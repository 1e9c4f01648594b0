"""Project pages: the header's switcher, the list, one project's members, invitations and
activity, and signing up through an invitation link.

Views stay thin: every write is a function of projects/services.py, which checks the role. A
ProjectError is the person's mistake (last owner, unknown user) and comes back as a message; a
RoleRequired is a request the page never offered that role: it propagates to Django's 403
handler (templates/403.html), which shows its sentence naming the role needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from . import policy, selectors, services
from .forms import InvitationForm, MemberAddForm, MemberRoleForm, ProjectNameForm, SignupForm
from .middleware import SESSION_KEY
from .models import ROLE_RANK, Invitation, Project
from .services import InvitationNotYours, ProjectError

ACTIVITY_PER_PAGE = 50
# Signing up logs the new person in without a password check; name the backend that knows them.
LOGIN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def _project(request: HttpRequest, pk: int) -> Project:
    """The project if the person is a member (any role), else 404: ids reveal nothing."""
    return policy.project_get(user=request.user, project_id=pk)


def _switch_to(request: HttpRequest, project: Project) -> None:
    request.session[SESSION_KEY] = project.pk
    services.project_last_remember(user=request.user, project=project)


def _back(request: HttpRequest, project: Project, work: Callable[[], str]) -> HttpResponse:
    """Run one write; its sentence (or its ProjectError's) becomes a message on the project page."""
    try:
        messages.success(request, work())
    except ProjectError as exc:
        messages.error(request, exc.message)
    return redirect("projects:detail", pk=project.pk)


def _form_errors(request: HttpRequest, form: Any) -> None:
    for field, errors in form.errors.items():
        label = form.fields[field].label if field in form.fields else ""
        messages.error(request, f"{label}: {' '.join(errors)}" if label else " ".join(errors))


# --- The switcher and the list ----------------------------------------------------------------


@login_required
@require_POST
def project_switch(request: HttpRequest) -> HttpResponse:
    project = _project(request, request.POST.get("project"))
    _switch_to(request, project)
    messages.info(request, f"You are now working in “{project.name}”.")
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        back = reverse("dashboard")
    return redirect(back)


@login_required
def project_list(request: HttpRequest) -> HttpResponse:
    return render(request, "projects/list.html", {
        # Asked first: a person's first page makes their personal project, which the list shows.
        "current_id": request.project.pk,
        "projects": selectors.project_list_rows(user=request.user),
        "form": ProjectNameForm(),
    })


@login_required
def project_create(request: HttpRequest) -> HttpResponse:
    form = ProjectNameForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            project = services.project_create(user=request.user, name=form.cleaned_data["name"])
        except ProjectError as exc:
            form.add_error("name", exc.message)
        else:
            _switch_to(request, project)  # a new project is made to be worked in at once
            messages.success(request, f"Created “{project.name}”. You are its owner and now "
                                      "working in it: add colleagues on this page.")
            return redirect("projects:detail", pk=project.pk)
    return render(request, "projects/create.html", {"form": form},
                  status=400 if form.errors else 200)


# --- One project -------------------------------------------------------------------------------


@login_required
def project_detail(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    may = policy.actions_on(user=request.user, obj=project)
    activity = Paginator(selectors.activity_list(project=project, user=request.user),
                         ACTIVITY_PER_PAGE)
    return render(request, "projects/detail.html", {
        "project": project,
        "may": may,
        "my_role": policy.role_of(user=request.user, project=project),
        "counts": selectors.project_counts(project=project),
        "memberships": selectors.membership_list(project=project),
        "invitations": (selectors.invitation_list_open(project=project)
                        if may[policy.Action.MANAGE_MEMBERS] else []),
        "page": activity.get_page(request.GET.get("page")),
        "role_choices": MemberRoleForm.base_fields["role"].choices,
        "member_form": MemberAddForm(),
        "invitation_form": InvitationForm(),
        "invitation_days": settings.INVITATION_DAYS,
        "is_current": request.project.pk == project.pk,
    })


@login_required
@require_POST
def project_rename(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    form = ProjectNameForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("projects:detail", pk=project.pk)

    def rename() -> str:
        services.project_rename(user=request.user, project=project,
                                name=form.cleaned_data["name"])
        return f"Renamed the project to “{project.name}”."

    return _back(request, project, rename)


@login_required
@require_POST
def project_delete(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    name = project.name
    try:
        services.project_delete(user=request.user, project=project)
    except ProjectError as exc:
        messages.error(request, exc.message)
        return redirect("projects:detail", pk=pk)
    if request.session.get(SESSION_KEY) == pk:
        request.session.pop(SESSION_KEY)  # back to the personal project
    messages.success(request, f"Deleted the project “{name}”.")
    return redirect("projects:list")


# --- Members -------------------------------------------------------------------------------------


@login_required
@require_POST
def member_add(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    # Checked before the form: a viewer's forged request is refused, not told what was wrong.
    policy.require(user=request.user, action=policy.Action.MANAGE_MEMBERS, project=project)
    form = MemberAddForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("projects:detail", pk=project.pk)

    def add() -> str:
        membership = services.member_add(user=request.user, project=project,
                                         identifier=form.cleaned_data["identifier"],
                                         role=form.cleaned_data["role"])
        return f"{membership.user.get_username()} is now {membership.role} of this project."

    return _back(request, project, add)


def _member(project: Project, user_id: int) -> Any:
    membership = get_object_or_404(project.memberships.select_related("user"), user_id=user_id)
    return membership.user


@login_required
@require_POST
def member_role(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    project = _project(request, pk)
    # member_set leaves the check to its caller (the CLI calls it as an administrator).
    policy.require(user=request.user, action=policy.Action.MANAGE_MEMBERS, project=project)
    member = _member(project, user_id)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("projects:detail", pk=project.pk)

    def change() -> str:
        membership = services.member_set(actor=request.user, project=project, member=member,
                                         role=form.cleaned_data["role"])
        return f"{member.get_username()} is now {membership.role} of this project."

    return _back(request, project, change)


@login_required
@require_POST
def member_remove(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    project = _project(request, pk)
    member = _member(project, user_id)
    if member.pk == request.user.pk:
        return project_leave(request, pk=pk)

    def remove() -> str:
        services.member_remove(user=request.user, project=project, member=member)
        return f"Removed {member.get_username()} from the project."

    return _back(request, project, remove)


@login_required
@require_POST
def project_leave(request: HttpRequest, pk: int) -> HttpResponse:
    project = _project(request, pk)
    try:
        services.member_remove(user=request.user, project=project, member=request.user)
    except ProjectError as exc:
        messages.error(request, exc.message)
        return redirect("projects:detail", pk=project.pk)
    if request.session.get(SESSION_KEY) == project.pk:
        request.session.pop(SESSION_KEY)
    messages.success(request, f"You left “{project.name}”.")
    return redirect("projects:list")


# --- Invitations ---------------------------------------------------------------------------------


@login_required
@require_POST
def invitation_create(request: HttpRequest, pk: int) -> HttpResponse:
    """The link is on this response only: its key is never stored, so it cannot be shown again."""
    project = _project(request, pk)
    policy.require(user=request.user, action=policy.Action.MANAGE_MEMBERS, project=project)
    form = InvitationForm(request.POST)
    if not form.is_valid():
        _form_errors(request, form)
        return redirect("projects:detail", pk=project.pk)
    try:
        invitation, key = services.invitation_create(
            user=request.user, project=project, role=form.cleaned_data["role"],
            email=form.cleaned_data["email"], anyone=form.cleaned_data["anyone"])
    except ProjectError as exc:
        messages.error(request, exc.message)
        return redirect("projects:detail", pk=project.pk)
    return render(request, "projects/invitation_created.html", {
        "project": project, "invitation": invitation,
        "link": request.build_absolute_uri(reverse("projects:invitation", args=[key])),
    }, status=201)


@login_required
@require_POST
def invitation_revoke(request: HttpRequest, pk: int, invitation_id: int) -> HttpResponse:
    project = _project(request, pk)
    invitation = policy.object_get(Invitation.objects.filter(project=project), user=request.user,
                                   action=policy.Action.MANAGE_MEMBERS, pk=invitation_id)

    def revoke() -> str:
        services.invitation_revoke(user=request.user, invitation=invitation)
        return f"Revoked the invitation for a {invitation.role}: its link no longer works."

    return _back(request, project, revoke)


def _invitation_refused(request: HttpRequest, exc: ProjectError) -> HttpResponse:
    # A key that never existed is 404; one that did (expired, used, withdrawn) is gone: 410;
    # one made for someone else is 403.
    unknown = exc.message.startswith("This invitation link is not valid")
    status = 403 if isinstance(exc, InvitationNotYours) else 404 if unknown else 410
    return render(request, "projects/invitation_refused.html", {"reason": exc.message},
                  status=status)


def invitation_page(request: HttpRequest, key: str) -> HttpResponse:
    """Shows the project and the role; a member joins with one button, a visitor signs up."""
    try:
        invitation = services.invitation_open(key=key)
    except ProjectError as exc:
        return _invitation_refused(request, exc)
    if request.user.is_authenticated:
        return _invitation_accept(request, invitation, key)
    form = SignupForm(request.POST or None, initial={"email": invitation.email})
    if request.method == "POST" and form.is_valid():
        try:
            services.invitation_invitee_check(  # before the account: its log line stays
                invitation=invitation, email=form.cleaned_data["email"],
                username=form.cleaned_data["username"])
            with transaction.atomic():  # no account is left behind by a link that failed
                user = form.save()
                services.invitation_accept(user=user, key=key)
        except ProjectError as exc:
            return _invitation_refused(request, exc)
        login(request, user, backend=LOGIN_BACKEND)
        _switch_to(request, invitation.project)
        messages.success(request, f"Welcome, {user.get_username()}. You are now "
                                  f"{invitation.role} of “{invitation.project.name}”.")
        return redirect("projects:detail", pk=invitation.project_id)
    return render(request, "projects/invitation.html", {
        "invitation": invitation, "form": form,
        "login_url": f"{reverse('login')}?next={request.path}",
    }, status=400 if form.errors else 200)


def _invitation_accept(request: HttpRequest, invitation: Invitation, key: str) -> HttpResponse:
    current = policy.role_of(user=request.user, project=invitation.project)
    # Accepting would give nothing (accepting never lowers a role) yet spend the link: an owner
    # checking the link they made keeps it for the colleague it is meant for.
    gains = current is None or ROLE_RANK[invitation.role] > ROLE_RANK[current]
    refusal = services.invitation_refusal_for(invitation=invitation, email=request.user.email)
    if gains and refusal is not None and request.method != "POST":
        return render(request, "projects/invitation_refused.html", {"reason": refusal},
                      status=403)
    if request.method != "POST" or not gains:
        return render(request, "projects/invitation.html", {
            "invitation": invitation, "current_role_there": current, "gains": gains,
        })
    try:
        membership = services.invitation_accept(user=request.user, key=key)
    except ProjectError as exc:
        return _invitation_refused(request, exc)
    _switch_to(request, invitation.project)
    messages.success(request, f"You are now {membership.role} of “{invitation.project.name}”.")
    return redirect("projects:detail", pk=invitation.project_id)


def signup(request: HttpRequest) -> HttpResponse:
    """Open sign-up, only where settings.OPEN_SIGNUP turns it on: else accounts come from an
    administrator or an invitation link, and this address does not exist."""
    if not settings.OPEN_SIGNUP:
        raise Http404("Sign-up is by invitation only.")
    if request.user.is_authenticated:
        return redirect("dashboard")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend=LOGIN_BACKEND)
        messages.success(request, f"Welcome, {user.get_username()}. Your work goes to your "
                                  "personal project until you make or join another.")
        return redirect("dashboard")
    return render(request, "registration/signup.html", {"form": form},
                  status=400 if form.errors else 200)


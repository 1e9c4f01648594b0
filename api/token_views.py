"""/account/tokens/: the person's API tokens, a form to make one, and a revoke button for each;
then their signed-in sessions, each with a button that ends it (api/token_sessions.py).

A new key is rendered into the answer to the POST that made it and is never stored: not in the
session (which lives in the database) and not in a flash message. The page is not cached, so
going back cannot show it again; reloading re-sends the form and makes another token.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from api import token_sessions, tokens

TEMPLATE = "api/tokens.html"


def _page(request: HttpRequest, *, new_key: str = "", new_token=None, error: str = "",
          name: str = "", status: int = 200) -> HttpResponse:
    token_sessions.session_track(request=request)  # this session, if its key changed
    return render(request, TEMPLATE, {
        "tokens": tokens.token_list(user=request.user), "new_key": new_key,
        "sessions": token_sessions.session_list(user=request.user),
        "current_session": request.session.session_key,
        "new_token": new_token, "error": error, "name": name,
        "days": settings.API_TOKEN_DAYS, "name_max": tokens.NAME_MAX_LENGTH,
    }, status=status)


@never_cache
@login_required
def token_page(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return _page(request)
    name = request.POST.get("name", "")
    try:
        token, key = tokens.token_create(user=request.user, name=name)
    except tokens.TokenError as exc:
        return _page(request, error=exc.message, name=name, status=400)
    return _page(request, new_key=key, new_token=token)


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = tokens.token_revoke(user=request.user,
                                token=tokens.token_get(user=request.user, pk=pk))
    messages.success(request, f"The token “{token.name}” ({token.key_prefix}…) is revoked: "
                              "requests sent with it are refused from now on.")
    return redirect("account_tokens")


@login_required
@require_POST
def session_end(request: HttpRequest, pk: int) -> HttpResponse:
    row = token_sessions.session_end(user=request.user, pk=pk)
    if row.session_key == request.session.session_key:
        return redirect("login")  # this browser's own session: it is signed out now
    messages.success(request, f"The session from {row.address or 'an unknown address'} is "
                              "ended: that browser is signed out.")
    return redirect("account_tokens")


@login_required
@require_POST
def member_tokens_revoke(request: HttpRequest, pk: int, user_id: int) -> HttpResponse:
    """An owner's button on the project page: the member's tokens and sessions end."""
    from projects import policy

    project = policy.project_get(user=request.user, project_id=pk)  # 404 outside your projects
    member = get_object_or_404(get_user_model(), pk=user_id)
    summary = token_sessions.member_credentials_revoke(user=request.user, project=project,
                                                       member=member)
    messages.success(request, summary + ".")
    return redirect("projects:detail", pk=project.pk)

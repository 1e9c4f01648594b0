"""Logging in: the API token view, and the answer django-axes gives a locked-out account.

Each successful ``POST /api/token/`` makes a new named token ("API login <date>") that expires
after API_TOKEN_DAYS; it is listed, and can be revoked, at /account/tokens/ and /api/tokens/
(api/tokens.py).

DRF's ``obtain_auth_token`` hands ``authenticate`` DRF's own Request, on which django-axes
records the lockout where its middleware never looks; this view passes the Django request, so
failures count and a locked-out account is refused with a clear reason, as on the login pages.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from axes.helpers import get_cool_off, get_failure_limit
from django.conf import settings
from django.contrib.auth import authenticate
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from api.tokens import token_create
from core import loginthrottle

logger = logging.getLogger(__name__)

LOCKOUT_TEMPLATE = "registration/locked_out.html"


def lockout_message(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str:
    limit = get_failure_limit(request, credentials)
    cool_off = get_cool_off(request)
    if cool_off:
        minutes = max(1, math.ceil(cool_off.total_seconds() / 60))
        wait = f"for {minutes} minute{'s' if minutes != 1 else ''}"
    else:
        wait = "until an administrator unlocks it"
    return (
        f"This account is locked {wait} after {limit} failed login attempts. "
        "Until then even the right password is refused."
    )


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict[str, Any] | None = None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: JSON under /api/, the lockout page everywhere else."""
    message = lockout_message(request, credentials)
    status = settings.AXES_HTTP_RESPONSE_CODE
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=status)
    return render(request, LOCKOUT_TEMPLATE, {"message": message}, status=status)


class TokenRateThrottle(ScopedRateThrottle):
    """The "token" scope, counted in the shared cache (Redis), per client address.

    A cache that cannot be reached lets the request through, logged, instead of answering 500:
    the per-account lockout, kept in the database, still holds.
    """

    def allow_request(self, request: Request, view: APIView) -> bool:
        try:
            return super().allow_request(request, view)
        except loginthrottle.cache_errors() as exc:
            logger.warning("token throttle not applied, the cache is unreachable: %s", exc)
            return True


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField()
    password = serializers.CharField(style={"input_type": "password"}, trim_whitespace=False)


class TokenResponseSerializer(serializers.Serializer):
    token = serializers.CharField()


class TokenObtainApi(APIView):
    """POST a username and password; the answer is a new API token for the account.

    The token is named "API login <date>" and expires after API_TOKEN_DAYS days; list and
    revoke your tokens at /api/tokens/.

    Throttled per client (scope "token"), and an account with too many failed attempts is
    locked out for the cool-off time (429); so is an address with too many failed logins,
    whatever the usernames (LOGIN_FAILURES_PER_ADDRESS).
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_classes = [TokenRateThrottle]
    throttle_scope = "token"

    @extend_schema(
        request=TokenRequestSerializer,
        responses={
            200: TokenResponseSerializer,
            400: OpenApiResponse(description="Wrong username or password"),
            429: OpenApiResponse(description="Locked out, or too many requests"),
        },
        auth=[],
    )
    def post(self, request: Request) -> HttpResponse:
        data = TokenRequestSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        credentials = dict(data.validated_data)
        # The Django request: django-axes marks a lockout on it, and its middleware reads it.
        django_request = request._request
        user = authenticate(request=django_request, **credentials)
        if getattr(django_request, "axes_locked_out", False):
            return lockout_response(django_request, credentials=credentials)
        if getattr(django_request, loginthrottle.MARK, ""):
            return loginthrottle.limited_response(django_request)
        if user is None or not user.is_active:
            raise ValidationError(
                {"non_field_errors": ["Unable to log in with provided credentials."]}
            )
        stamp = timezone.localtime().strftime("%Y-%m-%d %H:%M %Z")
        _token, key = token_create(user=user, name=f"API login {stamp}")
        return Response({"token": key})

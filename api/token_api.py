"""/api/tokens/: list your API tokens, make a named one, read or revoke one.

A token's key is in the answer to the POST that makes it and nowhere else: lists and details
carry its name, its first eight characters (``prefix``) and its dates, never a secret.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import tokens
from api.models import ApiToken


class ApiTokenSerializer(serializers.ModelSerializer):
    prefix = serializers.CharField(source="key_prefix", read_only=True,
                                   help_text="The key's first 8 characters, to tell tokens apart")
    state = serializers.ChoiceField(choices=["active", "expired", "revoked"], read_only=True)

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "state", "created_at", "expires_at", "last_used_at",
                  "revoked_at"]
        read_only_fields = fields


class ApiTokenCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=tokens.NAME_MAX_LENGTH)
    days = serializers.IntegerField(required=False, min_value=1,
                                    help_text="Days until it expires; at most API_TOKEN_DAYS "
                                              "(the default)")


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True,
                                  help_text="The key: shown in this answer only, never again")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]
        read_only_fields = fields


class TokenListCreateApi(generics.ListAPIView):
    """Your API tokens that were not revoked, newest first; POST a name to make one.

    The new key is in the 201's `token` and is never shown again; send it as
    `Authorization: Token <token>`.
    """

    serializer_class = ApiTokenSerializer

    def get_queryset(self):
        return tokens.token_list(user=self.request.user)

    @extend_schema(request=ApiTokenCreateSerializer,
                   responses={201: ApiTokenCreatedSerializer}, examples=[
                       OpenApiExample("A named token", request_only=True,
                                      value={"name": "Lab server"},
                                      description="Expires after API_TOKEN_DAYS (30 by default)"),
                       OpenApiExample("A week's token", request_only=True,
                                      value={"name": "Workshop notebook", "days": 7}),
                   ])
    def post(self, request: Request) -> Response:
        data = ApiTokenCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            token, key = tokens.token_create(user=request.user, **data.validated_data)
        except tokens.TokenError as exc:
            raise ValidationError({"non_field_errors": [exc.message]}) from exc
        token.token = key
        location = request.build_absolute_uri(reverse("api:token_detail", args=[token.pk]))
        return Response(ApiTokenCreatedSerializer(token).data, status=status.HTTP_201_CREATED,
                        headers={"Location": location})


class TokenDetailApi(APIView):
    """One of your tokens (no secret); DELETE revokes it at once."""

    @extend_schema(responses={200: ApiTokenSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(ApiTokenSerializer(tokens.token_get(user=request.user, pk=pk)).data)

    @extend_schema(responses={204: OpenApiResponse(description="Revoked")})
    def delete(self, request: Request, pk: int) -> Response:
        tokens.token_revoke(user=request.user, token=tokens.token_get(user=request.user, pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)

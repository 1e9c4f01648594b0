"""API tokens in the admin: staff can see who has which token and revoke one, never read a key."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from api.models import ApiToken
from api.tokens import token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "key_prefix", "created_at", "expires_at", "last_used_at",
                    "revoked_at"]
    list_filter = ["revoked_at", "expires_at"]
    search_fields = ["name", "user__username", "key_prefix"]
    list_select_related = ["user"]
    readonly_fields = list_display
    exclude = ["key_hash"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a key is made by its person, who alone sees it

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        count = 0
        for token in queryset.filter(revoked_at=None).select_related("user"):
            token_revoke(user=token.user, token=token, by=request.user)  # logged as staff's
            count += 1
        self.message_user(request, f"Revoked {count} token{'s' if count != 1 else ''}.")

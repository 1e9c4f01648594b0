from django.contrib import admin

from .models import Activity, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    raw_id_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "personal_for", "created_at"]
    search_fields = ["name"]
    inlines = [MembershipInline]


@admin.register(Activity)
class ActivityAdmin(admin.ModelAdmin):
    list_display = ["at", "project", "actor", "summary"]
    list_filter = ["verb"]

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False  # append-only

    def has_delete_permission(self, request: object, obj: object = None) -> bool:
        return False

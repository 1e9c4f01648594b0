"""Projects: the unit of sharing. Every dataset, model, job, batch and review belongs to one.

A row reaches its project through the lookup its model declares as ``PROJECT_LOOKUP``
(``"project"`` by default), which is all projects/policy.py needs to scope any queryset.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Role(models.TextChoices):
    """Each role can do everything the roles before it can (see ROLE_RANK)."""

    VIEWER = "viewer", "Viewer"
    REVIEWER = "reviewer", "Reviewer"
    MAINTAINER = "maintainer", "Maintainer"
    OWNER = "owner", "Owner"


ROLE_RANK: dict[str, int] = {Role.VIEWER: 1, Role.REVIEWER: 2, Role.MAINTAINER: 3, Role.OWNER: 4}


class Project(models.Model):
    PROJECT_LOOKUP = "pk"

    name = models.CharField(max_length=200)
    # The project a user's rows go to when they have chosen no other. It outlives its user's
    # account (SET_NULL) so that what colleagues were given stays theirs.
    personal_for = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="personal_project",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    PROJECT_LOOKUP = "project"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_one_per_user"),
        ]
        indexes = [models.Index(fields=["user", "project"], name="membership_by_user")]

    def __str__(self) -> str:
        return f"{self.user_id} is {self.role} of {self.project_id}"

    def at_least(self, role: str) -> bool:
        return ROLE_RANK[self.role] >= ROLE_RANK[role]


class LastProject(models.Model):
    """The project a person last chose to work in: where their next login lands, while they
    are still a member of it (projects.middleware.project_last_restore)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                primary_key=True, related_name="last_project")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    chosen_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id} last worked in {self.project_id}"


class Invitation(models.Model):
    """A link that adds whoever opens it (signing up first if they must) with a role.

    Only the SHA-256 of the link's key is stored: the database never holds a usable link.
    """

    PROJECT_LOOKUP = "project"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=20, choices=Role.choices)
    key_hash = models.CharField(max_length=64, unique=True)
    # Only a user with this e-mail may accept it (services.invitation_invitee_check); blank is a
    # link for anyone who holds it, which the owner must ask for and which gives reviewer at most.
    email = models.EmailField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="+",
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Invitation to {self.project_id} as {self.role}"


class Activity(models.Model):
    """One thing someone (or the system, actor None) did in a project. Never updated.

    ``subject`` names the row it was about ("dataset 12") so the log still reads when the row
    is gone; ``detail`` keeps what the sentence needs.
    """

    PROJECT_LOOKUP = "project"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="activities")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
        related_name="+",
    )
    verb = models.CharField(max_length=40)
    subject_type = models.CharField(max_length=40, blank=True)
    subject_id = models.CharField(max_length=64, blank=True)
    summary = models.CharField(max_length=500)
    detail = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["project", "-at"], name="activity_by_project")]

    def __str__(self) -> str:
        return self.summary

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise ValueError("The activity log is append-only.")
        super().save(*args, **kwargs)

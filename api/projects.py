"""The API's projects: the unit of sharing, their members and roles, and their activity log.

Writes go through projects.services and reads through projects.selectors, so the API does what
the project page does. The policy answers who may: a project you are not in is a 404 that says
nothing about it; a role too low is a 403 naming the role (api/exceptions.py); a refusal in
plain words (the last owner, an unknown user) is a 400 with that sentence.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from api import docs
from classification.models import BatchJob, MLModel
from dataset_management.models import Dataset
from projects import policy, selectors, services
from projects.models import Activity, Membership, Project, Role

Action = policy.Action

# --- Representations ----------------------------------------------------------------------------


class ProjectSerializer(serializers.ModelSerializer):
    """A project, the same in the list, the detail, the 201 of a create and the 200 of a rename."""

    is_personal = serializers.SerializerMethodField(
        help_text="Your personal project, where your work goes when you name no other; it "
        "cannot be deleted.")
    role = serializers.CharField(source="my_role", read_only=True,
                                 help_text="Your role in it: viewer, reviewer, maintainer, owner.")
    member_count = serializers.IntegerField(read_only=True)
    dataset_count = serializers.IntegerField(read_only=True)
    model_count = serializers.IntegerField(read_only=True)
    batch_count = serializers.IntegerField(read_only=True)
    created_by = serializers.CharField(source="created_by.get_username", read_only=True,
                                       default=None, help_text="null once that account is gone.")

    class Meta:
        model = Project
        fields = ["id", "name", "is_personal", "role", "member_count", "dataset_count",
                  "model_count", "batch_count", "created_by", "created_at"]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.BOOL)
    def get_is_personal(self, project: Project) -> bool:
        return project.personal_for_id is not None


class ProjectNameSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, help_text="What the project is called.")


class MemberSerializer(serializers.ModelSerializer):
    """One member: PATCH or DELETE /api/projects/{id}/members/{user_id}/ acts on them."""

    user_id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(source="user.get_username", read_only=True)
    joined_at = serializers.DateTimeField(source="created_at", read_only=True)

    class Meta:
        model = Membership
        fields = ["user_id", "username", "role", "joined_at"]
        read_only_fields = fields


class MemberAddSerializer(serializers.Serializer):
    username = serializers.CharField(
        max_length=254, help_text="An existing user's username or e-mail address.")
    role = serializers.ChoiceField(choices=Role.choices)


class MemberRoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class ActivitySerializer(serializers.ModelSerializer):
    """One line of the project's append-only log, newest first."""

    actor = serializers.SerializerMethodField(
        help_text="The username of who did it; null for the system (or an account since "
        "deleted).")

    class Meta:
        model = Activity
        fields = ["id", "at", "actor", "verb", "summary", "subject_type", "subject_id"]
        read_only_fields = fields
        extra_kwargs = {
            "verb": {"help_text": "What happened, e.g. dataset_uploaded, member_added."},
            "subject_type": {"help_text": "The kind of row it was about (may be gone now)."},
            "subject_id": {"help_text": "That row's id, as text; empty when none."},
        }

    @extend_schema_field(OpenApiTypes.STR)
    def get_actor(self, activity: Activity) -> str | None:
        return activity.actor.get_username() if activity.actor_id is not None else None


# --- Reads --------------------------------------------------------------------------------------


def _count_in_project(model: type) -> Coalesce:
    rows = (model.objects.filter(project=OuterRef("pk")).order_by().values("project")
            .annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def project_rows(*, user: Any) -> QuerySet[Project]:
    """The user's projects with everything the representation shows, in one statement."""
    return selectors.project_list_rows(user=user).select_related("created_by").annotate(
        dataset_count=_count_in_project(Dataset), model_count=_count_in_project(MLModel),
        batch_count=_count_in_project(BatchJob),
    )


def _project_answer(request: Request, pk: int, *, code: int = status.HTTP_200_OK) -> Response:
    row = project_rows(user=request.user).get(pk=pk)
    return Response(ProjectSerializer(row).data, status=code)


def _membership(project: Project, user_id: int) -> Membership:
    membership = (Membership.objects.select_related("user")
                  .filter(project=project, user_id=user_id).first())
    if membership is None:
        raise Http404("No such member.")
    return membership


# --- Views --------------------------------------------------------------------------------------


class ProjectListCreateApi(generics.ListAPIView):
    """The projects you are a member of, with your role in each; POST `{"name": ...}` creates
    one with you as its owner (201)."""

    serializer_class = ProjectSerializer
    queryset = Project.objects.none()  # the schema's model; get_queryset scopes the rows

    def get_queryset(self) -> QuerySet[Project]:
        return project_rows(user=self.request.user)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        # As the first page does: a user never has no project, so the list always shows one.
        services.project_personal(user=request.user)
        return super().get(request, *args, **kwargs)

    @extend_schema(request=ProjectNameSerializer, responses={
        201: ProjectSerializer, 400: OpenApiResponse(description="No name")},
        examples=docs.PROJECT_CREATE_EXAMPLES)
    def post(self, request: Request) -> Response:
        data = ProjectNameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        project = services.project_create(user=request.user, name=data.validated_data["name"])
        response = _project_answer(request, project.pk, code=status.HTTP_201_CREATED)
        response["Location"] = request.build_absolute_uri(
            reverse("api:project_detail", args=[project.pk]))
        return response


class ProjectDetailApi(APIView):
    """One of your projects. PATCH `{"name": ...}` renames it and DELETE deletes it: both need
    the owner role, and a project is deleted only once it is empty and not your personal one."""

    @extend_schema(responses=ProjectSerializer)
    def get(self, request: Request, pk: int) -> Response:
        row = policy.object_get(project_rows(user=request.user), user=request.user, pk=pk)
        return Response(ProjectSerializer(row).data)

    @extend_schema(request=ProjectNameSerializer, responses={
        200: ProjectSerializer, 403: OpenApiResponse(description="You are not an owner")},
        examples=docs.PROJECT_RENAME_EXAMPLES)
    def patch(self, request: Request, pk: int) -> Response:
        project = policy.project_get(user=request.user, project_id=pk,
                                     action=Action.RENAME_PROJECT)
        data = ProjectNameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.project_rename(user=request.user, project=project,
                                name=data.validated_data["name"])
        return _project_answer(request, project.pk)

    @extend_schema(responses={
        204: None, 403: OpenApiResponse(description="You are not an owner"),
        409: OpenApiResponse(description="It still holds datasets, models or batches, or it "
                             "is a personal project")})
    def delete(self, request: Request, pk: int) -> Response:
        project = policy.project_get(user=request.user, project_id=pk,
                                     action=Action.DELETE_PROJECT)
        try:
            services.project_delete(user=request.user, project=project)
        except services.ProjectError as exc:
            return Response({"detail": exc.message}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberListCreateApi(generics.ListAPIView):
    """The project's members and their roles; POST `{"username": ..., "role": ...}` (an owner)
    adds an existing user by username or e-mail (201), or changes the role of one already in
    (200)."""

    serializer_class = MemberSerializer
    queryset = Membership.objects.none()  # the schema's model; get_queryset scopes the rows

    def get_queryset(self) -> QuerySet[Membership]:
        project = policy.project_get(user=self.request.user, project_id=self.kwargs["pk"])
        return selectors.membership_list(project=project)

    @extend_schema(request=MemberAddSerializer, responses={
        201: MemberSerializer, 200: MemberSerializer,
        400: OpenApiResponse(description="No such user, an unknown role, or the last owner"),
        403: OpenApiResponse(description="You are not an owner")},
        examples=docs.MEMBER_ADD_EXAMPLES)
    def post(self, request: Request, pk: int) -> Response:
        project = policy.project_get(user=request.user, project_id=pk,
                                     action=Action.MANAGE_MEMBERS)
        data = MemberAddSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        already = set(project.memberships.values_list("user_id", flat=True))
        membership = services.member_add(user=request.user, project=project,
                                         identifier=data.validated_data["username"],
                                         role=data.validated_data["role"])
        code = status.HTTP_200_OK if membership.user_id in already else status.HTTP_201_CREATED
        return Response(MemberSerializer(membership).data, status=code)


class MemberDetailApi(APIView):
    """PATCH `{"role": ...}` changes a member's role (an owner); DELETE removes them (an owner),
    or is you leaving. A project never loses its last owner: make someone else owner first."""

    @extend_schema(request=MemberRoleSerializer, responses={
        200: MemberSerializer,
        400: OpenApiResponse(description="An unknown role, or the last owner"),
        403: OpenApiResponse(description="You are not an owner")},
        examples=docs.MEMBER_ROLE_EXAMPLES)
    def patch(self, request: Request, pk: int, user_id: int) -> Response:
        project = policy.project_get(user=request.user, project_id=pk,
                                     action=Action.MANAGE_MEMBERS)
        membership = _membership(project, user_id)
        data = MemberRoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.member_set(actor=request.user, project=project,
                                         member=membership.user, role=data.validated_data["role"])
        return Response(MemberSerializer(membership).data)

    @extend_schema(responses={
        204: None, 400: OpenApiResponse(description="The last owner"),
        403: OpenApiResponse(description="You are not an owner, and not removing yourself")})
    def delete(self, request: Request, pk: int, user_id: int) -> Response:
        project = policy.project_get(user=request.user, project_id=pk)
        membership = _membership(project, user_id)
        services.member_remove(user=request.user, project=project, member=membership.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ProjectActivityApi(generics.ListAPIView):
    """Who did what in the project, newest first, paged as the other lists are."""

    serializer_class = ActivitySerializer
    queryset = Activity.objects.none()  # the schema's model; get_queryset scopes the rows

    def get_queryset(self) -> QuerySet[Activity]:
        project = policy.project_get(user=self.request.user, project_id=self.kwargs["pk"])
        return selectors.activity_list(project=project, user=self.request.user)


# Spliced into api/urls.py's list, so the names are api:project_list, api:project_detail ...
urlpatterns = [
    path("projects/", ProjectListCreateApi.as_view(), name="project_list"),
    path("projects/<int:pk>/", ProjectDetailApi.as_view(), name="project_detail"),
    path("projects/<int:pk>/members/", MemberListCreateApi.as_view(), name="project_members"),
    path("projects/<int:pk>/members/<int:user_id>/", MemberDetailApi.as_view(),
         name="project_member"),
    path("projects/<int:pk>/activity/", ProjectActivityApi.as_view(), name="project_activity"),
]

"""Project pages (under /projects/), invitation links (/invite/<key>/) and open sign-up."""

from django.urls import path

from projects import views

app_name = "projects"
urlpatterns = [
    path("projects/", views.project_list, name="list"),
    path("projects/new/", views.project_create, name="create"),
    path("projects/switch/", views.project_switch, name="switch"),
    path("projects/<int:pk>/", views.project_detail, name="detail"),
    path("projects/<int:pk>/rename/", views.project_rename, name="rename"),
    path("projects/<int:pk>/delete/", views.project_delete, name="delete"),
    path("projects/<int:pk>/leave/", views.project_leave, name="leave"),
    path("projects/<int:pk>/members/", views.member_add, name="member_add"),
    path("projects/<int:pk>/members/<int:user_id>/role/", views.member_role, name="member_role"),
    path("projects/<int:pk>/members/<int:user_id>/remove/", views.member_remove,
         name="member_remove"),
    path("projects/<int:pk>/invitations/", views.invitation_create, name="invitation_create"),
    path("projects/<int:pk>/invitations/<int:invitation_id>/revoke/", views.invitation_revoke,
         name="invitation_revoke"),
    path("invite/<str:key>/", views.invitation_page, name="invitation"),
    path("signup/", views.signup, name="signup"),
]

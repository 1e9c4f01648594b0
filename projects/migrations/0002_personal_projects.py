"""Every existing user gets a personal project, and their rows move into it.

Rows that no one owned (the CLI could import without an owner) go to one "Unclaimed rows"
project whose owners are the superusers; `manage.py project_member` gives it others.
"""

from django.db import migrations

UNCLAIMED = "Unclaimed rows"


def forwards(apps, schema_editor):
    User = apps.get_model("auth", "User")
    Project = apps.get_model("projects", "Project")
    Membership = apps.get_model("projects", "Membership")
    Dataset = apps.get_model("dataset_management", "Dataset")
    MLModel = apps.get_model("classification", "MLModel")
    BatchJob = apps.get_model("classification", "BatchJob")

    for user in User.objects.order_by("pk").iterator():
        project = Project.objects.filter(personal_for=user).first()
        if project is None:
            project = Project.objects.create(name=f"{user.username}'s project",
                                             personal_for=user, created_by=user)
            Membership.objects.create(project=project, user=user, role="owner")
        Dataset.objects.filter(owner=user, project=None).update(project=project)
        BatchJob.objects.filter(owner=user, project=None).update(project=project)
    # A model goes with its dataset when it has one (a colleague's dataset), else its owner.
    for model in MLModel.objects.filter(project=None).select_related("dataset").iterator():
        project_id = model.dataset.project_id if model.dataset_id else None
        if project_id is None and model.owner_id is not None:
            project_id = Project.objects.get(personal_for_id=model.owner_id).pk
        if project_id is not None:
            MLModel.objects.filter(pk=model.pk).update(project_id=project_id)
    for batch in BatchJob.objects.filter(project=None).select_related("ml_model").iterator():
        BatchJob.objects.filter(pk=batch.pk).update(project_id=batch.ml_model.project_id)

    orphans = [Dataset.objects.filter(project=None), MLModel.objects.filter(project=None),
               BatchJob.objects.filter(project=None)]
    if any(qs.exists() for qs in orphans):
        unclaimed = Project.objects.create(name=UNCLAIMED)
        for admin in User.objects.filter(is_superuser=True):
            Membership.objects.create(project=unclaimed, user=admin, role="owner")
        for qs in orphans:
            qs.update(project=unclaimed)


class Migration(migrations.Migration):
    dependencies = [
        ("projects", "0001_initial"),
        ("dataset_management", "0002_dataset_project"),
        ("classification", "0008_batchjob_project_mlmodel_project"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]

"""The data migration that introduced projects: every user gets a personal project, every row
moves into one, and nothing is lost. Run on a database holding rows in every table it touches.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [
    ("projects", "0001_initial"),
    ("dataset_management", "0002_dataset_project"),
    ("classification", "0008_batchjob_project_mlmodel_project"),
]


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


def _leaves() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _seed(apps: Any) -> dict[str, Any]:
    User = apps.get_model("auth", "User")
    Dataset = apps.get_model("dataset_management", "Dataset")
    MLModel = apps.get_model("classification", "MLModel")
    TrainingJob = apps.get_model("classification", "TrainingJob")
    BatchJob = apps.get_model("classification", "BatchJob")
    ReviewItem = apps.get_model("classification", "ReviewItem")
    ReviewRound = apps.get_model("classification", "ReviewRound")

    alice = User.objects.create(username="alice", email="a@example.org")
    bob = User.objects.create(username="bob", email="b@example.org")
    admin = User.objects.create(username="root", is_superuser=True, is_staff=True)
    rows: dict[str, Any] = {"users": (alice, bob, admin)}
    rows["alice_data"] = Dataset.objects.create(owner=alice, name="Alice's abstracts")
    rows["bob_data"] = Dataset.objects.create(owner=bob, name="Bob's abstracts")
    rows["orphan_data"] = Dataset.objects.create(owner=None, name="Imported by the CLI")
    # Bob trained a model on Alice's dataset? Impossible before projects; a model trained on a
    # dataset follows the dataset, and one without a dataset follows its owner.
    rows["alice_model"] = MLModel.objects.create(owner=alice, dataset=rows["alice_data"],
                                                 name="m1", model_type="tfidf_svm")
    rows["bob_loose_model"] = MLModel.objects.create(owner=bob, dataset=None, name="m2",
                                                     model_type="tfidf_svm")
    rows["ownerless_model"] = MLModel.objects.create(owner=None, dataset=rows["bob_data"],
                                                     name="m3", model_type="tfidf_lr")
    rows["orphan_model"] = MLModel.objects.create(owner=None, dataset=None, name="m4",
                                                  model_type="tfidf_lr")
    rows["job"] = TrainingJob.objects.create(ml_model=rows["alice_model"], status="failed",
                                             reason="out of memory")
    rows["batch"] = BatchJob.objects.create(owner=alice, ml_model=rows["alice_model"],
                                            filename="new.csv", status="completed")
    rows["item"] = ReviewItem.objects.create(batch=rows["batch"], row=1, title="t",
                                             predicted_labels=["oncology"])
    rows["round"] = ReviewRound.objects.create(batch=rows["batch"], created_by=alice,
                                               dataset=rows["alice_data"])
    return rows


@pytest.mark.django_db(transaction=True)
def test_every_user_gets_a_personal_project_and_every_row_moves_into_one() -> None:
    rows = _seed(_migrate(BEFORE))
    alice, bob, admin = rows["users"]

    apps = _migrate(_leaves())
    Project = apps.get_model("projects", "Project")
    Membership = apps.get_model("projects", "Membership")
    Dataset = apps.get_model("dataset_management", "Dataset")
    MLModel = apps.get_model("classification", "MLModel")
    BatchJob = apps.get_model("classification", "BatchJob")
    TrainingJob = apps.get_model("classification", "TrainingJob")
    ReviewItem = apps.get_model("classification", "ReviewItem")

    personal = {p.personal_for_id: p for p in Project.objects.exclude(personal_for=None)}
    assert set(personal) == {alice.pk, bob.pk, admin.pk}
    for user_id, project in personal.items():
        assert Membership.objects.filter(project=project, user_id=user_id, role="owner").exists()

    def project_of(model: Any, pk: Any) -> int:
        return model.objects.get(pk=pk).project_id

    assert project_of(Dataset, rows["alice_data"].pk) == personal[alice.pk].pk
    assert project_of(Dataset, rows["bob_data"].pk) == personal[bob.pk].pk
    assert project_of(MLModel, rows["alice_model"].pk) == personal[alice.pk].pk
    assert project_of(MLModel, rows["bob_loose_model"].pk) == personal[bob.pk].pk
    assert project_of(MLModel, rows["ownerless_model"].pk) == personal[bob.pk].pk
    assert project_of(BatchJob, rows["batch"].pk) == personal[alice.pk].pk

    # What nobody owned is kept, in one project the superusers own, not dropped.
    unclaimed = Project.objects.get(name="Unclaimed rows")
    assert project_of(Dataset, rows["orphan_data"].pk) == unclaimed.pk
    assert project_of(MLModel, rows["orphan_model"].pk) == unclaimed.pk
    assert list(Membership.objects.filter(project=unclaimed).values_list("user_id", "role")) == [
        (admin.pk, "owner")]

    # Nothing lost, nothing left without a project, and the job kept its reason.
    assert Dataset.objects.count() == 3
    assert MLModel.objects.count() == 4
    assert not Dataset.objects.filter(project=None).exists()
    assert not MLModel.objects.filter(project=None).exists()
    assert TrainingJob.objects.get(pk=rows["job"].pk).reason == "out of memory"
    assert ReviewItem.objects.filter(batch_id=rows["batch"].pk).count() == 1

"""Create the demo user, import the demo dataset and train its TF-IDF model, once each. Run by
start_m1.sh on every start, before the workers: the model trains here, in this process, through
the ordinary supervised job (seconds), so Classify works the moment start_m1.sh ends. The demo's
transformer stays a click away on the New model page."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand
from django.db import transaction

from classification import services as classification_services
from classification.models import MLModel, TrainingJob
from core.queueing import QueueUnavailable
from dataset_management.models import Dataset
from dataset_management.services import dataset_create_from_upload
from projects.services import project_personal

DEMO_FILE = Path(settings.BASE_DIR) / "demo_data" / "medlit_challenge.csv"
DEMO_DATASET_NAME = "Medical literature domains (demo)"
DEMO_MODEL_NAME = "Demo TF-IDF model"
DEMO_MODEL_TYPE = "tfidf_logreg"


class Command(BaseCommand):
    help = ("Create the demo user, import the demo dataset and train its TF-IDF model (in "
            "this process, in seconds), once each: a later run keeps what is already there.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--username", default="demo")
        parser.add_argument("--password", default="medlitbot-demo")

    def handle(self, *args: Any, username: str, password: str, **options: Any) -> None:
        user_model = get_user_model()
        # The demo account is an ordinary user: it must not open the admin. An administrator
        # is made on purpose, with `manage.py createsuperuser`.
        user, created = user_model.objects.get_or_create(
            username=username, defaults={"email": f"{username}@example.org"}
        )
        if user.is_staff or user.is_superuser:  # installs from before this change
            user.is_staff = user.is_superuser = False
            user.save(update_fields=["is_staff", "is_superuser"])
        if created:
            user.set_password(password)
            user.save(update_fields=["password"])
        # "Made by the demo user", wherever it is now: a demo dataset the user moved to another
        # project is not imported again. (An idempotence check, not an access decision.)
        if not Dataset.objects.filter(owner=user, name=DEMO_DATASET_NAME).exists():
            with DEMO_FILE.open("rb") as handle:
                dataset = dataset_create_from_upload(
                    owner=user, project=project_personal(user=user), verb="dataset_imported",
                    uploaded_file=File(handle, name=DEMO_FILE.name),
                    name=DEMO_DATASET_NAME,
                    description="2,855 biomedical abstracts labelled with one or more of four "
                    "domains. See demo_data/SOURCE.md.",
                )
            self.stdout.write(f"imported the demo dataset ({dataset.row_count} rows) into "
                              f"“{dataset.project.name}”")
        dataset = Dataset.objects.filter(owner=user, name=DEMO_DATASET_NAME).first()
        if dataset is not None:
            self._demo_model(user, dataset)
        state = "created" if created else "exists"
        self.stdout.write(
            self.style.SUCCESS(f"demo user {state}: username={username} password={password}")
        )

    def _demo_model(self, user: Any, dataset: Dataset) -> None:
        """The demo dataset's TF-IDF model, trained now unless it already is (or is being)."""
        if transaction.get_connection().in_atomic_block:
            # The training process reads the rows on its own connection: it could not see
            # what this open transaction (a caller's, or a test's) has not committed.
            self.stdout.write("the demo model is left for later: inside a transaction")
            return
        model = MLModel.objects.filter(
            dataset=dataset, name=DEMO_MODEL_NAME).order_by("-pk").first()
        if model is not None and model.status == MLModel.Status.TRAINED:
            return
        job = model.training_jobs.order_by("-pk").first() if model is not None else None
        try:
            if job is None:
                job = classification_services.training_job_create(
                    owner=user, dataset=dataset, model_type=DEMO_MODEL_TYPE,
                    name=DEMO_MODEL_NAME, config={})
            elif job.is_resumable:
                job = classification_services.training_job_resume(job=job)
            elif job.status == TrainingJob.Status.RUNNING:
                return  # a worker has it already
        except QueueUnavailable as exc:
            self.stderr.write(f"the demo model was not trained ({exc}); train one from the "
                              "Models page once the workers run")
            return
        # Here, not on a worker: none runs yet. The message sent meanwhile finds it done.
        classification_services.training_job_run(job_id=job.pk)
        job.refresh_from_db()
        if job.status == TrainingJob.Status.COMPLETED:
            self.stdout.write(f"trained the demo model “{DEMO_MODEL_NAME}” ({DEMO_MODEL_TYPE}): "
                              "Classify works now")
        else:
            self.stderr.write(f"the demo model did not train ({job.status}: {job.reason})")

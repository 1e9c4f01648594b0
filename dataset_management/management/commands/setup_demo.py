"""Create the demo user and import the demo dataset, once. Run by start_m1.sh on every start."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand

from dataset_management.models import Dataset
from dataset_management.services import dataset_create_from_upload
from projects.services import project_personal

DEMO_FILE = Path(settings.BASE_DIR) / "demo_data" / "medlit_challenge.csv"
DEMO_DATASET_NAME = "Medical literature domains (demo)"


class Command(BaseCommand):
    help = "Create the demo user and import the demo dataset if they do not exist yet."

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
        state = "created" if created else "exists"
        self.stdout.write(
            self.style.SUCCESS(f"demo user {state}: username={username} password={password}")
        )

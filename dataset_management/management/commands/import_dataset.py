"""python manage.py import_dataset PATH --name NAME [...]: the upload form, from a shell."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.diskspace import DiskFull
from dataset_management.mapping import label_missing_warning
from dataset_management.readers import FORMATS_SENTENCE, DatasetFileError
from dataset_management.services import dataset_create_from_upload
from dataset_management.validation import report_lines


class Command(BaseCommand):
    help = f"Import a dataset file ({FORMATS_SENTENCE}) and print its report."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path")
        parser.add_argument("--name", required=True)
        parser.add_argument("--description", default="")
        parser.add_argument("--owner", help="username (default: first superuser, else 'demo')")
        parser.add_argument("--title-column")
        text = parser.add_mutually_exclusive_group()
        text.add_argument("--abstract-column")
        text.add_argument("--text-column")
        parser.add_argument("--label-column")
        parser.add_argument("--split-column")
        parser.add_argument("--label-separator", help="'none' for single-label")
        parser.add_argument("--label-map", help='JSON object, e.g. {"0": "cardiovascular"}')
        parser.add_argument("--unlabelled", action="store_true", help="ignore any label column")
        parser.add_argument("--split-ratios", default="0.8,0.1,0.1")
        parser.add_argument("--seed", type=int, default=42)

    def handle(self, *args, **options) -> None:
        path = Path(options["path"])
        if not path.is_file():
            raise CommandError(f"No such file: {path}")
        try:
            ratios = tuple(float(x) for x in options["split_ratios"].split(","))
            label_map = json.loads(options["label_map"]) if options["label_map"] else None
        except ValueError as exc:
            raise CommandError(f"Bad option value: {exc}") from None
        mapping = {key: options[key] for key in (
            "title_column", "abstract_column", "text_column", "label_column", "split_column",
            "label_separator",
        )}
        mapping |= {"label_map": label_map, "unlabelled": options["unlabelled"]}
        owner = _owner(options["owner"])
        try:
            with path.open("rb") as f:
                dataset = dataset_create_from_upload(
                    owner=owner, uploaded_file=File(f, name=path.name), name=options["name"],
                    description=options["description"], mapping=mapping, split_ratios=ratios,
                    seed=options["seed"],
                )
        except (DatasetFileError, DiskFull) as exc:
            raise CommandError(exc.message) from None
        for line in report_lines(dataset.report):
            self.stdout.write(line)
        if not dataset.label_names and not options["unlabelled"]:
            columns = (dataset.report or {}).get("columns") or []
            self.stdout.write(self.style.WARNING(
                f"Warning: {label_missing_warning(columns=columns, option='--label-column')}"
            ))
        self.stdout.write(f"dataset_id={dataset.pk}")


def _owner(username: str | None):
    users = get_user_model().objects
    if username:
        try:
            return users.get(username=username)
        except users.model.DoesNotExist:
            raise CommandError(f"No user named '{username}'.") from None
    return (users.filter(is_superuser=True).order_by("pk").first()
            or users.filter(username="demo").first())

"""python manage.py import_dataset PATH [PATH ...] --name NAME [...]: the upload form, from a
shell.

Several files (any mix of formats) make one collection: duplicates across and within them are
merged (dataset_management.collection), and the counts per file are printed. One file is
imported as it always was, unless --find-duplicates asks for the collection's merge. The last
two lines are `duplicates_removed=N` and `dataset_id=N`.

The dataset goes to --project, else to its owner's personal project. With neither --owner nor
--project it falls back, as it always has, to the install's only superuser, else the 'demo'
user; where neither exists it refuses, because a dataset nobody can see helps nobody.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.diskspace import DiskFull
from dataset_management.collection import collection_create
from dataset_management.collection_merge import Source
from dataset_management.mapping import label_missing_warning
from dataset_management.readers import FORMATS_SENTENCE, DatasetFileError
from dataset_management.services import dataset_create_from_upload
from dataset_management.validation import report_lines
from projects import policy
from projects.models import Project
from projects.services import project_personal


class Command(BaseCommand):
    help = (f"Import dataset files ({FORMATS_SENTENCE}) and print the report; several files "
            "make one collection with their duplicates merged.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", nargs="+")
        parser.add_argument("--find-duplicates", action="store_true",
                            help="merge duplicate records of a single file too (several files "
                                 "always are)")
        parser.add_argument("--name", required=True)
        parser.add_argument("--description", default="")
        parser.add_argument("--owner", help="username: who made it, and without --project whose "
                            "personal project it joins (default: the only superuser, else 'demo')")
        parser.add_argument("--project", type=int, metavar="ID",
                            help="project id; the owner, if given, must be a maintainer there")
        parser.add_argument("--title-column")
        text = parser.add_mutually_exclusive_group()
        text.add_argument("--abstract-column")
        text.add_argument("--text-column")
        parser.add_argument("--label-column")
        parser.add_argument("--split-column")
        parser.add_argument("--label-separator", help="'none' for single-label")
        parser.add_argument("--label-map", help='JSON object, e.g. {"0": "cardiovascular"}')
        parser.add_argument("--unlabelled", action="store_true", help="ignore any label column")
        parser.add_argument("--no-label-rows", choices=("keep", "drop"),
                            help="multi-label: keep rows without a label as examples of none "
                                 "of these (the default), or drop them")
        parser.add_argument("--other-means-none", action="store_true",
                            help="multi-label: the label 'other' means no label")
        parser.add_argument("--split-ratios", default="0.8,0.1,0.1")
        parser.add_argument("--seed", type=int, default=42)

    def handle(self, *args, **options) -> None:
        paths = [Path(p) for p in options["path"]]
        for path in paths:
            if not path.is_file():
                raise CommandError(f"No such file: {path}")
        if len({p.name for p in paths}) < len(paths):
            raise CommandError("Two of the files have the same name: the collection names "
                               "each record's source by its file name; rename one.")
        try:
            ratios = tuple(float(x) for x in options["split_ratios"].split(","))
            label_map = json.loads(options["label_map"]) if options["label_map"] else None
        except ValueError as exc:
            raise CommandError(f"Bad option value: {exc}") from None
        mapping = {key: options[key] for key in (
            "title_column", "abstract_column", "text_column", "label_column", "split_column",
            "label_separator", "no_label_rows", "other_means_none",
        )}
        mapping |= {"label_map": label_map, "unlabelled": options["unlabelled"]}
        owner, project = _destination(username=options["owner"], project_id=options["project"])
        removed = 0
        try:
            if len(paths) > 1 or options["find_duplicates"]:
                dataset, removed = self._collection(paths, options, mapping=mapping,
                                                    ratios=ratios, owner=owner, project=project)
            else:
                with paths[0].open("rb") as f:
                    dataset = dataset_create_from_upload(
                        owner=owner, project=project, uploaded_file=File(f, name=paths[0].name),
                        name=options["name"], description=options["description"],
                        mapping=mapping, split_ratios=ratios, seed=options["seed"],
                        verb="dataset_imported",
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
        self.stdout.write(f"duplicates_removed={removed}")
        self.stdout.write(f"dataset_id={dataset.pk}")

    def _collection(self, paths: list[Path], options: dict[str, Any], *,
                    mapping: dict[str, Any], ratios: tuple[float, ...], owner: Any,
                    project: Project) -> tuple[Any, int]:
        """Several files as one collection, its counts per file printed; (dataset, removed)."""
        dataset, result = collection_create(
            owner=owner, project=project, name=options["name"],
            sources=[Source(path=p, name=p.name, overrides=mapping) for p in paths],
            description=options["description"], unlabelled=options["unlabelled"],
            split_ratios=ratios, seed=options["seed"], verb="dataset_imported")
        for counts in result.files:
            self.stdout.write(counts.line())
        self.stdout.write(f"In all: {result.identified} identified, "
                          f"{result.duplicates_removed} duplicates removed, "
                          f"{len(result.near)} near matches to confirm")
        return dataset, result.duplicates_removed


def _destination(*, username: str | None, project_id: int | None) -> tuple[Any, Project]:
    """(owner or None, project): where the dataset goes, or a CommandError saying why not."""
    owner = _user(username) if username else None
    if project_id is None:
        owner = owner or _default_owner()
        return owner, project_personal(user=owner)
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise CommandError(f"No project with id {project_id}.")
    if owner is not None and not policy.can(user=owner, action=policy.Action.UPLOAD,
                                            project=project):
        role = policy.role_of(user=owner, project=project)
        raise CommandError(
            f"'{owner.get_username()}' may not import into project {project.pk} "
            f"(“{project.name}”): that needs the maintainer role, and they are "
            f"{f'a {role}' if role else 'not a member'}."
        )
    return owner, project


def _user(username: str) -> Any:
    users = get_user_model().objects
    try:
        return users.get(username=username)
    except users.model.DoesNotExist:
        raise CommandError(f"No user named '{username}'.") from None


def _default_owner() -> Any:
    users = get_user_model().objects
    superusers = list(users.filter(is_superuser=True).order_by("pk")[:2])
    if len(superusers) > 1:  # whose project it joins decides who sees it: never guess
        raise CommandError("There are several superusers: name the dataset's owner with "
                           "--owner USERNAME or its project with --project ID.")
    found = superusers[0] if superusers else users.filter(username="demo").first()
    if found is None:
        raise CommandError("No owner or project for the dataset: give --owner USERNAME or "
                           "--project ID (there is no superuser or 'demo' user to default to).")
    return found

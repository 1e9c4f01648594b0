"""Collections as import jobs: the web stores every file and queues one ImportJob; a worker
merges them (collection.py) and imports the merged file, with progress, like a single upload.

The web reads only the first records of each file (so a file that cannot be read is refused
while the person waits, naming it); the merge, the duplicates and the import run on the
default queue through imports.import_job_run, which ends the row as it ends every import.
"Add files to this collection" is the same job with `add_to`: the worker reads the
collection's own rows as the merge's first source. Confirming near matches writes a new
version from the stored rows (about as long as importing them: see `--apply` of
scripts/benchmark_near_matches.py), so a review that merges any pair is one job too
(options["near_matches"]; no file); splits alone only update the report, in the request.

Files: imports/<owner id>/<job key>/<i>/<file name> under MEDIA_ROOT, listed on the row in
options["collection"]["files"] ({name, path, bytes}); the first is the row's input_path.
"""

from __future__ import annotations

import itertools
import shutil
import uuid
from typing import Any

from core import filestore
from projects import policy
from projects.models import Project

from .collection import (
    COUNTS_KEY,
    collection_add_files,
    collection_create,
    near_decisions_check,
    near_matches_decide,
)
from .collection_merge import Source, source_open
from .imports import ImportReporter, import_job_queue, imports_root, input_store, media_relative
from .models import Dataset, ImportJob
from .readers import DatasetFileError, import_caps
from .upload_files import check_size, safe_filename

# Records read from each file while the person waits: as many as the preview reads, enough
# for a format, encoding or column problem to show; the rest is the worker's.
FIRST_RECORDS = 20


def collection_job_create(
    *, owner: Any, uploads: list[Any], name: str = "", project: Project | None = None,
    description: str = "", unlabelled: bool = False, add_to: Dataset | None = None,
) -> ImportJob:
    """Store `uploads` and queue their merge into a new collection of `project`, or into a
    new version of the collection `add_to` (its project then). DatasetFileError (nothing
    kept) for no files, no name, two files of one name, a file too large, or first records
    that cannot be read (naming the file); DiskFull and QueueUnavailable as import_job_create."""
    if add_to is not None:
        policy.require(user=owner, action=policy.Action.UPLOAD, obj=add_to)
        project = add_to.project
        names_to = "Choose at least one file to add."
    else:
        policy.require(user=owner, action=policy.Action.UPLOAD, project=project)
        names_to = "Choose one or more files."
        if not name.strip():
            raise DatasetFileError("Give the collection a name.")
    names = _names(uploads, empty=names_to)
    if add_to is not None:
        name, description = f"{add_to.name} (+ {', '.join(names)})", add_to.description
    job_key = uuid.uuid4().hex
    folder = imports_root() / str(int(owner.pk)) / job_key
    try:
        files = [_stored(upload, folder / str(i) / file_name, name=file_name)
                 for i, (upload, file_name) in enumerate(zip(uploads, names, strict=True))]
        for stored in files:
            filestore.file_publish(name=stored["path"])  # for a worker on another node
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    options = {"collection": {"files": files, "unlabelled": bool(unlabelled),
                              "add_to": add_to.pk if add_to is not None else None}}
    return import_job_queue(owner=owner, project=project, name=name.strip(),
                            description=description, filename=", ".join(names),
                            input_path=files[0]["path"], options=options,
                            total_bytes=sum(f["bytes"] for f in files), job_key=job_key)


def _names(uploads: list[Any], *, empty: str) -> list[str]:
    if not uploads:
        raise DatasetFileError(empty)
    names = [safe_filename(upload.name) for upload in uploads]
    if len(set(names)) < len(names):
        raise DatasetFileError("Two of the files have the same name: each record's source "
                               "is named by its file name; rename one.")
    return names


def _stored(upload: Any, path: Any, *, name: str) -> dict[str, Any]:
    """One file stored and its first records read; DatasetFileError naming it."""
    try:
        check_size(upload)
        input_store(upload, path)
        with source_open(Source(path=path, name=name), import_caps()) as articles:
            for _ in itertools.islice(articles, FIRST_RECORDS):
                pass
    except DatasetFileError as exc:
        if exc.message.startswith(f"{name}: "):  # source_open names it already
            raise
        raise DatasetFileError(f"{name}: {exc.message}") from None
    return {"name": name, "path": media_relative(path), "bytes": path.stat().st_size}


# --- the worker's side ---------------------------------------------------------------------------


class CollectionProgress:
    """What collection.py reports to: each file's records as they are read (rows and bytes of
    all the files, in order), then the merged file's import (heartbeat, message and cancel
    only: its records were counted once already). Writes through the job's ImportReporter,
    whose raise on a cancel undoes the merge and the import."""

    def __init__(self, reporter: ImportReporter, *, files: list[dict[str, Any]],
                 own_rows: bool) -> None:
        self.reporter = reporter
        self.files = files
        self.own_rows = own_rows  # source 0 is the collection's own rows (files added)
        self.offsets = list(itertools.accumulate((f["bytes"] for f in files), initial=0))

    def source_attach(self, index: int, articles: Any) -> None:
        position = index - self.own_rows
        if position < 0:
            self.reporter.follow(articles, message="Reading the collection's own rows",
                                 done="Reading the new files", counted=False)
            return
        stored = self.files[position]
        last = position == len(self.files) - 1
        self.reporter.follow(
            articles, message=f"Reading {stored['name']} (file {position + 1} of "
            f"{len(self.files)})", done="Merging duplicates" if last else "Reading the next file",
            offset=self.offsets[position], size=stored["bytes"])

    def attach(self, articles: Any) -> None:
        self.reporter.follow(articles, message="Checking the merged articles",
                             done="Checking labels, splitting and saving the rows",
                             counted=False)


def collection_job_import(*, job: ImportJob, reporter: ImportReporter) -> Dataset:
    """The worker's part (imports.import_job_run calls it for a collection's row): merge the
    stored files, import the merged file, return the new dataset; what it raises ends the
    row failed or cancelled with nothing kept."""
    spec = job.options["collection"]
    sources = [Source(path=filestore.file_local(name=f["path"]), name=f["name"])
               for f in spec["files"]]
    add_to = spec.get("add_to")
    progress = CollectionProgress(reporter, files=spec["files"], own_rows=add_to is not None)
    if add_to is not None:
        dataset = Dataset.objects.filter(pk=add_to).first()
        if dataset is None:
            raise DatasetFileError("The collection these files were to join was deleted "
                                   "meanwhile; nothing was saved.")
        return collection_add_files(dataset=dataset, sources=sources, user=job.owner,
                                    progress=progress, unlabelled=bool(spec.get("unlabelled")))
    created, _ = collection_create(
        owner=job.owner, project=job.project_id, sources=sources, name=job.name,
        description=job.description, unlabelled=bool(spec.get("unlabelled")),
        progress=progress)
    return created


# --- near matches confirmed: a new version written by a worker ---------------------------------


def near_matches_job_create(*, owner: Any, dataset: Dataset,
                            decisions: dict[int, str]) -> ImportJob | Dataset:
    """Queue the decisions when any pair is merged (an ImportJob that makes the new version);
    splits alone are applied at once and the dataset returned. ValueError as
    near_matches_decide, nothing changed or queued."""
    policy.require(user=owner, action=policy.Action.UPLOAD, obj=dataset)
    pairs = near_decisions_check(dataset=dataset, decisions=decisions)
    if "merge" not in decisions.values():
        return near_matches_decide(dataset=dataset, decisions=decisions, user=owner)
    # The pairs' rows go with the decisions: the worker refuses them if the list changed.
    chosen = {str(i): {"decision": d, "rows": pairs[i]["rows"]} for i, d in decisions.items()}
    return import_job_queue(
        owner=owner, project=dataset.project, name=f"{dataset.name} (near matches merged)",
        description=dataset.description, filename=f"near matches of dataset {dataset.pk}",
        input_path="", options={"near_matches": {"dataset": dataset.pk, "decisions": chosen}},
        total_bytes=0, job_key=uuid.uuid4().hex)


def near_matches_job_import(*, job: ImportJob, reporter: ImportReporter) -> Dataset:
    """The worker's part for confirmed near matches: the new version, or DatasetFileError
    (the row fails with it) when the collection went or its list changed meanwhile."""
    spec = job.options["near_matches"]
    dataset = Dataset.objects.filter(pk=spec["dataset"]).first()
    if dataset is None:
        raise DatasetFileError("The collection was deleted meanwhile; nothing was saved.")
    pairs = ((dataset.report or {}).get(COUNTS_KEY) or {}).get("near_matches") or []
    decisions = {int(i): chosen["decision"] for i, chosen in spec["decisions"].items()}
    if any(i >= len(pairs) or pairs[i]["rows"] != spec["decisions"][str(i)]["rows"]
           for i in decisions):
        raise DatasetFileError("The near matches of this collection changed meanwhile "
                               "(someone else decided some); nothing was saved: decide again.")
    # The new version's rows are counted as they are imported: no file, so no percentage.
    return near_matches_decide(dataset=dataset, decisions=decisions, user=job.owner,
                               progress=reporter)

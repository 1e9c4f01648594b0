"""Duplicates a person judges, queued: each change (two articles marked as one, a merge
undone) is one import job, checked here while the person waits (a bad pick queues nothing);
the worker's part is unmerge.person_job_import."""

from __future__ import annotations

import uuid
from typing import Any

from projects import policy

from .imports import import_job_queue
from .models import Dataset, ImportJob
from .unmerge import article_picks_resolve, merged_group_get


def duplicates_mark_job_create(*, owner: Any, dataset: Dataset, picks: list[str]) -> ImportJob:
    """Queue the version with the two picked articles as one; ValueError (nothing queued)
    as article_picks_resolve."""
    policy.require(user=owner, action=policy.Action.UPLOAD, obj=dataset)
    rows = article_picks_resolve(dataset=dataset, picks=picks)
    return _queue(owner=owner, dataset=dataset, name=f"{dataset.name} (duplicates marked)",
                  spec={"by_hand": rows})


def merged_group_split_job_create(*, owner: Any, dataset: Dataset, index: int) -> ImportJob:
    """Queue the version with the merge at `index` (of the counts' merged groups) undone;
    ValueError (nothing queued) when it names no merge."""
    policy.require(user=owner, action=policy.Action.UPLOAD, obj=dataset)
    entry = merged_group_get(dataset=dataset, index=index)
    return _queue(owner=owner, dataset=dataset, name=f"{dataset.name} (merge undone)",
                  spec={"unmerge": {"group": index, "row": entry["row"]}})


def _queue(*, owner: Any, dataset: Dataset, name: str, spec: dict[str, Any]) -> ImportJob:
    return import_job_queue(
        owner=owner, project=dataset.project, name=name, description=dataset.description,
        filename=f"articles of dataset {dataset.pk}", input_path="",
        options={"near_matches": {"dataset": dataset.pk, **spec}}, total_bytes=0,
        job_key=uuid.uuid4().hex)

"""Moving an install from one machine to several: publish what this node already has.

Files written before SHARED_STORAGE_URL was set live only on the disk of the node that wrote
them, and models trained then have no digest, so no other node can load them. Run
`manage.py publish_to_shared_storage` once on that node after turning shared storage on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from classification.models import MLModel
from classification.selectors import mlmodel_artifact_dir
from core import filestore
from dataset_management.models import Dataset


@dataclass
class Published:
    files: int = 0
    models: int = 0
    missing: list[str] = field(default_factory=list)  # what this node does not have


def existing_files_publish() -> Published:
    """Publish every dataset file and trained model this node holds; safe to run again (a tree
    already published is not sent twice, and a model with a digest is left alone)."""
    if not filestore.shared_enabled():
        raise ValueError("SHARED_STORAGE_URL is not set: there is nowhere to publish to.")
    done = Published()
    for dataset in Dataset.objects.exclude(rows_path=""):
        for name in (dataset.rows_path, dataset.original_file.name):
            if not name:
                continue
            try:
                filestore.file_publish(name=name)
                done.files += 1
            except FileNotFoundError:
                done.missing.append(f"dataset {dataset.pk}: {name}")
    for model in MLModel.objects.filter(status=MLModel.Status.TRAINED, artifact_digest=""):
        folder = mlmodel_artifact_dir(ml_model=model)
        if folder is None:
            done.missing.append(f"model {model.pk}: {model.artifact_path}")
            continue
        digest = filestore.tree_publish(folder=folder)
        MLModel.objects.filter(pk=model.pk, artifact_digest="").update(artifact_digest=digest)
        done.models += 1
    return done

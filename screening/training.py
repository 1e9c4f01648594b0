""""Train on these decisions": the final decisions become a dataset and a training job.

The dataset goes through dataset_management's own import and the job through
classification.services.training_job_create, the two services Review's retraining also calls
(classification/review/services.py), so there is one way to make a dataset and one way to start
a training. A record with no label said yes becomes EXCLUDED, so a single-label screen still
has two classes to learn.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from django.core.files import File

from classification import services as classification_services
from dataset_management.models import Dataset
from projects import policy
from screening.models import ScreeningSession
from screening.services import ScreeningError

EXCLUDED = "excluded"
DEFAULT_MODEL_TYPE = "tfidf_logreg"


def session_dataset_create(*, user: Any, session: ScreeningSession) -> Dataset:
    from dataset_management.readers import DatasetFileError
    from dataset_management.services import dataset_create_from_upload

    policy.require(user=user, action=policy.Action.UPLOAD, obj=session)
    records = list(session.records.filter(done=True).exclude(done_phase="stop")
                   .order_by("position"))
    if not records:
        raise ScreeningError("Decide at least one record first.")
    with tempfile.TemporaryDirectory(prefix="medlitbot-screening-") as tmp:
        path = Path(tmp) / f"screening-{session.pk}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for record in records:
                labels = [la for la in session.labels if record.final.get(la) == "yes"]
                out.write(json.dumps({"title": record.title, "abstract": record.abstract,
                                      "labels": labels or [EXCLUDED]}, ensure_ascii=False) + "\n")
        try:
            with path.open("rb") as handle:
                return dataset_create_from_upload(
                    owner=user, project=session.project_id,
                    uploaded_file=File(handle, name=path.name),
                    name=f"{session.name} screened ({len(records)})"[:200],
                    description=f"Final decisions of screening session “{session.name}”.",
                    mapping={"title_column": "title", "abstract_column": "abstract",
                             "label_column": "labels"})
        except DatasetFileError as exc:
            raise ScreeningError(f"The decisions could not become a dataset: {exc}") from None


def session_train(*, user: Any, session: ScreeningSession) -> Any:
    """The dataset of the final decisions and a training job on it (maintainer role)."""
    policy.require(user=user, action=policy.Action.TRAIN, obj=session)
    dataset = session_dataset_create(user=user, session=session)
    model = session.starting_model
    try:
        return classification_services.training_job_create(
            owner=user, dataset=dataset,
            model_type=model.model_type if model else DEFAULT_MODEL_TYPE,
            name=f"{session.name} screened"[:200],
            config=dict(model.parameters or {}) if model else {}, verb="screening_train",
            summary=f"{user.get_username()} trained on the decisions of “{session.name}”")
    except ValueError as exc:
        raise ScreeningError(f"The training could not start: {exc}") from None

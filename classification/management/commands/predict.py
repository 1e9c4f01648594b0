"""manage.py predict MODEL_ID (FILE --out OUT | --text "..."): classify with a trained model.

OUT's extension names the format: .csv (formula-safe), .ris (every record of FILE with every
field, the predicted labels as keywords) or .jsonl (identifiers, fields, record, prediction).
--threshold recall chooses each label by its recall-target threshold instead of its F1-tuned one
(refused for a model saved before recall thresholds); the JSON Lines items say which, and whether
the probabilities are calibrated. --project refuses a model of another project; --owner
classifies as that person, who needs the reviewer role in the model's project.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from classification import selectors, services
from classification.batches.exports import mlmodel_predict_items, predictions_write
from classification.management.commands._scope import (
    project_check,
    role_check,
    scope_arguments,
    user_named,
)
from classification.mlmodels.thresholds import THRESHOLDS, mlmodel_threshold_check
from dataset_management.export import EXPORT_FORMATS
from dataset_management.readers import DatasetFileError
from projects import policy


class Command(BaseCommand):
    help = ("Predict labels for one text or every article of a file, written as CSV "
            "(formula-safe), RIS or JSON Lines after OUT's extension.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("model_id", type=int)
        parser.add_argument("file", nargs="?")
        parser.add_argument("--out", help="file to write (with FILE): .csv, .ris or .jsonl")
        parser.add_argument("--text", help="classify this one text")
        parser.add_argument("--threshold", choices=THRESHOLDS, default="f1",
                            help="the thresholds that choose the labels: each label's F1-tuned "
                                 "one (the default) or the one set for the model's recall "
                                 "target on validation (more labels)")
        scope_arguments(parser, owner_help="run as this user, who must be a reviewer (or "
                                           "above) of the model's project")

    def handle(self, *args, model_id: int, file: str | None, out: str | None,
               text: str | None, threshold: str = "f1", **options) -> None:
        model = selectors.mlmodel_get(model_id=model_id)
        if model is None:
            raise CommandError(f"No model {model_id}")
        project_check(obj=model, project_id=options["project"], what=f"Model {model_id}")
        role_check(user=user_named(options["owner"]), action=policy.Action.CLASSIFY, obj=model)
        if bool(text) == bool(file):
            raise CommandError("Give either FILE --out OUT.csv|.ris|.jsonl or --text '...'")
        try:  # before anything is read or written
            mlmodel_threshold_check(ml_model=model, threshold=threshold)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if text:
            try:
                result = services.mlmodel_predict(ml_model=model, texts=[text],
                                                  threshold=threshold)[0]
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            self.stdout.write(json.dumps(result))
            return
        if not out:
            raise CommandError("FILE needs --out OUT.csv, OUT.ris or OUT.jsonl")
        target = Path(out)
        fmt = target.suffix.lower().lstrip(".")
        if fmt not in EXPORT_FORMATS:
            raise CommandError(f"--out must end in .csv, .ris or .jsonl (not '{target.name}'): "
                               "the extension names the format")
        try:
            items = mlmodel_predict_items(ml_model=model, path=file, threshold=threshold)
            classified, skipped = predictions_write(
                items=items, target=target, fmt=fmt, label_names=list(model.label_names))
        except (ValueError, DatasetFileError) as exc:
            raise CommandError(str(exc)) from exc
        if not classified:
            target.unlink(missing_ok=True)
            raise CommandError(f"No article text found in {Path(file).name}")
        note = f" ({skipped} without text kept as skipped)" if skipped else ""
        self.stdout.write(f"Wrote {classified} predictions to {target}{note}")

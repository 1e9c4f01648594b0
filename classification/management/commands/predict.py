"""manage.py predict MODEL_ID (FILE --out OUT.csv | --text "..."): classify with a trained model."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from classification import selectors, services
from classification.jobs.prediction import parse_articles_file
from dataset_management.export import write_safe_csv


class Command(BaseCommand):
    help = "Predict labels for one text or every article of a file (CSV output is formula-safe)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("model_id", type=int)
        parser.add_argument("file", nargs="?")
        parser.add_argument("--out", help="CSV to write (with FILE)")
        parser.add_argument("--text", help="classify this one text")

    def handle(self, *args, model_id: int, file: str | None, out: str | None,
               text: str | None, **options) -> None:
        model = selectors.mlmodel_get(model_id=model_id)
        if model is None:
            raise CommandError(f"No model {model_id}")
        if bool(text) == bool(file):
            raise CommandError("Give either FILE --out OUT.csv or --text '...'")
        try:
            if text:
                result = services.mlmodel_predict(ml_model=model, texts=[text])[0]
                self.stdout.write(json.dumps(result))
                return
            if not out:
                raise CommandError("FILE needs --out OUT.csv")
            parsed = parse_articles_file(file)
            predictions = services.mlmodel_predict(ml_model=model, texts=parsed.texts)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        labels = list(model.label_names)
        rows = [["text", "predicted_labels", *[f"p_{name}" for name in labels]]]
        for article, pred in zip(parsed.texts, predictions, strict=True):
            probs = pred["probabilities"]
            rows.append([article, "|".join(pred["labels"]), *[round(probs[n], 4) for n in labels]])
        target = Path(out)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        with os.fdopen(fd, "w", newline="", encoding="utf-8") as fh:
            write_safe_csv(rows, fh)
        os.replace(tmp, target)  # readers never see half a file
        self.stdout.write(f"Wrote {len(rows) - 1} predictions to {target}")

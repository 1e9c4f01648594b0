"""manage.py evaluate MODEL_ID FILE [--json OUT]: metrics of a trained model on a labelled file."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from classification import selectors, services

SUMMARY_KEYS = ("micro_f1", "macro_f1", "subset_accuracy", "accuracy", "n")


class Command(BaseCommand):
    help = "Evaluate a trained model on any labelled file that dataset import accepts."

    def add_arguments(self, parser) -> None:
        parser.add_argument("model_id", type=int)
        parser.add_argument("file")
        parser.add_argument("--json", dest="json_out", help="write the full metrics here")

    def handle(self, *args, model_id: int, file: str, json_out: str | None, **options) -> None:
        model = selectors.mlmodel_get(model_id=model_id)
        if model is None:
            raise CommandError(f"No model {model_id}")
        if not Path(file).is_file():
            raise CommandError(f"No file {file}")
        try:
            metrics = services.mlmodel_evaluate_file(ml_model=model, path=file)
        except Exception as exc:  # reader errors are not all ValueErrors
            raise CommandError(f"Could not evaluate on {file}: {exc}") from exc
        for label, row in sorted((metrics.get("per_label") or {}).items()):
            if isinstance(row, dict):
                shown = "  ".join(f"{k}={v:.3f}" for k, v in row.items() if isinstance(v, float))
                self.stdout.write(f"{label:<30} {shown}")
        if json_out:
            Path(json_out).write_text(json.dumps(metrics, indent=2, default=str), encoding="utf-8")
        summary = {k: metrics[k] for k in SUMMARY_KEYS if k in metrics}
        self.stdout.write(json.dumps(summary))

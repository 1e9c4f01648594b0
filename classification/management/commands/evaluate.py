"""manage.py evaluate MODEL_ID FILE [--json OUT] [column options]: metrics of a trained model on
a labelled file, its columns mapped as import maps them (the model's own training mapping when
the file has those columns, else detection; the options override both). --project refuses a
model of another project; --owner evaluates as that person, who needs the reviewer role in the
model's project (evaluating runs the model, as classifying does)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from classification import selectors, services
from classification.management.commands._scope import (
    project_check,
    role_check,
    scope_arguments,
    user_named,
)
from classification.mlmodels.overlap import overlap_warning
from dataset_management.readers import DatasetFileError
from dataset_management.readers.errors import names_listed
from projects import policy

SUMMARY_KEYS = ("micro_f1", "macro_f1", "subset_accuracy", "accuracy", "n", "rows_scored",
                "rows_total", "scored_on")
COLUMN_OPTIONS = ("title_column", "abstract_column", "text_column", "label_column",
                  "label_separator")


class Command(BaseCommand):
    help = "Evaluate a trained model on any labelled file that dataset import accepts."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("model_id", type=int)
        parser.add_argument("file")
        parser.add_argument("--json", dest="json_out", help="write the full metrics here")
        parser.add_argument("--title-column")
        text = parser.add_mutually_exclusive_group()
        text.add_argument("--abstract-column")
        text.add_argument("--text-column", help="one free-text column instead of an abstract")
        parser.add_argument("--label-column")
        parser.add_argument("--label-separator", help="'none' for one label per cell")
        scope_arguments(parser, owner_help="run as this user, who must be a reviewer (or "
                                           "above) of the model's project")

    def handle(self, *args, model_id: int, file: str, json_out: str | None, **options) -> None:
        model = selectors.mlmodel_get(model_id=model_id)
        if model is None:
            raise CommandError(f"No model {model_id}")
        project_check(obj=model, project_id=options["project"], what=f"Model {model_id}")
        role_check(user=user_named(options["owner"]), action=policy.Action.CLASSIFY, obj=model)
        if not Path(file).is_file():
            raise CommandError(f"No file {file}")
        overrides = {key: options[key] for key in COLUMN_OPTIONS if options.get(key)}
        try:
            columns = services.mlmodel_evaluation_columns(ml_model=model, path=file,
                                                          overrides=overrides)
            problem = columns.problem(text_option="--abstract-column or --text-column",
                                      label_option="--label-column")
            if problem:
                raise CommandError(problem)
            metrics = services.mlmodel_evaluate_file(ml_model=model, path=file, columns=columns)
        except DatasetFileError as exc:
            raise CommandError(f"Could not evaluate on {file}: {exc.message}") from None
        except CommandError:
            raise
        except Exception as exc:  # reader and engine errors are not all ValueErrors
            raise CommandError(f"Could not evaluate on {file}: {exc}") from exc
        self.stdout.write(f"Columns: {columns.describe()}")
        if warning := overlap_warning(metrics.get("training_overlap")):
            self.stdout.write(self.style.WARNING(warning))
        self._report_left_out(metrics)
        for label, row in sorted((metrics.get("per_label") or {}).items()):
            if isinstance(row, dict):
                shown = "  ".join(f"{k}={v:.3f}" for k, v in row.items() if isinstance(v, float))
                self.stdout.write(f"{label:<30} {shown}")
        if json_out:
            Path(json_out).write_text(json.dumps(metrics, indent=2, default=str), encoding="utf-8")
        summary = {k: metrics[k] for k in SUMMARY_KEYS if k in metrics}
        if metrics.get("unknown_labels"):
            summary["unknown_labels"] = metrics["unknown_labels"]
        if metrics.get("training_overlap") is not None:
            summary["training_overlap"] = metrics["training_overlap"]["rows"]
        self.stdout.write(json.dumps(summary))

    def _report_left_out(self, metrics: dict) -> None:
        unknown = metrics.get("unknown_labels") or {}
        if unknown:
            names = names_listed([f"{name} ({n} rows)" for name, n in unknown.items()])
            self.stdout.write(self.style.WARNING(
                f"{len(unknown)} label(s) the model does not know, left out of the scores: "
                f"{names}"
            ))
        for key, words in (("rows_unknown_labels_only", "had only labels the model does not know"),
                           ("rows_without_labels", "had no label"),
                           ("rows_dropped", "had no text")):
            if metrics.get(key):
                self.stdout.write(f"{metrics[key]} row(s) {words} and were left out.")
        if metrics.get("scored_on"):
            # Scores on fewer rows than the file has flatter a model: never said quietly.
            left = metrics["rows_total"] - metrics["rows_scored"]
            self.stdout.write(self.style.WARNING(
                f"Scored {metrics['scored_on']}: {left} row(s) could not be scored and are not "
                "in these metrics:"))
            for item in metrics.get("rows_not_scored") or []:
                self.stdout.write(f"  row {item['row']}: {item['reason']}")
            if left > len(metrics.get("rows_not_scored") or []):
                self.stdout.write(f"  ... and {left - len(metrics['rows_not_scored'])} more")

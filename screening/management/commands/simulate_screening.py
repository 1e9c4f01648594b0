"""Replay screening on a fully labelled dataset: the session's ranker and stopping rule.

The last line of stdout is one JSON object (runs, mean_wss_at_95, mean_screened_at_stop,
min_recall_at_stop); --json writes the same object to a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dataset_management.models import Dataset
from screening import simulation_runs
from screening.forms import setting_argument
from screening.services import ScreeningError


class Command(BaseCommand):
    help = "Simulate a screening session on a labelled dataset, one run per seed."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", type=int, required=True, metavar="ID")
        parser.add_argument("--label", required=True)
        # The ranges are the forms' (screening.forms.SETTING_RANGES): out of range is refused.
        parser.add_argument("--recall-target", type=setting_argument("recall_target"),
                            default=0.95)
        parser.add_argument("--confidence", type=setting_argument("confidence"), default=0.95)
        parser.add_argument("--seeds", type=setting_argument("seeds"), default=5)
        parser.add_argument("--reviewers", type=setting_argument("reviewers_per_record"),
                            default=1)
        parser.add_argument("--every", type=setting_argument("every"), default=10,
                            help="refit the ranker after this many decisions (the session's "
                                 "ranker_every)")
        parser.add_argument("--patience", type=setting_argument("patience"), default=50,
                            help="switch to random sampling after this many irrelevant "
                                 "records in a row")
        parser.add_argument("--json", dest="json_out", metavar="OUT")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = Dataset.objects.filter(pk=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"No dataset {options['dataset']}.")
        try:
            result, _curves = simulation_runs.simulation_summary(
                dataset=dataset, label=options["label"], seeds=options["seeds"],
                recall_target=options["recall_target"], confidence=options["confidence"],
                every=options["every"], patience=options["patience"],
                reviewers=options["reviewers"])
        except ScreeningError as exc:
            raise CommandError(str(exc)) from None
        line = json.dumps(result)
        if options["json_out"]:
            Path(options["json_out"]).write_text(line + "\n", encoding="utf-8")
        self.stdout.write(line)

"""Replay screening on a fully labelled dataset: compare rankers and stopping rules.

One JSON object per line, one per ranker and rule (--ranker and --rule may each be repeated, or
"all"). With neither option the one line is the session's default ranker and rule, and the last
line is always that default when it is among the combinations: the line scripts read (runs,
mean_wss_at_95, mean_screened_at_stop, min_recall_at_stop). --json writes that last object to
a file. --csv reads a labelled file instead of a dataset in the database (see
screening.simulation_runs.simulation_csv_collection).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dataset_management.models import Dataset
from screening import ranker, simulation_runs, stopping_rules
from screening.forms import setting_argument
from screening.services import ScreeningError


def _chosen(values: list[str] | None, every: tuple[str, ...], default: str) -> list[str]:
    if not values:
        return [default]
    if "all" in values:
        return list(every)
    unknown = sorted(set(values) - set(every))
    if unknown:
        raise CommandError(f"Unknown {', '.join(unknown)}: choose from {', '.join(every)}.")
    return list(dict.fromkeys(values))


class Command(BaseCommand):
    help = "Simulate a screening session on a labelled dataset, one run per seed."

    def add_arguments(self, parser: CommandParser) -> None:
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--dataset", type=int, metavar="ID")
        source.add_argument("--csv", metavar="PATH", help="a labelled CSV file instead")
        parser.add_argument("--label", required=True)
        parser.add_argument("--rule", action="append",
                            help=f"stopping rule: {', '.join(stopping_rules.RULES)} or all "
                                 f"(default {stopping_rules.DEFAULT_RULE})")
        parser.add_argument("--ranker", action="append",
                            help=f"ranker: {', '.join(ranker.RANKERS_SIMULATED)} or all "
                                 f"(default {ranker.DEFAULT_RANKER})")
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
        rules = _chosen(options["rule"], tuple(stopping_rules.RULES),
                        stopping_rules.DEFAULT_RULE)
        rankers = _chosen(options["ranker"], ranker.RANKERS_SIMULATED, ranker.DEFAULT_RANKER)
        default = (ranker.DEFAULT_RANKER, stopping_rules.DEFAULT_RULE)
        try:
            texts, truth, source = self._collection(options)
            results = simulation_runs.simulation_summaries(
                texts=texts, truth=truth, label=options["label"], seeds=options["seeds"],
                rules=rules, rankers=rankers, source=source,
                recall_target=options["recall_target"], confidence=options["confidence"],
                every=options["every"], patience=options["patience"],
                reviewers=options["reviewers"])
        except ScreeningError as exc:
            raise CommandError(str(exc)) from None
        # the default combination last: the line scripts and the job read
        results.sort(key=lambda item: (item[0]["ranker"], item[0]["rule"]) == default)
        for summary, _curves in results:
            self.stdout.write(json.dumps(summary))
        if options["json_out"]:
            Path(options["json_out"]).write_text(json.dumps(results[-1][0]) + "\n",
                                                 encoding="utf-8")

    def _collection(self, options: dict[str, Any]) -> tuple[list[str], Any, Any]:
        if options["csv"]:
            texts, truth = simulation_runs.simulation_csv_collection(
                path=options["csv"], label=options["label"])
            return texts, truth, Path(options["csv"]).name
        dataset = Dataset.objects.filter(pk=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"No dataset {options['dataset']}.")
        texts, truth = simulation_runs.simulation_collection(dataset=dataset,
                                                             label=options["label"])
        return texts, truth, dataset.pk

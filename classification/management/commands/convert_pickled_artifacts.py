"""manage.py convert_pickled_artifacts: list the models still saved as pickles (artifact format
1, from before MedLitBot stopped loading pickles) and, with --i-trust-these-files, rewrite them
once in the skops format. Converting unpickles each file: only vouch for files nobody else could
have written; otherwise retrain those models instead."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from classification.pickle_convert import pickled_models_convert


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--i-trust-these-files", action="store_true", dest="trust",
            help="convert: unpickles each listed file once, which runs any code it holds")

    def handle(self, *args: Any, **options: Any) -> None:
        done = pickled_models_convert(convert=options["trust"])
        for line in done.missing:
            self.stderr.write(f"not on this machine: {line}")
        for line in done.found:
            self.stdout.write(line)
        if not done.found:
            self.stdout.write("no model is saved as a pickle: nothing to convert")
        elif options["trust"]:
            self.stdout.write(f"converted {done.converted} model(s) to the skops format")
        else:
            self.stdout.write(
                f"{len(done.found)} model(s) are saved as pickles and will not load. Retrain "
                f"them, or, if nobody else could have written these files, run again with "
                f"--i-trust-these-files to convert them once.")

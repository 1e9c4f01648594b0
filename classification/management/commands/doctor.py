"""manage.py doctor: the checks of classification/doctor.py; non-zero on a blocker."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from classification import doctor


class Command(BaseCommand):
    help = "Check that this machine can train without hangs; --write-env writes .env for it."

    def add_arguments(self, parser: Any) -> None:
        doctor.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        if doctor.run(options, write=self.stdout.write):
            raise CommandError("the doctor found a blocker (marked FAIL above)")

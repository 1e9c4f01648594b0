"""manage.py publish_to_shared_storage: make this node's datasets and models readable by the
others, once, after SHARED_STORAGE_URL is set on an install that used to run on one machine."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from classification.storage_publish import existing_files_publish


class Command(BaseCommand):
    help = __doc__

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            done = existing_files_publish()
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for line in done.missing:
            self.stderr.write(f"not on this machine: {line}")
        self.stdout.write(f"published {done.files} dataset file(s) and {done.models} model(s); "
                          f"{len(done.missing)} not found here")

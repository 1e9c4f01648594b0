"""manage.py doctor: the checks of scripts/m1_training_setup.py; non-zero on a blocker."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


def load_doctor():
    path = Path(settings.BASE_DIR) / "scripts" / "m1_training_setup.py"
    spec = importlib.util.spec_from_file_location("m1_training_setup", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while it executes
    spec.loader.exec_module(module)
    return module


class Command(BaseCommand):
    help = "Check that this machine can train without hangs; --write-env writes .env for it."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--write-env", action="store_true")
        parser.add_argument("--yes", action="store_true")
        parser.add_argument("--env-file")
        parser.add_argument("--smoke-timeout", type=float, default=60.0)

    def handle(self, *args, **o) -> None:
        argv = ["--smoke-timeout", str(o["smoke_timeout"])]
        argv += ["--write-env"] if o["write_env"] else []
        argv += ["--yes"] if o["yes"] else []
        argv += ["--env-file", o["env_file"]] if o["env_file"] else []
        code = load_doctor().main(argv, write=self.stdout.write)
        if code:
            raise CommandError("the doctor found a blocker (marked FAIL above)")

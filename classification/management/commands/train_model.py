"""manage.py train_model --dataset ID --type minilm [...] [--project ID] [--owner USERNAME]
[--wait]: queue (and follow) training. `--type adapted --encoder-model-id N` fine-tunes the
encoder adapt job N saved.

The model joins the dataset's project. --project refuses a dataset of another project; --owner
trains as that person, who must be allowed to train there (the maintainer role), as on the page
and the API. Without --owner the operator trains, and the model is recorded as made by the
dataset's creator."""

from __future__ import annotations

import argparse
import sys
import time

from django.core.management.base import BaseCommand, CommandError

from classification import ml_models, services
from classification.engine.schema import DEPLOYMENT, Setting
from classification.jobs.adapt_encoders import ADAPTED
from classification.management.commands._scope import (
    project_check,
    role_check,
    scope_arguments,
    user_named,
)
from classification.models import TrainingJob
from core.queueing import QueueUnavailable
from dataset_management.models import Dataset
from projects import policy

BAR = 30
# The short seed-era spellings that stay accepted on the command line.
SETTING_ALIASES = {"lr": "learning_rate"}


def _settings_problem(exc: ml_models.TrainConfigError) -> str:
    return "Invalid training settings: " + "; ".join(
        f"--{name.replace('_', '-')}: {' '.join(errors)}" for name, errors in exc.errors.items())


class Command(BaseCommand):
    help = "Queue a training job for a worker; with --wait, follow it and exit non-zero on failure."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", type=int, required=True)
        parser.add_argument("--type", dest="model_type", required=True,
                            # search: --time-budget-minutes, --search-candidates a,b;
                            # adapted: --encoder-model-id N (an adapt job's encoder)
                            choices=sorted(k for k, s in ml_models.REGISTRY.items()
                                           if s.offered or k in ("search", ADAPTED)))
        # One option per training setting, from the schema; values stay text until the schema
        # parses them, so a bad value gets the message the form and the API give.
        for spec in ml_models.user_settings():
            flag = "--" + spec.name.replace("_", "-")
            aliases = [f"--{a}" for a, name in SETTING_ALIASES.items() if name == spec.name]
            if spec.type is bool:
                parser.add_argument(flag, *aliases, dest=spec.name, action="store_const",
                                    const=True, default=None, help=spec.help)
            else:
                parser.add_argument(flag, *aliases, dest=spec.name,
                                    metavar=spec.type.__name__.upper(),
                                    help=f"{spec.help}{spec.bounds}")
        # What the server may do (downloads, the model folder) is the deployment's to set. The
        # options exist, unlisted, so that giving one gets the schema's own refusal rather
        # than argparse's "unrecognized arguments".
        for spec in self.deployment_settings():
            parser.add_argument("--" + spec.name.replace("_", "-"), dest=spec.name, nargs="?",
                                const=True, default=None, help=argparse.SUPPRESS)
        parser.add_argument("--name")
        scope_arguments(parser, owner_help="train as this user, who must be a maintainer (or "
                                           "owner) of the dataset's project")
        parser.add_argument("--wait", action="store_true", help="follow the job until it ends")
        parser.add_argument("--timeout", type=float, default=None, help="give up waiting after N s")

    def handle(self, *args, **o) -> None:
        dataset = Dataset.objects.filter(pk=o["dataset"]).first()
        if dataset is None:
            raise CommandError(f"No dataset {o['dataset']}")
        project_check(obj=dataset, project_id=o["project"], what=f"Dataset {dataset.pk}")
        owner = user_named(o["owner"])
        role_check(user=owner, action=policy.Action.TRAIN, obj=dataset)
        config = {spec.name: o[spec.name]
                  for spec in [*ml_models.user_settings(), *self.deployment_settings()]
                  if o.get(spec.name) is not None}
        try:
            job = services.training_job_create(
                owner=owner, dataset=dataset, model_type=o["model_type"],
                name=o["name"] or "", config=config, staff=True,  # the operator's own shell
            )
        except ml_models.TrainConfigError as exc:
            raise CommandError(_settings_problem(exc)) from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except QueueUnavailable as exc:
            # The job row exists and is already failed with this reason; resume_training
            # queues it again once the broker is back.
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Queued job {job.pk} for model {job.ml_model_id} ({o['model_type']})")
        if o["wait"]:
            self.follow(job, timeout=o["timeout"])
        self.stdout.write(f"model_id={job.ml_model_id}")

    @staticmethod
    def deployment_settings() -> list[Setting]:
        return [spec for spec in ml_models.SETTINGS.values() if spec.who == DEPLOYMENT]

    def follow(self, job: TrainingJob, *, timeout: float | None) -> None:
        started = time.monotonic()
        tty = sys.stdout.isatty()
        last = ""
        while True:
            job.refresh_from_db()
            line = self.progress_line(job)
            if line != last:
                self.stdout.write(("\r" + line) if tty else line, ending="" if tty else "\n")
                self.stdout.flush()
                last = line
            if job.status not in TrainingJob.ACTIVE_STATUSES:
                break
            if timeout is not None and time.monotonic() - started > timeout:
                raise CommandError(f"Job {job.pk} still {job.status} after {timeout:.0f} s")
            time.sleep(0.5)
        if tty:
            self.stdout.write("")
        if job.status != TrainingJob.Status.COMPLETED:
            raise CommandError(f"Job {job.pk} {job.status}: {job.reason}")
        metrics = job.ml_model.metrics
        self.stdout.write(
            f"Trained: micro_f1={metrics.get('micro_f1', 0):.3f} "
            f"macro_f1={metrics.get('macro_f1', 0):.3f} on {metrics.get('n', '?')} test rows"
        )

    @staticmethod
    def progress_line(job: TrainingJob) -> str:
        filled = int(BAR * job.progress_percentage / 100)
        bar = "#" * filled + "-" * (BAR - filled)
        detail = job.get_phase_display()
        if job.phase == TrainingJob.Phase.TRAINING and job.total_steps:
            detail += (f" epoch {job.current_epoch:.1f}/{job.total_epochs}"
                       f" step {job.current_step}/{job.total_steps}")
            if job.eta_seconds is not None:
                detail += f" ETA {job.eta_seconds:.0f}s"
            if job.last_loss is not None:
                detail += f" loss {job.last_loss:.3f}"
        return f"[{bar}] {job.progress_percentage:5.1f}% {job.status}: {detail}"

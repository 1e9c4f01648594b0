"""manage.py adapt_encoder --dataset ID [--dataset ID] [--batch UUID] --base minilm
[--training-only | --no-training-only] --name NAME [--in-process | --wait]: continue an
encoder's masked-language-model pretraining on a project's texts (an adapt job).

The job is created by classification.jobs.adapt.adapt_job_create, as on the page and the API.
By default it is queued for a training worker; --in-process runs it here, in this process, to
its end (no broker, no worker: for a machine without them, or a script). --owner adapts as
that person, who must be allowed to train in the sources' project."""

from __future__ import annotations

import argparse
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from classification import ml_models
from classification.batches.selectors import batch_job_uuid
from classification.jobs import adapt, lifecycle
from classification.jobs.training import run_training
from classification.management.commands._scope import (
    project_check,
    role_check,
    scope_arguments,
    user_named,
)
from classification.management.commands.train_model import Command as TrainCommand
from classification.management.commands.train_model import _settings_problem
from classification.models import BatchJob, TrainingJob
from core.queueing import QueueUnavailable
from dataset_management.models import Dataset
from projects import policy

# Settings given as options (typed by the schema, so a bad value gets its message).
OPTIONS = ("epochs", "batch_size", "learning_rate", "max_length", "mlm_probability",
           "model_path")


class Command(BaseCommand):
    help = "Adapt an encoder to a project's literature (masked-language-model pretraining)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--dataset", type=int, action="append", required=True,
                            metavar="ID", help="a dataset whose texts are read (repeatable)")
        parser.add_argument("--batch", action="append", default=[], metavar="UUID",
                            help="a finished batch whose articles are read (repeatable)")
        parser.add_argument("--base", default=None, help=ml_models.SETTINGS["adapt_base"].help)
        parser.add_argument("--training-only", dest="training_only", default=None,
                            action=argparse.BooleanOptionalAction,
                            help=ml_models.SETTINGS["adapt_training_only"].help
                            + " (default: on)")
        for name in OPTIONS:
            spec = ml_models.SETTINGS[name]
            parser.add_argument("--" + name.replace("_", "-"), dest=name, default=None,
                                metavar=spec.type.__name__.upper(),
                                help=f"{spec.help}{spec.bounds}")
        parser.add_argument("--name", default="")
        scope_arguments(parser, owner_help="adapt as this user, who must be a maintainer (or "
                                           "owner) of the sources' project")
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--in-process", action="store_true",
                          help="run the job here to its end instead of queueing it")
        mode.add_argument("--wait", action="store_true", help="follow the queued job")
        parser.add_argument("--timeout", type=float, default=None,
                            help="give up waiting after N s")

    def handle(self, *args: Any, **o: Any) -> None:
        datasets, batches = self.sources(o)
        owner = user_named(o["owner"])
        role_check(user=owner, action=policy.Action.TRAIN, obj=datasets[0])
        config = {name: o[name] for name in OPTIONS if o.get(name) is not None}
        if o["base"]:
            config["adapt_base"] = o["base"]
        if o["training_only"] is not None:
            config["adapt_training_only"] = o["training_only"]
        try:
            job = adapt.adapt_job_create(owner=owner, datasets=datasets, batches=batches,
                                         name=o["name"], config=config, staff=True,
                                         enqueue=not o["in_process"])
        except ml_models.TrainConfigError as exc:
            raise CommandError(_settings_problem(exc)) from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except QueueUnavailable as exc:
            raise CommandError(exc.message) from exc
        if o["in_process"]:
            self.run_here(job)
        else:
            self.stdout.write(f"Queued adapt job {job.pk} for model {job.ml_model_id}")
            if o["wait"]:
                self.follow(job, timeout=o["timeout"])
        self.stdout.write(f"model_id={job.ml_model_id}")

    def sources(self, o: dict[str, Any]) -> tuple[list[Dataset], list[BatchJob]]:
        datasets = []
        for pk in dict.fromkeys(o["dataset"]):
            dataset = Dataset.objects.filter(pk=pk).first()
            if dataset is None:
                raise CommandError(f"No dataset {pk}")
            project_check(obj=dataset, project_id=o["project"], what=f"Dataset {pk}")
            datasets.append(dataset)
        batches = []
        for given in dict.fromkeys(o["batch"]):
            pk = batch_job_uuid(given)
            batch = BatchJob.objects.filter(pk=pk).first() if pk else None
            if batch is None:
                raise CommandError(f"No batch {given}")
            batches.append(batch)
        return datasets, batches

    def run_here(self, job: TrainingJob) -> None:
        if problem := lifecycle.startup_problem(job):
            lifecycle.training_job_fail_to_start(job=job, reason=problem)
            raise CommandError(f"Adapt job {job.pk} cannot start: {problem}")
        if not lifecycle.training_job_claim(job=job):
            raise CommandError(f"Adapt job {job.pk} was taken by another process.")
        self.stdout.write(f"Running adapt job {job.pk} here")
        run_training(job_id=job.pk)
        job.refresh_from_db()
        self.report(job)

    def follow(self, job: TrainingJob, *, timeout: float | None) -> None:
        started = time.monotonic()
        last = ""
        while True:
            job.refresh_from_db()
            if (line := TrainCommand.progress_line(job)) != last:
                self.stdout.write(line)
                last = line
            if job.status not in TrainingJob.ACTIVE_STATUSES:
                break
            if timeout is not None and time.monotonic() - started > timeout:
                raise CommandError(f"Adapt job {job.pk} still {job.status} after {timeout:.0f} s")
            time.sleep(0.5)
        self.report(job)

    def report(self, job: TrainingJob) -> None:
        if job.status != TrainingJob.Status.COMPLETED:
            raise CommandError(f"Adapt job {job.pk} {job.status}: {job.reason}")
        m = job.ml_model.metrics
        self.stdout.write(f"Adapted: held-out perplexity {m['perplexity_before']:.2f} -> "
                          f"{m['perplexity_after']:.2f} on {m['corpus']['texts']} texts")


"""Model searches ("Find the best model"): which candidates a search may try, where its Optuna
study lives, and what a finished one chose. Starting one is a job: jobs/searches.py.

A search also fine-tunes an adapted encoder (the `adapted` kind) when its owner can see one
adapted on the search's dataset (search_adapted_plan); the job keeps which one, and the worker
finds its folder on its own node (search_adapted_apply).

The study lives in the app's own database (Optuna's RDB storage creates its tables there on
first use), named after the job, so Resume continues it. The URL is built from the live
connection at run time, never stored in the job: it may carry a password.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import connection
from django.utils import timezone

from classification import ml_models
from classification.engine import time_estimate
from classification.estimates import device_plan_summary, observed_rates
from classification.jobs import adapt_encoders
from classification.models import MLModel, TrainingJob

SEARCH = "search"
ADAPTED = adapt_encoders.ADAPTED
# The job setting that names the adapted encoder a search fine-tunes: MedLitBot's own, set when
# the search is created (never a person's), so a resumed search fine-tunes the same encoder.
ADAPTED_ENCODER = "search_adapted_encoder"
# Short names of adapt bases, for "MiniLM adapted on <dataset>" (others: the kind's label).
BASE_NAMES = {"minilm": "MiniLM"}


def search_storage_url() -> str:
    """An SQLAlchemy URL for the database Django is using right now (the test database in
    tests), so the study sits beside the job it belongs to."""
    from sqlalchemy.engine import URL

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    if connection.vendor == "postgresql":
        return URL.create(
            "postgresql+psycopg", username=db.get("USER") or None,
            password=db.get("PASSWORD") or None, host=db.get("HOST") or None,
            port=int(db["PORT"]) if db.get("PORT") else None, database=db["NAME"],
        ).render_as_string(hide_password=False)
    raise ValueError(f"A model search keeps its study in SQLite or PostgreSQL, "
                     f"not {connection.vendor}.")


def search_study_name(*, job: TrainingJob) -> str:
    # The creation time makes the name unique even where job ids are reused (a recreated DB).
    return f"medlitbot-job-{job.pk}-{job.created_at:%Y%m%d%H%M%S}"


def search_clock_start(*, job: TrainingJob) -> float:
    """The Unix time the search's budget counts from: this attempt's claim, moved back by the
    wall time earlier attempts ran (TrainingJob.spent_seconds), so a budget holds across
    Cancel and Resume, and the child's start-up counts as well."""
    started = job.started_at or timezone.now()
    return started.timestamp() - float(job.spent_seconds or 0.0)


def search_storage() -> Any:
    """Optuna's storage on the app's database, for use outside the training child (web, shell,
    tests). No connection pool: a web process must not keep idle sessions open beside
    Django's own (PostgreSQL would then refuse to drop or rename the database)."""
    import optuna
    from sqlalchemy.pool import NullPool

    return optuna.storages.RDBStorage(search_storage_url(),
                                      engine_kwargs={"poolclass": NullPool})


def search_study_load(*, job: TrainingJob) -> Any:
    """The job's Optuna study (KeyError when it never started or was deleted)."""
    import optuna

    return optuna.load_study(study_name=search_study_name(job=job), storage=search_storage())


def search_study_delete(*, name: str) -> bool:
    """Drop a search's Optuna study (its trials) from the database; False if there was none."""
    import optuna

    try:
        optuna.delete_study(study_name=name, storage=search_storage())
    except KeyError:
        return False
    return True


def search_candidates_available() -> list[str]:
    from classification.engine.search import available_candidates

    return available_candidates()


def search_candidates_clean(candidates: list[str] | None) -> list[str]:
    """The candidates a person asked for, checked; every available one when none are named.

    ValueError names the first that is unknown or not on this machine: a search never downloads.
    """
    available = search_candidates_available()
    chosen = list(dict.fromkeys(candidates or available))
    for key in chosen:
        spec = ml_models.REGISTRY.get(key)
        if spec is None or not spec.offered or key == "custom":
            offered = ", ".join(available)
            raise ValueError(f"{key!r} cannot be a search candidate; choose from {offered}.")
        if key not in available:
            raise ValueError(f"{spec.label} is not on this machine, and a search never "
                             f"downloads: {ml_models.how_to_get(key)}")
    if not chosen:
        raise ValueError("No model kind is available on this machine to search over.")
    return chosen


def search_winner(*, metrics: dict[str, Any] | None) -> dict[str, Any]:
    """What a finished search chose: {"model_type", "params", "validation_macro_f1", ...}, or
    {} for any other model."""
    return dict(((metrics or {}).get("search") or {}).get("winner") or {})


def search_adapted_encoder(*, owner: Any, dataset: Any) -> MLModel | None:
    """The most recent finished adapt model `owner` may see (projects/policy) whose encoder read
    `dataset`, on its training texts only; None when there is none.

    Reading the dataset means its test rows were left out (jobs/adapt.adapt_corpus_collect);
    training texts only means its validation rows too, on which a search scores transformers:
    an encoder that had read them would be judged on text it was trained on."""
    for encoder in adapt_encoders.adapted_encoder_choices(user=owner, project=dataset.project_id):
        params = encoder.parameters or {}
        if (str(dataset.pk) in [str(i) for i in params.get("adapt_datasets") or []]
                and params.get("adapt_training_only", True)):
            return encoder
    return None


def search_adapted_label(*, encoder: MLModel, dataset: Any) -> str:
    """How a search names the kind that fine-tunes `encoder`: "MiniLM adapted on Demo"."""
    base = str((encoder.parameters or {}).get("adapt_base") or "minilm")
    spec = ml_models.REGISTRY.get(base)
    name = BASE_NAMES.get(base) or (spec.label.split(" (")[0] if spec else base)
    return f"{name} adapted on {getattr(dataset, 'name', 'its dataset')}"


def search_adapted_plan(*, owner: Any, dataset: Any, candidates: list[str]) -> dict[str, Any]:
    """The settings that add the adapted kind to a search over `candidates` (cleaned): the
    candidates with `adapted` appended and the encoder it fine-tunes; {} when the search tries
    no transformer (the person narrowed it to other kinds) or no encoder fits."""
    kinds = [ml_models.REGISTRY[key].kind for key in candidates if key in ml_models.REGISTRY]
    if ADAPTED in candidates or "transformer" not in kinds:
        return {}
    encoder = search_adapted_encoder(owner=owner, dataset=dataset)
    if encoder is None:
        return {}
    return {"search_candidates": [*candidates, ADAPTED], ADAPTED_ENCODER: {
        "id": encoder.pk, "name": encoder.name,
        "label": search_adapted_label(encoder=encoder, dataset=dataset)}}


def search_adapted_apply(*, config: Any, job: TrainingJob) -> None:
    """In the worker: point the search's `adapted` kind at its encoder's folder on this node
    (TrainConfig.model_path, which the search gives that kind alone). An encoder deleted since
    leaves model_path empty, and the search skips the kind with that reason."""
    chosen = (job.config or {}).get(ADAPTED_ENCODER) or {}
    if not chosen.get("id") or ADAPTED not in config.search_candidates:
        return
    config.encoder_model_id = int(chosen["id"])
    try:
        config.model_path = adapt_encoders.adapted_encoder_path(
            encoder_model_id=config.encoder_model_id)
    except RuntimeError:
        config.model_path = None


def search_config_apply(*, config: Any, job: TrainingJob) -> None:
    """In the worker: what a search's TrainConfig takes from this node and install: its study,
    its clock, its adapted kind's encoder, and, in its folder, the rates this install's
    finished jobs ran at (time_estimate.rates_write), so its first trial of a kind is
    estimated as the New model page estimates the same training."""
    config.search_storage = search_storage_url()
    config.search_study = search_study_name(job=job)
    config.search_clock_start = search_clock_start(job=job)
    search_adapted_apply(config=config, job=job)
    time_estimate.rates_write(folder=config.output_dir,
                              rates=observed_rates(plan=device_plan_summary()))

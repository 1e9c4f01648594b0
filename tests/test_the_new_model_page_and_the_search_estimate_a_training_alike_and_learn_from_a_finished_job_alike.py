"""The New model page and a search estimate the same training with one formula
(engine/time_estimate.py): for the same kind, rows, epochs, length and threads, the page's
figure is the search's estimate of its first trial; once a job of the kind has finished on
this install, both move to the rate it ran at. A search's slow TF-IDF trials slow only the
estimates of its other TF-IDF kinds, never a transformer's or an embedding kind's."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from classification import estimates
from classification.engine import time_estimate
from classification.engine.device import DevicePlan
from classification.engine.registry import REGISTRY
from classification.engine.schema import TrainConfig
from classification.engine.search import SearchClassifier, SearchRun
from classification.engine.types import TextData
from classification.mlmodels.searches import search_config_apply

SIZES = {"train": 1200, "validation": 300, "test": 0}
WORDS = 100  # every text's length, so the page's p95 (the report's) is the search's own
PLAN = {"device": "cpu", "threads": 2}
# The search's first trial of a transformer: 2 epochs at 128 tokens (search_space.defaults).
FIRST_TRIAL = {"epochs": 2, "max_length": 128}


def texts(n: int, offset: int) -> TextData:
    return TextData(texts=[f"t{offset + i} " + "word " * (WORDS - 1) for i in range(n)],
                    labels=[["cardiovascular"] if i % 2 else ["neurological"] for i in range(n)])


def page_seconds(client, dataset, model_type: str) -> float:
    """What the New model page shows for `model_type` on `dataset` (model_new.js's formula)."""
    estimator = client.get(reverse("classification:model_new")).context["estimator"]
    assert estimator["plan"] == PLAN
    return estimates.training_estimate_seconds(
        model_type=model_type, sizes=estimator["datasets"][str(dataset.pk)]["sizes"],
        epochs=FIRST_TRIAL["epochs"], max_length=FIRST_TRIAL["max_length"],
        p95_words=estimator["datasets"][str(dataset.pk)]["p95_words"],
        rate=estimator["rates"][model_type], threads=PLAN["threads"], device=PLAN["device"])


def search_seconds(search_job, folder: Path, model_type: str) -> float:
    """The search's estimate of its first trial of `model_type`, in a run the worker set up
    as it does for a search job (search_config_apply leaves the install's rates in its
    folder)."""
    config = TrainConfig.from_dict({"search_candidates": [model_type]})
    config.label_names, config.multi_label = ["cardiovascular", "neurological"], True
    config.output_dir = str(folder)
    search_config_apply(config=config, job=search_job)
    config.search_storage, config.search_study = "", "estimate"  # the study beside the folder
    run = SearchRun(SearchClassifier(device_plan=DevicePlan(**PLAN)),
                    texts(SIZES["train"], 0), texts(SIZES["validation"], SIZES["train"]),
                    config, lambda event: None, lambda: False)
    return run._first_estimate(REGISTRY[model_type])


@pytest.fixture
def setup(user, rows):
    dataset = rows.dataset(user, split_sizes=SIZES,
                           report={"text_length": {"words": {"p95": float(WORDS)}}})
    # The device a job recorded is the page's; the search runs on the same.
    earlier = rows.model(user, dataset, model_type="tfidf_logreg")
    rows.job(earlier, status="failed", device_plan=PLAN)
    search_job = rows.job(rows.model(user, dataset, model_type="search"), status="running",
                          started_at=timezone.now())
    return dataset, search_job


@pytest.mark.django_db
@pytest.mark.parametrize("model_type", ["minilm", "minilm_embed_logreg"])
def test_the_page_shows_the_searchs_first_trial_estimate_for_the_same_training(
        alice_client, setup, tmp_path: Path, model_type: str) -> None:
    dataset, search_job = setup
    page = page_seconds(alice_client, dataset, model_type)
    assert search_seconds(search_job, tmp_path, model_type) == pytest.approx(page, rel=1e-6)


@pytest.mark.django_db
@pytest.mark.parametrize(("model_type", "took"), [("minilm", 900.0),
                                                  ("minilm_embed_logreg", 40.0)])
def test_a_finished_job_moves_the_page_and_the_search_to_the_rate_it_ran_at(
        alice_client, user, rows, setup, tmp_path: Path, model_type: str, took: float) -> None:
    dataset, search_job = setup
    before = page_seconds(alice_client, dataset, model_type)
    now = timezone.now()
    rows.job(rows.model(user, dataset, model_type=model_type), status="completed",
             current_epoch=float(FIRST_TRIAL["epochs"]), config=FIRST_TRIAL, device_plan=PLAN,
             started_at=now - timedelta(seconds=took), finished_at=now)
    after = page_seconds(alice_client, dataset, model_type)
    # The job was this very training: the page now says how long it took.
    assert after == pytest.approx(took)
    assert after != pytest.approx(before, rel=0.05)
    assert search_seconds(search_job, tmp_path, model_type) == pytest.approx(after, rel=1e-6)
    assert model_type in time_estimate.rates_read(folder=tmp_path)


def default_trial(model_type: str, seconds: float):
    import optuna

    from classification.engine.search_space import defaults, prefixed

    spec = REGISTRY[model_type]
    params = {"model_type": model_type, **prefixed(spec, defaults(spec))}
    distributions = {name: optuna.distributions.CategoricalDistribution([value])
                     for name, value in params.items()}
    return optuna.trial.create_trial(params=params, distributions=distributions, value=0.5,
                                     user_attrs={"seconds": seconds, "default": True})


def test_a_slow_tfidf_trial_slows_the_next_tfidf_kind_but_not_a_transformer() -> None:
    from classification.engine import search_estimates
    from classification.engine.search_space import defaults

    rows = search_estimates.TrialRows(train=SIZES["train"], validation=SIZES["validation"],
                                      p95_words=float(WORDS))
    plan = DevicePlan(**PLAN)

    def first(model_type: str, trials: list) -> float:
        spec = REGISTRY[model_type]
        slowdown = search_estimates.slowdown(spec=spec, trials=trials, device_plan=plan,
                                             rows=rows, fits_of=lambda s: 1)
        return search_estimates.trial_seconds(spec=spec, settings=defaults(spec), trials=trials,
                                              device_plan=plan, rows=rows, slowdown=slowdown)

    tfidf = REGISTRY["tfidf_logreg"]
    ten_times = 10 * search_estimates.prior_seconds(
        spec=tfidf, settings=defaults(tfidf), device_plan=plan, rows=rows)
    trials = [default_trial("tfidf_logreg", ten_times)]
    assert first("tfidf_svm", trials) == pytest.approx(10 * first("tfidf_svm", []))
    assert first("minilm", trials) == pytest.approx(first("minilm", []))
    assert first("minilm_embed_logreg", trials) == pytest.approx(first("minilm_embed_logreg", []))

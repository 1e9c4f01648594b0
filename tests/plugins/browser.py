"""Fixtures for the web, API and browser tests: rows made directly, logged-in clients, chromium."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("MEDLITBOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
    "--disable-dev-shm-usage",
]

MULTI_METRICS: dict[str, Any] = {
    "n": 20, "multi_label": True, "micro_f1": 0.81, "macro_f1": 0.77, "weighted_f1": 0.8,
    "subset_accuracy": 0.6, "hamming_loss": 0.09, "roc_auc_macro": 0.9,
    "per_label": {
        "cardiovascular": {"precision": 0.8, "recall": 0.7, "f1": 0.75, "support": 7},
        "neurological": {"precision": 0.9, "recall": 0.85, "f1": 0.87, "support": 10},
    },
    "confusion": {"cardiovascular": [[11, 2], [2, 5]], "neurological": [[9, 1], [1, 9]]},
    "confident_mistakes": [{
        "index": 3, "text": "<script>alert('mistake')</script> Heart failure outcomes",
        "true_labels": ["cardiovascular"], "predicted_labels": ["neurological"],
        "label": "neurological", "probability": 0.93, "confidence": 0.93,
    }],
    "thresholds": [0.4, 0.55],
}


class Rows:
    """Make owner-scoped rows without running imports or trainings."""

    def dataset(self, owner: Any, **fields: Any):
        from dataset_management.models import Dataset

        defaults = {
            "name": "Demo articles", "label_names": ["cardiovascular", "neurological"],
            "is_multilabel": True, "row_count": 20,
            "label_counts": {"cardiovascular": 7, "neurological": 10},
            "split_sizes": {"train": 16, "validation": 2, "test": 2},
        }
        return Dataset.objects.create(owner=owner, **{**defaults, **fields})

    def model(self, owner: Any, dataset: Any = None, **fields: Any):
        from classification.models import MLModel

        defaults = {
            "name": "TF-IDF demo", "model_type": "tfidf_logreg", "status": MLModel.Status.TRAINED,
            "metrics": MULTI_METRICS, "label_names": ["cardiovascular", "neurological"],
            "is_multilabel": True,
        }
        return MLModel.objects.create(owner=owner, dataset=dataset, **{**defaults, **fields})

    def job(self, model: Any, **fields: Any):
        from classification.models import TrainingJob

        defaults = {
            "status": TrainingJob.Status.RUNNING, "phase": TrainingJob.Phase.TRAINING,
            "progress_percentage": 42.0, "current_epoch": 1.2, "total_epochs": 3,
            "current_step": 12, "total_steps": 30, "eta_seconds": 80.0, "last_loss": 0.52,
            "metrics_history": [
                {"step": 5, "epoch": 0.5, "loss": 0.7},
                {"step": 10, "epoch": 1.0, "loss": 0.55, "eval_micro_f1": 0.6},
            ],
            "log_tail": "epoch 1 done",
        }
        return TrainingJob.objects.create(ml_model=model, **{**defaults, **fields})



def log_in(page: Any, url: str, username: str, password: str) -> None:
    """Sign in through the real login form, as a person does, and wait for the dashboard."""
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{url}/")

@pytest.fixture
def rows() -> Rows:
    return Rows()


@pytest.fixture
def alice_client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def bob_client(other_user: Any) -> Client:
    client = Client()
    client.force_login(other_user)
    return client


@pytest.fixture
def api_token(user: Any) -> str:
    from api.tokens import token_create

    return token_create(user=user, name="test token")[1]


@pytest.fixture
def other_api_token(other_user: Any) -> str:
    from api.tokens import token_create

    return token_create(user=other_user, name="test token")[1]


@pytest.fixture(scope="session")
def chromium_browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists() or shutil.which(CHROMIUM) is None:
        pytest.skip(f"chromium not found at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; pytest-django's live_server
    # must then be told that sync DB access is fine here.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(scope="session")
def tfidf_artifact(tmp_path_factory: pytest.TempPathFactory, demo_split) -> dict[str, Any]:
    """A real TF-IDF model trained on the demo slice, saved once per session."""
    from classification import ml_models

    train, val, test = demo_split
    labels = sorted({name for row in train.labels for name in row})
    config = ml_models.TrainConfig(epochs=1, label_names=labels, multi_label=True)
    classifier = ml_models.create_classifier("tfidf_logreg")
    # Rules tuned on the 17 validation rows, too few to choose a calibration on: the tests of
    # pages and batches read an uncalibrated model; the cross-fitted default has tests of its own.
    classifier.rules_folds = 0
    classifier.fit(train, val, config, lambda _: None, lambda: False)
    path = tmp_path_factory.mktemp("tfidf") / "artifact"
    classifier.save(str(path))
    return {"path": str(path), "labels": labels, "metrics": classifier.evaluate(test)}


@pytest.fixture
def trained_model(user: Any, rows: Rows, tfidf_artifact: dict[str, Any]):
    return rows.model(
        user, rows.dataset(user, label_names=tfidf_artifact["labels"]),
        name="Trained TF-IDF", artifact_path=tfidf_artifact["path"],
        label_names=tfidf_artifact["labels"], metrics=tfidf_artifact["metrics"],
    )

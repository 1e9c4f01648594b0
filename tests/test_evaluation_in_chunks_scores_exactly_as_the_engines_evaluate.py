"""An evaluation scores its file a chunk at a time (for progress and cancel), yet its metrics are
the engine's own: the same as ``classifier.evaluate`` on the whole file at once, whatever the
chunk size, and the progress callback sees every chunk end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from classification import ml_models
from classification.jobs.training import load_split
from classification.mlmodels.evaluation_scoring import mlmodel_evaluate_file
from classification.mlmodels.prediction import _classifier, parse_articles_file
from classification.models import MLModel
from tests.job_support import FIXTURES

pytestmark = pytest.mark.django_db
SLICE = FIXTURES / "demo_slice.csv"


@pytest.fixture
def trained(slice_dataset: Any, tmp_path: Path) -> MLModel:
    clf = ml_models.create_classifier("tfidf_logreg")
    config = ml_models.TrainConfig(label_names=slice_dataset.label_names,
                                   multi_label=slice_dataset.is_multilabel)
    clf.fit(load_split(slice_dataset, "train"), load_split(slice_dataset, "validation"), config,
            lambda _: None, lambda: False)
    clf.save(str(tmp_path / "model"))
    return MLModel.objects.create(
        name="T", model_type="tfidf_logreg", dataset=slice_dataset, status="trained",
        artifact_path=str(tmp_path / "model"), label_names=clf.label_names,
    )


def rounded(value: Any) -> Any:
    """JSON-plain, floats to 9 places: equal up to the last bits of a sum's order."""
    plain = json.loads(json.dumps(value, default=lambda v: v.tolist()
                                  if hasattr(v, "tolist") else str(v)))

    def walk(v: Any) -> Any:
        if isinstance(v, float):
            return round(v, 9)
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(plain)


@pytest.mark.parametrize("chunk_rows", [1, 7, 256])
def test_chunked_metrics_equal_the_engines_evaluate_on_the_whole_file(trained, chunk_rows):
    calls: list[tuple[str, int, int | None]] = []
    result = mlmodel_evaluate_file(ml_model=trained, path=SLICE, chunk_rows=chunk_rows,
                                   on_progress=lambda *call: calls.append(call))

    parsed = parse_articles_file(SLICE)
    whole = _classifier(trained).evaluate(ml_models.TextData(texts=parsed.texts,
                                                             labels=parsed.labels))
    assert rounded({k: result[k] for k in whole}) == rounded(whole)
    scoring = [done for message, done, _ in calls if message == "scoring rows"]
    assert scoring[0] == 0
    assert scoring[-1] == 200
    assert len(scoring) == 1 + -(-200 // chunk_rows)  # the start, then every chunk's end

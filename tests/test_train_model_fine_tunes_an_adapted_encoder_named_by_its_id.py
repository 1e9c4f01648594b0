"""manage.py train_model --type adapted --encoder-model-id N queues the fine-tuning of the
encoder adapt job N saved, as the New model form's "Adapted encoder: ..." does; without an id,
or with an encoder still adapting, it is refused on --encoder-model-id and no job is made."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from classification.models import MLModel, TrainingJob


def _encoder(dataset: Any, status: str) -> MLModel:
    return MLModel.objects.create(name="Adapted MiniLM", model_type="adapt", dataset=dataset,
                                  status=status)


@pytest.mark.django_db
def test_train_model_queues_the_adapted_type_on_the_named_encoder(slice_dataset: Any) -> None:
    encoder = _encoder(slice_dataset, MLModel.Status.TRAINED)
    out = StringIO()
    call_command("train_model", "--dataset", str(slice_dataset.pk), "--type", "adapted",
                 "--encoder-model-id", str(encoder.pk), "--epochs", "1", stdout=out)

    job = TrainingJob.objects.get()
    assert job.ml_model.model_type == "adapted"
    assert job.config["encoder_model_id"] == encoder.pk
    assert f"model_id={job.ml_model_id}" in out.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize(("status", "given", "words"), [
    (MLModel.Status.TRAINED, False, "--encoder-model-id: Pick the adapted encoder"),
    (MLModel.Status.TRAINING, True, "has not finished adapting yet"),
])
def test_train_model_refuses_an_adapted_type_without_a_finished_encoder(
        slice_dataset: Any, status: str, given: bool, words: str) -> None:
    encoder = _encoder(slice_dataset, status)
    before = MLModel.objects.count()
    args = ["--encoder-model-id", str(encoder.pk)] if given else []
    with pytest.raises(CommandError, match=words):
        call_command("train_model", "--dataset", str(slice_dataset.pk), "--type", "adapted",
                     *args, stdout=StringIO())
    assert MLModel.objects.count() == before
    assert not TrainingJob.objects.exists()

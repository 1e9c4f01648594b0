"""TrainConfig accepts the seed's parameter names and form strings."""

from __future__ import annotations

from classification.ml_models import TextData, TrainConfig


def test_train_config_from_dict_maps_seed_keys_and_coerces_strings() -> None:
    config = TrainConfig.from_dict(
        {"total_epochs": "4", "learning_rate": "3e-5", "multi_label": "true", "unknown": 1}
    )
    assert config.epochs == 4
    assert config.learning_rate == 3e-5
    assert config.multi_label is True
    assert TrainConfig.from_dict(config.as_dict()) == config


def test_text_data_defaults_to_unlabelled_rows() -> None:
    data = TextData(["a", "b"])
    assert data.labels == [[], []]

"""The metadata_fields training setting takes auto, none, or field names (any case, a list or
"a,b" text), and refuses anything else with a message naming it, before a job is made."""

from __future__ import annotations

import pytest

from classification.engine.schema import TrainConfig, TrainConfigError, training_config_clean


def test_the_default_is_auto() -> None:
    assert TrainConfig().metadata_fields == ["auto"]


@pytest.mark.parametrize(("given", "cleaned"), [
    ("auto", ["auto"]), ("none", ["none"]), ("Journal,MeSH", ["journal", "mesh"]),
    (["publication_types", "keywords"], ["publication_types", "keywords"]),
])
def test_accepted_values(given: object, cleaned: list[str]) -> None:
    assert training_config_clean({"metadata_fields": given}) == {"metadata_fields": cleaned}


@pytest.mark.parametrize(("given", "message"), [
    ("jornal", "jornal: choose from auto, none, journal, mesh, publication_types, keywords."),
    (["auto", "journal"], "auto stands alone"),
    (["none", "mesh"], "none stands alone"),
    (5, "Enter a list."),
])
def test_refused_values_name_the_problem(given: object, message: str) -> None:
    with pytest.raises(TrainConfigError) as caught:
        training_config_clean({"metadata_fields": given})
    assert message in caught.value.errors["metadata_fields"][0]


def test_the_fields_a_model_used_are_set_by_training_not_by_a_person() -> None:
    with pytest.raises(TrainConfigError) as caught:
        training_config_clean({"metadata_used": ["journal"]})
    assert "metadata_used" in caught.value.errors

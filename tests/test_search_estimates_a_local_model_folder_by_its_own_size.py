"""A kind that trains the user's own folder (an adapted encoder, a custom model) has one speed
figure, measured on one encoder. A search scales it by the folder's own size (its config.json):
an adapted tiny BERT estimated at MiniLM's speed was skipped for time on a loaded CI machine,
though its trial took four seconds; an adapted BERT-base folder is eight times MiniLM's work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from classification.engine import model_size, search_estimates
from classification.engine.device import DevicePlan
from classification.engine.model_size import BERT_BASE, MINILM_L6
from classification.engine.search_space import defaults
from classification.ml_models import get_spec


def folder_with(tmp_path: Path, name: str, **config: object) -> str:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return str(folder)


def test_a_folders_work_is_measured_against_the_encoder_its_kinds_figure_came_from(
        tmp_path: Path, tiny_bert_dir: Path) -> None:
    base = folder_with(tmp_path, "base", num_hidden_layers=12, hidden_size=768,
                       intermediate_size=3072)
    assert model_size.work_ratio(model_path=base, reference=MINILM_L6) == pytest.approx(8.0)
    assert model_size.work_ratio(model_path=base, reference=BERT_BASE) == pytest.approx(1.0)
    assert model_size.work_ratio(model_path=str(tiny_bert_dir), reference=MINILM_L6) < 0.01


@pytest.mark.parametrize("config", ["not json", json.dumps({"hidden_size": 768}),
                                    json.dumps({"num_hidden_layers": 0, "hidden_size": 768})])
def test_a_folder_without_a_readable_size_keeps_the_registry_figure(
        tmp_path: Path, config: str) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "config.json").write_text(config, encoding="utf-8")
    assert model_size.work_ratio(model_path=str(folder), reference=MINILM_L6) == 1.0
    assert model_size.work_ratio(model_path=str(tmp_path / "missing"),
                                 reference=MINILM_L6) == 1.0
    assert model_size.work_ratio(model_path=None, reference=MINILM_L6) == 1.0


def test_a_tiny_adapted_encoder_fits_a_three_minute_search_on_a_machine_five_times_slower(
        tmp_path: Path, tiny_bert_dir: Path) -> None:
    spec = get_spec("adapted")
    plan = DevicePlan(device="cpu", threads=2)

    def estimate(folder: str) -> float:
        ratio = model_size.work_ratio(model_path=folder, reference=spec.speed.measured_on)
        return search_estimates.trial_seconds(
            spec=spec, settings=defaults(spec), trials=[], device_plan=plan,
            rows=search_estimates.TrialRows(train=178, validation=0),
            slowdown=5.0, work_ratio=ratio)

    minilm = folder_with(tmp_path, "minilm", num_hidden_layers=6, hidden_size=384,
                         intermediate_size=1536)
    base = folder_with(tmp_path, "base", num_hidden_layers=12, hidden_size=768,
                       intermediate_size=3072)
    unscaled = search_estimates.trial_seconds(
        spec=spec, settings=defaults(spec), trials=[], device_plan=plan,
        rows=search_estimates.TrialRows(train=178, validation=0),
        slowdown=5.0)
    assert estimate(minilm) == pytest.approx(unscaled)
    assert estimate(minilm) > 180  # the figure the CI machine skipped the tiny BERT on
    assert estimate(str(tiny_bert_dir)) < 40
    # The rows scale with the work; the overhead (loading, saving) stays at the figure's.
    overhead = 5.0 * spec.speed.overhead_seconds
    assert estimate(base) - overhead == pytest.approx(8 * (estimate(minilm) - overhead))


@pytest.mark.parametrize("shape", [None, [], [6, 384], ["six", 384, 1536], [0, 384, 1536]])
def test_a_recorded_shape_that_cannot_be_read_keeps_the_registry_figure(shape: object) -> None:
    assert model_size.shape_ratio(shape, reference=MINILM_L6) == 1.0  # type: ignore[arg-type]
    assert model_size.shape_ratio([12, 768, 3072], reference=MINILM_L6) == pytest.approx(8.0)

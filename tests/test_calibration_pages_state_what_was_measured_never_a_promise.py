"""The model page and a batch's page say what was measured about the model's probabilities, on
how many held-out rows, never a promise: how often labels given about 0.9 were right out of
fold on validation, the ECE, the method chosen and every candidate's ECE; or, when nothing was
recalibrated, that plainly and why."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
from django.test import Client
from django.urls import reverse

from classification.engine.calibration import fit_calibration
from classification.models import BatchJob
from classification.views.reliability import calibration_statement

PROMISES = ("9 times in 10", "should be right", "means right about")


def pages(client: Client, user: Any, model: Any) -> list[str]:
    """The model page and the page of a batch classified with the model, as text."""
    batch = BatchJob.objects.create(owner=user, ml_model=model, filename="articles.csv",
                                    status=BatchJob.Status.COMPLETED)
    urls = [f"/models/{model.pk}/",
            reverse("classification:batch_detail", kwargs={"batch_id": batch.pk.hex})]
    out = []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        out.append(html.unescape(response.content.decode()))
    return out


def over_confident_selection() -> dict[str, Any]:
    """A real selection, run on 400 validation rows whose log-odds were doubled."""
    rng = np.random.default_rng(11)
    logit = rng.normal(-0.5, 1.5, (400, 4))
    truth = (rng.random((400, 4)) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    chosen = fit_calibration(prob=1 / (1 + np.exp(-2 * logit)), truth=truth, multi_label=True)
    return chosen.selection


def test_a_chosen_calibration_is_stated_with_its_held_out_figures(
        alice_client: Client, user: Any, trained_model: Any) -> None:
    selection = over_confident_selection()
    trained_model.metrics = {**trained_model.metrics, "calibration": {
        **trained_model.metrics["calibration"], "selection": selection}}
    trained_model.save(update_fields=["metrics"])
    near = next(p for p in selection["curve"] if 13 / 15 <= p["confidence"] < 14 / 15)
    chosen = {"platt": "Platt"}.get(selection["chosen"], selection["chosen"])
    scores = selection["candidates"]
    for text in pages(alice_client, user, trained_model):
        assert "On 400 held-out validation rows, labels given about 0.9" in text
        assert f"were right {near['accuracy']:.0%} of the time" in text
        assert f"of {near['count']} (ECE" in text
        assert f"ECE {scores[selection['chosen']]['ece']:.3f}, out of fold" in text
        assert f"method chosen: {chosen}, over none {scores['none']['ece']:.3f}" in text
        assert not any(promise in text for promise in PROMISES)


def test_a_model_left_as_it_was_says_so_plainly(
        alice_client: Client, user: Any, trained_model: Any) -> None:
    # A job that cross-fitted its rules over train and validation, where no method beat none
    # beyond the noise: it kept the model's own probabilities.
    rng = np.random.default_rng(12)
    q = 1 / (1 + np.exp(-rng.normal(-0.5, 1.5, (400, 4))))  # calibrated already
    selection = fit_calibration(prob=q, truth=(rng.random((400, 4)) < q).astype(np.int64),
                                multi_label=True).selection
    assert selection["chosen"] == "none"
    trained_model.metrics = {**trained_model.metrics, "calibration": {
        **trained_model.metrics["calibration"], "selection": {**selection, "cross_fitted": True}}}
    trained_model.save(update_fields=["metrics"])
    for text in pages(alice_client, user, trained_model):
        assert ("Not recalibrated: on 400 training and validation rows, each scored by a model "
                "fitted without it (cross-fitted), no method lowered") in text
        assert not any(promise in text for promise in PROMISES)


def test_too_few_rows_to_choose_on_are_said_to_be_too_few() -> None:
    rng = np.random.default_rng(13)
    q = rng.random((40, 4))
    selection = fit_calibration(prob=q, truth=(rng.random((40, 4)) < q).astype(np.int64),
                                multi_label=True).selection
    text = calibration_statement(metrics={"calibration": {"method": "select",
                                                          "selection": selection}})
    assert text.startswith("Not recalibrated: the validation split had 40 rows, too few to "
                           "choose a calibration on")


def test_a_selection_that_kept_none_names_every_candidate_it_measured() -> None:
    rng = np.random.default_rng(12)
    q = 1 / (1 + np.exp(-rng.normal(-0.5, 1.5, (400, 4))))  # calibrated already
    truth = (rng.random((400, 4)) < q).astype(np.int64)
    selection = fit_calibration(prob=q, truth=truth, multi_label=True).selection
    assert selection["chosen"] == "none"
    text = calibration_statement(metrics={"calibration": {"method": "select",
                                                          "selection": selection}})
    assert text.startswith("Not recalibrated: on 400 held-out validation rows, no method "
                           "lowered the expected calibration error (ECE) out of fold")
    for name, key in (("none", "none"), ("temperature", "temperature"), ("Platt", "platt"),
                      ("isotonic", "isotonic")):
        assert f"{name} {selection['candidates'][key]['ece']:.3f}" in text
    assert "so these are the model's own probabilities" in text

"""A trained model's page has a calibration panel: the reliability plot (inline SVG, the curve
before and after calibration), the ECE before and after, and per label its calibration, its
F1 threshold and its recall threshold. A model trained before calibration has no panel."""

from __future__ import annotations

from typing import Any

from django.test import Client


def test_the_page_shows_the_plot_the_ece_and_both_thresholds(
        alice_client: Client, trained_model: Any) -> None:
    page = alice_client.get(f"/models/{trained_model.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="reliability-plot"' in html
    assert 'id="reliability-before"' in html
    assert 'id="reliability-after"' in html
    report = trained_model.metrics["calibration"]
    assert f'<span id="ece-before">{report["ece_before"]:.3f}</span>' in html
    assert f'<strong id="ece-after">{report["ece_after"]:.3f}</strong>' in html
    per_label = trained_model.metrics["decision_thresholds"]["per_label"]
    for name in trained_model.label_names:
        assert f"<td>{name}</td>" in html
        assert f'{per_label[name]["recall"]:.3f}' in html
        assert f'{per_label[name]["f1"]:.3f}' in html
    # What was measured, never a promise: the fixture's split was too small to choose on.
    assert 'id="calibration-statement"' in html
    assert "Not recalibrated: the validation split had" in html
    assert "threshold=recall" in html


def test_a_model_without_calibration_metrics_has_no_panel(
        alice_client: Client, trained_model: Any) -> None:
    trained_model.metrics = {k: v for k, v in trained_model.metrics.items()
                             if k not in ("calibration", "decision_thresholds")}
    trained_model.save(update_fields=["metrics"])
    html = alice_client.get(f"/models/{trained_model.pk}/").content.decode()
    assert 'id="reliability-plot"' not in html

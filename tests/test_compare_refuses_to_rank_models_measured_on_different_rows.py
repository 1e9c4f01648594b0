"""Compare ranks models only when their test metrics were measured on the same rows. A model
trained where the rows without a label were dropped was scored on fewer, other test rows than
one trained where they were kept: the page shows how many rows each was scored on, refuses to
mark a best value, and says why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.test import Client
from django.urls import reverse

from tests.no_label_support import FIXTURE, model_trained


def test_models_measured_on_different_rows_are_not_ranked(
        transactional_db: None, import_file: Any, user: Any, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    kept = model_trained(import_file=import_file, user=user, name="Kept")
    copy = tmp_path / "same_rows.csv"  # another upload of the file: not refused as a repeat
    copy.write_bytes(FIXTURE.read_bytes() + b"\n")
    dropped = model_trained(import_file=import_file, user=user, path=copy, name="Dropped",
                            no_label_rows="drop")
    assert kept.metrics["rows_scored"] != dropped.metrics["rows_scored"]
    client = Client()
    client.force_login(user)
    html = client.get(reverse("classification:model_compare"),
                      {"ids": [kept.pk, dropped.pk]}).content.decode()
    assert 'id="not-ranked"' in html
    assert "Not ranked: these models were measured on different rows" in html
    refusal = html[html.index('id="not-ranked"'):].split("</div>")[0]
    assert f"{kept.metrics['rows_scored']} rows" in refusal
    assert f"{dropped.metrics['rows_scored']} rows" in refusal
    assert "from different test splits" in refusal
    assert 'class="num best"' not in html
    assert "The best value in each row is in green" not in html


def test_a_single_model_is_shown_without_a_refusal(
        transactional_db: None, import_file: Any, user: Any, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    kept = model_trained(import_file=import_file, user=user, name="Kept")
    client = Client()
    client.force_login(user)
    html = client.get(reverse("classification:model_compare"), {"ids": [kept.pk]}).content.decode()
    assert 'id="not-ranked"' not in html
    assert f"<td class=\"num small\">{kept.metrics['rows_scored']} rows</td>" in html

"""A dataset without labels (a prediction-only collection of two exports) is shown as what it
is: "prediction only", links to classify its articles and to screen it, and neither a split
("train / val / test"), nor label counts, nor "single-label". A labelled dataset still shows
them all."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from dataset_management.models import Dataset
from tests.plugins.datasets import FORMATS, ROOT

pytestmark = pytest.mark.django_db
DEDUP = ROOT / "tests" / "fixtures" / "dedup"


def test_a_prediction_only_collection_page(alice_client, media_root, user) -> None:
    call_command("import_dataset", str(DEDUP / "pubmed_search.nbib"),
                 str(DEDUP / "embase_search.ris"), "--name", "To screen", "--owner", "alice",
                 "--unlabelled", stdout=StringIO())
    dataset = Dataset.objects.get()
    assert not dataset.is_labelled
    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert 'id="prediction-only"' in page
    assert "prediction only" in page
    assert reverse("classification:classify") in page
    assert reverse("screening:list") in page
    assert "Split (train / val / test)" not in page
    assert 'id="split-sizes"' not in page
    assert "single-label" not in page
    assert 'id="label-chart"' not in page
    assert "<th>Labels</th>" not in page


def test_a_labelled_dataset_page_keeps_its_split_and_labels(alice_client, import_file) -> None:
    dataset = import_file(FORMATS / "comma.csv")
    assert dataset.is_labelled
    page = alice_client.get(reverse("datasets:detail", args=[dataset.pk])).content.decode()
    assert 'id="split-sizes"' in page
    assert 'id="label-chart"' in page
    assert 'id="prediction-only"' not in page

"""A structured abstract (AbstractText elements with a Label) keeps its sections in order, each
behind its label ("BACKGROUND: ... METHODS: ..."); inline markup (<sub>) is flattened."""

from __future__ import annotations

import pytest

from dataset_management.readers.pubmed_xml import pubmed_articles
from dataset_management.selectors import dataset_sample_rows
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db


def test_the_trial_abstract_keeps_background_methods_results_conclusions():
    with (FORMATS / "pubmed_efetch_trial.xml").open("rb") as stream:
        (article,) = pubmed_articles(stream)
    abstract = article["abstract"]
    assert abstract.startswith("BACKGROUND: In patients with mild asthma, as-needed use of an "
                               "inhaled glucocorticoid plus a fast-acting β 2-agonist")
    positions = [abstract.index(f"{label}: ") for label in
                 ("BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS")]
    assert positions == sorted(positions)
    assert "\n" not in abstract
    assert "  " not in abstract
    assert article["doi"] == "10.1056/NEJMoa1715274"


def test_the_labels_reach_the_stored_text_a_model_sees(import_file):
    dataset = import_file(FORMATS / "pubmed_efetch_structured.xml")
    (row,) = dataset_sample_rows(dataset=dataset, n=1)
    assert row["abstract"].startswith("OBJECTIVE: Telomere shortening occurs as an early event")
    for label in ("DESIGN: ", "RESULTS: ", "CONCLUSIONS: "):
        assert label in row["abstract"]
    assert row["text"].startswith("Leucocyte telomere length, genetic variants at the TERT gene "
                                  "region and risk of pancreatic cancer.\n\nOBJECTIVE: ")

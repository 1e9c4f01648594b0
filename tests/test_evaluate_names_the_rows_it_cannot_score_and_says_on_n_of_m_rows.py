"""Evaluation counts every row of the file: a multi-label row without a label is scored (right
when the model gives none), and a row that cannot be scored (no text, only labels the model
does not know) is named with its row and why; `manage.py evaluate`, its JSON and the evaluation
page then say "on N of M rows", the page in bold."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from classification.models import MLModel
from tests.evaluation_support import run_here
from tests.no_label_support import model_trained

ROWS = [  # file rows 2 to 8: the header is row 1
    ("Heart study", "Myocardial infarction and coronary artery hypertension.", "cardiology"),
    ("Tumour study", "Carcinoma chemotherapy and metastasis in lymphoma.", "oncology"),
    ("Brain study", "Stroke, epilepsy and seizure after chemotherapy for carcinoma.",
     "neurology|oncology"),
    ("Skin study", "Psoriasis and eczema treated in the clinic.", "dermatology"),
    ("", "", "cardiology"),
    ("Billing report", "Hospital billing survey of staffing costs and insurance.", ""),
    ("Staffing report", "Workforce scheduling and administration questionnaire.", "none"),
]


@pytest.fixture
def model(transactional_db: None, import_file: Any, user: Any, settings: Any,
          tmp_path: Path) -> MLModel:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    return model_trained(import_file=import_file, user=user)


def evaluation_file(tmp_path: Path) -> Path:
    path = tmp_path / "to_score.csv"
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract", "labels"])
        writer.writerows(ROWS)
    return path


def test_the_command_names_each_row_it_cannot_score_and_says_on_how_many_it_scored(
        model: MLModel, tmp_path: Path) -> None:
    out, report = io.StringIO(), tmp_path / "metrics.json"
    call_command("evaluate", str(model.pk), str(evaluation_file(tmp_path)), "--json",
                 str(report), stdout=out)
    text = out.getvalue()
    assert "Scored on 5 of 7 rows: 2 row(s) could not be scored" in text
    assert "row 5: only labels the model does not know: dermatology" in text
    assert "row 6: no text" in text
    summary = json.loads(text.strip().splitlines()[-1])
    assert (summary["rows_scored"], summary["rows_total"], summary["n"]) == (5, 7, 5)
    assert summary["scored_on"] == "on 5 of 7 rows"
    full = json.loads(report.read_text())
    assert full["rows_not_scored"] == [
        {"row": 5, "reason": "only labels the model does not know: dermatology"},
        {"row": 6, "reason": "no text"},
    ]
    assert full["rows_not_scored_by_reason"] == {"only labels the model does not know": 1,
                                                 "no text": 1}
    # The empty cell and "none": scored, right when the model gives no label.
    assert (full["rows_without_labels_scored"], full["rows_without_labels"]) == (2, 0)
    assert "had no label and were left out" not in text


def test_the_evaluation_page_says_on_n_of_m_rows_in_bold_and_lists_the_rows(
        model: MLModel, user: Any, tmp_path: Path) -> None:
    client = Client()
    client.force_login(user)
    path = evaluation_file(tmp_path)
    response = client.post(reverse("classification:model_evaluate", args=[model.pk]), {
        "file": SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/csv")})
    job = run_here(response)
    assert job.status == "completed", job.reason
    assert (job.result["rows_scored"], job.result["rows_total"]) == (5, 7)
    html = client.get(response["Location"]).content.decode()
    assert "<strong>Scored on 5 of 7 rows</strong>" in html
    assert "<td>only labels the model does not know: dermatology</td>" in html
    assert "<strong>5 of 7</strong>" in html  # the model's list of evaluations, too

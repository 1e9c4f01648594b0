"""Evaluation maps a file's columns as import does: the model's own training mapping first (a
file laid out like the training file needs no options), then detection, with overrides on the
command line and a preview-and-override page on the web (which starts the evaluation job once the
columns are known, and whose page offers them again). Labels the model does not know are counted
and named, never dropped in silence."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from classification import ml_models
from classification.jobs.training import load_split
from classification.models import EvaluationJob, MLModel
from dataset_management.models import Dataset
from tests.evaluation_support import run_here

pytestmark = pytest.mark.django_db
SLICE = Path(__file__).resolve().parent / "fixtures" / "demo_slice.csv"
TRAINED_LAYOUT = ("headline", "body_text", "dx")  # names detection does not know


def slice_rows() -> list[tuple[str, str, str]]:
    with SLICE.open(encoding="utf-8-sig", newline="") as f:
        return [(r["title"], r["abstract"], r["group"]) for r in csv.DictReader(f, delimiter=";")]


def write_csv(path: Path, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter=";")
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.fixture
def model(import_file: Callable[..., Dataset], tmp_path: Path) -> MLModel:
    """A TF-IDF model trained on the demo slice imported with its columns named by hand."""
    source = write_csv(tmp_path / "trained_layout.csv", TRAINED_LAYOUT, slice_rows())
    dataset = import_file(source, name="Hand-mapped", mapping={
        "title_column": "headline", "abstract_column": "body_text", "label_column": "dx",
    })
    assert dataset.label_field == "dx"
    clf = ml_models.create_classifier("tfidf_logreg")
    clf.fit(load_split(dataset, "train"), load_split(dataset, "validation"),
            ml_models.TrainConfig(label_names=dataset.label_names, multi_label=True),
            lambda _: None, lambda: False)
    clf.save(str(tmp_path / "model"))
    return MLModel.objects.create(
        owner=dataset.owner, name="Hand-mapped TF-IDF", model_type="tfidf_logreg",
        dataset=dataset, status="trained", artifact_path=str(tmp_path / "model"),
        label_names=clf.label_names, is_multilabel=True,
    )


def evaluate(model: MLModel, path: Path, *options: str) -> tuple[list[str], dict]:
    out = io.StringIO()
    call_command("evaluate", str(model.pk), str(path), *options, stdout=out)
    lines = out.getvalue().strip().splitlines()
    return lines, json.loads(lines[-1])


# --- the command ----------------------------------------------------------------------------------


def test_a_file_in_the_training_layout_needs_no_options(model, tmp_path) -> None:
    lines, summary = evaluate(model, tmp_path / "trained_layout.csv")
    assert summary["n"] == 200
    assert 0 < summary["micro_f1"] <= 1
    assert "unknown_labels" not in summary
    assert lines[0] == ("Columns: title=headline (as the model was trained), "
                        "text=body_text (as the model was trained), "
                        "label=dx (as the model was trained)")


def test_other_column_names_work_with_overrides(model, tmp_path) -> None:
    other = write_csv(tmp_path / "other.csv", ("Heading", "Article", "Truth"), slice_rows())
    with pytest.raises(CommandError, match="--abstract-column or --text-column"):
        evaluate(model, other)
    lines, summary = evaluate(model, other, "--title-column", "Heading",
                              "--abstract-column", "Article", "--label-column", "Truth",
                              "--label-separator", "|")
    assert summary["n"] == 200
    assert lines[0] == ("Columns: title=Heading (chosen), text=Article (chosen), "
                        "label=Truth (chosen)")


def test_usual_names_are_detected_when_the_training_columns_are_absent(model) -> None:
    lines, summary = evaluate(model, SLICE)
    assert summary["n"] == 200
    assert lines[0] == ("Columns: title=title (detected), text=abstract (detected), "
                        "label=group (detected)")


def test_a_text_column_option_replaces_title_and_abstract(model, tmp_path) -> None:
    rows = [(f"{t}\n\n{a}", g) for t, a, g in slice_rows()]
    other = write_csv(tmp_path / "one_text.csv", ("article", "dx"), rows)
    lines, summary = evaluate(model, other, "--text-column", "article")
    assert summary["n"] == 200
    assert lines[0] == "Columns: text=article (chosen), label=dx (as the model was trained)"


def test_unknown_labels_are_counted_and_named_not_dropped(model, tmp_path) -> None:
    rows = slice_rows()
    rows[:5] = [(t, a, "dermatology") for t, a, _ in rows[:5]]  # a label the model never saw
    rows[5:8] = [(t, a, f"{g}|veterinary") for t, a, g in rows[5:8]]
    path = write_csv(tmp_path / "trained_layout_unknown.csv", TRAINED_LAYOUT, rows)
    lines, summary = evaluate(model, path, "--json", str(tmp_path / "m.json"))
    assert summary["unknown_labels"] == {"dermatology": 5, "veterinary": 3}
    assert summary["n"] == 195  # the five rows with only an unknown label cannot be scored
    text = "\n".join(lines)
    assert ("2 label(s) the model does not know, left out of the scores: "
            "dermatology (5 rows), veterinary (3 rows)") in text
    assert "5 row(s) had only labels the model does not know and were left out." in text
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved["rows_unknown_labels_only"] == 5
    assert saved["columns"]["label"] == {"column": "dx", "source": "model"}


def test_a_file_whose_labels_are_all_unknown_says_so(model, tmp_path) -> None:
    rows = [(t, a, "dermatology") for t, a, _ in slice_rows()[:10]]
    path = write_csv(tmp_path / "all_unknown.csv", TRAINED_LAYOUT, rows)
    with pytest.raises(CommandError, match=r"None of the file's labels \(dermatology\)"):
        evaluate(model, path)


def test_a_file_without_labels_asks_for_the_label_column(model, tmp_path) -> None:
    path = write_csv(tmp_path / "nolabels.csv", ("title", "abstract"),
                     [(t, a) for t, a, _ in slice_rows()[:10]])
    with pytest.raises(CommandError, match=r"no label column.*--label-column"):
        evaluate(model, path)
    with pytest.raises(CommandError, match="Column 'nope' not found"):
        evaluate(model, path, "--label-column", "nope")


# --- the web page ---------------------------------------------------------------------------------


@pytest.fixture
def client_of(client, model):
    client.force_login(model.owner)
    return client


def post_file(client, model: MLModel, path: Path):
    upload = SimpleUploadedFile(path.name, path.read_bytes(), content_type="text/csv")
    return client.post(reverse("classification:model_evaluate", args=[model.pk]),
                       {"file": upload})


def test_web_upload_in_the_training_layout_starts_at_once_and_its_page_shows_the_scores(
        client_of, model, tmp_path):
    response = post_file(client_of, model, tmp_path / "trained_layout.csv")
    job = run_here(response)
    assert job.status == "completed", job.reason
    assert job.overrides == {}
    html = client_of.get(response["Location"]).content.decode()
    assert 'id="evaluation"' in html
    assert "Micro-F1" in html
    # calibration as measured on this file, beside the scores
    assert "ECE (15 bins)" in html
    assert "Brier score" in html
    assert '<option value="dx" selected>' in html  # the columns used, ready to change
    assert "as the model was trained" in html


def test_web_preview_lets_the_person_pick_the_columns_then_scores(client_of, model, tmp_path):
    other = write_csv(tmp_path / "other.csv", ("Heading", "Article", "Truth"), slice_rows())
    response = post_file(client_of, model, other)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="columns-problem"' in html
    assert "No abstract or text column found" in html
    assert EvaluationJob.objects.count() == 0  # nothing starts until the columns are known
    for column in ("Heading", "Article", "Truth"):
        assert f'<option value="{column}"' in html
    token = response.context["token"]

    response = client_of.post(reverse("classification:model_evaluate", args=[model.pk]), {
        "token": token, "map_label": "Nope", "action": "evaluate",
    })
    assert "Those columns do not work" in response.content.decode()
    assert response.status_code == 400

    response = client_of.post(reverse("classification:model_evaluate", args=[model.pk]), {
        "token": token, "map_title": "Heading", "map_abstract": "Article", "map_label": "Truth",
        "action": "evaluate",
    })
    job = run_here(response)
    assert job.status == "completed", job.reason
    assert job.result["n"] == 200
    assert job.overrides == {"title_column": "Heading", "abstract_column": "Article",
                             "label_column": "Truth"}
    html = client_of.get(response["Location"]).content.decode()
    assert 'id="evaluation"' in html
    assert '<option value="Truth" selected>' in html
    assert Dataset.objects.count() == 1  # evaluating never creates a dataset

    # The staged upload went with the start: the token opens nothing any more.
    again = client_of.post(reverse("classification:model_evaluate", args=[model.pk]),
                           {"token": token, "action": "evaluate"}, follow=True)
    assert "expired" in again.content.decode()


def test_web_evaluates_the_kept_file_again_with_other_columns(client_of, model, tmp_path):
    rows = [(t, a, g, "x") for t, a, g in slice_rows()]
    path = write_csv(tmp_path / "trained_layout_plus.csv", (*TRAINED_LAYOUT, "other"), rows)
    first = run_here(post_file(client_of, model, path))
    assert first.status == "completed", first.reason
    response = client_of.post(reverse("classification:evaluation_rerun", args=[first.pk.hex]),
                              {"map_label": "other"})
    second = run_here(response)
    assert second.pk != first.pk
    assert second.status == "failed"
    assert "None of the file's labels (x)" in second.reason
    page = client_of.get(response["Location"]).content.decode()
    assert 'id="evaluation-reason"' in page
    assert "None of the file&#x27;s labels" in page
    assert f"/evaluations/{first.pk.hex}/" in page  # the model's other evaluations are listed


def test_web_names_the_unknown_labels(client_of, model, tmp_path):
    rows = slice_rows()
    rows[:4] = [(t, a, "dermatology") for t, a, _ in rows[:4]]
    path = write_csv(tmp_path / "unknown.csv", TRAINED_LAYOUT, rows)
    response = post_file(client_of, model, path)
    run_here(response)
    html = client_of.get(response["Location"]).content.decode()
    assert 'id="unknown-labels"' in html
    assert "dermatology (4 rows)" in html


def test_web_a_staged_file_is_private_to_its_uploader(client_of, model, tmp_path, other_user):
    from projects.models import Role
    from projects.services import member_set

    other = write_csv(tmp_path / "other.csv", ("Heading", "Article", "Truth"), slice_rows())
    token = post_file(client_of, model, other).context["token"]  # staged, columns asked for
    # A colleague who may evaluate the same model still cannot read another person's upload.
    member_set(actor=None, project=model.project, member=other_user, role=Role.REVIEWER)
    client_of.force_login(other_user)
    response = client_of.post(reverse("classification:model_evaluate", args=[model.pk]),
                              {"token": token, "action": "evaluate"}, follow=True)
    assert "expired" in response.content.decode()

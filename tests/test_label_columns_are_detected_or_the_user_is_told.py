"""A label column is found by its usual names (whatever the case, spaces or underscores) or, failing
those, by its shape: short, repeated values beside long text. When none is found every door says
so: the preview prominently, with a required "prediction only" confirmation before creating;
the API with a warning; the CLI with a warning line. An unlabelled dataset is never offered for
training."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from dataset_management.mapping import mapping_detect
from dataset_management.models import Dataset
from tests.import_support import api_import, imports_run_queued
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
ABSTRACT = ("Patients with the condition were followed for five years in a cohort study; "
            "outcomes, adverse events and quality of life were measured at every visit.")
CONDITIONS = ["cardiovascular", "neoplasms", "digestive", "nervous system", "general"]


def medical_abstracts_csv(rows: int = 30) -> bytes:
    """The layout of the public "medical abstracts" data: text and a condition, no title."""
    lines = ["medical_abstract,condition"]
    lines += [f'"{ABSTRACT} Case {i}.",{CONDITIONS[i % 5]}' for i in range(rows)]
    return "\n".join(lines).encode()


def title_abstract_csv(rows: int = 12) -> bytes:
    lines = ["title,abstract"] + [f'Study {i},"{ABSTRACT} Case {i}."' for i in range(rows)]
    return "\n".join(lines).encode()


# --- detection ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "label", "Labels", "Category", "categories", "class", "Condition", "DOMAIN", "topic", "group",
    "target", "mesh_terms", "MeSH Terms", "MeSH headings", "Mesh-Terms", "condition_label",
])
def test_usual_label_names_are_found_whatever_their_spelling(name) -> None:
    mapping = mapping_detect(columns=["Article Title", "Abstract Text", name])
    assert (mapping.title, mapping.abstract, mapping.label) == (
        "Article Title", "Abstract Text", name)


def test_medical_abstract_and_condition_are_text_and_label() -> None:
    mapping = mapping_detect(columns=["medical_abstract", "condition"])
    assert (mapping.abstract, mapping.label) == ("medical_abstract", "condition")


def sample(column: str, values: list[str], **extra: str) -> list[dict[str, str]]:
    return [{"abstract": ABSTRACT, column: v, **extra} for v in values]


def test_a_short_repeated_column_beside_long_text_is_taken_for_labels() -> None:
    values = ["asthma", "copd", "asthma", "pneumonia", "copd", "asthma"] * 3
    rows = sample("dx", values, pmid="123", journal="Lancet", year="2020")
    mapping = mapping_detect(columns=["pmid", "journal", "year", "abstract", "dx"],
                             sample_rows=rows)
    assert mapping.label == "dx"
    multi = sample("codes", ["a|b", "b", "c|a", "a", "b|c", "c"] * 2)
    assert mapping_detect(columns=["abstract", "codes"], sample_rows=multi).label == "codes"


@pytest.mark.parametrize(("values", "why"), [
    ([f"note number {i}" for i in range(20)], "every value differs"),
    (["1", "2", "3", "1", "2", "3"] * 3, "numbers are measurements more often than classes"),
    ([ABSTRACT] * 2 + [ABSTRACT + " more"] * 4, "as long as the text"),
    (["asthma", "", "", "copd", "", ""] * 3, "missing in most rows"),
])
def test_columns_that_do_not_look_like_labels_are_not_guessed(values, why) -> None:
    mapping = mapping_detect(columns=["abstract", "other"], sample_rows=sample("other", values))
    assert mapping.label is None, why


def test_metadata_names_and_too_few_rows_are_never_guessed() -> None:
    rows = sample("journal", ["Lancet", "BMJ", "Lancet", "JAMA"] * 3)
    assert mapping_detect(columns=["abstract", "journal"], sample_rows=rows).label is None
    few = sample("dx", ["asthma", "copd", "asthma"])
    assert mapping_detect(columns=["abstract", "dx"], sample_rows=few).label is None


def test_medline_mesh_headings_stay_labels_only_when_asked_for() -> None:
    columns = ["pmid", "title", "abstract", "mesh_headings"]
    assert mapping_detect(columns=columns, file_format="nbib").label is None
    assert mapping_detect(columns=columns).label == "mesh_headings"  # a table's own column
    asked = mapping_detect(columns=columns, file_format="nbib",
                           overrides={"label_column": "mesh_headings"})
    assert asked.label == "mesh_headings"


def test_a_column_chosen_for_one_role_is_not_detected_for_another() -> None:
    mapping = mapping_detect(columns=["title", "abstract", "label"],
                             overrides={"label_column": "title"})
    assert (mapping.title, mapping.label) == (None, "title")


# --- the preview and the confirm step -------------------------------------------------------------


def upload(client, content: bytes, name: str):
    return client.post(reverse("datasets:upload"), {
        "file": SimpleUploadedFile(name, content), "name": name, "split_ratios": "0.8,0.1,0.1",
        "seed": 42,
    })


def confirm(client, staging, **fields):
    """Create; a queued import is then run here, as the worker would run it."""
    response = client.post(reverse("datasets:upload_confirm"), {
        "token": staging.token, "name": staging.name, "split_ratios": "0.8,0.1,0.1",
        "seed": "42", "action": "create", **fields,
    })
    imports_run_queued()
    return response


def test_a_medical_abstract_condition_file_is_previewed_and_created_labelled(alice_client, user):
    response = upload(alice_client, medical_abstracts_csv(), "medical_abstracts.csv")
    html = response.content.decode()
    assert '<option value="condition" selected>' in html
    assert '<option value="medical_abstract" selected>' in html
    assert "single-label" in html
    assert 'id="no-label-warning"' not in html
    assert 'name="prediction_only"' not in html
    confirm(alice_client, response.context["staging"], map_label="condition",
            map_abstract="medical_abstract")
    dataset = Dataset.objects.get(owner=user)
    assert dataset.label_field == "condition"
    assert dataset.label_names == sorted(CONDITIONS)


def test_without_a_label_column_the_preview_warns_and_create_needs_a_confirmation(
    alice_client, user,
) -> None:
    response = upload(alice_client, title_abstract_csv(), "unlabelled.csv")
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="no-label-warning"' in html
    assert "No label column found (columns: title, abstract)" in html
    assert "prediction only" in html
    assert 'name="prediction_only" value="1" required' in html
    staging = response.context["staging"]

    refused = confirm(alice_client, staging)  # what "Create" with the defaults used to do
    assert refused.status_code == 400
    assert "This file has no label column." in refused.content.decode()
    assert not Dataset.objects.exists()

    created = confirm(alice_client, staging, prediction_only="1")
    assert created.status_code == 302
    dataset = Dataset.objects.get(owner=user)
    assert dataset.label_names == []
    assert not dataset.is_trainable


def test_asking_for_no_labels_is_itself_the_confirmation(alice_client, user) -> None:
    response = upload(alice_client, title_abstract_csv(), "unlabelled.csv")
    confirm(alice_client, response.context["staging"], map_unlabelled="1")
    assert Dataset.objects.get(owner=user).label_names == []


def test_an_unlabelled_dataset_is_never_offered_for_training(user, import_file) -> None:
    from classification.forms import TrainingJobCreateForm

    labelled = import_file(FORMATS / "comma.csv", name="Labelled")
    unlabelled = import_file(FORMATS / "unlabelled.csv", name="Unlabelled")
    offered = set(TrainingJobCreateForm(user=user).fields["dataset"].queryset)
    assert labelled in offered
    assert unlabelled not in offered


# --- the API and the CLI --------------------------------------------------------------------------


def test_the_api_warns_when_an_import_found_no_label_column(api_token, media_root) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    dataset = api_import(client, {
        "file": SimpleUploadedFile("unlabelled.csv", title_abstract_csv()), "name": "U",
    })
    [warning] = dataset["warnings"]
    assert warning.startswith("No label column found (columns: title, abstract)")
    assert '"label_column" in mapping' in warning
    dataset = api_import(client, {
        "file": SimpleUploadedFile("m.csv", medical_abstracts_csv()), "name": "M",
    })
    assert dataset["warnings"] == []
    assert dataset["label_field"] == "condition"
    listing = client.get("/api/datasets/").json()["results"]
    assert [len(d["warnings"]) for d in listing] == [0, 1]


def test_the_cli_prints_a_warning_line_without_a_label_column(user, media_root, tmp_path) -> None:
    out = io.StringIO()
    call_command("import_dataset", str(FORMATS / "unlabelled.csv"), "--name", "U",
                 "--owner", "alice", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[-3].startswith("Warning: No label column found (columns: title, abstract)")
    assert lines[-3].endswith("name their column with --label-column.")
    assert lines[-2] == "duplicates_removed=0"
    assert lines[-1].startswith("dataset_id=")
    quiet = io.StringIO()
    (tmp_path / "other.csv").write_bytes(title_abstract_csv())
    call_command("import_dataset", str(tmp_path / "other.csv"), "--name", "U2",
                 "--owner", "alice", "--unlabelled", stdout=quiet)
    assert "Warning" not in quiet.getvalue()


def test_the_cli_finds_a_label_column_by_its_shape(user, media_root, tmp_path: Path) -> None:
    source = tmp_path / "dx.csv"
    source.write_bytes(medical_abstracts_csv().replace(b"condition", b"dx", 1))
    out = io.StringIO()
    call_command("import_dataset", str(source), "--name", "Dx", "--owner", "alice", stdout=out)
    dataset = Dataset.objects.get(name="Dx")
    assert dataset.label_field == "dx"
    assert "Warning" not in out.getvalue()

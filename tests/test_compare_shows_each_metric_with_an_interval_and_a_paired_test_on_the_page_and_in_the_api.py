"""Compare scores two trained models on their shared test split, each metric with its 95%
bootstrap interval ("0.812 (0.781–0.840)") and the other model's paired difference from the
best with its interval and p-value; the API's GET /api/models/compare/ gives the same figures.
The scores on the rows themselves are the models' own test metrics. Rows the models cannot all
be compared on are refused with the reason, on the page and as a 400."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from classification.views.presenters import interval_text
from tests.compare_support import compare_api, compare_page, trained_on

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def two_models(transactional_db: None, import_file: Any, user: Any, settings: Any,
               tmp_path: Path) -> list[Any]:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(FIXTURES / "demo_slice.csv", name="Slice")
    return [trained_on(dataset, user=user, model_type=kind)
            for kind in ("tfidf_logreg", "tfidf_svm")]


def test_the_api_gives_intervals_around_the_models_own_test_scores(two_models, user) -> None:
    response = compare_api(user, ",".join(str(m.pk) for m in two_models))
    assert response.status_code == 200, response.content
    figures = response.json()
    assert figures["on"] == "test"
    assert figures["rows"] == two_models[0].metrics["rows_scored"]
    assert "test rows of “Slice”" in figures["basis"]
    assert figures["rounds"] >= 1000
    for model, compared in zip(two_models, figures["models"], strict=True):
        assert compared["id"] == model.pk
        for key in ("micro_f1", "macro_f1"):
            cell = compared["metrics"][key]
            assert cell["value"] == pytest.approx(model.metrics[key], abs=1e-9)
            assert cell["low"] <= cell["value"] <= cell["high"]
            assert cell["low"] < cell["high"]  # some rows are wrong: an interval, not a point
    (other,) = {d["id"] for d in figures["differences"]}
    assert other != figures["best"]["id"]
    for difference in figures["differences"]:
        assert difference["low"] <= difference["difference"] <= difference["high"]
        assert 0 < difference["p_value"] <= 1
        assert difference["distinguishable"] is not (difference["low"] <= 0 <= difference["high"])


def test_the_page_shows_the_same_intervals_and_the_paired_differences(two_models, user) -> None:
    figures = compare_api(user, ",".join(str(m.pk) for m in two_models)).json()
    html = compare_page(user, two_models)
    assert 'id="interval-table"' in html
    for compared in figures["models"]:
        assert interval_text(**compared["metrics"]["macro_f1"]) in html
    paired = html[html.index('id="paired-table"'):].split("</table>")[0]
    for difference in figures["differences"]:
        assert interval_text(difference["difference"], difference["low"],
                             difference["high"]) in paired
        if not difference["distinguishable"]:
            assert "not distinguishable on these rows" in paired
    # Two models of equal macro-F1 are ranked in the order given: the page's order may differ.
    assert any(f"Against the best model, {m.name} (by macro-F1)" in html for m in two_models)
    assert '<option value="test" selected>Their own test split</option>' in html


def test_rows_they_cannot_all_be_compared_on_are_refused_with_the_reason(
        two_models, user, import_file, tmp_path) -> None:
    ids = ",".join(str(m.pk) for m in two_models)
    one = compare_api(user, str(two_models[0].pk))
    assert one.status_code == 400
    assert "2 to 8" in str(one.json())
    assert compare_api(user, f"{ids},999999").status_code == 404
    bogus = compare_api(user, ids, on="yesterday")
    assert bogus.status_code == 400
    assert "test" in str(bogus.json()["on"])
    gone = compare_api(user, ids, on="evaluation:" + "0" * 64)
    assert gone.status_code == 400
    assert "finished evaluation" in str(gone.json()["on"])
    copy = tmp_path / "again.csv"  # another upload of the file: not refused as a repeat
    copy.write_bytes((FIXTURES / "demo_slice.csv").read_bytes() + b"\n")
    other = import_file(copy, name="Again")
    elsewhere = trained_on(other, user=user, model_type="tfidf_logreg")
    refused = compare_api(user, f"{two_models[0].pk},{elsewhere.pk}")
    assert refused.status_code == 400
    assert "different datasets" in str(refused.json()["on"])
    html = compare_page(user, [two_models[0], elsewhere])
    assert 'id="comparison-error"' in html
    assert "different datasets" in html


def single_label_csv(target: Path) -> Path:
    """The demo slice with each article's first group as its one class."""
    with (FIXTURES / "demo_slice.csv").open(encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    with target.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["title", "abstract", "label"])
        writer.writerows([r["title"], r["abstract"], r["group"].split("|")[0]] for r in rows)
    return target


def test_single_label_models_get_accuracy_and_mcnemars_test(
        transactional_db: None, import_file: Any, user: Any, settings: Any,
        tmp_path: Path) -> None:
    settings.MODEL_ARTIFACT_ROOT = tmp_path / "artifacts"
    dataset = import_file(single_label_csv(tmp_path / "single.csv"))
    assert not dataset.is_multilabel
    models = [trained_on(dataset, user=user, model_type=kind)
              for kind in ("tfidf_logreg", "tfidf_svm")]
    figures = compare_api(user, f"{models[0].pk},{models[1].pk}").json()
    assert figures["multi_label"] is False
    for model, compared in zip(models, figures["models"], strict=True):
        assert compared["metrics"]["accuracy"]["value"] == pytest.approx(
            model.metrics["accuracy"], abs=1e-9)
    (mcnemar,) = figures["mcnemar"]
    assert 0 < mcnemar["p_value"] <= 1
    html = compare_page(user, models)
    assert "p (McNemar, exact)" in html
    assert f"{mcnemar['first_only_right']} vs {mcnemar['second_only_right']} rows" in html

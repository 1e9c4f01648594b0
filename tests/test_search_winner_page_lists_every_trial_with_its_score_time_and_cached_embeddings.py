"""The search's own report on the winner's model page (issue 39, point 4): a real short search
(MiniLM embeddings on the tiny BERT, and the MiniLM transformer, whose first trial, estimated at
the bundled MiniLM's size, cannot fit) keeps every trial with the winner's metrics, and the
model page lists each one, best first, with
its cross-validated macro-F1 and fold spread, its time, whether its embeddings were computed or
found cached, and its state; it says why the transformer was not tried and with what budget it
would have been. A model saved before the trials were kept still renders. The job page's
leaderboard and static/js/job.js draw the same columns."""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

import optuna
import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from classification.engine.search import SearchClassifier
from classification.ml_models import TrainConfig
from classification.models import MLModel

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[1]
EMBEDDING, SKIPPED = "minilm_embed_logreg", "minilm"


def short_search(folder: Path, encoder: Path, labels: list[str]) -> TrainConfig:
    config = TrainConfig.from_dict({"time_budget_minutes": 0.4,
                                    "search_candidates": [EMBEDDING, SKIPPED]})
    config.label_names, config.multi_label = labels, True
    config.output_dir, config.model_path = str(folder), str(encoder)
    config.embedding_cache_dir, config.max_length = str(folder / "cache"), 64
    return config


def page_of(client: Any, model: MLModel) -> str:
    response = client.get(reverse("classification:model_detail", args=[model.pk]))
    assert response.status_code == 200
    return response.content.decode()


def trial_cells(html: str) -> dict[int, dict[str, str]]:
    """The winner's trial table: per trial number, its cells' text by column label."""
    table = html[html.index('id="search-trials"'):]
    table = table[:table.index("</table>")]
    rows = {}
    for number, body in re.findall(r'<tr data-state="\w+" data-trial="(\d+)">(.*?)</tr>',
                                   table, re.S):
        cells = re.findall(r'<td data-label="([^"]+)"[^>]*>(.*?)</td>', body, re.S)
        rows[int(number)] = {label: " ".join(re.sub(r"<[^>]+>", " ", text).split())
                             for label, text in cells}
    return rows


def test_the_winners_page_lists_every_trial_and_what_a_larger_budget_would_add(
        demo_split, tiny_bert_dir: Path, tmp_path: Path, slice_dataset: Any, user: Any,
        alice_client: Any) -> None:
    train, val, _ = demo_split
    labels = sorted(set(train.label_space()) | set(val.label_space()))
    clf = SearchClassifier()
    metrics = clf.fit(train, val, short_search(tmp_path, tiny_bert_dir, labels),
                      lambda event: None, lambda: False)
    clf.save(str(tmp_path / "model"))
    model = MLModel.objects.create(
        owner=user, dataset=slice_dataset, name="Searched", model_type="search",
        status=MLModel.Status.TRAINED, artifact_path=str(tmp_path / "model"), metrics=metrics,
        label_names=labels)
    study = optuna.load_study(study_name="search",
                              storage=f"sqlite:///{tmp_path / 'search.sqlite3'}")
    trials = study.trials
    assert len(trials) >= 2, "the embedding kind is tuned after its first trial"

    html = page_of(alice_client, model)
    rows = trial_cells(html)
    assert set(rows) == {t.number for t in trials}  # every trial, from the model's metrics
    order = [int(n) for n in re.findall(r'data-trial="(\d+)"', html)]
    by_number = {t.number: t for t in trials}
    values = [by_number[n].value for n in order if by_number[n].value is not None]
    assert values == sorted(values, reverse=True)  # best first, unscored last
    assert [by_number[n].value is None for n in order] == sorted(
        by_number[n].value is None for n in order)
    for trial in trials:
        row = rows[trial.number]
        assert row["Model"] == trial.params["model_type"]
        assert row["State"].startswith(trial.state.name.lower())
        # Rounded as the page rounds (half up), not as Python's format does (2.05 -> 2.0).
        assert row["Time"] == f"{floatformat(trial.user_attrs['seconds'], 1)} s"
        folds = trial.user_attrs.get("fold_scores")
        if folds:
            assert row["Macro-F1"] == (f"{floatformat(trial.value, 3)} ± "
                                       f"{floatformat(round(statistics.pstdev(folds), 4), 3)}")
        elif trial.value is not None:
            # The first trial, when its folds did not fit the time left: one fit, on validation.
            assert row["Macro-F1"] == floatformat(trial.value, 3)
            assert "one fit scored on validation" in row["State"]
        embedded = trial.user_attrs["embed_seconds"]
        # A trial stopped before it embedded anything says nothing about the cache.
        assert row["Embeddings"] == (f"computed, {embedded:.0f} s" if embedded >= 1 else
                                     f"computed, {embedded:.1f} s" if embedded > 0 else
                                     "cached" if trial.value is not None else "–")
    first = min(t.number for t in trials)
    assert rows[first]["Embeddings"].startswith("computed, ")  # nothing was cached yet
    later = [t for t in trials if t.number != first and t.value is not None]
    assert later
    assert all(rows[t.number]["Embeddings"] == "cached" for t in later)

    # The transformer never ran: why, and the budget at which its first trial would have.
    search = metrics["search"]
    assert SKIPPED not in {t.params["model_type"] for t in trials}
    assert search["not_tried"][SKIPPED].startswith("its first trial needs about")
    [more] = search["larger_budget"]
    assert more["model_type"] == SKIPPED
    assert more["budget_minutes"] > search["budget_minutes"]
    assert (f"With {more['budget_minutes']:g} min, the search would also fine-tune {SKIPPED}"
            in more["sentence"])
    assert more["sentence"] in html
    assert 'id="search-larger-budget"' in html
    # The winner's score is named by the rows it was measured on, never "validation" for a
    # cross-validated mean.
    winner = search["winner"]
    on_split = winner["validation_split_macro_f1"] or winner["validation_macro_f1"]
    shown = (f"cross-validated macro-F1 <strong>{floatformat(winner['validation_macro_f1'], 3)}"
             if winner["basis"] == "cross-validation" else
             f"macro-F1 on the validation split <strong>{floatformat(on_split, 3)}")
    assert shown in html


def test_a_winner_saved_before_its_trials_were_kept_still_renders(
        slice_dataset: Any, user: Any, alice_client: Any) -> None:
    search = {"winner": {"model_type": "tfidf_logreg", "trial": 0, "params": {"ngram_max": 2},
                         "validation_macro_f1": 0.5},
              "verdict": "", "candidates": ["tfidf_logreg"], "budget_minutes": 1.0,
              "spent_seconds": 55.0, "trials": {"complete": 3, "pruned": 0, "fail": 0},
              "not_tried": {}}
    model = MLModel.objects.create(owner=user, dataset=slice_dataset, name="Old search",
                                   model_type="search", metrics={"search": search})
    html = page_of(alice_client, model)
    assert 'id="search-winner"' in html
    assert "This search's trials are on its job page." in html
    assert 'id="search-trials"' not in html
    assert 'id="search-larger-budget"' not in html


def test_the_job_pages_leaderboard_and_its_script_draw_the_same_columns() -> None:
    template = (ROOT / "templates/classification/includes/leaderboard.html").read_text()
    row = (ROOT / "templates/classification/includes/search_trial_row.html").read_text()
    script = (ROOT / "static/js/job.js").read_text()
    headers = re.findall(r"<th>([^<]+)</th>", template)
    assert "Embeddings" in headers
    assert re.findall(r'<td data-label="([^"]+)"', row) == headers
    labels = re.search(r"var labels = \[([^\]]+)\]", script).group(1)
    assert re.findall(r'"([^"]+)"', labels) == headers

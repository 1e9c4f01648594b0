"""`tfidf_minilm_svm` (issue 39): word and character TF-IDF beside the frozen encoder's sentence
vectors, under one calibrated linear SVM. It trains, saves and loads back to the same
probabilities; its head reads both kinds of features; it shares minilm_embed_logreg's
embeddings (a search that tries both embeds each text once); and it refuses a word-level
explanation in words rather than with a wrong one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from classification.engine.explain import ExplanationUnavailable, explanation_method
from classification.engine.types import TextData
from classification.ml_models import REGISTRY, TrainConfig, create_classifier, load_classifier


def config_for(split: tuple[TextData, TextData, TextData], encoder: Path, cache: Path,
               *, multi_label: bool = True) -> TrainConfig:
    train, val, _ = split
    config = TrainConfig(max_length=64, model_path=str(encoder), embedding_cache_dir=str(cache),
                         embedding_cache_mb=64)
    config.label_names = sorted(set(train.label_space()) | set(val.label_space()))
    config.multi_label = multi_label
    return config


def fitted(kind: str, split: tuple[TextData, TextData, TextData], config: TrainConfig) -> object:
    train, val, _ = split
    clf = create_classifier(kind)
    clf.fit(train, val, config, lambda event: None, lambda: False)
    return clf


def test_it_trains_on_words_and_vectors_and_loads_back_to_the_same_probabilities(
        demo_split, tiny_bert_dir: Path, tmp_path: Path) -> None:
    clf = fitted("tfidf_minilm_svm", demo_split, config_for(demo_split, tiny_bert_dir,
                                                              tmp_path / "cache"))
    test = demo_split[2].texts
    words = clf.vectorizer.transform(test[:1]).shape[1]
    hidden = clf._encoder_parts()[0].config.hidden_size
    assert clf._features(test[:1]).shape == (1, words + hidden)
    prob = clf.predict_proba_raw(test)
    assert prob.shape == (len(test), len(clf.label_names))
    assert np.all((prob >= 0) & (prob <= 1))
    assert clf.metrics["micro_f1"] > 0

    clf.save(str(tmp_path / "model"))
    loaded = load_classifier(str(tmp_path / "model"))
    assert type(loaded).__name__ == "WordsAndVectorsSvmClassifier"
    np.testing.assert_allclose(loaded.predict_proba_raw(test), prob, atol=1e-6)


def test_a_single_label_corpus_gets_one_label_per_text(
        demo_split, tiny_bert_dir: Path, tmp_path: Path) -> None:
    first = [TextData(list(part.texts), [[row[0]] if row else [] for row in part.labels])
             for part in demo_split]
    single = (first[0], first[1], first[2])
    clf = fitted("tfidf_minilm_svm", single,
                 config_for(single, tiny_bert_dir, tmp_path / "cache", multi_label=False))
    prob = clf.predict_proba_raw(single[2].texts)
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, atol=1e-6)


def test_texts_embedded_for_minilm_embed_logreg_are_not_embedded_again(
        demo_split, tiny_bert_dir: Path, tmp_path: Path, embedded: list[str]) -> None:
    config = config_for(demo_split, tiny_bert_dir, tmp_path / "cache")
    fitted("minilm_embed_logreg", demo_split, config)
    assert embedded
    embedded.clear()
    clf = fitted("tfidf_minilm_svm", demo_split, config)
    assert embedded == []
    assert clf.timings["embedding_cache_hits"] > 0


def test_it_refuses_a_word_level_explanation_and_the_registry_says_so(
        demo_split, tiny_bert_dir: Path, tmp_path: Path) -> None:
    clf = fitted("tfidf_minilm_svm", demo_split, config_for(demo_split, tiny_bert_dir,
                                                              tmp_path / "cache"))
    with pytest.raises(ExplanationUnavailable, match="sentence embeddings carry part"):
        explanation_method(clf)
    assert REGISTRY["tfidf_minilm_svm"].explainable is False
    assert REGISTRY["tfidf_svm"].explainable is True


@pytest.mark.django_db
def test_a_batch_asking_for_its_top_terms_is_refused_before_anything_is_queued(
        user, rows, tmp_path: Path) -> None:
    from classification.batches.services import BatchError, _check
    from classification.mlmodels.explanations import explainable

    # the refusal reads the model's kind only: nothing is loaded from its folder
    model = rows.model(user, model_type="tfidf_minilm_svm", artifact_path=str(tmp_path))
    assert not explainable(model)
    with pytest.raises(BatchError, match="cannot be explained word by word"):
        _check(ml_model=model, size=None, top_terms=True, threshold="f1")
    assert explainable(rows.model(user, model_type="tfidf_svm"))

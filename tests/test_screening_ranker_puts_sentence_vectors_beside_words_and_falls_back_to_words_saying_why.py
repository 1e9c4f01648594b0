"""The svm-embed ranker (issue 36): the bundled MiniLM's sentence vectors beside TF-IDF, computed
once per text through the embedding cache by a background fill; a session's refresh reads them
once all are cached, and an encoder that cannot load leaves the session ranked on words only,
with the reason on the page."""

from __future__ import annotations

import numpy as np
import pytest

from classification.engine import sentence_vectors
from screening import encoder, ranker, selectors
from screening.models import Record
from screening.tasks import ranker_refresh, session_vectors_fill
from tests.screening_support import team  # noqa: F401
from tests.test_screening_ranker_refresh_reorders_the_queue_and_a_crash_keeps_the_last_ranking import (  # noqa: E501
    FIRST_READ,
    _decide_by_title,
)

TEXTS = ["Gastric ulcer bleeding treated with proton pump inhibitors.",
         "Peptic ulcer disease and Helicobacter pylori eradication.",
         "Stroke rehabilitation after ischaemic infarction.",
         "Migraine prophylaxis with beta blockers."]


def test_the_features_are_the_words_then_the_unit_vectors(tmp_path) -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(texts)
        return np.eye(len(texts), 3)

    words = ranker.features_fit(texts=TEXTS, ranker="svm")
    both = ranker.features_fit(texts=TEXTS, ranker="svm-embed", embed=embed)
    assert calls == [TEXTS]
    assert both.shape == (4, words.shape[1] + 3)
    assert np.allclose(both[:, :words.shape[1]].toarray(), words.toarray())
    assert np.allclose(both[:, words.shape[1]:].toarray(), np.eye(4, 3))
    with pytest.raises(ranker.RankerError, match="needs a sentence encoder"):
        ranker.features_fit(texts=TEXTS, ranker="svm-embed")


def test_the_vectors_are_computed_once_then_read_from_memory_and_from_disk(tmp_path,
                                                                          monkeypatch) -> None:
    first = sentence_vectors.texts_embed(texts=TEXTS, cache_dir=str(tmp_path), cache_mb=16)
    assert first.shape == (4, 384)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-4)
    # Meaning, not spelling: the two ulcer abstracts are closer to each other than to stroke.
    assert first[0] @ first[1] > first[0] @ first[2]

    def no_encoder() -> None:
        raise AssertionError("the encoder ran again")

    monkeypatch.setattr(sentence_vectors, "_encoder_parts", no_encoder)
    assert np.allclose(sentence_vectors.texts_embed(texts=TEXTS[::-1], cache_dir=str(tmp_path),
                                                    cache_mb=16), first[::-1])
    sentence_vectors._memory.clear()  # another process: only the disk cache has them
    assert np.allclose(sentence_vectors.texts_embed(texts=TEXTS, cache_dir=str(tmp_path),
                                                    cache_mb=16), first, atol=1e-6)


def _ranked_session(team, settings):  # noqa: F811
    from screening import services

    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="x",
                                      labels=["oncological"], ranker_every=4)
    for rank, title in enumerate(FIRST_READ):
        Record.objects.filter(session=session, title=title).update(priority=10.0 - rank)
    _decide_by_title(team, session, 4)
    session.refresh_from_db()
    session.ranker_running_since = None
    session.save(update_fields=["ranker_running_since"])
    return session


@pytest.mark.django_db
def test_a_session_ranks_with_the_vectors_once_the_background_fill_cached_them(
        team, settings, tmp_path) -> None:  # noqa: F811
    settings.SCREENING_RANKER, settings.EMBEDDING_CACHE_DIR = "svm-embed", str(tmp_path)
    sentence_vectors._memory.clear()  # so the fill embeds, and writes the disk cache
    session = _ranked_session(team, settings)
    ranker_refresh(session.pk)  # before the fill: words, and nothing embedded
    session.refresh_from_db()
    assert session.ranker_choice["vectors"] is False
    assert not any(tmp_path.rglob("*.npz"))
    session_vectors_fill(session.pk)
    session.refresh_from_db()
    assert (session.vectors_ready, session.vectors_error) == (12, "")
    assert any(tmp_path.rglob("*.npz")), "the vectors were not kept in the embedding cache"
    ranker_refresh(session.pk)
    session.refresh_from_db()
    assert session.ranker_error == ""
    assert session.ranker_choice["vectors"] is True
    undone = list(Record.objects.filter(session=session, done=False).order_by("-priority"))
    assert all(0.0 <= r.scores["oncological"] <= 1.0 for r in undone)
    top = undone[0]
    assert any(w in (top.title + top.abstract).lower() for w in (
        "cancer", "tumour", "gliobl", "mammography", "temozolomide", "checkpoint", "fibre"))


@pytest.mark.django_db
def test_an_encoder_that_cannot_load_leaves_words_only_and_says_why(team, settings,  # noqa: F811
                                                                   monkeypatch) -> None:
    settings.SCREENING_RANKER = "svm-embed"

    def broken(texts: list[str]) -> np.ndarray:
        raise OSError("model.safetensors is unreadable")

    monkeypatch.setattr(encoder, "texts_embed", broken)
    session = _ranked_session(team, settings)
    session_vectors_fill(session.pk)
    ranker_refresh(session.pk)
    session.refresh_from_db()
    assert session.ranker_error.startswith("Ranked on words only")
    assert "model.safetensors is unreadable" in session.ranker_error
    assert session.ranking_refreshed_at is not None
    assert session.ranker_choice["labels"]["oncological"]["candidate"] == "svm"
    scored = Record.objects.filter(session=session, done=False).exclude(scores={})
    assert scored.count() == Record.objects.filter(session=session, done=False).count()
    assert selectors.session_summary(session=session)["ranker_error"] == session.ranker_error


@pytest.mark.django_db
def test_an_unknown_ranker_setting_fails_the_refresh_naming_the_choices(team, settings) -> None:  # noqa: F811
    settings.SCREENING_RANKER = "bm25"
    session = _ranked_session(team, settings)
    ranker_refresh(session.pk)
    session.refresh_from_db()
    assert "SCREENING_RANKER is 'bm25'" in session.ranker_error
    assert "svm-embed" in session.ranker_error


def test_a_large_collection_is_encoded_and_cached_block_by_block(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(sentence_vectors, "BLOCK", 2)
    sentence_vectors._memory.clear()
    texts = [f"{t} (copy {i})" for i, t in enumerate(TEXTS + TEXTS[:1])]
    vectors = sentence_vectors.texts_embed(texts=texts, cache_dir=str(tmp_path), cache_mb=16)
    assert vectors.shape == (5, 384)
    assert len(list(tmp_path.rglob("*.npz"))) == 3  # blocks of 2, 2 and 1, each kept

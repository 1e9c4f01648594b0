"""The embedding cache (issue 39): a second trial on the same texts embeds nothing and fits the
same model; a changed text alone is embedded again, another encoder misses everything; the cache
keeps to its bound, least recently used first, and an unreadable block is a miss, not a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from classification.engine.embedding_cache import EmbeddingCache
from classification.engine.types import TextData
from classification.ml_models import TrainConfig, create_classifier


def config_for(labels: list[str], encoder: Path, cache: Path, mb: int = 64) -> TrainConfig:
    config = TrainConfig(max_length=64, model_path=str(encoder), embedding_cache_dir=str(cache),
                         embedding_cache_mb=mb)
    config.label_names, config.multi_label = labels, True
    return config


def fitted(split: tuple[TextData, TextData, TextData], config: TrainConfig) -> object:
    train, val, _ = split
    clf = create_classifier("minilm_embed_logreg")
    clf.fit(train, val, config, lambda event: None, lambda: False)
    return clf


def labels_of(split: tuple[TextData, TextData, TextData]) -> list[str]:
    train, val, _ = split
    return sorted(set(train.label_space()) | set(val.label_space()))


def test_a_second_trial_embeds_nothing_and_fits_the_same_model(
        demo_split, tiny_bert_dir: Path, tmp_path: Path, embedded: list[str]) -> None:
    config = config_for(labels_of(demo_split), tiny_bert_dir, tmp_path / "cache")
    first = fitted(demo_split, config)
    assert len(embedded) > 0
    embedded.clear()

    second = fitted(demo_split, config)
    assert embedded == []
    assert second.timings["embedding_cache_hits"] > 0
    test_texts = demo_split[2].texts
    np.testing.assert_allclose(second.predict_proba_raw(test_texts),
                               first.predict_proba_raw(test_texts), atol=1e-6)


def test_a_changed_text_alone_is_embedded_again(
        demo_split, tiny_bert_dir: Path, tmp_path: Path, embedded: list[str]) -> None:
    config = config_for(labels_of(demo_split), tiny_bert_dir, tmp_path / "cache")
    fitted(demo_split, config)
    train, val, test = demo_split
    changed = train.texts[0] + " Revised."
    edited = train.subset(list(range(len(train))))
    edited.texts[0] = changed
    embedded.clear()

    fitted((edited, val, test), config)
    assert embedded == [changed]


def test_another_encoder_misses_every_text(
        demo_split, tiny_bert_dir: Path, tmp_path: Path, embedded: list[str]) -> None:
    from transformers import AutoModel

    other = tmp_path / "other-encoder"
    shutil.copytree(tiny_bert_dir, other)
    model = AutoModel.from_pretrained(other)
    model.embeddings.word_embeddings.weight.data.mul_(2.0)
    model.save_pretrained(other)

    cache = tmp_path / "cache"
    fitted(demo_split, config_for(labels_of(demo_split), tiny_bert_dir, cache))
    first_count = len(embedded)
    embedded.clear()
    fitted(demo_split, config_for(labels_of(demo_split), other, cache))
    assert len(embedded) == first_count
    assert len([p for p in cache.iterdir() if p.is_dir()]) == 2


def test_without_a_folder_or_with_a_zero_bound_nothing_is_kept(
        demo_split, tiny_bert_dir: Path, tmp_path: Path, embedded: list[str]) -> None:
    labels = labels_of(demo_split)
    off = config_for(labels, tiny_bert_dir, tmp_path / "cache", mb=0)
    fitted(demo_split, off)
    fitted(demo_split, off)
    assert not (tmp_path / "cache").exists()
    assert len(embedded) == 2 * len(set(embedded))


def vectors(*texts: str) -> dict[str, np.ndarray]:
    return {t: np.full(256, float(i), dtype=np.float32) for i, t in enumerate(texts)}


def test_the_cache_keeps_to_its_bound_dropping_the_least_recently_used(tmp_path: Path) -> None:
    probe = EmbeddingCache(tmp_path, encoder="e", max_bytes=10**9)
    probe.put(vectors("a"))
    block = next((tmp_path / "e").glob("*.npz")).stat().st_size
    cache = EmbeddingCache(tmp_path, encoder="e", max_bytes=int(2.5 * block))
    (tmp_path / "e" / next((tmp_path / "e").glob("*.npz")).name).unlink()

    cache.put(vectors("a"))
    cache.put(vectors("b"))
    assert set(cache.get(["a"])) == {"a"}  # a is now more recently used than b
    cache.put(vectors("c"))

    assert set(cache.get(["a", "b", "c"])) == {"a", "c"}
    assert sum(p.stat().st_size for p in (tmp_path / "e").glob("*.npz")) <= 2.5 * block


def test_an_unreadable_block_is_a_miss_and_is_removed(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path, encoder="e", max_bytes=10**9)
    cache.put(vectors("a"))
    good = next((tmp_path / "e").glob("*.npz"))
    broken = tmp_path / "e" / "broken.npz"
    broken.write_bytes(good.read_bytes()[: good.stat().st_size // 2])

    assert set(cache.get(["a", "b"])) == {"a"}
    assert not broken.exists()
    assert not list((tmp_path / "e").glob("*.part"))


def test_a_model_loaded_to_predict_writes_nothing_to_the_cache(
        demo_split, tiny_bert_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    clf = fitted(demo_split, config_for(labels_of(demo_split), tiny_bert_dir, cache))
    before = sorted(cache.rglob("*.npz"))
    clf.predict_proba_raw(["A text no trial has seen, about the liver and the kidney."])
    assert sorted(cache.rglob("*.npz")) == before

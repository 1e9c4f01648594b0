"""The TF-IDF vectorizer's options as scripts/tune_tfidf.py tries them: by default word uni- and
bigrams only (new models ask for char n-grams: baselines.CHAR_NGRAMS); with char_ngrams,
char_wb 3- to 5-grams padded at word edges beside the same words; word 1-3 adds trigrams;
min_df 1 keeps terms seen once."""

from __future__ import annotations

from classification.engine.baselines import _vectorizer
from classification.engine.data import read_challenge_csv
from tests.test_tfidf_tuning_script_cross_validates_train_and_validation_rows_and_ends_with_json import (  # noqa: E501
    SLICE,
)


def test_default_is_words_and_char_ngrams_add_pieces_of_words() -> None:
    texts = read_challenge_csv(SLICE).texts
    words = _vectorizer().fit(texts)
    assert words.analyzer == "word"
    assert words.ngram_range == (1, 2)
    word_terms = set(words.get_feature_names_out())
    assert {len(t.split()) for t in word_terms} == {1, 2}

    both = _vectorizer(char_ngrams=True).fit(texts)
    names = list(both.get_feature_names_out())
    chars = [n.removeprefix("chars__") for n in names if n.startswith("chars__")]
    assert {n.removeprefix("words__") for n in names if n.startswith("words__")} == word_terms
    assert len(names) == len(word_terms) + len(chars)
    assert {len(c) for c in chars} == {3, 4, 5}
    # char_wb pads each word with spaces, so word starts and ends are features of their own.
    assert " car" in chars
    assert any(c.endswith("ic ") for c in chars)


def test_trigrams_and_min_df_one_widen_the_vocabulary() -> None:
    texts = read_challenge_csv(SLICE).texts
    base = set(_vectorizer().fit(texts).get_feature_names_out())
    trigrams = set(_vectorizer(ngram_max=3).fit(texts).get_feature_names_out())
    assert base < trigrams
    assert {len(t.split()) for t in trigrams - base} == {3}
    rare = set(_vectorizer(min_df=1).fit(texts).get_feature_names_out())
    assert base < rare

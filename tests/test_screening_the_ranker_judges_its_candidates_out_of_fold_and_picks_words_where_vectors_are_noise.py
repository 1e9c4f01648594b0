"""At each refresh the ranker judges its candidates (words, bigram words, class weights,
sentence vectors, words+vectors) by the out-of-fold average precision of the decisions so far,
ranks with the best and says which it chose over which on what figures; a label with too few
yes or no ranks by words, unjudged."""

from __future__ import annotations

import numpy as np

from screening import ranker_choice

RELEVANT = "Gastric ulcer bleeding with helicobacter eradication and proton pump therapy {i}."
IRRELEVANT = "Knee arthroplasty rehabilitation with physiotherapy and walking aids {i}."


def _collection(n: int = 60) -> tuple[list[str], list[int], np.ndarray]:
    texts = [(RELEVANT if i % 3 == 0 else IRRELEVANT).format(i=f"record{i}") for i in range(n)]
    truth = [1 if i % 3 == 0 else 0 for i in range(n)]
    noise = np.random.default_rng(7).normal(size=(n, 16))
    return texts, truth, noise / np.linalg.norm(noise, axis=1, keepdims=True)


def test_words_that_separate_perfectly_beat_vectors_that_are_noise() -> None:
    texts, truth, noise = _collection()
    features = ranker_choice.Features(texts=texts, vectors=noise)
    decided = list(range(30))  # 10 relevant, 20 not
    y = [truth[i] for i in decided]
    scores, judged = ranker_choice.label_rank(features=features, decided=decided, y=y,
                                              with_vectors=True)
    assert judged.folds == 5
    assert set(judged.figures) == {c.name for c in ranker_choice.CANDIDATES}
    assert judged.figures["svm"] == 1.0
    assert judged.figures["svm-vectors"] < 0.9  # noise ranks its held-out records by chance
    assert not ranker_choice.BY_NAME[judged.candidate].needs_vectors
    assert judged.candidate == "svm"  # ties go to the first, cheapest candidate
    # The ranking it chose puts every undecided relevant record above every other.
    undecided = range(30, 60)
    relevant = [scores[i] for i in undecided if truth[i]]
    assert min(relevant) > max(scores[i] for i in undecided if not truth[i])
    recorded = judged.as_dict()
    assert recorded["candidate"] == "svm"
    assert recorded["figures"] == judged.figures
    assert recorded["text"].startswith("Ranking by words (linear SVM, balanced), chosen over ")
    assert "on 5-fold out-of-fold AP 1.00 vs 1.00" in recorded["text"]


def test_without_the_vectors_no_candidate_that_needs_them_is_judged() -> None:
    texts, truth, _noise = _collection()
    features = ranker_choice.Features(texts=texts)
    judged = ranker_choice.candidates_judge(features=features, decided=list(range(12)),
                                            y=truth[:12], with_vectors=False)
    assert judged.folds == 4  # k = min(5, the rarer answer's count)
    assert set(judged.figures) == {"svm", "svm-bigram", "svm-bigram-unweighted", "logreg"}


def test_vectors_that_separate_where_words_cannot_are_chosen_and_named() -> None:
    # Every text says the same words; only the vectors tell the relevant records apart.
    texts = [f"Patients were followed for outcomes {i}." for i in range(40)]
    truth = [1 if i % 4 == 0 else 0 for i in range(40)]
    vectors = np.array([[1.0, 0.1 * (i % 3)] if truth[i] else [0.1 * (i % 3), 1.0]
                        for i in range(40)])
    features = ranker_choice.Features(texts=texts, vectors=vectors)
    judged = ranker_choice.candidates_judge(features=features, decided=list(range(24)),
                                            y=truth[:24], with_vectors=True)
    assert ranker_choice.BY_NAME[judged.candidate].needs_vectors
    assert judged.figures[judged.candidate] == 1.0
    assert judged.figures["svm"] < 1.0
    assert judged.text.startswith(f"Ranking by {judged.as_dict()['description']}, chosen over ")
    assert "vectors" in judged.as_dict()["description"]


def test_a_label_with_too_few_yes_ranks_by_words_unjudged_and_says_so() -> None:
    texts, truth, noise = _collection()
    decided = [0, 1, 2, 3, 4, 5]  # two relevant
    judged = ranker_choice.candidates_judge(
        features=ranker_choice.Features(texts=texts, vectors=noise), decided=decided,
        y=[truth[i] for i in decided], with_vectors=True)
    assert (judged.candidate, judged.figures, judged.yes, judged.no) == ("svm", {}, 2, 4)
    assert judged.text == ("Ranking by words (linear SVM, balanced); the other rankers are "
                           "judged once the label has 3 yes and 3 no (2 and 4 so far)")

"""A trial scored on the validation split alone (a fine-tuned transformer) replaces the search's
cross-validated champion only when its lead there exceeds one standard error plus the lead the
best of that many equally good trials would show by chance (issue 39: a 20-minute search's best
of 8 MiniLM trials led by 0.080 on 200 rows and trailed on 888 held-out ones)."""

from __future__ import annotations

import numpy as np
import pytest

from classification.engine.search_scoring import CV, VALIDATION, Scored, choose, expected_maximum

FOLDS = (0.62, 0.64, 0.63, 0.61, 0.65)


def test_the_expected_lead_of_the_best_of_m_matches_a_simulation() -> None:
    rng = np.random.default_rng(0)
    assert expected_maximum(1) == 0.0
    for m in (2, 8):
        simulated = rng.standard_normal((200_000, m)).max(axis=1).mean()
        assert expected_maximum(m) == pytest.approx(simulated, abs=0.01)
    assert expected_maximum(8) > expected_maximum(2) > 0.5


def test_the_issues_challenger_leads_by_less_than_the_luck_of_eight() -> None:
    champion = Scored(3, "tfidf_minilm_svm", 0.629, FOLDS, validation=0.583)
    challenger = Scored(11, "minilm", 0.663, validation=0.663)
    alone = choose([champion, challenger], [champion], val_rows=200, challengers=1)
    assert (alone.basis, alone.trial.number) == (VALIDATION, 11)  # one trial: 1 SE is 0.035

    choice = choose([champion, challenger], [champion], val_rows=200, challengers=8)
    assert (choice.basis, choice.trial.number) == (CV, 3)
    error = (0.583 * 0.417 / 200) ** 0.5
    margin = error * (1 + expected_maximum(8))
    assert f"not ahead by more than the noise ({margin:.3f}, one standard error, plus 1.42 " \
           "for the best of 8 trials scored there)" in choice.verdict
    assert "the cross-validated choice stands" in choice.verdict


def test_a_lead_beyond_the_luck_of_the_best_of_many_still_wins() -> None:
    champion = Scored(3, "tfidf_minilm_svm", 0.629, FOLDS, validation=0.583)
    clear = Scored(12, "minilm", 0.700, validation=0.700)  # +0.117 against 0.085
    choice = choose([champion, clear], [champion], val_rows=200, challengers=8)
    assert (choice.basis, choice.trial.number) == (VALIDATION, 12)
    assert "ahead by more than the noise" in choice.verdict

"""The switch the simulation makes under `confseq` (stopping_cs.switch_due, issue 36): the
ranked phase's yield over its last 200 records, spread over the records unread, against twice
the unfound records the target tolerates. Computed by hand; the session's state and the
simulation's switch use the same test."""

from __future__ import annotations

import numpy as np
import pytest

from screening import ranker, simulation, stopping_cs, stopping_cs_state

# 100 relevant first, then irrelevant ones, out of 1,000: found 100 tolerates
# 100 * 0.05 / 0.95 = 5.26 unfound, twice that is 10.53. After 297 read the last 200 hold 3
# relevant: 4/202 * 703 = 13.92; after 298 they hold 2: 3/202 * 702 = 10.43, the switch.
RANKED = [1] * 100 + [0] * 400


def test_a_hundred_relevant_then_irrelevant_ones_switch_after_298_of_1000() -> None:
    assert stopping_cs.switch_index(ranked=RANKED, total=1000, recall_target=0.95) == 298
    assert stopping_cs.switch_index(ranked=RANKED[:297], total=1000, recall_target=0.95) is None
    assert stopping_cs.switch_due(recent=RANKED[:298], found=100, unread=702,
                                  recall_target=0.95)
    assert not stopping_cs.switch_due(recent=RANKED[:297], found=100, unread=703,
                                      recall_target=0.95)


def test_a_lower_target_tolerates_more_unfound_and_switches_sooner() -> None:
    # target 0.9: 100 * 0.1 / 0.9 = 11.1, twice 22.2; after 200 read (100 relevant in the
    # window) 101/202 * 800 = 400, after 290 (10) 11/202 * 710 = 38.7, after 291 (9)
    # 10/202 * 709 = 35.1, ... after 295 (5) 6/202 * 705 = 20.9: the switch
    assert stopping_cs.switch_index(ranked=RANKED, total=1000, recall_target=0.9) == 295


def test_not_before_two_hundred_records_are_read_however_few_are_left() -> None:
    ranked = [1] * 5 + [0] * 190
    assert stopping_cs.switch_index(ranked=ranked, total=196, recall_target=0.95) is None
    assert not stopping_cs.switch_due(recent=ranked, found=5, unread=1, recall_target=0.95)


def test_the_running_sums_switch_where_the_test_on_each_prefix_first_holds() -> None:
    rng = np.random.default_rng(3)
    for rate in (0.3, 0.1, 0.02):
        ranked = [int(x) for x in rng.random(900) < np.linspace(rate, 0.0, 900)]
        total = 1200
        first = next((n for n in range(1, len(ranked) + 1) if stopping_cs.switch_due(
            recent=ranked[:n], found=sum(ranked[:n]), unread=total - n, recall_target=0.95)),
            None)
        assert stopping_cs.switch_index(ranked=ranked, total=total,
                                        recall_target=0.95) == first


@pytest.mark.parametrize(("cut", "due"), [(297, False), (298, True)])
def test_a_session_in_its_ranked_phase_says_whether_that_switch_is_due(cut, due) -> None:
    state = stopping_cs_state.confseq_state(
        label="x", pool=1000 - cut, draws=[], r_al=100,
        ranked_recent=RANKED[:cut][-stopping_cs.RECENT:], recall_target=0.95,
        confidence=0.95)
    assert state["switch_due"] is due


def test_the_simulation_reads_its_ranked_order_up_to_that_switch_and_then_samples() -> None:
    rng = np.random.default_rng(7)
    truth = (rng.random(600) < 0.2).astype(int)
    words = [("statin cholesterol" if t else "asthma inhaler") + f" r{i}"
             for i, t in enumerate(truth)]
    features = ranker.features_fit(texts=words, ranker="svm")
    for seed in range(3):
        figures, order = simulation.simulate_seed(features=features, truth=truth, seed=seed,
                                                  rules=["confseq"], every=5)["confseq"]
        switch = stopping_cs.switch_index(ranked=[int(truth[i]) for i in order],
                                          total=len(truth), recall_target=0.95)
        assert switch is not None
        assert figures["ranked_phase"] == switch < len(truth)
        assert figures["stopped"]
        assert figures["claimable_recall"] >= 0.95

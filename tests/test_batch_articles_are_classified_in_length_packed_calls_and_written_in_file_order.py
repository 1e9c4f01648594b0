"""A batch window is sorted by length and cut into predict calls of neighbouring lengths, so
the engine pads little; the predictions come back in the articles' own order."""

from __future__ import annotations

import random

from classification.batches.packing import CALL, length_packed, predict_packed


def texts(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    return [f"article {i} " + "word " * rng.randint(0, 400) for i in range(n)]


def test_each_call_holds_neighbouring_lengths_and_every_text_once() -> None:
    some = texts(1000)
    calls = length_packed(some)
    assert sorted(i for call in calls for i in call) == list(range(1000))
    assert [len(call) for call in calls] == [CALL] * 15 + [1000 - 15 * CALL]
    spans = [max(len(some[i]) for i in call) - min(len(some[i]) for i in call) for call in calls]
    # In file order a call of 64 spans nearly the whole range; packed, a small slice of it.
    file_order = max(len(t) for t in some[:CALL]) - min(len(t) for t in some[:CALL])
    assert max(spans) < file_order / 4


def test_predictions_come_back_in_input_order_one_call_at_a_time() -> None:
    some = texts(150, seed=2)
    calls: list[int] = []

    def predict(batch: list[str]) -> list[dict]:
        return [{"labels": [t.split()[1]]} for t in batch]

    out = predict_packed(some, predict, after_call=calls.append)
    assert [row["labels"][0] for row in out] == [str(i) for i in range(150)]
    assert calls == [64, 64, 22]


def test_no_texts_make_no_calls() -> None:
    assert predict_packed([], lambda batch: [], after_call=lambda n: None) == []

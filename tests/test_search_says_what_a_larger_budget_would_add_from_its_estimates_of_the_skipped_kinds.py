"""What a larger budget would add (issue 39, point 4): for each kind a search skipped because its
first trial did not fit, the smallest budget at which it would have run (the time spent when it
was skipped, the time kept for after the search, its own estimate, and the estimates of the
kinds skipped before it, which would run first), from hand-made estimates."""

from __future__ import annotations

from classification.engine.search_estimates import larger_budgets


def skipped(key: str, kind: str, estimate: float, spent: float = 300.0,
            reserve: float = 5.0) -> dict:
    return {"model_type": key, "kind": kind, "estimate_seconds": estimate,
            "spent_seconds": spent, "reserve_seconds": reserve}


def test_a_skipped_transformer_would_be_fine_tuned_with_the_budget_its_estimate_needs() -> None:
    # 5 min spent, 5 s kept aside, 23.6 min estimated: 1,721 s, so 29 whole minutes.
    [row] = larger_budgets(skipped=[skipped("minilm", "transformer", 23.6 * 60)],
                           budget_seconds=10 * 60)
    assert row["budget_minutes"] == 29
    assert row["sentence"] == ("With 29 min, the search would also fine-tune minilm "
                               "(estimated 23.6 min).")


def test_kinds_skipped_together_add_up_in_the_order_the_search_would_run_them() -> None:
    rows = larger_budgets(
        skipped=[skipped("pubmedbert", "transformer", 40 * 60),
                 skipped("minilm_embed_logreg", "embedding", 2 * 60)],
        budget_seconds=6 * 60)
    assert [row["model_type"] for row in rows] == ["minilm_embed_logreg", "pubmedbert"]
    # 305 s + 120 s = 7.08 min: half minutes below ten.
    assert rows[0]["budget_minutes"] == 7.5
    assert rows[0]["sentence"].startswith("With 7.5 min, the search would also try "
                                          "minilm_embed_logreg")
    # 305 s + 120 s + 2,400 s = 47.08 min.
    assert rows[1]["budget_minutes"] == 48
    assert rows[1]["sentence"].endswith("(estimated 40.0 min, after minilm_embed_logreg).")


def test_a_kind_skipped_later_counts_the_time_spent_until_then() -> None:
    # A 10-minute search skips an embedding kind at 100 s, runs others, skips minilm at 500 s.
    rows = larger_budgets(
        skipped=[skipped("minilm", "transformer", 200.0, spent=500.0),
                 skipped("minilm_embed_logreg", "embedding", 500.0, spent=100.0)],
        budget_seconds=600)
    # 100 + 5 + 500 = 605 s: 10.1 min, whole minutes from ten; then 500 + 5 + 500 + 200 s.
    assert [row["budget_minutes"] for row in rows] == [11, 21]


def test_the_budget_said_is_always_larger_than_the_one_the_search_had() -> None:
    # An estimate that barely missed: the sentence still names a larger budget.
    [row] = larger_budgets(skipped=[skipped("minilm", "transformer", 10.0, spent=0.0,
                                            reserve=0.0)], budget_seconds=60.0)
    assert row["budget_minutes"] > 1.0


def test_nothing_skipped_for_time_adds_nothing() -> None:
    assert larger_budgets(skipped=[], budget_seconds=600.0) == []

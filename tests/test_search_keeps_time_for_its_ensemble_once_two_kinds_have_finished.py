"""A search keeps time for its ensemble (issue 39): once two kinds have finished, trials leave
ENSEMBLE_SHARE of the budget (at most ENSEMBLE_MAX_SECONDS) for the ensemble, which then spends
it; a search that makes no ensemble, or has one kind only, keeps nothing for it. Before, an
8-minute search spent its budget on one more transformer trial and no ensemble was ever tried,
with no word of it in the verdict."""

from __future__ import annotations

from types import SimpleNamespace

from classification.engine.search import SearchRun
from classification.engine.search_ensemble import ENSEMBLE_MAX_SECONDS, ENSEMBLE_SHARE


def _run(*, kinds: int, ensemble: bool = True, budget: float = 480.0) -> SearchRun:
    run = SearchRun.__new__(SearchRun)  # the clock's arithmetic only: no study, no trials
    run.config = SimpleNamespace(search_ensemble=ensemble)
    run.best = {f"kind{i}": (0.5, i, None) for i in range(kinds)}
    run.finish_cost, run.budget = {}, budget
    return run


def test_two_finished_kinds_keep_a_share_of_the_budget_for_their_ensemble() -> None:
    assert _run(kinds=1).ensemble_reserve() == 0.0
    two = _run(kinds=2)
    assert two.ensemble_reserve() == ENSEMBLE_SHARE * 480.0
    assert two.reserve() == _run(kinds=1).reserve() + ENSEMBLE_SHARE * 480.0


def test_the_share_is_capped_and_nothing_is_kept_without_an_ensemble() -> None:
    assert _run(kinds=3, budget=3600.0).ensemble_reserve() == ENSEMBLE_MAX_SECONDS
    assert _run(kinds=3, ensemble=False).ensemble_reserve() == 0.0


def test_the_ensemble_spends_what_was_kept_for_it() -> None:
    run = _run(kinds=2)
    kept = run.reserve()
    run.ensembling = True
    assert run.reserve() == kept - ENSEMBLE_SHARE * 480.0

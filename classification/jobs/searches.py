"""Starting a model search ("Find the best model") as an ordinary training job of model type
"search"; what a search may try and where its study lives: classification.mlmodels.searches.
"""

from __future__ import annotations

from typing import Any

from classification.jobs.lifecycle import training_job_create
from classification.mlmodels.searches import (
    ADAPTED_ENCODER,
    SEARCH,
    search_adapted_plan,
    search_candidates_clean,
)
from classification.models import TrainingJob


def search_create(
    *, owner: Any, dataset: Any, time_budget_minutes: float,
    candidates: list[str] | None = None, ensemble: bool = True, name: str = "",
) -> TrainingJob:
    """A queued search job: the form, the API and the CLI all end in training_job_create."""
    chosen = search_candidates_clean(candidates)
    label = "Search" if len(chosen) > 1 else f"Tuned {chosen[0]}"
    name = name or f"{label} on {getattr(dataset, 'name', 'dataset')}"[:200]
    who = owner.get_username() if owner is not None else "The system"
    # An encoder adapted on this dataset joins as one more transformer kind: MedLitBot's own
    # setting (`internal`), as the schema would refuse `adapted` from a person.
    adapted = search_adapted_plan(owner=owner, dataset=dataset, candidates=chosen)
    also = f", and {adapted[ADAPTED_ENCODER]['label']}" if adapted else ""
    # `owner` is who asks: training_job_create checks they may train in the dataset's project.
    return training_job_create(
        owner=owner, dataset=dataset, model_type=SEARCH, name=name, verb="search_started",
        summary=f"{who} started the search “{name}” over {', '.join(chosen)}{also} "
                f"({time_budget_minutes} min budget)",
        config={"time_budget_minutes": time_budget_minutes, "search_candidates": chosen,
                "search_ensemble": ensemble},
        internal=adapted or None,
    )

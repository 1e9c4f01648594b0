"""Combining trained models of one dataset into an ensemble, trained as a normal job.

Tuning an ensemble means scoring each member on validation, which for a transformer needs
torch: it runs on the training worker like any job, never in the web process. The members'
artifacts are named in the job (an internal setting) and embedded in the ensemble's own
artifact when it is saved, so the ensemble does not change when a member does.
"""

from __future__ import annotations

from typing import Any

from classification.jobs.lifecycle import training_job_create
from classification.models import MLModel, TrainingJob
from classification.selectors import mlmodel_manifest
from projects import policy

MIN_MEMBERS, MAX_MEMBERS = 2, 8


def ensemble_create(*, owner: Any, member_ids: list[int], name: str = "") -> TrainingJob:
    """A queued ensemble job of trained models `owner` can see; ValueError says what is wrong.

    `owner` is who asks: RoleRequired unless they may build ensembles in the members' project
    (the one of their dataset, which the ensemble joins).
    """
    ids = list(dict.fromkeys(int(i) for i in member_ids))
    if not MIN_MEMBERS <= len(ids) <= MAX_MEMBERS:
        raise ValueError(f"Choose between {MIN_MEMBERS} and {MAX_MEMBERS} different trained "
                         f"models to combine (got {len(ids)}).")
    # A model outside the person's projects reads as one that does not exist.
    found = {m.pk: m for m in policy.scope(MLModel.objects.select_related("dataset"),
                                           user=owner).filter(pk__in=ids)}
    missing = [i for i in ids if i not in found]
    if missing:
        raise ValueError(f"No model you can see has the id {missing[0]}.")
    members = [found[i] for i in ids]
    # The role first: a refusal should not depend on whether the members would do.
    for project_id in dict.fromkeys(m.project_id for m in members):
        policy.require(user=owner, action=policy.Action.ENSEMBLE, project=project_id)
    untrained = [m.name for m in members if not m.is_trained]
    if untrained:
        raise ValueError(f"Only trained models can be combined; {untrained[0]!r} is not.")
    nested = [m.name for m in members if m.model_type == "ensemble"]
    if nested:
        raise ValueError(f"{nested[0]!r} is itself an ensemble; combine its members instead.")
    datasets = {m.dataset_id for m in members}
    if len(datasets) != 1 or None in datasets:
        raise ValueError("Members must be trained on the same dataset: the ensemble is tuned "
                         "on that dataset's validation split and judged on its test split.")
    # Caught here rather than as a failed job on the worker a minute later.
    lost = [m.name for m in members if not mlmodel_manifest(ml_model=m)]
    if lost:
        raise ValueError(f"The files of {lost[0]!r} are missing; retrain it before combining.")
    dataset = members[0].dataset
    name = name or f"Ensemble of {', '.join(m.name for m in members)}"[:200]
    return training_job_create(
        owner=owner, dataset=dataset, model_type="ensemble", name=name,
        verb="ensemble_created",
        summary=f"{owner.get_username()} combined {len(members)} models into the ensemble "
                f"“{name}”",
        config={}, internal={
            "member_paths": [m.artifact_path for m in members],
            # For the ensemble's page once a member is renamed or deleted; not settings.
            "member_ids": ids,
            "member_names": [m.name for m in members],
            "member_types": [m.model_type for m in members],
        },
    )


def ensemble_member_rows(
    *, ml_model: MLModel, manifest: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """An ensemble's members as it was trained: [{"model_type", "weight",
    "validation_macro_f1", "name", "model" (the live MLModel, None once deleted)}].

    Weights and scores come from the artifact's manifest, which the job wrote; names and ids
    from the model's parameters, which ensemble_create wrote. [] for any other model.
    `manifest` spares a second read when the caller has it.
    """
    if ml_model.model_type != "ensemble":
        return []
    params = ml_model.parameters or {}
    ids, names = params.get("member_ids") or [], params.get("member_names") or []
    if manifest is None:
        manifest = mlmodel_manifest(ml_model=ml_model)
    rows = (manifest.get("metrics") or {}).get("members") or []
    # Its members were in its project when it was made (one dataset); one since moved out
    # is not linked from here.
    alive = {m.pk: m for m in MLModel.objects.filter(project_id=ml_model.project_id,
                                                      pk__in=ids)}
    return [{**row, "model": alive.get(ids[i]) if i < len(ids) else None,
             "name": names[i] if i < len(names) else ""}
            for i, row in enumerate(rows)]


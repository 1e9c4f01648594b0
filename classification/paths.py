"""Where a job keeps its checkpoints and where a model's artifact lives, and what a resume of a
job would start from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
# Trainer writes a checkpoint's trainer_state.json after its weights, optimizer and RNG state,
# so a folder without it is a save that was cut off (a kill, a full disk) and cannot be resumed.
COMPLETE_MARKER = "trainer_state.json"
NOTHING_TO_RESUME = "nothing to resume from: it will start over"


def job_output_dir(job_id: int) -> Path:
    # One folder per job, kept across attempts: resume looks for checkpoints here.
    return Path(settings.MODEL_ARTIFACT_ROOT) / "jobs" / f"job-{job_id}"


def model_artifact_dir(model_id: int) -> Path:
    return Path(settings.MODEL_ARTIFACT_ROOT) / str(model_id)


def checkpoint_step(name: str) -> int | None:
    """The step a checkpoint folder's name says ("checkpoint-12" -> 12); None for other names."""
    match = _CHECKPOINT.match(name)
    return int(match.group(1)) if match else None


def checkpoint_dirs(output_dir: Path | str) -> list[tuple[int, Path, bool]]:
    """Every checkpoint-N folder as (step, path, complete), lowest step first."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return []
    found = []
    for child in folder.iterdir():
        step = checkpoint_step(child.name)
        if step is not None and child.is_dir():
            found.append((step, child, (child / COMPLETE_MARKER).is_file()))
    return sorted(found)


def latest_checkpoint(output_dir: Path | str) -> str | None:
    """The highest-step complete checkpoint (its trainer_state.json is written last)."""
    complete = [path for _step, path, done in checkpoint_dirs(output_dir) if done]
    return str(complete[-1]) if complete else None


# Kinds fitted in one pass (registry kinds): they save no checkpoints, so a resume refits them.
ONE_PASS_KINDS = ("baseline", "embedding", "ensemble")
QUICK_KINDS = ("baseline", "ensemble")  # a refit takes seconds; embeddings may take minutes


@dataclass(frozen=True)
class StudyProgress:
    """What a search's Optuna study holds, read by the caller: this module reads only the disk."""

    finished: int | None  # None: the study exists but could not be read
    best_kind: str = ""
    best_score: float | None = None
    spent_minutes: float = 0.0
    budget_minutes: float = 0.0


@dataclass(frozen=True)
class ResumeWords:
    """One resume point as the job's reason, the resume's log line and its banner name it:
    made in one place, so the three cannot disagree."""

    reason: str  # follows "<what happened>; " (or "Resume: ") in the job's reason
    log: str
    banner: str


def _study_words(study: StudyProgress | None) -> ResumeWords:
    """A search resumes its Optuna study, never a checkpoint: its finished trials are kept."""
    if study is None:
        what = "no trial of the search had started, so it starts over with its full budget"
        return ResumeWords(f"nothing to resume from: {what}", f"Resume requested: {what}",
                           f"Resumed from the start: {what}.")
    if study.finished is None:
        kept = "its finished trials are kept"
    elif study.finished == 0:
        kept = "no trial had finished yet"
    else:
        trials = "trial" if study.finished == 1 else "trials"
        kept = f"{study.finished} finished {trials} kept"
        if study.best_kind:
            kept += f", the best so far is {study.best_kind}"
            if study.best_score is not None:
                kept += f" (validation macro-F1 {study.best_score:.3f})"
    if study.finished is not None and study.budget_minutes:
        kept += (f"; {study.spent_minutes:.1f} of {study.budget_minutes:g} min of the budget "
                 "used")
    what = f"the search continues its study: {kept}"
    return ResumeWords(f"resume continues the search's study: {kept}",
                       f"Resume requested: {what}", f"Resumed: {what}.")


def resume_words(*, job_id: int, kind: str = "transformer",
                 study: StudyProgress | None = None) -> ResumeWords:
    """What a resume of this job would start from: a search its study (`study`, read by the
    caller), a one-pass fit the start, a transformer the newest complete checkpoint on disk.

    Call it once the training process is gone: only then is the newest complete checkpoint
    final, rather than a guess about a save that may still be under way.
    """
    if kind == "search":
        return _study_words(study)
    if kind in ONE_PASS_KINDS:
        what = ("a one-pass fit keeps no checkpoints, so training restarts from scratch"
                + (" (quick)" if kind in QUICK_KINDS else ""))
        return ResumeWords(f"nothing to resume from: {what}", f"Resume requested: {what}",
                           f"Resumed from the start: {what}.")
    checkpoint = latest_checkpoint(job_output_dir(job_id))
    if checkpoint is None:
        return ResumeWords(
            NOTHING_TO_RESUME,
            "Resume requested: no checkpoint was saved, so training restarts from scratch",
            "Resumed from the start: no checkpoint was saved, so training starts over.",
        )
    name = Path(checkpoint).name
    return ResumeWords(
        f"resume continues from {name}, the newest complete checkpoint",
        f"Resume requested: continues from {name}",
        f"Resumed from {name}: training continues from step {checkpoint_step(name)}.",
    )


def resume_note(*, job_id: int, kind: str = "transformer",
                study: StudyProgress | None = None) -> str:
    """resume_words' reason: what follows "; " in a stalled, cancelled or failed job's reason."""
    return resume_words(job_id=job_id, kind=kind, study=study).reason

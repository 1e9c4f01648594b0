"""What a model search may change for each kind of candidate, and what it tries first.

A new kind of the registry needs its space here too: a baseline or embedding kind its entry in
HEAD (and its head's range in C_RANGE and default in baselines.DEFAULT_C); a transformer kind
shares the transformers' space. A kind without one is refused by name (NoSearchSpaceError), and
tests/test_every_baseline_kind_has_a_search_space.py fails until it has one.

Parameter names carry the candidate's key ("tfidf_svm:regularization_c"), so Optuna's sampler
learns each candidate's space only from that candidate's own trials. Every value is a setting
of TrainConfig: a winner's parameters retrain it exactly through the ordinary New model form.
"""

from __future__ import annotations

from typing import Any

from .baselines import DEFAULT_C
from .registry import ModelSpec

# Each kind's own learning rate (ModelSpec.learning_rate) is the centre; BERT-base wants 2e-5 to
# 5e-5, MiniLM about 1e-4 (scripts/compare_recipes.py).
LR_BELOW, LR_ABOVE = 4.0, 3.0
HEAD = {"tfidf_logreg": "tfidf", "tfidf_svm": "svm", "minilm_embed_logreg": "embed",
        "tfidf_minilm_svm": "words_vectors"}
C_RANGE = {"tfidf": (0.3, 100.0), "svm": (0.01, 10.0), "embed": (0.1, 100.0),
           "words_vectors": (0.01, 1.0)}


SPACE_FILE = "classification/engine/search_space.py"
# Kinds whose space is the regularisation of a scikit-learn head (HEAD names which head).
HEAD_KINDS = ("baseline", "embedding")


class NoSearchSpaceError(ValueError):
    """A model kind a search was asked to tune that this module has no space for."""


def missing_space(spec: ModelSpec) -> str:
    """Why `spec` cannot be searched ("" when it can): a message naming what to add where."""
    if spec.kind == "transformer":
        return ""
    if spec.kind not in HEAD_KINDS:
        return (f"{spec.key} has no search space: {SPACE_FILE} knows the kinds transformer, "
                f"{' and '.join(HEAD_KINDS)}, not {spec.kind!r}")
    head = HEAD.get(spec.key)
    if head is None:
        return f"{spec.key} has no search space: add it to HEAD in {SPACE_FILE}"
    if head not in C_RANGE or head not in DEFAULT_C:
        return (f"{spec.key} has no search space: its head {head!r} needs a range in C_RANGE "
                f"({SPACE_FILE}) and a default in DEFAULT_C (classification/engine/baselines.py)")
    return ""


def _head(spec: ModelSpec) -> str:
    if why := missing_space(spec):
        raise NoSearchSpaceError(why)
    return HEAD.get(spec.key, "")


def defaults(spec: ModelSpec) -> dict[str, Any]:
    """The first trial of a candidate: its usual settings, so a search never does worse than
    the New model form's default would have (short on a CPU: 2 epochs at 128 tokens)."""
    head = _head(spec)
    if spec.kind == "baseline":
        return {"regularization_c": DEFAULT_C[head], "ngram_max": 2}
    if spec.kind == "embedding":
        return {"regularization_c": DEFAULT_C[head]}
    return {"learning_rate": spec.learning_rate or 5e-5, "epochs": 2, "max_length": 128,
            "batch_size": 16, "class_weighted_loss": True}


def suggest(trial: Any, spec: ModelSpec) -> dict[str, Any]:
    """One point of the candidate's space, from Optuna's sampler (or the enqueued defaults)."""
    key, head = spec.key, _head(spec)

    def name(setting: str) -> str:
        return f"{key}:{setting}"

    if spec.kind in HEAD_KINDS:
        low, high = C_RANGE[head]
        chosen: dict[str, Any] = {
            "regularization_c": trial.suggest_float(name("regularization_c"), low, high,
                                                    log=True)}
        if spec.kind == "baseline":
            chosen["ngram_max"] = trial.suggest_int(name("ngram_max"), 1, 3)
        return chosen
    centre = spec.learning_rate or 5e-5
    return {
        "learning_rate": trial.suggest_float(name("learning_rate"), centre / LR_BELOW,
                                             centre * LR_ABOVE, log=True),
        "epochs": trial.suggest_int(name("epochs"), 1, 4),
        "max_length": trial.suggest_categorical(name("max_length"), [128, 256]),
        "batch_size": trial.suggest_categorical(name("batch_size"), [8, 16, 32]),
        "class_weighted_loss": trial.suggest_categorical(name("class_weighted_loss"),
                                                         [True, False]),
    }


def prefixed(spec: ModelSpec, settings: dict[str, Any]) -> dict[str, Any]:
    """Settings as the trial's parameter names, for enqueuing a candidate's defaults."""
    return {f"{spec.key}:{k}": v for k, v in settings.items()}


def unprefixed(params: dict[str, Any]) -> dict[str, Any]:
    """A trial's parameters as settings (its model_type left out)."""
    return {k.split(":", 1)[1]: v for k, v in params.items() if ":" in k}


def work_units(spec: ModelSpec, settings: dict[str, Any]) -> float:
    """How much a trial's settings make it cost, relative to others of its kind."""
    if spec.speed.single_pass:
        # Longer n-grams mean more features to count and fit: about half again per step.
        return float(settings.get("ngram_max", 2)) / 2 if spec.kind == "baseline" else 1.0
    return float(settings.get("epochs", 3)) * float(settings.get("max_length", 256)) / 128


# Trials per tuned setting of a candidate: beyond this, more trials of one space mostly fit
# the noise of the scoring rows (190 trials of C once did) rather than the task.
TRIALS_PER_SETTING = 6


def max_trials(spec: ModelSpec) -> int:
    """The most trials a search gives one candidate, its defaults included."""
    # The settings suggest() tunes: C and n-grams, C, or a transformer's five.
    tuned = {"baseline": 2, "embedding": 1}.get(spec.kind, 5)
    return TRIALS_PER_SETTING * tuned


def cheaper_fixes(spec: ModelSpec) -> list[dict[str, Any]]:
    """Settings that bound a trial's cost, costliest first: when the open space may not fit
    the time left, the search fixes the costliest of these that does (a transformer's epochs
    and length). A one-pass kind has none."""
    if spec.kind != "transformer":
        return []
    fixes = [{"epochs": e, "max_length": length} for e in (4, 3, 2, 1) for length in (256, 128)]
    return sorted(fixes, key=lambda fix: -work_units(spec, fix))


def worst_case(spec: ModelSpec) -> dict[str, Any]:
    """The costliest settings the open space may pick."""
    return {"epochs": 4, "max_length": 256} if spec.kind == "transformer" else defaults(spec)

"""The training settings, described once: type, bounds, default, help, and who may set them.

Every door that takes training settings (the web form, the API, `train_model`, the seed's task)
is derived from `TrainConfig`'s field metadata here, in the style of Hugging Face's argument
dataclasses. A new setting is one field below; its form input, API documentation, CLI option
and validation follow from it. No Django: the training child imports this too.
"""

# ruff: noqa: RUF009  (setting() is dataclasses.field with metadata, as HF's field(metadata=))
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import metadata, self_training

TRANSFORMER, EMBEDDING, BASELINE = "transformer", "embedding", "baseline"
ENSEMBLE, SEARCH = "ensemble", "search"
ADAPT = "adapt"  # continued pretraining of an encoder: no classifier
ALL_KINDS = frozenset({TRANSFORMER, EMBEDDING, BASELINE})
ENCODER_KINDS = frozenset({TRANSFORMER, EMBEDDING})

# Who sets a field: a person per job, the deployment (what the server may do: downloads, model
# folders), or MedLitBot itself (derived from the dataset and the job's folder).
USER, DEPLOYMENT, INTERNAL = "user", "deployment", "internal"
# Staff only: the field reads a folder on the server with the server's permissions.
STAFF = "staff"

MESSAGES = {
    "unknown": "Unknown setting.",
    DEPLOYMENT: "Set by the deployment, not per job.",
    INTERNAL: "Set by MedLitBot from the dataset and the job, not per job.",
    STAFF: "Only staff may train from a folder on the server.",
    "int": "Enter a whole number.",
    "float": "Enter a number.",
    "finite": "Enter a finite number.",
    "bool": "Enter true or false.",
    "str": "Enter text.",
}

# The seed's names for the same settings.
ALIASES = {
    "total_epochs": "epochs",
    "num_train_epochs": "epochs",
    "lr": "learning_rate",
    "per_device_train_batch_size": "batch_size",
    "train_batch_size": "batch_size",
    "max_seq_length": "max_length",
    "is_multilabel": "multi_label",
    "multilabel": "multi_label",
    "patience": "early_stopping_patience",
}


class TrainConfigError(ValueError):
    """Settings that cannot be used; `errors` maps each setting to its messages."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))


def setting(default: Any = dataclasses.MISSING, *, help: str, label: str = "",
            minimum: float | None = None, maximum: float | None = None,
            kinds: frozenset[str] = ALL_KINDS, who: str = USER, advanced: bool = True,
            choices: tuple[str, ...] = (), check: Any = None,
            default_factory: Any = dataclasses.MISSING) -> Any:
    """A dataclass field carrying the metadata every door reads. `choices`: the only values a
    text setting takes, or each item of a list setting (the form offers a select, the API and
    the CLI list them). `check`: a rule of the setting's own, value -> value or ValueError."""
    meta = {"help": help, "label": label, "minimum": minimum, "maximum": maximum,
            "kinds": kinds, "who": who, "advanced": advanced, "choices": choices,
            "check": check}
    if default_factory is not dataclasses.MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainConfig:
    epochs: int = setting(3, help="Passes over the training rows.", minimum=1, maximum=50,
                          kinds=frozenset({TRANSFORMER}))
    batch_size: int = setting(16, help="Articles per training step.", minimum=1, maximum=256,
                              kinds=frozenset({TRANSFORMER}))
    learning_rate: float = setting(5e-5, help="Step size of the optimiser.", minimum=1e-7,
                                   maximum=1.0, kinds=frozenset({TRANSFORMER}))
    max_length: int = setting(256, help="Tokens read per article; longer text is cut.",
                              label="Max length (tokens)", minimum=16, maximum=512,
                              kinds=ENCODER_KINDS)
    fill_gpu: bool = setting(
        True, help="On a CUDA GPU only: train with a larger batch than the one above (up to 64, "
        "while it fits the free memory and the run keeps 200 updates) and scale the learning "
        "rate with it. A small model at batch 16 leaves a GPU idle.",
        label="Fill the GPU", kinds=frozenset({TRANSFORMER}))
    gradient_accumulation_steps: int = setting(
        1, help="Steps whose gradients add up before one update.", minimum=1, maximum=64,
        kinds=frozenset({TRANSFORMER}))
    gradient_checkpointing: bool = setting(
        False, help="Less memory, about 30% slower.", kinds=frozenset({TRANSFORMER}))
    early_stopping_patience: int = setting(
        2, help="Epochs without a better validation score before training stops.", minimum=0,
        maximum=20, kinds=frozenset({TRANSFORMER}))
    weight_decay: float = setting(0.01, help="L2 penalty on the weights.", minimum=0.0,
                                  maximum=1.0, kinds=frozenset({TRANSFORMER}), advanced=False)
    warmup_ratio: float = setting(0.1, help="Share of steps spent warming the learning rate up.",
                                  minimum=0.0, maximum=0.5, kinds=frozenset({TRANSFORMER}),
                                  advanced=False)
    class_weighted_loss: bool = setting(
        True, help="Weight the loss by inverse label frequency, so rare labels are learned. "
        "Measured on the demo data's single-label rows, it never scored below plain "
        "cross-entropy and rescued the rarest class when training was short.",
        label="Class-weighted loss", kinds=frozenset({TRANSFORMER}))
    regularization_c: float | None = setting(
        None, help="Inverse regularisation strength C of the linear head (TF-IDF and embedding "
        "models): larger fits the training rows more closely. Empty: the kind's own default.",
        label="Regularisation C", minimum=1e-4, maximum=1e4,
        kinds=frozenset({BASELINE, EMBEDDING}))
    ngram_max: int = setting(2, help="Longest word n-gram TF-IDF counts (1: single words).",
                             label="Longest n-gram", minimum=1, maximum=3,
                             kinds=frozenset({BASELINE}))
    calibration: str = setting(
        "select", help="How probabilities are recalibrated (TF-IDF and embedding models out of "
        "fold over train and validation, others on validation): select (the lowest ECE out of "
        "fold of none, temperature, Platt, isotonic; none unless one beats it beyond noise), "
        "temperature, platt, isotonic, auto (isotonic where it beats temperature) or none.",
        label="Calibration", kinds=ALL_KINDS | {SEARCH},
        choices=("select", "temperature", "platt", "auto", "isotonic", "none"))
    recall_target: float = setting(
        0.95, help="Per label, a second threshold is set for this recall on the rows the "
        "calibration is fitted on, offered beside the F1-tuned one (threshold=recall).",
        label="Recall target", minimum=0.5, maximum=0.999, kinds=ALL_KINDS | {SEARCH})
    time_budget_minutes: float = setting(
        10.0, help="How long a model search may spend trying candidates; the best found in "
        "that time is kept.", label="Time budget (minutes)", minimum=0.1, maximum=1440.0,
        kinds=frozenset({SEARCH}), advanced=False)
    search_candidates: list[str] = setting(
        help="The model kinds a search tries (one kind: a plain hyperparameter search).",
        label="Candidates", kinds=frozenset({SEARCH}), advanced=False, default_factory=list)
    search_ensemble: bool = setting(
        True, help="Also try an ensemble of the best model of each kind.",
        label="Consider an ensemble", kinds=frozenset({SEARCH}), advanced=False)
    # An adapt job (engine/adapt.py): masked-language-model pretraining continued on the
    # unlabelled texts a person picks. Not advanced: the New model form never shows them.
    adapt_base: str = setting(
        "minilm", help="The encoder adaptation continues from: a transformer kind (minilm is "
        "bundled; custom with a local model folder, staff only).", label="Base encoder",
        kinds=frozenset({ADAPT}), advanced=False)
    adapt_datasets: list[str] = setting(
        help="Ids of the datasets whose texts adaptation reads; their test rows never.",
        label="Datasets", kinds=frozenset({ADAPT}), advanced=False, default_factory=list)
    adapt_batches: list[str] = setting(
        help="Ids of the batches whose articles adaptation reads (a test row of a picked "
        "dataset is left out).", label="Batches", kinds=frozenset({ADAPT}), advanced=False,
        default_factory=list)
    # On by default: a later fine-tune picks its epoch and thresholds on validation, which
    # must stay text the encoder has not been trained on.
    adapt_training_only: bool = setting(
        True, help="Read only the training split of the picked datasets (validation left out "
        "too); batches' articles are read either way.", label="Training texts only",
        kinds=frozenset({ADAPT}), advanced=False)
    mlm_probability: float = setting(
        0.15, help="Share of tokens masked for the model to predict.", label="Masked share",
        minimum=0.05, maximum=0.5, kinds=frozenset({ADAPT}), advanced=False)
    encoder_model_id: int = setting(
        0, help="Fine-tune the encoder this adapt job saved (the adapted type).",
        label="Adapted encoder", minimum=0, maximum=2**31 - 1, kinds=frozenset({TRANSFORMER}),
        advanced=False)
    metadata_fields: list[str] = setting(
        help="Metadata read beside the text, where the dataset has it: auto (each of journal, "
        "MeSH, publication types and keywords that at least 30% of the training rows have), "
        "none (text only), or fields by name (journal, mesh, publication_types, keywords). "
        "TF-IDF reads them as field tokens, encoders as a short prefix; a field missing from an "
        "article at prediction is left out. A search offers them to every trial in its own "
        "form; an ensemble reads them when its members read them alike.",
        label="Metadata", choices=metadata.CHOICES, check=metadata.metadata_fields_check,
        kinds=ALL_KINDS, default_factory=lambda: [metadata.AUTO])
    # Self-training (jobs/self_training.py): the model labels unlabelled texts it is sure of.
    # Not advanced: the New model form has no picker of sources yet (the API and CLI take them).
    self_training_rounds: int = setting(
        0, help="Rounds of self-training after the first fit (0: off): each adds the unlabelled "
        "texts the model is sure of, with its labels, and fits again; the round with the best "
        "validation macro-F1 is kept (round 0: no pseudo-labels).", label="Self-training rounds",
        minimum=0, maximum=3, advanced=False)
    self_training_threshold: float = setting(
        0.9, help="How sure every label decision must be for a text to join (p at least this or "
        "at most 1 minus this; single-label: the top class's p).",
        label="Pseudo-label confidence", minimum=0.5, maximum=0.999, advanced=False)
    self_training_datasets: list[str] = setting(
        help="Ids of datasets of this project whose texts self-training labels (their labels "
        "unused; their test and validation rows, and any text equal to a validation or test "
        "row of this dataset, never).", label="Unlabelled datasets",
        check=self_training.dataset_ids_check, advanced=False, default_factory=list)
    self_training_batches: list[str] = setting(
        help="Ids of finished batches of this project whose articles self-training labels.",
        label="Unlabelled batches", check=self_training.batch_ids_check, advanced=False,
        default_factory=list)
    seed: int = setting(42, help="Random seed, for repeatable runs.", minimum=0,
                        maximum=2**31 - 1, advanced=False)
    use_mps: bool = setting(False, help="Only on Apple Silicon; checked by a smoke test first.",
                            label="Use Apple GPU (MPS)", kinds=ENCODER_KINDS)
    device_queue: str = setting(
        "auto", help="Which training workers may take the job: auto (a GPU worker while one is "
        "running, otherwise the CPU worker), gpu (waits for a GPU worker), or cpu.",
        label="Training queue", choices=("auto", "gpu", "cpu"), kinds=ALL_KINDS | {SEARCH})
    model_path: str | None = setting(
        None, help="Only for the custom type: a folder with config.json.",
        label="Local model folder", kinds=ENCODER_KINDS, who=STAFF)
    label_names: list[str] = setting(help="The label space, fixed by the dataset.",
                                     who=INTERNAL, default_factory=list)
    multi_label: bool = setting(False, help="Fixed by the dataset.", who=INTERNAL)
    member_paths: list[str] = setting(
        help="An ensemble's member artifacts, named by the service that creates it.",
        who=INTERNAL, kinds=frozenset({ENSEMBLE}), default_factory=list)
    # What metadata_fields came to on the training rows, and in which form: saved in the
    # model's manifest, so prediction adds the same fields the same way (engine/metadata.py).
    metadata_used: list[str] = setting(
        help="The metadata fields the model was trained with.", who=INTERNAL, kinds=ALL_KINDS,
        choices=metadata.FIELDS, default_factory=list)
    metadata_style: str = setting(
        "", help="How the model reads them: tokens or prefix ('' for text only).", who=INTERNAL,
        kinds=ALL_KINDS)
    output_dir: str = setting("", help="The job's folder: checkpoints live here.", who=INTERNAL)
    search_study: str = setting("", help="The search's Optuna study: its job, so a resumed job "
                                "continues it.", who=INTERNAL, kinds=frozenset({SEARCH}))
    search_clock_start: float = setting(
        0.0, help="The Unix time a search's budget counts from: this attempt's start less the "
        "time its earlier attempts ran (0: from the search's own start).", who=INTERNAL,
        kinds=frozenset({SEARCH}))
    resume_from_checkpoint: str | None = setting(
        None, help="The checkpoint a resumed job continues from.", who=INTERNAL,
        kinds=frozenset({TRANSFORMER, ADAPT}))
    allow_download: bool = setting(False, help="ALLOW_MODEL_DOWNLOAD.", who=DEPLOYMENT,
                                  kinds=ENCODER_KINDS)
    download_timeout: float = setting(120.0, help="MODEL_DOWNLOAD_TIMEOUT seconds.", minimum=1.0,
                                      maximum=86400.0, who=DEPLOYMENT, kinds=ENCODER_KINDS)
    model_dir: str | None = setting(None, help="MEDLITBOT_MODEL_DIR.", who=DEPLOYMENT,
                                     kinds=ENCODER_KINDS)
    # Encoder outputs kept between trials, searches and jobs (engine/embedding_cache.py).
    embedding_cache_dir: str | None = setting(None, help="EMBEDDING_CACHE_DIR.", who=DEPLOYMENT)
    embedding_cache_mb: int = setting(2048, help="EMBEDDING_CACHE_MB.", who=DEPLOYMENT)
    # An SQLAlchemy URL for Optuna's storage: the app's own database, never stored in a job.
    search_storage: str = setting("", help="Where search studies live (the app's database).",
                                  who=DEPLOYMENT, kinds=frozenset({SEARCH}))

    def __post_init__(self) -> None:
        self.label_names = list(self.label_names)
        self.member_paths = list(self.member_paths)
        self.search_candidates = list(self.search_candidates)
        self.metadata_fields = list(self.metadata_fields)
        self.metadata_used = list(self.metadata_used)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, strict: bool = True) -> TrainConfig:
        """Typed and bounds-checked settings; keys this version does not know are ignored, so a
        stored job from another version still loads. TrainConfigError names each bad field.

        strict=False keeps the default for a value it cannot use instead: a saved model's
        manifest may hold values from before these bounds (the API once took epochs=1000 for a
        TF-IDF model, which ignores epochs), and the model must still load.
        """
        known = [(key, SETTINGS[ALIASES.get(key, key)], value)
                 for key, value in (data or {}).items()
                 if ALIASES.get(key, key) in SETTINGS and value is not None]
        if not strict:
            known = [item for item in known if _parses(item[1], item[2])]
        return cls(**_parse_all(known, errors={}))

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Setting:
    name: str
    type: type
    default: Any
    help: str
    label: str
    minimum: float | None
    maximum: float | None
    kinds: frozenset[str]
    who: str
    advanced: bool
    choices: tuple[str, ...] = ()
    check: Any = None

    @property
    def user_settable(self) -> bool:
        return self.who in (USER, STAFF)

    @property
    def bounds(self) -> str:
        """" (1 to 50)" for a bounded number, " (auto, gpu or cpu)" for a choice, "" otherwise:
        for help texts and options."""
        if self.choices:
            return f" ({', '.join(self.choices[:-1])} or {self.choices[-1]})"
        if self.minimum is None or self.maximum is None:
            return ""
        return f" ({self.minimum:g} to {self.maximum:g})"

    def applies_to(self, kind: str) -> bool:
        return kind in self.kinds

    def parse(self, value: Any) -> Any:
        """The value as this setting's type, in range; ValueError with the person's message."""
        parsed = _PARSERS[self.type](value)
        if self.choices and self.type is list:
            parsed = [item.lower() for item in parsed]
            wrong = [item for item in parsed if item not in self.choices]
            if wrong:
                raise ValueError(f"{', '.join(wrong)}: choose from {', '.join(self.choices)}.")
        elif self.choices:
            parsed = parsed.lower()  # "GPU" on a command line means gpu
            if parsed not in self.choices:
                raise ValueError(f"Choose one of {', '.join(self.choices)}.")
        numeric = self.type in (int, float)
        if numeric and ((self.minimum is not None and parsed < self.minimum)
                        or (self.maximum is not None and parsed > self.maximum)):
            raise ValueError(f"Must be between {self.minimum:g} and {self.maximum:g}.")
        return self.check(parsed) if self.check is not None else parsed


def _parses(spec: Setting, value: Any) -> bool:
    try:
        spec.parse(value)
    except ValueError:
        return False
    return True


def _parse_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(MESSAGES["int"])
    if isinstance(value, int):
        return value
    number = _parse_float(value)
    if not number.is_integer():
        raise ValueError(MESSAGES["int"])
    return int(number)


def _parse_float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(MESSAGES["float"])
    try:
        number = float(value)
    except ValueError:
        raise ValueError(MESSAGES["float"]) from None
    if not math.isfinite(number):
        raise ValueError(MESSAGES["finite"])
    return number


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off", ""}:
        return False
    raise ValueError(MESSAGES["bool"])


def _parse_str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(MESSAGES["str"])
    return value.strip()


def _parse_list(value: Any) -> list[str]:
    if isinstance(value, str):  # the CLI's --search-candidates a,b
        return [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        raise ValueError("Enter a list.")
    return [str(v) for v in value]


_PARSERS = {int: _parse_int, float: _parse_float, bool: _parse_bool, str: _parse_str,
            list: _parse_list}
_TYPES = {"int": int, "float": float, "bool": bool, "str": str, "str | None": str,
          "float | None": float,
          "list[str]": list}


def _settings() -> dict[str, Setting]:
    return {
        f.name: Setting(
            name=f.name, type=_TYPES[f.type], help=f.metadata["help"],
            default=f.default if f.default is not dataclasses.MISSING else f.default_factory(),
            label=f.metadata["label"] or f.name.replace("_", " ").capitalize(),
            minimum=f.metadata["minimum"], maximum=f.metadata["maximum"],
            kinds=f.metadata["kinds"], who=f.metadata["who"], advanced=f.metadata["advanced"],
            choices=f.metadata["choices"], check=f.metadata["check"],
        )
        for f in dataclasses.fields(TrainConfig)
    }


SETTINGS: dict[str, Setting] = _settings()


def user_settings(*, advanced_only: bool = False) -> list[Setting]:
    """The settings a person may give per job, in the dataclass's order."""
    return [s for s in SETTINGS.values()
            if s.user_settable and (s.advanced or not advanced_only)]


def _parse_all(items: list[tuple[str, Setting, Any]], *,
               errors: dict[str, list[str]]) -> dict[str, Any]:
    """Each (key as given, its setting, value) parsed; TrainConfigError names every bad one,
    together with the `errors` the caller already found."""
    values: dict[str, Any] = {}
    for key, spec, value in items:
        try:
            values[spec.name] = spec.parse(value)
        except ValueError as exc:
            errors[key] = [str(exc)]
    if errors:
        raise TrainConfigError(errors)
    return values


def training_config_clean(data: Mapping[str, Any] | None, *, staff: bool = False,
                          extra_keys: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A person's settings, typed and in range, under their canonical names.

    Raises TrainConfigError naming every bad field at once: unknown keys, keys the deployment or
    MedLitBot sets, values of the wrong type, NaN, or outside the bounds. `extra_keys` are keys
    the caller handles itself (the web form's preset name) and passes through untouched.
    """
    passed: dict[str, Any] = {}
    items: list[tuple[str, Setting, Any]] = []
    errors: dict[str, list[str]] = {}
    for key, value in (data or {}).items():
        spec = SETTINGS.get(ALIASES.get(key, key))
        if key in extra_keys:
            passed[key] = value
        elif spec is None:
            errors[key] = [MESSAGES["unknown"]]
        elif not spec.user_settable:
            errors[key] = [MESSAGES[spec.who]]
        elif spec.who == STAFF and not staff and value not in (None, ""):
            errors[key] = [MESSAGES[STAFF]]
        elif value is not None and value != "":
            items.append((key, spec, value))
    return {**passed, **_parse_all(items, errors=errors)}

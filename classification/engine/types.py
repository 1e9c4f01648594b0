"""Plain data types shared by the engine; importing this module must stay cheap (no torch)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

ProgressCallback = Callable[[dict[str, Any]], None]
ShouldStop = Callable[[], bool]


def article_text(title: str | None, abstract: str | None) -> str:
    """The one text a model sees for an article: title, a blank line, abstract.

    Training, import, prediction, batches and evaluation all call this, so a model is always
    asked about text shaped exactly like the text it learned from (docs/contracts.md).
    """
    title, abstract = (title or "").strip(), (abstract or "").strip()
    return f"{title}\n\n{abstract}" if title and abstract else (title or abstract)


class ModelUnavailableError(Exception):
    """The model's weights cannot be obtained here; the message says how to get them."""


class TrainingStopped(Exception):
    """should_stop() was honoured; checkpoint_path is where training can resume from."""

    def __init__(
        self, checkpoint_path: str | None, message: str = "Training stopped on request"
    ) -> None:
        super().__init__(message if checkpoint_path is None else f"{message}: {checkpoint_path}")
        self.checkpoint_path = checkpoint_path


@dataclass
class TextData:
    texts: list[str]
    labels: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.labels:
            self.labels = [[] for _ in self.texts]
        if len(self.labels) != len(self.texts):
            raise ValueError(
                f"TextData has {len(self.texts)} texts but {len(self.labels)} label lists"
            )

    def __len__(self) -> int:
        return len(self.texts)

    def subset(self, indices: list[int]) -> TextData:
        return TextData([self.texts[i] for i in indices], [list(self.labels[i]) for i in indices])

    def label_space(self) -> list[str]:
        return sorted({label for row in self.labels for label in row})


# Keys that the seed's job parameters used, mapped to ours.
_ALIASES = {
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


@dataclass
class TrainConfig:
    epochs: int = 3
    batch_size: int = 16
    learning_rate: float = 5e-5
    max_length: int = 256
    gradient_accumulation_steps: int = 1
    gradient_checkpointing: bool = False
    early_stopping_patience: int = 2
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    seed: int = 42
    label_names: list[str] = field(default_factory=list)
    multi_label: bool = False
    output_dir: str = ""
    resume_from_checkpoint: str | None = None
    allow_download: bool = False
    download_timeout: float = 120.0
    use_mps: bool = False
    model_path: str | None = None
    # Root folder holding pre-placed model dirs (MEDLITBOT_MODEL_DIR/<model_type>); None -> env.
    model_dir: str | None = None

    def __post_init__(self) -> None:
        self.label_names = list(self.label_names)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> TrainConfig:
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in (data or {}).items():
            key = _ALIASES.get(key, key)
            if key in names and value is not None:
                kwargs[key] = value
        config = cls(**kwargs)
        # JSON from forms arrives as strings; coerce to the declared scalar types.
        for f in dataclasses.fields(cls):
            value = getattr(config, f.name)
            default = f.default
            if isinstance(default, bool) and isinstance(value, str):
                setattr(config, f.name, value.strip().lower() in {"1", "true", "yes", "on"})
            elif (
                isinstance(default, int)
                and not isinstance(default, bool)
                and isinstance(value, (str, float))
            ):
                setattr(config, f.name, int(float(value)))
            elif isinstance(default, float) and isinstance(value, (str, int)):
                setattr(config, f.name, float(value))
        return config

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@runtime_checkable
class Classifier(Protocol):
    model_type: str
    label_names: list[str]
    multi_label: bool

    def fit(
        self,
        train: TextData,
        val: TextData,
        config: TrainConfig,
        progress_cb: ProgressCallback,
        should_stop: ShouldStop,
    ) -> dict[str, Any]: ...

    def evaluate(self, data: TextData) -> dict[str, Any]: ...

    def predict(self, texts: list[str]) -> list[dict[str, Any]]: ...

    def save(self, path: str) -> None: ...


def check_texts(texts: list[str]) -> None:
    """Reject empty input up front: a blank abstract would otherwise get a confident guess."""
    if isinstance(texts, str):
        raise TypeError("predict() takes a list of texts, not a single string")
    for i, text in enumerate(texts):
        if text is None or not str(text).strip():
            raise ValueError(f"Text is empty: item {i} has no words to classify")

"""Plain data types shared by the engine; importing this module must stay cheap (no torch)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .metadata import text_with_metadata

# Their home is .schema; the engine's modules keep importing them from here.
from .schema import TrainConfig as TrainConfig
from .schema import TrainConfigError as TrainConfigError

ProgressCallback = Callable[[dict[str, Any]], None]
ShouldStop = Callable[[], bool]


def article_text(title: str | None, abstract: str | None) -> str:
    """The one text a model sees for an article: title, a blank line, abstract.

    Training, import, prediction, batches and evaluation all call this, so a model is always
    asked about text shaped exactly like the text it learned from (docs/contracts.md).
    """
    title, abstract = (title or "").strip(), (abstract or "").strip()
    return f"{title}\n\n{abstract}" if title and abstract else (title or abstract)


def article_text_with_metadata(title: str | None, abstract: str | None,
                               metadata: Mapping[str, Any] | None = None, *,
                               fields: Sequence[str] = (), style: str = "prefix") -> str:
    """article_text with the given metadata fields in a model's form (engine/metadata.py):
    field tokens after it (TF-IDF) or a short prefix before it (encoders). Training and
    prediction both come through metadata.text_with_metadata, so they never drift; no fields
    give exactly article_text."""
    return text_with_metadata(article_text(title, abstract), metadata, fields=fields,
                              style=style)


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

    def predict(self, texts: list[str], *, fast: bool = False) -> list[dict[str, Any]]: ...

    def save(self, path: str) -> None: ...


def check_texts(texts: list[str]) -> None:
    """Reject empty input up front: a blank abstract would otherwise get a confident guess."""
    if isinstance(texts, str):
        raise TypeError("predict() takes a list of texts, not a single string")
    for i, text in enumerate(texts):
        if text is None or not str(text).strip():
            raise ValueError(f"Text is empty: item {i} has no words to classify")

"""Adapting an encoder to a literature: its masked-language-model pretraining continued on
unlabelled texts (task- and domain-adaptive pretraining, Gururangan et al. 2020).

No Django: the job hands it texts, a progress callback and a should-stop callback. A plain
torch loop rather than Trainer, so that every step, checkpoint and stop is ours to time and
word: checkpoints are written to a temp folder and os.replace()d in, `trainer_state.json`
last (classification/paths.py reads that file as "complete"), and a resumed run restores the
weights, the optimiser, the schedule and the position in the data, so it continues the run
it replaces step for step.

The perplexity before and after is measured on held-out texts (HELDOUT_FRACTION of the
texts, chosen by a hash of each text so a resume holds out the same ones), with the same
masks both times, so the two numbers compare.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import model_size
from .artifacts import atomic_save
from .base import BaseClassifier
from .device import DevicePlan, plan_device
from .loading import resolve_model_dir
from .transformer import _cpu_attention_overrides
from .types import ProgressCallback, ShouldStop, TrainConfig, TrainingStopped

HELDOUT_FRACTION = 0.05
STATE_FILE = "trainer_state.json"  # written last: its presence marks a complete checkpoint
WEIGHTS_FILE = "training_state.pt"
KEEP_CHECKPOINTS = 2
CHECKPOINTS_PER_EPOCH = 4
LOG_EVERY = 5
MLM_HEAD_NOTE = (
    "The base had no masked-language-model head (a sentence-transformers checkpoint has none): "
    "one was made from the encoder's own word embeddings (tied decoder) with an identity "
    "transform."
)


def text_hash(text: str) -> str:
    """A stable hash of a text, blind to case and whitespace: the held-out choice."""
    return hashlib.sha1(" ".join(text.casefold().split()).encode("utf-8")).hexdigest()


def heldout_split(texts: list[str], *, fraction: float = HELDOUT_FRACTION
                  ) -> tuple[list[str], list[str]]:
    """(train, held-out): the held-out texts are those with the lowest hashes, whatever the
    order the texts come in, at least one of each. ValueError with under two texts."""
    if len(texts) < 2:
        raise ValueError(f"Adaptation needs at least two texts; got {len(texts)}.")
    n_held = min(len(texts) - 1, max(1, round(len(texts) * fraction)))
    order = sorted(range(len(texts)), key=lambda i: (text_hash(texts[i]), i))
    held = set(order[:n_held])
    return ([t for i, t in enumerate(texts) if i not in held],
            [t for i, t in enumerate(texts) if i in held])


@dataclass
class _Progress:
    """Where a run stands: what a checkpoint saves and a resume restores."""

    step: int = 0
    total_steps: int = 0
    epochs: int = 1
    batches_per_epoch: int = 1
    tokens: int = 0
    seconds: float = 0.0
    perplexity_before: float | None = None
    losses: list[float] = field(default_factory=list)

    @property
    def epoch(self) -> float:
        return self.step / self.batches_per_epoch


class EncoderAdapter(BaseClassifier):
    """An adapt job's product: an encoder, not a classifier (it has no labels to predict).

    fit() continues pretraining; save() writes a Hugging Face folder that
    AutoModelForSequenceClassification loads, so the `adapted` type fine-tunes it.
    """

    def __init__(self, model_type: str, device_plan: DevicePlan | None = None) -> None:
        super().__init__(model_type, device_plan)
        self.model: Any = None
        self.tokenizer: Any = None
        self.notes: list[str] = []

    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        raise ValueError("An adapted encoder does not classify: fine-tune it first (New "
                         "model, type Adapted encoder).")

    # ---- fit --------------------------------------------------------------------------------

    def fit_texts(self, texts: list[str], config: TrainConfig, progress_cb: ProgressCallback,
                  should_stop: ShouldStop) -> dict[str, Any]:
        """Continue pretraining on `texts`; the metrics (perplexities, tokens/s) it returns."""
        import torch

        plan = self.device_plan or plan_device(use_mps=config.use_mps)
        self.device_plan = plan
        plan.apply()
        self.config = config
        train, held = heldout_split(texts)
        self._load(config, progress_cb)
        output_dir = config.output_dir or ""
        resume = config.resume_from_checkpoint
        if should_stop():
            raise TrainingStopped(resume or None, "Adaptation stopped before it began")
        progress_cb({"phase": "tokenizing",
                     "message": f"Tokenizing {len(train)} + {len(held)} held-out texts"})
        train_ids, held_ids = self._ids(train, config), self._ids(held, config)
        state = self._plan(len(train_ids), config)
        optimizer, scheduler = self._optimiser(config, state)
        if resume:
            self._restore_checkpoint(resume, optimizer, scheduler, state)
            progress_cb({"phase": "training", "message": f"Resumed from step {state.step}"})
        else:
            state.perplexity_before = self.perplexity(held_ids, config, progress_cb, should_stop,
                                                      resume=None)
        self._loop(train_ids, config, state, optimizer, scheduler, progress_cb, should_stop,
                   output_dir)
        after = self.perplexity(held_ids, config, progress_cb, should_stop,
                                resume=_latest(output_dir))
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        self.metrics = {
            "perplexity_before": state.perplexity_before, "perplexity_after": after,
            "heldout_texts": len(held), "train_texts": len(train), "steps": state.step,
            "epochs": state.epochs, "tokens_per_second": state.tokens / max(state.seconds, 1e-9),
            "train_tokens": state.tokens, "final_loss": (state.losses or [None])[-1],
            "notes": self.notes,
            # The New model page estimates fine-tuning it from its size, with no files read.
            "encoder_shape": list(model_size.shape_of(self.model.config.to_dict()) or []),
        }
        return self.metrics

    def fit(self, train: Any, val: Any, config: TrainConfig, progress_cb: ProgressCallback,
            should_stop: ShouldStop) -> dict[str, Any]:
        """The Classifier protocol's fit: adapts on train's and validation's texts."""
        return self.fit_texts([*train.texts, *val.texts], config, progress_cb, should_stop)

    def _load(self, config: TrainConfig, progress_cb: ProgressCallback) -> None:
        import transformers
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()  # bars land in Celery's log as WARNINGs
        transformers.set_seed(config.seed)
        base = config.adapt_base or "minilm"
        progress_cb({"phase": "loading_model", "message": f"Loading {base} with an MLM head"})
        model_dir = resolve_model_dir(base, config, progress_cb)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        # As in fine-tuning: attention-probability dropout off lets CPU attention run fused.
        model, info = AutoModelForMaskedLM.from_pretrained(
            model_dir, output_loading_info=True,
            **_cpu_attention_overrides(model_dir, self.device_plan or plan_device()))
        missing = [k for k in info.get("missing_keys", []) if "predictions" in k]
        if missing:
            _identity_head(model)
            self.notes.append(MLM_HEAD_NOTE)
            progress_cb({"phase": "loading_model", "message": MLM_HEAD_NOTE})
        self.model = model.to(self.device_plan.device if self.device_plan else "cpu")

    def _ids(self, texts: list[str], config: TrainConfig) -> list[list[int]]:
        limit = min(int(config.max_length), self.model.config.max_position_embeddings)
        return list(self.tokenizer(texts, truncation=True, max_length=limit)["input_ids"])

    def _plan(self, n_texts: int, config: TrainConfig) -> _Progress:
        per_epoch = max(1, math.ceil(n_texts / config.batch_size))
        return _Progress(total_steps=per_epoch * config.epochs, epochs=config.epochs,
                         batches_per_epoch=per_epoch)

    def _optimiser(self, config: TrainConfig, state: _Progress) -> tuple[Any, Any]:
        import torch
        from transformers import get_linear_schedule_with_warmup

        decay = [p for n, p in self.model.named_parameters() if p.ndim > 1]
        rest = [p for n, p in self.model.named_parameters() if p.ndim <= 1]
        groups = [{"params": decay, "weight_decay": config.weight_decay},
                  {"params": rest, "weight_decay": 0.0}]
        fused = self.device_plan is not None and self.device_plan.device in ("cpu", "cuda")
        optimizer = torch.optim.AdamW(groups, lr=config.learning_rate, fused=fused)
        warmup = int(state.total_steps * config.warmup_ratio)
        return optimizer, get_linear_schedule_with_warmup(optimizer, warmup, state.total_steps)

    # ---- the loop ---------------------------------------------------------------------------

    def _batches(self, ids: list[list[int]], config: TrainConfig, epoch: int) -> list[list[int]]:
        """One epoch's batches of row indices: shuffled by (seed, epoch), then sorted by length
        inside groups of 50 batches so little is padding; the same at every resume."""
        rng = random.Random(config.seed * 1000 + epoch)
        order = list(range(len(ids)))
        rng.shuffle(order)
        size = config.batch_size
        group = size * 50
        batches: list[list[int]] = []
        for start in range(0, len(order), group):
            chunk = sorted(order[start:start + group], key=lambda i: len(ids[i]))
            batches += [chunk[i:i + size] for i in range(0, len(chunk), size)]
        rng.shuffle(batches)
        return batches

    def _collate(self, rows: list[list[int]], config: TrainConfig, seed: int) -> dict[str, Any]:
        """Pads and masks a batch; the masks are drawn from `seed`, so a batch is masked the
        same way whenever it is drawn (a resumed run, a second perplexity)."""
        import torch
        from transformers import DataCollatorForLanguageModeling

        collator = DataCollatorForLanguageModeling(self.tokenizer, mlm=True,
                                                   mlm_probability=config.mlm_probability)
        state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        try:
            batch = collator([{"input_ids": r} for r in rows])
        finally:
            torch.random.set_rng_state(state)
        device = self.device_plan.device if self.device_plan else "cpu"
        return {k: v.to(device) for k, v in batch.items()}

    def _loop(self, ids: list[list[int]], config: TrainConfig, state: _Progress, optimizer: Any,
              scheduler: Any, progress_cb: ProgressCallback, should_stop: ShouldStop,
              output_dir: str) -> None:
        self.model.train()
        every = max(1, state.batches_per_epoch // CHECKPOINTS_PER_EPOCH)
        order: dict[int, list[list[int]]] = {}
        progress_cb({"phase": "training", "step": state.step, "total_steps": state.total_steps,
                     "epoch": state.epoch, "total_epochs": state.epochs,
                     "checkpoint_bytes": _checkpoint_bytes(self.model)})
        while state.step < state.total_steps:
            epoch, position = divmod(state.step, state.batches_per_epoch)
            if epoch not in order:
                order = {epoch: self._batches(ids, config, epoch)}
            rows = order[epoch][position]
            started = time.perf_counter()
            loss, tokens = self._train_step([ids[i] for i in rows], config, state.step,
                                            optimizer, scheduler)
            state.seconds += time.perf_counter() - started
            state.tokens += tokens
            state.step += 1
            state.losses.append(loss)
            event = {"phase": "training", "step": state.step, "total_steps": state.total_steps,
                     "epoch": state.epoch, "total_epochs": state.epochs, "loss": loss}
            if state.step % LOG_EVERY == 0:
                event["learning_rate"] = float(scheduler.get_last_lr()[0])
            progress_cb(event)
            stop = should_stop()
            if output_dir and (stop or state.step % every == 0
                               or state.step == state.total_steps):
                path = self._save_checkpoint(output_dir, optimizer, scheduler, state,
                                             progress_cb)
                if stop:
                    raise TrainingStopped(path)
            elif stop:
                raise TrainingStopped(None)
        self.model.eval()

    def _train_step(self, rows: list[list[int]], config: TrainConfig, step: int,
                    optimizer: Any, scheduler: Any) -> tuple[float, int]:
        import torch

        batch = self._collate(rows, config, seed=config.seed * 7919 + step)
        with self._autocast():
            loss = self._masked_loss(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        return float(loss.detach()), int(batch["attention_mask"].sum())

    def _masked_loss(self, batch: dict[str, Any]) -> Any:
        """The MLM loss with the vocabulary projection run on the masked positions only.

        The projection (hidden x 30,522 words for MiniLM) costs about as much per token as the
        whole 6-layer encoder, and only the ~15% masked tokens have a label: the same loss as
        the model's own forward, for about half the work. Architectures without BERT's `cls`
        head take the model's own forward."""
        import torch

        head = getattr(self.model, "cls", None)
        encoder = getattr(self.model, "bert", None)
        if head is None or encoder is None:
            return self.model(**batch).loss
        labels = batch["labels"]
        hidden = encoder(input_ids=batch["input_ids"],
                         attention_mask=batch.get("attention_mask")).last_hidden_state
        chosen = labels != -100
        logits = head(hidden[chosen])
        return torch.nn.functional.cross_entropy(logits.float(), labels[chosen])

    def _autocast(self) -> Any:
        import contextlib

        import torch

        plan = self.device_plan
        if plan is None or plan.dtype not in ("bfloat16", "float16"):
            return contextlib.nullcontext()
        return torch.autocast(device_type=plan.device, dtype=getattr(torch, plan.dtype))

    def perplexity(self, ids: list[list[int]], config: TrainConfig,
                   progress_cb: ProgressCallback, should_stop: ShouldStop, *,
                   resume: str | None) -> float:
        """exp(mean loss over the masked tokens) of the held-out texts, with fixed masks."""
        import torch

        self.model.eval()
        total, count = 0.0, 0
        size = max(8, config.batch_size * 2)
        with torch.no_grad():
            for n, start in enumerate(range(0, len(ids), size)):
                batch = self._collate(ids[start:start + size], config, seed=config.seed + n)
                masked = int((batch["labels"] != -100).sum())
                with self._autocast():
                    loss = self._masked_loss(batch)
                total += float(loss) * masked
                count += masked
                progress_cb({"phase": "evaluating", "step": 0 if resume is None else None,
                             "message": f"held-out perplexity: batch {n + 1}"})
                if should_stop():
                    raise TrainingStopped(resume, "Adaptation stopped while measuring")
        self.model.train()
        return float(math.exp(total / count)) if count else float("nan")

    # ---- checkpoints --------------------------------------------------------------------------

    def _save_checkpoint(self, output_dir: str, optimizer: Any, scheduler: Any,
                         state: _Progress, progress_cb: ProgressCallback) -> str:
        import torch

        name = f"checkpoint-{state.step}"
        progress_cb({"phase": "training", "checkpoint_saving": name})
        started = time.perf_counter()
        target = Path(output_dir) / name
        tmp = Path(output_dir) / f".{name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        torch.save({"model": self.model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    # Dropout draws from it: restored, a resumed run repeats the same steps.
                    "rng": torch.random.get_rng_state()}, tmp / WEIGHTS_FILE)
        (tmp / STATE_FILE).write_text(json.dumps({
            "global_step": state.step, "epoch": state.epoch, "max_steps": state.total_steps,
            "tokens": state.tokens, "seconds": state.seconds, "losses": state.losses[-200:],
            "perplexity_before": state.perplexity_before}), encoding="utf-8")
        shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
        for old in _checkpoints(output_dir)[:-KEEP_CHECKPOINTS]:
            shutil.rmtree(old, ignore_errors=True)
        progress_cb({"phase": "training", "step": state.step, "checkpoint_path": str(target),
                     "checkpoint_seconds": time.perf_counter() - started})
        return str(target)

    def _restore_checkpoint(self, path: str, optimizer: Any, scheduler: Any,
                            state: _Progress) -> None:
        import torch

        saved = json.loads((Path(path) / STATE_FILE).read_text(encoding="utf-8"))
        if int(saved["max_steps"]) != state.total_steps:
            raise ValueError(f"{Path(path).name} was saved by a run of {saved['max_steps']} "
                             f"steps; this one has {state.total_steps}: its texts or settings "
                             "changed, so it cannot continue it.")
        blob = torch.load(Path(path) / WEIGHTS_FILE, map_location="cpu", weights_only=True)
        self.model.load_state_dict(blob["model"])
        optimizer.load_state_dict(blob["optimizer"])
        scheduler.load_state_dict(blob["scheduler"])
        torch.random.set_rng_state(blob["rng"])
        state.step, state.tokens = int(saved["global_step"]), int(saved["tokens"])
        state.seconds, state.losses = float(saved["seconds"]), list(saved["losses"])
        state.perplexity_before = saved.get("perplexity_before")

    # ---- artifacts ----------------------------------------------------------------------------

    def save(self, path: str) -> None:
        def write(tmp: Path) -> None:
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)

        manifest = self._manifest()
        manifest["encoder"] = True
        atomic_save(path, write, manifest)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> EncoderAdapter:
        """The saved encoder's description (metrics, settings); its weights stay on disk for
        the fine-tuning job that loads them."""
        adapter = cls(manifest["model_type"], None)
        adapter._restore(manifest)
        adapter.metrics = dict(manifest.get("metrics") or {})
        return adapter


def _identity_head(model: Any) -> None:
    """An MLM head for an encoder saved without one: the decoder is tied to the word
    embeddings already; the transform starts as the identity, so the first predictions are
    the embeddings' own similarities rather than noise."""
    import torch

    head = getattr(getattr(model, "cls", None), "predictions", None)
    if head is None:  # another architecture's head keeps its own initialisation
        return
    with torch.no_grad():
        head.transform.dense.weight.copy_(torch.eye(head.transform.dense.weight.shape[0]))
        head.transform.dense.bias.zero_()
        head.transform.LayerNorm.weight.fill_(1.0)
        head.transform.LayerNorm.bias.zero_()
        head.bias.zero_()
    model.tie_weights()


def _checkpoint_bytes(model: Any) -> int:
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    return int(weights + sum(8 * p.numel() for p in model.parameters() if p.requires_grad))


def _checkpoints(output_dir: str) -> list[str]:
    """Complete checkpoint folders, lowest step first."""
    folder = Path(output_dir)
    if not folder.is_dir():
        return []
    found = [(int(p.name.split("-", 1)[1]), str(p)) for p in folder.iterdir()
             if p.name.startswith("checkpoint-") and p.name.split("-", 1)[1].isdigit()
             and (p / STATE_FILE).is_file()]
    return [p for _, p in sorted(found)]


def _latest(output_dir: str) -> str | None:
    found = _checkpoints(output_dir) if output_dir else []
    return found[-1] if found else None

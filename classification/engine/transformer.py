"""Fine-tuning BERT-style models with the Hugging Face Trainer, tuned for speed on small CPUs.

Where the speed comes from (measured by scripts/benchmark_training.py): texts are tokenized once
without padding, batches are padded only to their longest member (DataCollatorWithPadding) and
drawn from length-sorted groups, so the median demo text (~70 tokens) no longer pays for 256;
the last layer computes only the [CLS] row the head reads (cls_head.py); AdamW runs as one
fused kernel; on CPU, attention-probability dropout is off so SDPA runs its fused kernel; torch
uses one thread per physical core; the dtype is fp32 unless the chip has native bf16.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .artifacts import atomic_save
from .base import BaseClassifier
from .cls_head import prune_last_layer_to_cls
from .device import DevicePlan, plan_device, torch_dtype
from .loading import resolve_model_dir
from .types import ProgressCallback, ShouldStop, TextData, TrainConfig, TrainingStopped

PREDICT_TOKENS_PER_BATCH = 8192  # bounds activation memory while keeping matmuls large
MIN_MAX_LENGTH = 32
# Dropout on attention probabilities keeps torch's SDPA off its fused flash kernel on CPU (that
# kernel takes no dropout) and materialises every (len x len) score matrix: with it off, MiniLM
# training steps measured 1.2-1.5x faster here. Hidden-state dropout stays as regularisation.
ATTENTION_DROPOUT_KEYS = ("attention_probs_dropout_prob", "attention_dropout")


def _cpu_attention_overrides(model_dir: str, plan: DevicePlan) -> dict[str, float]:
    """Config overrides that let CPU training use fused attention; empty elsewhere."""
    if plan.device != "cpu":
        return {}
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model_dir)
    return {key: 0.0 for key in ATTENTION_DROPOUT_KEYS if getattr(config, key, None)}


def _autocast_enabled(plan: DevicePlan) -> bool:
    return plan.device in ("cuda", "cpu") and plan.dtype != "float32"


def load_encoder(model_dir: str, plan: DevicePlan | None) -> tuple[Any, Any, DevicePlan]:
    """Bare encoder (no head) for embeddings, on the planned device, in eval mode."""
    from transformers import AutoModel, AutoTokenizer

    plan = plan or plan_device()
    plan.apply()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).to(plan.device).eval()
    return model, tokenizer, plan


def _length_sorted_batches(
    tokenizer: Any, texts: list[str], max_length: int, max_batch: int = 128
) -> tuple[Any, list[list[int]]]:
    """Tokenize once, then cut length-sorted index batches within a padded-token budget."""
    encoded = tokenizer(texts, truncation=True, max_length=max_length)
    lengths = [len(ids) for ids in encoded["input_ids"]]
    order = sorted(range(len(texts)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        # Sorted ascending, so lengths[i] is the batch's padded width once i joins.
        if current and (
            len(current) >= max_batch or (len(current) + 1) * lengths[i] > PREDICT_TOKENS_PER_BATCH
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return encoded, batches


def _forward_batches(
    model: Any, tokenizer: Any, texts: list[str], plan: DevicePlan, max_length: int, fn: Any
) -> np.ndarray:
    """Run fn(model_output, attention_mask) per length-sorted batch; rows back in input order."""
    import torch

    encoded, batches = _length_sorted_batches(tokenizer, texts, max_length)
    keys = [k for k in ("input_ids", "attention_mask", "token_type_ids") if k in encoded]
    out: np.ndarray | None = None
    with torch.inference_mode():
        for batch in batches:
            features = [{k: encoded[k][i] for k in keys} for i in batch]
            inputs = tokenizer.pad(features, padding=True, return_tensors="pt")
            inputs = {k: v.to(plan.device) for k, v in inputs.items()}
            # Inference runs in the dtype training ran in, so thresholds tuned on validation
            # hold for a reloaded artifact; on a CPU with native bf16 this is ~1.7-2x faster.
            with torch.autocast(
                plan.device, dtype=torch_dtype(plan.dtype), enabled=_autocast_enabled(plan)
            ):
                result = fn(model(**inputs), inputs["attention_mask"])
            result = result.float().cpu().numpy()
            if out is None:
                out = np.zeros((len(texts), result.shape[1]), dtype=np.float32)
            out[batch] = result
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


def encode_mean_pooled(
    model: Any, tokenizer: Any, texts: list[str], plan: DevicePlan, max_length: int = 256
) -> np.ndarray:
    import torch

    def pool(output: Any, mask: Any) -> Any:
        mask = mask.unsqueeze(-1).to(output.last_hidden_state.dtype)
        summed = (output.last_hidden_state * mask).sum(dim=1)
        mean = summed / mask.sum(dim=1).clamp(min=1.0)
        return torch.nn.functional.normalize(mean, dim=-1)

    return _forward_batches(model, tokenizer, texts, plan, max_length, pool)


def _make_trainer_class() -> Any:
    import torch
    from transformers import Trainer

    class WeightedLossTrainer(Trainer):
        """Trainer with class weights (single-label) or pos_weight (multi-label BCE)."""

        # Our loss is a per-batch mean: let Trainer divide it by the accumulation steps.
        loss_is_scaled_for_ga = False

        def __init__(
            self,
            *args: Any,
            loss_weights: Any = None,
            multi_label: bool = False,
            checkpoint_listener: Any = None,
            **kwargs: Any,
        ):
            super().__init__(*args, **kwargs)
            self.loss_weights = loss_weights
            self.multi_label = multi_label
            self.checkpoint_listener = checkpoint_listener

        def _save_checkpoint(self, model: Any, trial: Any) -> None:
            # Timed here, around the whole save (weights, optimizer, RNG, trainer_state.json):
            # the supervisor gives a cancelled job one step plus one such save before it kills.
            name = f"checkpoint-{self.state.global_step}"
            started = time.perf_counter()
            if self.checkpoint_listener is not None:
                self.checkpoint_listener.checkpoint_saving(name)
            super()._save_checkpoint(model, trial)
            if self.checkpoint_listener is not None:
                path = os.path.join(self.args.output_dir, name)
                self.checkpoint_listener.checkpoint_saved(path, time.perf_counter() - started)

        def compute_loss(
            self,
            model: Any,
            inputs: dict[str, Any],
            return_outputs: bool = False,
            num_items_in_batch: Any = None,
        ) -> Any:
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            logits = outputs.logits.float()
            weights = None if self.loss_weights is None else self.loss_weights.to(logits.device)
            if self.multi_label:
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, labels.to(logits.dtype), pos_weight=weights
                )
            else:
                loss = torch.nn.functional.cross_entropy(logits, labels.long(), weight=weights)
            return (loss, outputs) if return_outputs else loss

    return WeightedLossTrainer


class _StopRequested(Exception):
    """Raised inside Trainer once should_stop() is honoured, so nothing else runs after it."""

    def __init__(self, during_evaluation: bool) -> None:
        super().__init__("stop requested")
        self.during_evaluation = during_evaluation


def _checkpoint_bytes(model: Any) -> int:
    """About what one checkpoint weighs: the weights plus AdamW's two fp32 moments per weight."""
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    moments = sum(2 * 4 * p.numel() for p in model.parameters() if p.requires_grad)
    return int(weights + moments)


def _make_progress_callback(progress_cb: ProgressCallback, should_stop: ShouldStop) -> Any:
    from transformers import TrainerCallback

    class ProgressForwarder(TrainerCallback):
        """Forwards Trainer events to MedLitBot's progress_cb and honours should_stop().

        A stop is honoured at the first step boundary after it is asked for: that step's
        checkpoint is saved, and then _StopRequested leaves Trainer at once. Letting Trainer
        wind down by itself instead costs an evaluation, a second save of the same checkpoint
        (on_epoch_end asks for both) and a reload of the best model: on a slow machine that
        outlasted the supervisor's grace and got the process killed mid-write.
        """

        def __init__(self) -> None:
            self.stopped = False
            self.last_loss: float | None = None
            self.state: Any = None
            self.args: Any = None

        def _base(self, state: Any, args: Any) -> dict[str, Any]:
            return {
                "step": int(state.global_step),
                "total_steps": int(state.max_steps),
                "epoch": float(state.epoch or 0.0),
                "total_epochs": float(args.num_train_epochs),
            }

        def on_train_begin(
            self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any
        ) -> Any:
            self.state, self.args = state, args
            if model is not None:
                progress_cb({"phase": "training", "checkpoint_bytes": _checkpoint_bytes(model)})
            return control

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            progress_cb({"phase": "training", **self._base(state, args), "loss": self.last_loss})
            if should_stop():
                self.stopped = True
                control.should_save = True  # leave a checkpoint to resume from
                control.should_training_stop = True
                control.should_evaluate = False
            return control

        def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if control.should_evaluate:
                # Said before the evaluation rather than after it, so the job shows (and the
                # supervisor's stall clock allows for) the evaluation while it runs.
                progress_cb(
                    {
                        "phase": "evaluating",
                        **self._base(state, args),
                        "message": "evaluating on the validation split",
                    }
                )
            return control

        def on_prediction_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            # An evaluation can take as long as many steps: a stop asked for during one ends it
            # after the current batch; fit() then saves the checkpoint the epoch would have.
            if should_stop():
                raise _StopRequested(during_evaluation=True)
            return control

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            if self.stopped:
                raise _StopRequested(during_evaluation=False)
            return control

        def checkpoint_saving(self, name: str) -> None:
            progress_cb({"phase": "training", "checkpoint_saving": name})

        def checkpoint_saved(self, path: str, seconds: float) -> None:
            base = self._base(self.state, self.args) if self.state is not None else {}
            progress_cb(
                {
                    "phase": "training",
                    **base,
                    "checkpoint_path": path,
                    "checkpoint_seconds": seconds,
                }
            )

        def on_log(
            self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any
        ) -> Any:
            logs = logs or {}
            if "loss" in logs:
                self.last_loss = float(logs["loss"])
                progress_cb(
                    {
                        "phase": "training",
                        **self._base(state, args),
                        "loss": self.last_loss,
                        "learning_rate": float(logs.get("learning_rate", 0.0)),
                    }
                )
            return control

        def on_evaluate(
            self, args: Any, state: Any, control: Any, metrics: Any = None, **kwargs: Any
        ) -> Any:
            clean = {
                k.removeprefix("eval_"): float(v)
                for k, v in (metrics or {}).items()
                if isinstance(v, (int, float))
            }
            progress_cb({"phase": "evaluating", **self._base(state, args), "metrics": clean})
            return control

    return ProgressForwarder()


class TransformerClassifier(BaseClassifier):
    def __init__(self, model_type: str, device_plan: DevicePlan | None = None) -> None:
        super().__init__(model_type, device_plan)
        self.model: Any = None
        self.tokenizer: Any = None
        self.max_length = 256

    # ---- training -------------------------------------------------------------------------

    def _loss_weights(self, y: np.ndarray) -> Any:
        import torch

        if self.multi_label:
            pos = y.sum(axis=0).astype(np.float64)
            neg = len(y) - pos
            # sqrt tempers the weight of rare labels: full neg/pos overshoots recall on small data.
            weight = np.sqrt(np.clip(neg / np.maximum(pos, 1.0), 0.1, 100.0))
        else:
            counts = np.bincount(y, minlength=len(self.label_names)).astype(np.float64)
            weight = len(y) / (len(self.label_names) * np.maximum(counts, 1.0))
            weight = np.clip(weight, 0.1, 10.0)
        return torch.tensor(weight, dtype=torch.float32)

    def _tokenize(self, data: TextData, max_length: int, with_labels: bool = True) -> Any:
        from datasets import Dataset

        columns: dict[str, Any] = {"text": data.texts}
        if with_labels:
            y = self._targets(data)
            columns["labels"] = y.astype(np.float32).tolist() if self.multi_label else y.tolist()
        dataset = Dataset.from_dict(columns)

        def tokenize(batch: dict[str, list[Any]]) -> dict[str, Any]:
            enc = self.tokenizer(batch["text"], truncation=True, max_length=max_length)
            enc["length"] = [len(ids) for ids in enc["input_ids"]]
            return enc

        return dataset.map(tokenize, batched=True, batch_size=1000, remove_columns=["text"])

    def _choose_max_length(self, texts: list[str], limit: int) -> int:
        """Lower max_length to the data's ~95th-percentile token length when that is shorter."""
        sample = texts if len(texts) <= 2000 else texts[:: max(1, len(texts) // 2000)]
        lengths = [len(ids) for ids in self.tokenizer(sample, truncation=False)["input_ids"]]
        p95 = int(np.percentile(lengths, 95)) if lengths else limit
        model_limit = (
            getattr(self.model.config, "max_position_embeddings", limit) if self.model else limit
        )
        chosen = min(limit, model_limit, max(MIN_MAX_LENGTH, int(math.ceil(p95 / 8) * 8)))
        return int(chosen)

    def fit(
        self,
        train: TextData,
        val: TextData,
        config: TrainConfig,
        progress_cb: ProgressCallback,
        should_stop: ShouldStop,
    ) -> dict[str, Any]:
        import datasets
        import torch
        import transformers
        from transformers import (
            AutoModelForSequenceClassification,
            AutoTokenizer,
            DataCollatorWithPadding,
            EarlyStoppingCallback,
            PrinterCallback,
            TrainingArguments,
        )
        from transformers.trainer_utils import get_last_checkpoint

        started = time.perf_counter()
        train = self._setup_labels(train, val, config)
        val = val.subset([i for i, row in enumerate(val.labels) if row])
        plan = self.device_plan or plan_device(use_mps=config.use_mps)
        self.device_plan = plan
        plan.apply()
        transformers.set_seed(config.seed)
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()  # bars end up as WARNING lines in Celery logs
        datasets.disable_progress_bars()

        progress_cb({"phase": "loading_model", "message": f"Loading {self.model_type}"})
        model_dir = resolve_model_dir(self.model_type, config, progress_cb)
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        problem = (
            "multi_label_classification" if self.multi_label else "single_label_classification"
        )
        self.model = AutoModelForSequenceClassification.from_pretrained(
            model_dir,
            num_labels=len(self.label_names),
            id2label=dict(enumerate(self.label_names)),
            label2id={name: i for i, name in enumerate(self.label_names)},
            problem_type=problem,
            # A custom model may carry a head for another label count; it is replaced anyway.
            ignore_mismatched_sizes=True,
            **_cpu_attention_overrides(model_dir, plan),
        )
        prune_last_layer_to_cls(self.model)
        self.timings["load_seconds"] = time.perf_counter() - started
        output_dir = config.output_dir or tempfile.mkdtemp(prefix="medlitbot-train-")
        resume = config.resume_from_checkpoint
        if resume in ("latest", "last", "true", "True"):
            resume = get_last_checkpoint(output_dir)
        # Loading and tokenizing can take minutes: a stop asked for meanwhile is honoured at each
        # phase boundary, keeping the checkpoint this attempt would have resumed from.
        if should_stop():
            raise TrainingStopped(resume or None, "Training stopped before it began")

        progress_cb(
            {"phase": "tokenizing", "message": f"Tokenizing {len(train)} + {len(val)} texts"}
        )
        t0 = time.perf_counter()
        self.max_length = self._choose_max_length(train.texts, config.max_length)
        train_ds = self._tokenize(train, self.max_length)
        # Evaluation order is free: sorting by length makes eval batches nearly padding-free.
        val_sorted = val.subset(sorted(range(len(val)), key=lambda i: len(val.texts[i])))
        val_ds = self._tokenize(val_sorted, self.max_length) if len(val) else None
        self.timings["tokenize_seconds"] = time.perf_counter() - t0
        if should_stop():
            raise TrainingStopped(resume or None, "Training stopped before it began")

        on_gpu = plan.device == "cuda"
        args = TrainingArguments(
            output_dir=output_dir,
            num_train_epochs=config.epochs,
            per_device_train_batch_size=config.batch_size,
            per_device_eval_batch_size=max(32, config.batch_size * 2),
            gradient_accumulation_steps=config.gradient_accumulation_steps,
            # transformers 5 renamed gradient_checkpointing (the old name warns).
            activation_checkpointing=config.gradient_checkpointing,
            learning_rate=config.learning_rate,
            # One fused kernel instead of a dozen passes over every parameter: measured here
            # 90 -> 25 ms per MiniLM step. MPS keeps the default, which every version supports.
            optim="adamw_torch_fused" if plan.device in ("cpu", "cuda") else "adamw_torch",
            weight_decay=config.weight_decay,
            warmup_steps=float(config.warmup_ratio) if 0 < config.warmup_ratio < 1 else 0,
            eval_strategy="epoch" if val_ds is not None else "no",
            save_strategy="epoch",
            save_total_limit=2,
            load_best_model_at_end=val_ds is not None,
            metric_for_best_model="macro_f1",
            greater_is_better=True,
            logging_strategy="steps",
            logging_steps=5,
            report_to=[],
            disable_tqdm=True,
            use_cpu=plan.device == "cpu",
            bf16=plan.dtype == "bfloat16",
            fp16=plan.dtype == "float16",
            dataloader_num_workers=0,  # fork workers buy nothing here and hang on macOS
            dataloader_pin_memory=on_gpu,
            train_sampling_strategy="group_by_length",
            length_column_name="length",
            seed=config.seed,
        )

        forwarder = _make_progress_callback(progress_cb, should_stop)
        callbacks: list[Any] = [forwarder]
        if val_ds is not None and config.early_stopping_patience > 0:
            callbacks.append(
                EarlyStoppingCallback(early_stopping_patience=config.early_stopping_patience)
            )
        trainer_cls = _make_trainer_class()
        multi = self.multi_label

        def trainer_metrics(eval_pred: Any) -> dict[str, float]:
            from .metrics import apply_thresholds

            logits, labels = eval_pred.predictions, eval_pred.label_ids
            logits = logits[0] if isinstance(logits, tuple) else logits
            from sklearn.metrics import f1_score

            if multi:
                prob = 1 / (1 + np.exp(-logits))
                pred = apply_thresholds(prob, [0.5] * prob.shape[1])
                truth = labels.astype(np.int64)
            else:
                pred, truth = logits.argmax(axis=1), labels.astype(np.int64)
            return {
                "macro_f1": float(f1_score(truth, pred, average="macro", zero_division=0)),
                "micro_f1": float(f1_score(truth, pred, average="micro", zero_division=0)),
            }

        trainer = trainer_cls(
            model=self.model,
            args=args,
            train_dataset=train_ds,
            eval_dataset=val_ds,
            processing_class=self.tokenizer,
            # Multiples of 8 fill tensor cores and bound the number of distinct shapes on a GPU.
            data_collator=DataCollatorWithPadding(
                self.tokenizer, pad_to_multiple_of=8 if on_gpu else None
            ),
            compute_metrics=trainer_metrics,
            callbacks=callbacks,
            loss_weights=self._loss_weights(self._targets(train)),
            multi_label=self.multi_label,
            checkpoint_listener=forwarder,
        )
        # With disable_tqdm Trainer prints every log dict to stdout; progress_cb replaces that.
        trainer.remove_callback(PrinterCallback)
        start = {"epoch": 0.0, "total_epochs": config.epochs}
        if not resume:  # a resumed run reports its own first step once Trainer restores it
            start["step"] = 0
        progress_cb({"phase": "training", **start})
        t0 = time.perf_counter()
        try:
            result = trainer.train(resume_from_checkpoint=resume or None)
        except _StopRequested as stop:
            if stop.during_evaluation:
                # The epoch's steps are done and its evaluation was cut short: save the
                # checkpoint the epoch would have saved after it, so no step is lost.
                trainer._save_checkpoint(trainer.model, None)
            checkpoint = os.path.join(output_dir, f"checkpoint-{trainer.state.global_step}")
            raise TrainingStopped(
                checkpoint if os.path.isdir(checkpoint) else get_last_checkpoint(output_dir)
            ) from None
        self.timings["train_seconds"] = time.perf_counter() - t0
        self.timings["train_samples_per_second"] = float(
            result.metrics.get("train_samples_per_second", 0.0)
        )
        if forwarder.stopped:  # only if Trainer skipped the save that raises _StopRequested
            raise TrainingStopped(get_last_checkpoint(output_dir))

        # Trainer's accelerate wraps forward in autocast; unwrapped, the in-memory model predicts
        # exactly as the saved artifact will once loaded back.
        model = trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)
        self.model = model.float().eval()
        progress_cb({"phase": "evaluating", "message": "Tuning thresholds on validation"})
        if len(val):
            prob = self.predict_proba(val.texts)
            self._tune(val, prob)
            self.metrics = self._metrics_from_prob(val, prob)
        else:
            self.thresholds = [0.5] * len(self.label_names)
            self.metrics = {}
        best = trainer.state.best_model_checkpoint
        # The name only: the job's checkpoints are removed once it completes, so a path would
        # point at nothing; the name still says which step's weights these are.
        self.metrics["best_checkpoint"] = os.path.basename(best) if best else None
        self.timings["fit_seconds"] = time.perf_counter() - started
        if not config.output_dir:
            shutil.rmtree(output_dir, ignore_errors=True)
        del trainer
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return self.metrics

    # ---- inference ------------------------------------------------------------------------

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        import torch

        if self.model is None:
            raise RuntimeError("Model is not trained or loaded")
        plan = self.device_plan or plan_device()
        self.model.eval()
        multi = self.multi_label

        def head(output: Any, _mask: Any) -> Any:
            logits = output.logits.float()
            return torch.sigmoid(logits) if multi else torch.softmax(logits, dim=-1)

        return _forward_batches(
            self.model, self.tokenizer, texts, plan, self.max_length, head
        ).astype(np.float64)

    # ---- artifacts ------------------------------------------------------------------------

    def save(self, path: str) -> None:
        def write(tmp: Path) -> None:
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)

        manifest = self._manifest()
        manifest["max_length"] = self.max_length
        atomic_save(path, write, manifest)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> TransformerClassifier:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        plan = plan_device()
        plan.apply()
        clf = cls(manifest["model_type"], plan)
        clf._restore(manifest)
        clf.max_length = int(manifest.get("max_length", 256))
        clf.tokenizer = AutoTokenizer.from_pretrained(path)
        clf.model = AutoModelForSequenceClassification.from_pretrained(path).to(plan.device).eval()
        prune_last_layer_to_cls(clf.model)
        return clf

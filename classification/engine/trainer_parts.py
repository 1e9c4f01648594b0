"""The Hugging Face Trainer parts of TransformerClassifier.fit: the weighted-loss Trainer, the
callback that forwards progress and honours should_stop, the TrainingArguments and the metric.

This module imports torch and transformers at the top: fit() imports it only once the data is
tokenized (where the Trainer used to be built), so importing the engine stays light.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

from .device import DevicePlan
from .types import ProgressCallback, ShouldStop, TrainConfig


class StopRequested(Exception):
    """Raised inside Trainer once should_stop() is honoured, so nothing else runs after it."""

    def __init__(self, during_evaluation: bool) -> None:
        super().__init__("stop requested")
        self.during_evaluation = during_evaluation


def checkpoint_bytes(model: Any) -> int:
    """About what one checkpoint weighs: the weights plus AdamW's two fp32 moments per weight."""
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    moments = sum(2 * 4 * p.numel() for p in model.parameters() if p.requires_grad)
    return int(weights + moments)


class ProgressForwarder(TrainerCallback):
    """Forwards Trainer events to MedLitBot's progress_cb and honours should_stop().

    A stop is honoured at the first step boundary after it is asked for: that step's
    checkpoint is saved, and then StopRequested leaves Trainer at once. Letting Trainer
    wind down by itself instead costs an evaluation, a second save of the same checkpoint
    (on_epoch_end asks for both) and a reload of the best model: on a slow machine that
    outlasted the supervisor's grace and got the process killed mid-write.
    """

    def __init__(self, progress_cb: ProgressCallback, should_stop: ShouldStop) -> None:
        self.progress_cb = progress_cb
        self.should_stop = should_stop
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
            self.progress_cb({"phase": "training", "checkpoint_bytes": checkpoint_bytes(model)})
        return control

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        self.progress_cb({"phase": "training", **self._base(state, args), "loss": self.last_loss})
        if self.should_stop():
            self.stopped = True
            control.should_save = True  # leave a checkpoint to resume from
            control.should_training_stop = True
            control.should_evaluate = False
        return control

    def on_epoch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if control.should_evaluate:
            # Said before the evaluation rather than after it, so the job shows (and the
            # supervisor's stall clock allows for) the evaluation while it runs.
            self.progress_cb(
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
        if self.should_stop():
            raise StopRequested(during_evaluation=True)
        # Each batch is progress: a long evaluation is never a silence the watchdog may
        # mistake for a hang (the writer throttles what reaches the row).
        self.progress_cb({"phase": "evaluating", **self._base(state, args)})
        return control

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
        if self.stopped:
            raise StopRequested(during_evaluation=False)
        return control

    def checkpoint_saving(self, name: str) -> None:
        self.progress_cb({"phase": "training", "checkpoint_saving": name})

    def checkpoint_saved(self, path: str, seconds: float) -> None:
        base = self._base(self.state, self.args) if self.state is not None else {}
        self.progress_cb(
            {"phase": "training", **base, "checkpoint_path": path, "checkpoint_seconds": seconds}
        )

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> Any:
        logs = logs or {}
        if "loss" in logs:
            self.last_loss = float(logs["loss"])
            self.progress_cb(
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
        self.progress_cb({"phase": "evaluating", **self._base(state, args), "metrics": clean})
        return control


class WeightedLossTrainer(Trainer):
    """Trainer with class weights (single-label) or pos_weight (multi-label BCE)."""

    # Our loss is a per-batch mean: let Trainer divide it by the accumulation steps.
    loss_is_scaled_for_ga = False

    def __init__(
        self,
        *args: Any,
        loss_weights: Any = None,
        multi_label: bool = False,
        checkpoint_listener: ProgressForwarder | None = None,
        head_parameters: frozenset[str] = frozenset(),
        head_lr_scale: float = 1.0,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.loss_weights = loss_weights
        self.multi_label = multi_label
        self.checkpoint_listener = checkpoint_listener
        self.head_parameters = head_parameters
        self.head_lr_scale = head_lr_scale

    def create_optimizer(self, model: Any = None) -> Any:
        """Trainer's optimizer, with the freshly initialised head's weights in groups of their
        own at head_lr_scale times the learning rate.

        The pretrained body wants a small step; a random head at that step is still near its
        start when a one-epoch run ends (the scheduler scales every group alike).
        """
        had_one = self.optimizer is not None
        optimizer = super().create_optimizer(model)
        if had_one or self.head_lr_scale == 1.0 or not self.head_parameters:
            return optimizer
        owner = self.model if model is None else model
        head = {id(p) for n, p in owner.named_parameters() if n in self.head_parameters}
        for group in list(optimizer.param_groups):
            mine = [p for p in group["params"] if id(p) in head]
            if not mine:
                continue
            group["params"] = [p for p in group["params"] if id(p) not in head]
            optimizer.add_param_group({**{k: v for k, v in group.items() if k != "params"},
                                       "params": mine, "lr": group["lr"] * self.head_lr_scale})
        optimizer.param_groups[:] = [g for g in optimizer.param_groups if g["params"]]
        return optimizer

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

    def _loss_weights_on(self, device: Any) -> Any:
        # Copied once: a copy from pageable memory each step would make the host wait for the
        # GPU's forward pass before it could queue the backward.
        if self.loss_weights is not None and self.loss_weights.device != device:
            self.loss_weights = self.loss_weights.to(device)
        return self.loss_weights

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
        weights = self._loss_weights_on(logits.device)
        if self.multi_label:
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, labels.to(logits.dtype), pos_weight=weights
            )
        else:
            loss = torch.nn.functional.cross_entropy(logits, labels.long(), weight=weights)
        return (loss, outputs) if return_outputs else loss


def training_arguments(
    config: TrainConfig, plan: DevicePlan, output_dir: str, *, evaluate: bool
) -> TrainingArguments:
    """One epoch per evaluation and checkpoint; evaluate=False when there is no validation."""
    return TrainingArguments(
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
        eval_strategy="epoch" if evaluate else "no",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=evaluate,
        metric_for_best_model="macro_f1",
        greater_is_better=True,
        logging_strategy="steps",
        logging_steps=5,
        report_to=[],
        disable_tqdm=True,
        use_cpu=plan.device == "cpu",
        bf16=plan.dtype == "bfloat16",
        fp16=plan.dtype == "float16",
        # On a CPU, workers would take the cores the steps need, and they hang on macOS. On a
        # CUDA GPU they pad the next batches while it computes (H100: 1.08-1.3x samples/s),
        # and pinned memory lets the copies to it run without waiting for it.
        dataloader_num_workers=plan.dataloader_num_workers if plan.device == "cuda" else 0,
        dataloader_persistent_workers=plan.device == "cuda" and plan.dataloader_num_workers > 0,
        dataloader_pin_memory=plan.device == "cuda",
        accelerator_config={"non_blocking": plan.device == "cuda"},
        train_sampling_strategy="group_by_length",
        length_column_name="length",
        seed=config.seed,
    )


def f1_metrics(multi_label: bool) -> Callable[[Any], dict[str, float]]:
    """Trainer's compute_metrics: macro and micro F1 at a 0.5 threshold (tuned ones come later)."""

    def compute(eval_pred: Any) -> dict[str, float]:
        from sklearn.metrics import f1_score

        from .metrics import apply_thresholds

        logits, labels = eval_pred.predictions, eval_pred.label_ids
        logits = logits[0] if isinstance(logits, tuple) else logits
        if multi_label:
            prob = 1 / (1 + np.exp(-logits))
            truth = labels.astype(np.int64)
            # Validation rows without a label come from a dataset that kept them for training.
            pred = apply_thresholds(prob, [0.5] * prob.shape[1],
                                    allow_empty=bool((truth.sum(axis=1) == 0).any()))
        else:
            pred, truth = logits.argmax(axis=1), labels.astype(np.int64)
        return {
            "macro_f1": float(f1_score(truth, pred, average="macro", zero_division=0)),
            "micro_f1": float(f1_score(truth, pred, average="micro", zero_division=0)),
        }

    return compute

"""Fine-tuning BERT-style models with the Hugging Face Trainer, tuned for speed on small CPUs.

Where the speed comes from (measured by scripts/benchmark_training.py): texts are tokenized once
without padding, batches are padded only to their longest member (DataCollatorWithPadding) and
drawn from length-sorted groups, so the median demo text (~70 tokens) no longer pays for 256;
the last layer computes only the [CLS] row the head reads (cls_head.py); AdamW runs as one
fused kernel; on CPU, attention-probability dropout is off so SDPA runs its fused kernel; torch
uses one thread per physical core; the dtype is fp32 unless the chip has native bf16, and in
bf16 on a CPU attention runs in fp32 where that measures faster (cpu_attention.py). On a CUDA
GPU the batch grows until the GPU is busy (gpu_batch.py).
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import cpu_attention, fast_inference, gpu_batch, openvino_int8
from .artifacts import atomic_save
from .base import BaseClassifier
from .batching import forward_batches
from .cls_head import head_parameter_names, prune_last_layer_to_cls, start_head_at_prior
from .device import DevicePlan, cpu_has_fast_bf16, plan_device
from .loading import resolve_model_dir
from .types import ProgressCallback, ShouldStop, TextData, TrainConfig, TrainingStopped

if TYPE_CHECKING:
    from .trainer_parts import ProgressForwarder, WeightedLossTrainer

MIN_MAX_LENGTH = 32
# Dropout on attention probabilities keeps torch's SDPA off its fused flash kernel on CPU (that
# kernel takes no dropout) and materialises every (len x len) score matrix: with it off, MiniLM
# training steps measured 1.2-1.5x faster here. Hidden-state dropout stays as regularisation.
ATTENTION_DROPOUT_KEYS = ("attention_probs_dropout_prob", "attention_dropout")
# The multi-label head's step, as a multiple of the body's (trainer_parts.WeightedLossTrainer).
MULTI_LABEL_HEAD_LR_SCALE = 10.0


def _cpu_attention_overrides(model_dir: str, plan: DevicePlan) -> dict[str, float]:
    """Config overrides that let CPU training use fused attention; empty elsewhere.

    The eager (matmul) attention was measured against SDPA in bf16 as well: faster on unpadded
    batches, but 0.57x SDPA's speed on the demo's padded ones, so SDPA stays everywhere.
    """
    if plan.device != "cpu":
        return {}
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(model_dir)
    return {key: 0.0 for key in ATTENTION_DROPOUT_KEYS if getattr(config, key, None)}


class TransformerClassifier(fast_inference.FastPathMixin, BaseClassifier):
    def __init__(self, model_type: str, device_plan: DevicePlan | None = None) -> None:
        super().__init__(model_type, device_plan)
        self.model: Any = None
        self.tokenizer: Any = None
        self.max_length = 256
        # The int8 graph: built in a scratch folder by fit, copied into the artifact by save.
        self._fast_file: Path | None = None
        self._fast_scratch: tempfile.TemporaryDirectory[str] | None = None
        self._onnx: fast_inference.OnnxLogits | openvino_int8.OpenVinoLogits | None = None
        self._fast_calibration: list[str] = []
        self._gpu_choice: gpu_batch.BatchChoice | None = None

    # ---- training -------------------------------------------------------------------------

    def _loss_weights(self, y: np.ndarray, config: TrainConfig) -> Any:
        """Per-class loss weights, or None (plain cross-entropy) when the job turns them off.

        Suspected of making a one-epoch MiniLM underfit single-label data, and measured
        (scripts/compare_recipes.py, 1,573 single-label demo abstracts): the weights were never
        worse than plain cross-entropy, and at the old 5e-5 learning rate they kept the rarest
        class's recall (0.89 against 0.78). The underfitting was the step size: 5e-5 scored
        macro-F1 0.920 with plain cross-entropy, 1e-4 scored 0.948 (ModelSpec.learning_rate).
        """
        import torch

        if not config.class_weighted_loss:
            return None
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
        import torch
        from transformers.trainer_utils import get_last_checkpoint

        started = time.perf_counter()
        train = self._setup_labels(train, val, config)
        val = self.scorable(val)
        plan = self._prepare_run(config)
        self._load_pretrained(config, plan, progress_cb)
        attention = cpu_attention.use_for_training(self.model, plan)
        if attention:
            progress_cb({"phase": "loading_model", "message": f"On this CPU: {attention}"})
        self.timings["load_seconds"] = time.perf_counter() - started
        output_dir = config.output_dir or tempfile.mkdtemp(prefix="medlitbot-train-")
        resume = config.resume_from_checkpoint
        if resume in ("latest", "last", "true", "True"):
            resume = get_last_checkpoint(output_dir)
        # Loading and tokenizing can take minutes: a stop asked for meanwhile is honoured at each
        # phase boundary, keeping the checkpoint this attempt would have resumed from.
        if should_stop():
            raise TrainingStopped(resume or None, "Training stopped before it began")
        train_ds, val_ds = self._tokenize_splits(train, val, config, progress_cb)
        if should_stop():
            raise TrainingStopped(resume or None, "Training stopped before it began")
        config = self._fill_gpu(config, plan, len(train), resume, progress_cb)

        trainer, forwarder = self._build_trainer(
            train, train_ds, val_ds, config, plan, output_dir, progress_cb, should_stop
        )
        self._train(trainer, forwarder, config, output_dir, resume, progress_cb)
        self._fast_calibration = openvino_int8.calibration_sample(train.texts)
        self._tune_on_validation(trainer, val, progress_cb)
        self.timings["fit_seconds"] = time.perf_counter() - started
        if not config.output_dir:
            shutil.rmtree(output_dir, ignore_errors=True)
        del trainer
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return self.metrics

    def _prepare_run(self, config: TrainConfig) -> DevicePlan:
        """The device plan, applied, with seeds set and the libraries' progress bars off."""
        import datasets
        import transformers

        plan = self.device_plan or plan_device(use_mps=config.use_mps)
        self.device_plan = plan
        plan.apply()
        transformers.set_seed(config.seed)
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()  # bars end up as WARNING lines in Celery logs
        datasets.disable_progress_bars()
        return plan

    def _load_pretrained(
        self, config: TrainConfig, plan: DevicePlan, progress_cb: ProgressCallback
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

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

    def _tokenize_splits(
        self, train: TextData, val: TextData, config: TrainConfig, progress_cb: ProgressCallback
    ) -> tuple[Any, Any]:
        """Train and validation as datasets; validation is None when it has no labelled row."""
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
        return train_ds, val_ds

    def _fill_gpu(
        self, config: TrainConfig, plan: DevicePlan, rows: int, resume: str | None,
        progress_cb: ProgressCallback,
    ) -> TrainConfig:
        """On CUDA, the config with the batch and learning rate gpu_batch chooses."""
        import dataclasses

        import torch

        if plan.device != "cuda" or not config.fill_gpu:
            return config
        model_config = self.model.config
        choice = gpu_batch.choose_batch(
            requested=config.batch_size, learning_rate=config.learning_rate, rows=rows,
            epochs=config.epochs, accumulation=config.gradient_accumulation_steps,
            max_length=self.max_length, hidden=model_config.hidden_size,
            layers=model_config.num_hidden_layers,
            free_bytes=torch.cuda.mem_get_info(plan.device_index or 0)[0],
            resumed_batch=gpu_batch.checkpoint_batch(resume),
        )
        if choice.batch_size != config.batch_size:
            self._gpu_choice = choice
        progress_cb({"phase": "training", "message": f"On the GPU: {choice.reason}"})
        return dataclasses.replace(
            config, batch_size=choice.batch_size, learning_rate=choice.learning_rate
        )

    def _build_trainer(
        self,
        train: TextData,
        train_ds: Any,
        val_ds: Any,
        config: TrainConfig,
        plan: DevicePlan,
        output_dir: str,
        progress_cb: ProgressCallback,
        should_stop: ShouldStop,
    ) -> tuple[WeightedLossTrainer, ProgressForwarder]:
        from transformers import DataCollatorWithPadding, EarlyStoppingCallback, PrinterCallback

        from . import trainer_parts

        args = trainer_parts.training_arguments(
            config, plan, output_dir, evaluate=val_ds is not None
        )
        forwarder = trainer_parts.ProgressForwarder(progress_cb, should_stop)
        targets = self._targets(train)
        weights = self._loss_weights(targets, config)
        if self.multi_label:  # a resumed run's checkpoint replaces it
            start_head_at_prior(self.model, positive_share=targets.mean(axis=0), pos_weight=weights)
        callbacks: list[Any] = [forwarder]
        if val_ds is not None and config.early_stopping_patience > 0:
            callbacks.append(
                EarlyStoppingCallback(early_stopping_patience=config.early_stopping_patience)
            )
        trainer = trainer_parts.WeightedLossTrainer(
            model=self.model,
            args=args,
            train_dataset=train_ds,
            eval_dataset=val_ds,
            processing_class=self.tokenizer,
            # Multiples of 8 fill tensor cores and bound the number of distinct shapes on a GPU.
            data_collator=DataCollatorWithPadding(
                self.tokenizer, pad_to_multiple_of=8 if plan.device == "cuda" else None
            ),
            compute_metrics=trainer_parts.f1_metrics(self.multi_label),
            callbacks=callbacks,
            loss_weights=weights,
            multi_label=self.multi_label,
            checkpoint_listener=forwarder,
            head_parameters=head_parameter_names(self.model) if self.multi_label else frozenset(),
            head_lr_scale=MULTI_LABEL_HEAD_LR_SCALE,
        )
        # With disable_tqdm Trainer prints every log dict to stdout; progress_cb replaces that.
        trainer.remove_callback(PrinterCallback)
        return trainer, forwarder

    def _train(
        self,
        trainer: WeightedLossTrainer,
        forwarder: ProgressForwarder,
        config: TrainConfig,
        output_dir: str,
        resume: str | None,
        progress_cb: ProgressCallback,
    ) -> None:
        """Trainer.train from resume (a checkpoint path or None); TrainingStopped on a stop."""
        from transformers.trainer_utils import get_last_checkpoint

        from .trainer_parts import StopRequested

        start: dict[str, Any] = {"epoch": 0.0, "total_epochs": config.epochs}
        if not resume:  # a resumed run reports its own first step once Trainer restores it
            start["step"] = 0
        progress_cb({"phase": "training", **start})
        t0 = time.perf_counter()
        try:
            result = trainer.train(resume_from_checkpoint=resume or None)
        except StopRequested as stop:
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
        if forwarder.stopped:  # only if Trainer skipped the save that raises StopRequested
            raise TrainingStopped(get_last_checkpoint(output_dir))

    def _tune_on_validation(
        self, trainer: WeightedLossTrainer, val: TextData, progress_cb: ProgressCallback
    ) -> None:
        """Take the trained model out of Trainer, tune thresholds and score it on validation."""
        # Trainer's accelerate wraps forward in autocast; unwrapped, the in-memory model predicts
        # exactly as the saved artifact will once loaded back.
        model = trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)
        cpu_attention.restore(model)
        self.model = model.float().eval()
        progress_cb({"phase": "evaluating", "message": "Tuning thresholds on validation"})
        if len(val):
            raw = self.predict_proba_raw(val.texts)
            # Calibrated on validation first: thresholds and the fast path's verdict are judged
            # on the calibrated probabilities predict gives.
            prob = self._tune(val, raw)
            self.metrics = self._metrics_from_prob(val, prob, raw=raw)
            self._build_fast_path(val, prob, progress_cb)
        else:
            self.thresholds = [0.5] * len(self.label_names)
            self.metrics = {}
            self.fast_path = fast_inference.not_built("no validation rows to check it on")
        if self._gpu_choice is not None:  # what really trained, where it differs from asked
            self.metrics["train_batch_size"] = self._gpu_choice.batch_size
            self.metrics["train_learning_rate"] = self._gpu_choice.learning_rate
        best = trainer.state.best_model_checkpoint
        # The name only: the job's checkpoints are removed once it completes, so a path would
        # point at nothing; the name still says which step's weights these are.
        self.metrics["best_checkpoint"] = os.path.basename(best) if best else None

    # ---- inference ------------------------------------------------------------------------

    def predict_proba_raw(self, texts: list[str]) -> np.ndarray:
        import torch

        if self.model is None:
            raise RuntimeError("Model is not trained or loaded")
        plan = self.device_plan or plan_device()
        self.model.eval()
        multi = self.multi_label

        def head(output: Any, _mask: Any) -> Any:
            logits = output.logits.float()
            return torch.sigmoid(logits) if multi else torch.softmax(logits, dim=-1)

        return forward_batches(
            self.model, self.tokenizer, texts, plan, self.max_length, head
        ).astype(np.float64)

    def predict_proba_fast(self, texts: list[str]) -> np.ndarray:
        """The int8 path's probabilities, calibrated by the map fitted on the standard path's."""
        return self.calibration.apply(super().predict_proba_fast(texts))

    # ---- artifacts ------------------------------------------------------------------------

    def save(self, path: str) -> None:
        def write(tmp: Path) -> None:
            self.model.save_pretrained(tmp)
            self.tokenizer.save_pretrained(tmp)
            if self._fast_file is not None and self._fast_file.is_file():
                # The chosen recipe's folder alone: its graph (and OpenVINO's weights file).
                shutil.copytree(self._fast_file.parent,
                                tmp / Path(fast_inference.FILE).parent, dirs_exist_ok=True)

        manifest = self._manifest()
        manifest["max_length"] = self.max_length
        atomic_save(path, write, manifest)

    @classmethod
    def load(cls, path: str, manifest: dict[str, Any]) -> TransformerClassifier:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        plan = _plan_as_trained(plan_device(), manifest.get("device_plan") or {})
        plan.apply()
        clf = cls(manifest["model_type"], plan)
        clf._restore(manifest)
        clf.max_length = int(manifest.get("max_length", 256))
        clf.tokenizer = AutoTokenizer.from_pretrained(path)
        clf.model = AutoModelForSequenceClassification.from_pretrained(path).to(plan.device).eval()
        prune_last_layer_to_cls(clf.model)
        recipe = clf.fast_path.get("recipe")
        fast_file = Path(path) / fast_inference.recipe_file(recipe)
        clf._fast_file = fast_file if fast_file.is_file() else None
        if clf.fast_path.get("used"):
            reason = fast_inference.unavailable_reason(plan.device, recipe or "int8")
            if clf._fast_file is None or reason:
                # Trained where the path ran, loaded where it cannot: say so, use the standard.
                clf.fast_path = {**clf.fast_path, "used": False, "reason": (
                    f"it cannot run on this machine: {reason or 'its file is missing'}")}
        return clf


def _plan_as_trained(plan: DevicePlan, trained: dict[str, Any]) -> DevicePlan:
    """Keep the CPU dtype the model was trained and scored in, where this CPU runs it natively.

    The bf16-or-fp32 choice is timed, so a busy moment can flip it between training and loading;
    the loaded model would then predict a few 1e-4 away from the scores its metrics and
    thresholds were measured on.
    """
    dtype = trained.get("dtype")
    if plan.device != "cpu" or trained.get("device") != "cpu" or dtype == plan.dtype:
        return plan
    if dtype == "float32" or (dtype == "bfloat16" and cpu_has_fast_bf16()):
        plan.dtype = dtype
        plan.reason += f"; {dtype} kept as the model was trained, so it predicts as it was scored"
    return plan

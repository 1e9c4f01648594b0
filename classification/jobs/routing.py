"""Which training queue a job's message goes to: the CPU queue or the GPU one.

Decided when the job is queued (created or resumed), from the workers' heartbeat rows: a GPU
worker is one started with CUDA_VISIBLE_DEVICES on QUEUE_TRAINING_GPU. A message sent to a queue
nobody serves would wait forever, so "auto" takes the GPU queue only while a live worker serves
it. A person may pin the job (the `device_queue` setting); a job pinned to the GPU waits there
for a GPU worker, and its log says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings

from classification import ml_models

AUTO, GPU, CPU = "auto", "gpu", "cpu"


@dataclass(frozen=True)
class QueueChoice:
    queue: str
    note: str  # one line for the job's log: which queue, and why


def training_queue_gpu_workers() -> int:
    """How many live workers serve the GPU training queue now."""
    from core import selectors

    [coverage] = selectors.worker_queue_coverage(queues=[settings.QUEUE_TRAINING_GPU])
    return len(coverage.live)


def training_queue_choose(*, config: dict[str, Any] | None) -> QueueChoice:
    """The queue for a job with these settings, and the line its log opens with."""
    pin = ml_models.TrainConfig.from_dict(config or {}, strict=False).device_queue
    gpu, cpu = settings.QUEUE_TRAINING_GPU, settings.QUEUE_TRAINING
    if pin == CPU:
        return QueueChoice(cpu, f"queue: {cpu} (pinned to the CPU workers)")
    gpu_workers = training_queue_gpu_workers()
    if pin == GPU:
        if gpu_workers:
            return QueueChoice(gpu, f"queue: {gpu} (pinned to the GPU workers; "
                                    f"{gpu_workers} live)")
        return QueueChoice(gpu, f"queue: {gpu} (pinned to the GPU workers): no GPU worker is "
                                "running, so the job waits for a GPU worker to start")
    if gpu_workers:
        return QueueChoice(gpu, f"queue: {gpu} ({gpu_workers} live GPU worker(s))")
    return QueueChoice(cpu, f"queue: {cpu} (no GPU worker is running)")

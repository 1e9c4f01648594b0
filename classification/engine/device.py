"""Decide once per job where and how to run: device, threads, dtype, and why."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

MPS_SMOKE_TIMEOUT_S = 60.0


@dataclass
class DevicePlan:
    device: str = "cpu"  # "cpu" | "cuda" | "mps"
    threads: int = 1
    dtype: str = "float32"  # "float32" | "bfloat16" | "float16"
    reason: str = ""
    dataloader_num_workers: int = 0
    torch_version: str = ""
    transformers_version: str = ""
    platform: str = ""
    chip: str = ""
    env: dict[str, str] = field(default_factory=dict)
    # CUDA_VISIBLE_DEVICES as this process got it (None: unset, every GPU visible). A GPU worker
    # is started with one index, so its visible cuda:0 is that physical GPU.
    cuda_visible_devices: str | None = None
    physical_gpus: list[str] = field(default_factory=list)  # the GPUs it names, in order
    device_index: int | None = None  # the visible CUDA device it trains on (cuda:<index>)
    physical_gpu: str = ""  # that device's physical index (or UUID) as CUDA_VISIBLE_DEVICES says

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DevicePlan:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def apply(self) -> None:
        """Make the process follow the plan (threads, env) before any model work."""
        import torch

        for key, value in self.env.items():
            os.environ[key] = value
        if self.device == "cpu":
            torch.set_num_threads(self.threads)
            # Only settable before the first parallel op; harmless when already fixed.
            with contextlib.suppress(RuntimeError):
                torch.set_num_interop_threads(1)
        if self.device == "cuda":
            if self.device_index is not None:
                # `.to("cuda")` and the Trainer take the current device: make it the planned one.
                torch.cuda.set_device(self.device_index)
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
            # Dynamic padding gives every batch a new sequence length, and cuDNN's attention
            # builds a graph per shape: profiled on an H100, ~6 ms of host time per layer and
            # step, two thirds of the step. Flash and memory-efficient SDPA need no such build.
            torch.backends.cuda.enable_cudnn_sdp(False)


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _chip_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def physical_cores() -> int:
    import psutil

    cores = psutil.cpu_count(logical=False) or psutil.cpu_count() or 1
    # Containers often expose fewer CPUs than the host has cores.
    with contextlib.suppress(AttributeError):
        cores = min(cores, len(os.sched_getaffinity(0)))
    return max(1, cores)


def cpu_threads() -> int:
    """The torch threads a job uses on the CPU: every physical core, or fewer when CPU_THREADS
    says so. On a machine shared with other busy processes (a parallel test suite, another
    service), OpenMP threads beyond a job's share wait at every barrier for a descheduled one,
    and the job runs slower with more threads than with fewer."""
    cores = physical_cores()
    try:
        wanted = int(os.environ.get("CPU_THREADS") or 0)
    except ValueError:
        wanted = 0
    return min(cores, wanted) if wanted > 0 else cores


def cpu_has_fast_bf16(flags: set[str] | None = None) -> bool:
    # Without AMX or AVX512-BF16, bf16 matmuls are emulated (measured ~80x slower than fp32 here).
    flags = _cpu_flags() if flags is None else flags
    return bool({"amx_bf16", "avx512_bf16"} & flags)


def torch_dtype(name: str) -> Any:
    """The torch dtype a plan names ("float32", "bfloat16", "float16")."""
    import torch

    return {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(name, torch.float32)


def matmul_gflops(
    dtype_name: str, size: int = 256, seconds: float = 0.3, device: str = "cpu"
) -> float:
    """Best square-GEMM rate in the given dtype (on the CPU: on the current torch threads)."""
    import torch

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()  # GPU matmuls are asynchronous: time the finished work

    dtype = torch_dtype(dtype_name)
    a = torch.randn(size, size, dtype=dtype, device=device)
    b = torch.randn(size, size, dtype=dtype, device=device)
    a @ b
    sync()
    best = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        a @ b
        sync()
        best = max(best, 2.0 * size**3 / (time.perf_counter() - start) / 1e9)
    return best


def _fp32_bf16_rates(rounds: int = 3) -> tuple[float, float]:
    """Median fp32 and bf16 GEMM rates, timed in alternation.

    One timing each let a burst of load on a shared machine land on one dtype only (a plan once
    read "bf16 349 vs fp32 1 GFLOP/s"); alternating rounds see the same load, and the median
    drops the round a burst hit.
    """
    fp32: list[float] = []
    bf16: list[float] = []
    for _ in range(rounds):
        fp32.append(matmul_gflops("float32", seconds=0.1))
        bf16.append(matmul_gflops("bfloat16", seconds=0.1))
    return statistics.median(fp32), statistics.median(bf16)


def _mps_smoke_test(timeout: float) -> tuple[bool, str]:
    """Forward+backward of a small MLP on MPS in a thread; a hang or crash means CPU."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            import torch

            start = time.perf_counter()
            dev = torch.device("mps")
            model = torch.nn.Sequential(
                torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 4)
            ).to(dev)
            x = torch.randn(32, 256, device=dev)
            loss = model(x).float().pow(2).mean()
            loss.backward()
            torch.mps.synchronize()
            result["ok"] = True
            result["seconds"] = time.perf_counter() - start
        except Exception as exc:  # any failure means MPS is unusable for this job
            result["error"] = repr(exc)

    thread = threading.Thread(target=run, daemon=True, name="mps-smoke-test")
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return False, f"MPS smoke test did not finish within {timeout:.0f}s"
    if result.get("ok"):
        return True, f"MPS smoke test passed in {result['seconds']:.2f}s"
    return False, f"MPS smoke test failed: {result.get('error', 'unknown error')}"


def visible_gpus(value: str | None) -> list[str]:
    """The GPUs a CUDA_VISIBLE_DEVICES value names, in the order CUDA numbers them from 0."""
    if value is None:
        return []
    return [part.strip() for part in value.split(",") if part.strip()]


def physical_gpu(index: int, visible: str | None) -> str:
    """The physical GPU behind visible CUDA device `index`: "2" for cuda:0 under
    CUDA_VISIBLE_DEVICES=2; the index itself when the variable is unset."""
    named = visible_gpus(visible)
    return named[index] if index < len(named) else str(index)


def plan_cpu_only(reason: str) -> DevicePlan:
    """A CPU plan for models that never touch torch (the scikit-learn baselines).

    plan_device() asks torch about GPUs, and importing torch and transformers costs a TF-IDF job
    several seconds of its one- or two-second fit; a baseline has no other device to choose.
    """
    return DevicePlan(
        device="cpu",
        threads=cpu_threads(),
        reason=reason,
        platform=f"{platform.system()} {platform.release()} {platform.machine()}",
        chip=_chip_name(),
    )


def plan_device(*, use_mps: bool = False, smoke_timeout: float = MPS_SMOKE_TIMEOUT_S) -> DevicePlan:
    """The device a transformer job runs on: a CUDA GPU, else Apple Silicon's safe profile (with
    MPS only when asked and it passes a smoke test), else the CPU at its fastest dtype."""
    import torch
    import transformers

    plan = DevicePlan(
        torch_version=torch.__version__,
        transformers_version=transformers.__version__,
        platform=f"{platform.system()} {platform.release()} {platform.machine()}",
        chip=_chip_name(),
    )
    cores = cpu_threads()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    plan.cuda_visible_devices = visible
    plan.physical_gpus = visible_gpus(visible)
    if torch.cuda.is_available():
        return _plan_cuda(plan, cores=cores, visible=visible)
    if platform.system() == "Darwin" and platform.machine() == "arm64":
        return _plan_apple(plan, cores=cores, use_mps=use_mps, smoke_timeout=smoke_timeout)
    return _plan_cpu(plan, cores=cores, use_mps=use_mps)


def _plan_cuda(plan: DevicePlan, *, cores: int, visible: str | None) -> DevicePlan:
    import torch

    index = torch.cuda.current_device()
    plan.device = "cuda"
    plan.device_index = index
    plan.physical_gpu = physical_gpu(index, visible)
    plan.chip = torch.cuda.get_device_name(index)
    plan.threads = cores
    plan.dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    plan.dataloader_num_workers = min(2, cores)  # measured on an H100: 2 keep it fed
    given = (f"CUDA_VISIBLE_DEVICES={visible}" if visible is not None
             else "CUDA_VISIBLE_DEVICES unset")
    plan.reason = (f"CUDA GPU available: physical GPU {plan.physical_gpu} ({given}) as "
                   f"cuda:{index}; {plan.dtype} mixed precision")
    return plan


def _plan_apple(plan: DevicePlan, *, cores: int, use_mps: bool,
                smoke_timeout: float) -> DevicePlan:
    import torch

    # The field reports (seeds 002/003) saw segfaults and fork hangs: run the safe profile.
    plan.threads = max(1, min(cores, 4))
    plan.env = {
        "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": str(plan.threads),
        "MKL_NUM_THREADS": "1",
        "KMP_DUPLICATE_LIB_OK": "TRUE",
        "PYTORCH_ENABLE_MPS_FALLBACK": "1",
    }
    for key, value in plan.env.items():
        os.environ.setdefault(key, value)
    if not use_mps:
        plan.reason = "Apple Silicon: CPU safe profile (MPS not requested)"
        return plan
    if not torch.backends.mps.is_available():
        plan.reason = "Apple Silicon: MPS requested but not available; CPU safe profile"
        return plan
    ok, detail = _mps_smoke_test(smoke_timeout)
    if ok:
        plan.device = "mps"
        plan.reason = f"MPS requested; {detail}"
    else:
        plan.reason = f"MPS requested but rejected ({detail}); CPU safe profile"
    return plan


def _plan_cpu(plan: DevicePlan, *, cores: int, use_mps: bool) -> DevicePlan:
    import torch

    plan.threads = cores
    plan.env = {"TOKENIZERS_PARALLELISM": "false"}
    if cpu_has_fast_bf16():
        # The flags only say bf16 could be fast: time it, since a slower bf16 path costs far
        # more than the fp32 it would replace.
        torch.set_num_threads(cores)
        fp32, bf16 = _fp32_bf16_rates()
        plan.dtype = "bfloat16" if bf16 > 1.2 * fp32 else "float32"
        plan.reason = (
            f"CPU with native bf16 (AMX/AVX512-BF16), {_threads_said(cores)}; measured matmul "
            f"bf16 {bf16:.0f} vs fp32 {fp32:.0f} GFLOP/s: {plan.dtype}"
        )
    else:
        plan.reason = (
            f"CPU without native bf16 (bf16 would be emulated and far slower): fp32, "
            f"{_threads_said(cores)}, no dataloader workers"
        )
    if use_mps:
        plan.reason += "; MPS requested but this is not Apple Silicon"
    return plan


def _threads_said(threads: int) -> str:
    cores = physical_cores()
    if threads == cores:
        return f"{threads} threads = physical cores"
    return f"{threads} of {cores} physical cores (CPU_THREADS)"

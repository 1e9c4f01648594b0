"""The fast path's first recipe on a CPU: static int8 in the OpenVINO runtime.

Why (issue 29, `scripts/benchmark_inference.py`; MiniLM, 300 demo texts, length-sorted batches,
2 cores of an AVX512-BF16 Xeon without AMX, all sides in alternating rounds of one run):
a `pipeline()` loop 34 texts/s; the engine in bf16 2.0x that; ONNX Runtime's dynamic int8 graph
(the recipes after this one) 2.55x; OpenVINO fp32 1.1x, bf16 2.55x; **OpenVINO static int8
3.8x**, with probabilities within 0.0015 of fp32. Dynamic int8 quantizes every activation at
run time and ONNX Runtime's int8 kernels gain little over native bf16 on this CPU; static int8
measures the activation scales once, on calibration texts (NNCF, with SmoothQuant for
transformers), and OpenVINO's kernels use VNNI (and AMX where present) with no quantize step
per batch. Like every recipe it is judged on validation (fast_inference.verdict) and used only
where it keeps the standard path's quality.

The calibration texts are training texts: validation, on which the recipe is judged, is not
used to fit it.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

RECIPE = "openvino-int8"
KIND = "openvino-int8"
FILE = "fast/model.int8.xml"  # and its weights, model.int8.bin, beside it
CALIBRATION_TEXTS = 256


def _nncf() -> Any:
    """NNCF, with its usage telemetry off. Left alone it reports each call to Google Analytics
    (openvino-telemetry, no opt-in asked); a medical literature server sends nothing, and
    offline it would only wait. NNCF's own off switch, short of a consent file in $HOME, is
    this variable."""
    os.environ.setdefault("NNCF_CI", "1")
    import nncf

    return nncf


def unavailable_reason() -> str | None:
    """Why this machine cannot build or run the recipe; None when it can."""
    try:
        import openvino  # noqa: F401

        _nncf()
    except ImportError as exc:
        return f"OpenVINO is not installed ({exc.name})"
    return None


def calibration_sample(texts: list[str]) -> list[str]:
    """At most CALIBRATION_TEXTS texts spread over the whole list (a file may be sorted)."""
    step = max(1, len(texts) // CALIBRATION_TEXTS)
    return texts[::step][:CALIBRATION_TEXTS]


@contextlib.contextmanager
def _quiet_nncf() -> Iterator[None]:
    """NNCF draws progress bars on stdout and logs each algorithm at INFO: in a job's log that
    is noise; its warnings still come through the logger."""
    nncf = _nncf()
    nncf.set_log_level(logging.WARNING)
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def quantize(*, fp32: Path, target: Path, batches: list[dict[str, np.ndarray]]) -> None:
    """Quantize the fp32 ONNX graph with activation scales measured on `batches` (padded
    tokenizer outputs) and write it to target (.xml, its .bin beside it), atomically: the .xml,
    which names the model, lands last."""
    import openvino as ov

    nncf = _nncf()
    model = ov.Core().read_model(str(fp32))
    names = [port.get_any_name() for port in model.inputs]

    def feed(batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {k: np.asarray(batch[k], dtype=np.int64) for k in names}

    with _quiet_nncf():
        quantized = nncf.quantize(model, nncf.Dataset(batches, feed),
                                  model_type=nncf.ModelType.TRANSFORMER,
                                  subset_size=max(1, len(batches)))
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".openvino-", dir=target.parent) as scratch:
        part = Path(scratch) / target.name
        ov.save_model(quantized, str(part), compress_to_fp16=False)
        os.replace(part.with_suffix(".bin"), target.with_suffix(".bin"))
        os.replace(part, target)


class OpenVinoLogits:
    """A compiled OpenVINO model over the int8 graph; logits for padded numpy batches.

    fp32 for whatever is not int8, whatever the CPU's default: a model judged on one machine
    predicts the same on another (OpenVINO would pick bf16 on AMX)."""

    def __init__(self, path: Path, threads: int) -> None:
        import openvino as ov

        self.compiled: Any = ov.Core().compile_model(str(path), "CPU", {
            "INFERENCE_NUM_THREADS": max(1, threads), "PERFORMANCE_HINT": "LATENCY",
            "INFERENCE_PRECISION_HINT": "f32"})
        self.names = [port.get_any_name() for port in self.compiled.inputs]

    def __call__(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        # A request per call: one request is not safe to share between a worker's threads.
        request = self.compiled.create_infer_request()
        result = request.infer({k: np.asarray(inputs[k], dtype=np.int64) for k in self.names})
        return np.asarray(result[self.compiled.output(0)], dtype=np.float32)

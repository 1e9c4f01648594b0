"""Find a model's files offline first; download only when allowed, as a phase that can time out."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from .registry import (
    bundled_package_path,
    cached_snapshot,
    get_spec,
    how_to_get,
    local_model_dir,
)
from .types import ModelUnavailableError, ProgressCallback, TrainConfig

# Weights in other frameworks are large and useless to torch.
_IGNORE = [
    "*.h5",
    "*.msgpack",
    "*.ot",
    "flax_model*",
    "tf_model*",
    "rust_model*",
    "*.onnx",
    "coreml/*",
]


def _noop(_: dict[str, Any]) -> None:
    return None


def resolve_model_dir(
    model_type: str, config: TrainConfig, progress_cb: ProgressCallback | None = None
) -> str:
    """Local folder holding the model, found where its spec's weights come from.

    An explicit model_path wins; a hub model is looked for in the local model folder, then the
    HF cache, then (if allowed) downloaded.
    """
    progress_cb = progress_cb or _noop
    spec = get_spec(model_type)
    if config.model_path:
        path = Path(config.model_path)
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(
                f"model_path {path} holds no config.json: it must be a Hugging Face model folder "
                "(save_pretrained output)."
            )
        return str(path)
    if spec.weights == "model_path":
        raise ModelUnavailableError(
            f"The {model_type} model type needs model_path: " + how_to_get(model_type)
        )
    if spec.weights == "package":
        assert spec.package is not None
        bundled = bundled_package_path(spec.package)
        if bundled is None:
            raise ModelUnavailableError(
                f"The bundled model files for {model_type} are missing: " + how_to_get(model_type)
            )
        return str(bundled)
    if spec.weights == "none":
        raise ValueError(f"{model_type} has no pretrained model to load")
    local = local_model_dir(model_type, config.model_dir)
    if local is not None:
        return str(local)
    assert spec.hub_id is not None
    cached = cached_snapshot(spec.hub_id)
    if cached is not None:
        return cached
    if not config.allow_download:
        raise ModelUnavailableError(
            f"{spec.label} ({spec.hub_id}) is not on this machine and downloads are off. "
            + how_to_get(model_type)
        )
    return download_with_timeout(spec.hub_id, model_type, config.download_timeout, progress_cb)


def download_with_timeout(
    hub_id: str, model_type: str, timeout: float, progress_cb: ProgressCallback
) -> str:
    """snapshot_download in a daemon thread so that a stalled network can be walked away from."""
    from huggingface_hub import snapshot_download

    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["path"] = snapshot_download(
                hub_id,
                ignore_patterns=_IGNORE,
                etag_timeout=min(10.0, max(1.0, timeout / 2)),
            )
        except Exception as exc:  # surfaced to the caller as ModelUnavailableError
            outcome["error"] = exc

    start = time.monotonic()
    progress_cb(
        {"phase": "loading_model", "message": f"Downloading {hub_id} (limit {timeout:.0f}s)"}
    )
    thread = threading.Thread(target=run, daemon=True, name=f"download-{model_type}")
    thread.start()
    while thread.is_alive():
        remaining = timeout - (time.monotonic() - start)
        if remaining <= 0:
            break
        thread.join(min(2.0, remaining))
        if thread.is_alive():
            progress_cb(
                {
                    "phase": "loading_model",
                    "message": f"Downloading {hub_id}: "
                    f"{time.monotonic() - start:.0f}s of {timeout:.0f}s",
                }
            )
    elapsed = time.monotonic() - start
    if thread.is_alive():
        # The thread is a daemon: it dies with the process and no longer blocks this job.
        raise ModelUnavailableError(
            f"Downloading {hub_id} did not finish within {timeout:.0f}s (offline or slow network). "
            + how_to_get(model_type)
        )
    if "error" in outcome:
        exc = outcome["error"]
        raise ModelUnavailableError(
            f"Could not download {hub_id} after {elapsed:.1f}s ({type(exc).__name__}: "
            f"{str(exc).splitlines()[0][:200] if str(exc) else 'no detail'}). "
            + how_to_get(model_type)
        ) from exc
    return str(outcome["path"])

"""bf16 training on a CPU computes attention in fp32, where that is measured to be faster.

PyTorch's CPU flash-attention backward is much slower in bf16 than in fp32: on an AMX Xeon,
35.5 ms against 8.4 ms for 16 x 12 heads x 128 tokens x 32 (the forward: 2.3 against 3.3 ms),
and it was 40% of a MiniLM training step under bf16 autocast. With query, key and value cast
to fp32 for SDPA alone (the matmuls around it stay bf16), MiniLM steps on length-sorted demo
batches ran 1.40-1.53x faster there (docs/figures/engine.md). fp32 attention is also the more
precise of the two, so it cannot cost quality.

The choice is measured on the machine once per process (~0.1 s), never assumed from the CPU's
flags, and only training uses it: prediction has no backward pass and keeps bf16 SDPA.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from .device import DevicePlan

NAME = "medlitbot_sdpa_fp32"
STANDARD = "sdpa"
MIN_SPEEDUP = 1.2  # forward plus backward, fp32 over bf16, for the switch to be worth it


def _sdpa_in_fp32(
    module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any
) -> tuple[Any, Any]:
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    dtype = query.dtype
    if dtype == torch.float32:
        return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)
    if attention_mask is not None and attention_mask.is_floating_point():
        attention_mask = attention_mask.float()
    # Autocast would cast SDPA's inputs straight back to bf16.
    with torch.autocast("cpu", enabled=False):
        out, weights = sdpa_attention_forward(
            module, query.float(), key.float(), value.float(), attention_mask, **kwargs
        )
    return out.to(dtype), weights


@functools.cache
def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, _sdpa_in_fp32)
    AttentionMaskInterface.register(NAME, sdpa_mask)


@functools.cache
def fp32_speedup(batch: int = 8, heads: int = 12, length: int = 128, head_dim: int = 32) -> float:
    """Time of SDPA forward + backward in bf16 over the same in fp32, on this process's threads."""
    import torch
    import torch.nn.functional as F

    def best_of(dtype: Any, reps: int = 3) -> float:
        shape = (batch, heads, length, head_dim)
        q, k, v = (torch.randn(shape, dtype=dtype, requires_grad=True) for _ in range(3))
        grad = torch.randn(shape, dtype=dtype)
        F.scaled_dot_product_attention(q, k, v).backward(grad)  # warm-up
        best = float("inf")
        for _ in range(reps):
            start = time.perf_counter()
            F.scaled_dot_product_attention(q, k, v).backward(grad)
            best = min(best, time.perf_counter() - start)
        return best

    return best_of(torch.bfloat16) / best_of(torch.float32)


def use_for_training(model: Any, plan: DevicePlan) -> str | None:
    """Switch the model's attention to fp32 SDPA when the plan trains in bf16 on a CPU and this
    machine runs it faster; the reason to show, or None when the model keeps its attention."""
    if plan.device != "cpu" or plan.dtype != "bfloat16":
        return None
    if getattr(model.config, "_attn_implementation", None) != STANDARD:
        return None
    speedup = fp32_speedup()
    if speedup < MIN_SPEEDUP:
        return None
    _register()
    model.set_attn_implementation(NAME)
    return (f"attention computed in fp32 while training: forward and backward run "
            f"{speedup:.1f}x faster than in bf16 here")


def restore(model: Any) -> None:
    """Back to the standard attention, for prediction and for the saved model."""
    if getattr(model.config, "_attn_implementation", None) == NAME:
        model.set_attn_implementation(STANDARD)

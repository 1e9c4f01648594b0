"""Skip the dead work in a BERT classifier's last layer: only the [CLS] position is read.

A sequence classifier pools hidden[:, 0] of the last layer, so in that layer every other
position's query, attention output, output projection and feed-forward block is computed and
thrown away; only the keys and values of all positions feed the [CLS] row. Computing just what
is read removes about 10/12 of the last layer's matmuls (1/7 of MiniLM's, 1/14 of a 12-layer
BERT's), in training and in prediction alike, and gives the same logits up to float rounding
(tests/test_engine_cls_only_last_layer_matches_the_full_model.py). The weights and the saved
artifact are untouched: only the layer instance's forward is replaced.
"""

from __future__ import annotations

import types
from typing import Any

# Model types whose sequence-classification head reads only position 0 of a BertLayer stack.
SUPPORTED_MODEL_TYPES = frozenset({"bert"})


def _cls_only_forward(
    layer: Any,
    hidden_states: Any,
    attention_mask: Any = None,
    *args: Any,
    **kwargs: Any,
) -> Any:
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
    from transformers.models.bert.modeling_bert import eager_attention_forward

    attn = layer.attention.self
    cls = hidden_states[:, :1]
    batch = hidden_states.shape[0]

    def heads(x: Any) -> Any:
        return x.view(batch, x.shape[1], -1, attn.attention_head_size).transpose(1, 2)

    query = heads(attn.query(cls))
    key, value = heads(attn.key(hidden_states)), heads(attn.value(hidden_states))
    if attention_mask is not None and attention_mask.dim() == 4:
        attention_mask = attention_mask[:, :, :1, :]  # the [CLS] query's row of the mask
    interface = ALL_ATTENTION_FUNCTIONS.get_interface(
        attn.config._attn_implementation, eager_attention_forward
    )
    context, _ = interface(
        attn,
        query,
        key,
        value,
        attention_mask,
        dropout=attn.dropout.p if attn.training else 0.0,
        scaling=attn.scaling,
    )
    attention_output = layer.attention.output(context.reshape(batch, 1, -1), cls)
    return layer.feed_forward_chunk(attention_output)


def prune_last_layer_to_cls(model: Any) -> bool:
    """Make a BERT sequence classifier compute only the [CLS] row of its last layer.

    Returns whether it did: other architectures, decoders and models asked for attentions or
    hidden states are left as they are.
    """
    config = getattr(model, "config", None)
    if config is None or getattr(config, "model_type", None) not in SUPPORTED_MODEL_TYPES:
        return False
    if config.is_decoder or config.add_cross_attention:
        return False
    if config.output_attentions or config.output_hidden_states:
        return False
    if not type(model).__name__.endswith("ForSequenceClassification"):
        return False
    layer = model.base_model.encoder.layer[-1]
    if not hasattr(layer, "feed_forward_chunk"):
        return False
    layer.forward = types.MethodType(_cls_only_forward, layer)
    return True


def _head_linear(model: Any) -> Any:
    """The classifier's last Linear layer (the one giving the logits), or None."""
    import torch

    head = getattr(model, "classifier", None)
    linears = [m for m in head.modules() if isinstance(m, torch.nn.Linear)] if head else []
    num_labels = getattr(getattr(model, "config", None), "num_labels", None)
    return linears[-1] if linears and linears[-1].out_features == num_labels else None


def head_parameter_names(model: Any) -> frozenset[str]:
    """The names of the randomly initialised classifier's parameters (empty if not found)."""
    return frozenset(n for n, _ in model.named_parameters() if n.startswith("classifier."))


def start_head_at_prior(model: Any, *, positive_share: Any, pos_weight: Any = None) -> bool:
    """Set each label's logit bias to the constant its (weighted) BCE loss is lowest at.

    A fresh head starts every label at p = 0.5: a label on 5% of the rows is then predicted
    everywhere, and a short run spends its first steps unlearning that rather than reading the
    text. With pos_weight w the best constant logit is log(w p / (1 - p)).
    """
    import torch

    linear = _head_linear(model)
    if linear is None or linear.bias is None:
        return False
    share = torch.as_tensor(positive_share, dtype=torch.float32).clamp(1e-3, 1 - 1e-3)
    weight = torch.ones_like(share) if pos_weight is None else pos_weight.float().cpu()
    with torch.no_grad():
        linear.bias.copy_(torch.log(weight * share / (1 - share)).to(linear.bias))
    return True

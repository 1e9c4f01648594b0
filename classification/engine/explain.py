"""Per-prediction explanations: the words that pushed each label's score up or down.

The method follows what the classifier is made of, read through its attributes and never
changed (a loaded classifier is shared by the threads of a web process):

- TF-IDF + a linear head: exact. A linear score is the sum over the text's n-gram features of
  coefficient x tf-idf value, plus the intercept. Each n-gram's share is spread evenly over the
  words it covers, so the word weights plus the intercept add up to the score as well. With
  char_wb n-grams beside the words (a FeatureUnion), each piece's share goes to the word(s) of
  the token it lies in (tfidf_spans.py), and the listed terms are those words, each with the
  sum of its n-grams' and pieces' shares.
- A transformer (fine-tuned, or the frozen MiniLM encoder under a logistic regression):
  Integrated Gradients (Captum) from the text's word embeddings to those of the same text with
  every word replaced by [PAD]; token attributions are summed per word. Their sum plus the
  baseline's score is the score, up to `delta` (the integral's numerical error). Each label
  costs n_steps forward and backward passes, so the step count is fitted to the text's length.

Every score is a logit (log-odds for a label of its own, softmax input for one of exclusive
classes), so weights compare across labels and methods. Nothing here imports Django.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .registry import REGISTRY
from .tfidf_spans import feature_spans

# Integrated Gradients' cost is about steps x tokens (a forward and a backward pass each):
# this budget keeps one label of one abstract under 2 s on a 2-core CPU, 1.3 s typically
# (scripts/benchmark_explanations.py). The floor is what accuracy needs: on 256-token abstracts
# a fine-tuned MiniLM's word weights at 10 steps correlate at r >= 0.99 with a 48-step
# reference, with the same top word; at 8 steps r fell to 0.95 and the top word changed.
TOKEN_STEP_BUDGET = 2560
MIN_STEPS, MAX_STEPS = 10, 32
# Interpolated inputs per forward pass: bounds memory; wider or narrower was no faster here.
BATCH_TOKENS = 1024
LINEAR = "linear"
GRADIENTS = "integrated_gradients"

Span = tuple[int, int, float]


class ExplanationUnavailable(ValueError):
    """This kind of classifier has no explanation method."""


def explanation_method(classifier: Any) -> str:
    """LINEAR or GRADIENTS for this classifier; ExplanationUnavailable for anything else."""
    if getattr(classifier, "members", None) is not None:
        # Members explain in different units (TF-IDF terms, gradients): no honest weighted sum.
        raise ExplanationUnavailable(
            "An ensemble's predictions cannot be explained: its members weigh words in "
            "different ways. Explain one of its member models instead.")
    spec = REGISTRY.get(str(getattr(classifier, "model_type", "")))
    if spec is not None and not spec.explainable:
        raise ExplanationUnavailable(
            f"Predictions of a {getattr(classifier, 'model_type', 'this')} model cannot be "
            "explained word by word: its sentence embeddings carry part of every score.")
    if getattr(classifier, "vectorizer", None) is not None and _head(classifier) is not None:
        return LINEAR
    if getattr(classifier, "model", None) is not None and getattr(classifier, "tokenizer", None):
        return GRADIENTS
    if _head(classifier) is not None and callable(getattr(classifier, "_encoder_parts", None)):
        return GRADIENTS
    raise ExplanationUnavailable(
        f"Predictions of a {getattr(classifier, 'model_type', 'this')} model cannot be explained."
    )


def explain(
    classifier: Any,
    text: str,
    *,
    labels: Sequence[str] | None = None,
    top_k: int = 10,
    n_steps: int | None = None,
) -> dict[str, Any]:
    """Why the classifier scored `text` as it did, for each of `labels`.

    labels=None explains the predicted labels (the most probable one when none is predicted).
    Returns {"model_type", "method", "score_kind", "truncated_at", "explanations": [{"label",
    "probability", "predicted", "score", "base_score", "delta", "positive": [{"term", "weight",
    ...}], "negative": [...], "spans": [(start, end, weight)]}]}: spans are character offsets
    into `text`, one per word that carries weight; positive/negative are the top_k terms
    (n-grams for TF-IDF, words for transformers). ValueError on an empty text or an unknown label.
    """
    method = explanation_method(classifier)
    prediction = classifier.predict([text])[0]  # also refuses an empty text, as predict does
    names = list(classifier.label_names)
    chosen = _chosen_labels(names, prediction, labels)
    indices = [names.index(label) for label in chosen]
    if method == LINEAR:
        rows, score_kind, truncated_at = _linear(classifier, text, indices, top_k)
    else:
        rows, score_kind, truncated_at = _gradients(classifier, text, indices, top_k, n_steps)
    rows = [{"label": label, "probability": float(prediction["probabilities"][label]),
             "predicted": label in prediction["labels"], **row}
            for label, row in zip(chosen, rows, strict=True)]
    return {"model_type": getattr(classifier, "model_type", ""), "method": method,
            "score_kind": score_kind, "truncated_at": truncated_at, "explanations": rows}


def _chosen_labels(
    names: list[str], prediction: dict[str, Any], labels: Sequence[str] | None
) -> list[str]:
    if labels is None:
        probabilities = prediction["probabilities"]
        return list(prediction["labels"]) or [max(names, key=lambda n: probabilities[n])]
    if isinstance(labels, str):
        raise TypeError("labels is a list of label names, not one string")
    unknown = [label for label in labels if label not in names]
    if unknown:
        raise ValueError(f"Unknown label {unknown[0]!r}; this model knows: {', '.join(names)}")
    return list(dict.fromkeys(labels))


def _head(classifier: Any) -> Any:
    head = getattr(classifier, "head", None)
    return head if head is not None else getattr(classifier, "estimator", None)


def _is_calibrated(head: Any) -> bool:
    inner = getattr(head, "estimators_", None)
    return hasattr(inner[0] if inner else head, "calibrated_classifiers_")


def _top_terms(weights: dict[str, float], top_k: int, extra: dict[str, dict] | None = None
               ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    extra = extra or {}
    ranked = sorted(weights.items(), key=lambda kv: kv[1])
    positive = [{"term": t, "weight": w, **extra.get(t, {})} for t, w in reversed(ranked) if w > 0]
    negative = [{"term": t, "weight": w, **extra.get(t, {})} for t, w in ranked if w < 0]
    return positive[:top_k], negative[:top_k]


# ---- linear heads -----------------------------------------------------------------------------


def linear_score_parts(head: Any, label_index: int, multi_label: bool) -> tuple[Any, float] | None:
    """(w, b) with score = x.w + b for one label of a scikit-learn linear head, in logit units.

    None when the label's score does not depend on the text (a label constant in training).
    A calibrated SVM's probability is the mean of its cross-validation folds' sigmoids; its
    score here is the mean of the folds' calibrated logits, which is linear in x.
    """
    if multi_label:
        estimators = getattr(head, "estimators_", None)
        if estimators is None:
            raise ExplanationUnavailable(f"A {type(head).__name__} head is not explained.")
        return _binary_parts(estimators[label_index])
    return _class_parts(head, label_index)


def _binary_parts(estimator: Any) -> tuple[Any, float] | None:
    """A one-vs-rest column's estimator: the logit of its positive class (1)."""
    if not hasattr(estimator, "classes_") and not hasattr(estimator, "calibrated_classifiers_"):
        return None  # scikit-learn's _ConstantPredictor: the label never varied in training
    return _class_parts(estimator, 1)


def _class_parts(estimator: Any, cls: int) -> tuple[Any, float] | None:
    import numpy as np

    folds = getattr(estimator, "calibrated_classifiers_", None)
    if folds is None:
        return _plain_parts(estimator, cls)
    parts = []
    for fold in folds:
        plain = _plain_parts(fold.estimator, cls)
        column = _column(fold.estimator, cls)
        if plain is None or column is None or getattr(fold, "method", "sigmoid") != "sigmoid":
            continue
        sign = 1.0 if column >= 0 else -1.0  # binary: the calibrator models classes_[1]
        calibrator = fold.calibrators[max(column, 0)]
        a, b = float(calibrator.a_), float(calibrator.b_)
        w, c = plain
        # _SigmoidCalibration: p = expit(-(a * margin + b)); plain already carries the sign.
        parts.append((-a * w, -a * c - sign * b))
    if not parts:
        return None
    return np.mean([w for w, _ in parts], axis=0), float(np.mean([b for _, b in parts]))


def _column(estimator: Any, cls: int) -> int | None:
    """Which decision column scores cls: its index, or -1 for classes_[0] of a binary one."""
    classes = [int(c) for c in getattr(estimator, "classes_", [])]
    if cls not in classes:
        return None
    if len(classes) == 2:
        return 0 if cls == classes[1] else -1
    return classes.index(cls)


def _plain_parts(estimator: Any, cls: int) -> tuple[Any, float] | None:
    import numpy as np

    coef = getattr(estimator, "coef_", None)
    column = _column(estimator, cls)
    if coef is None or column is None:
        return None
    coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef, dtype=np.float64)
    intercept = np.atleast_1d(np.asarray(getattr(estimator, "intercept_", 0.0), dtype=np.float64))
    if column < 0:  # binary: the decision is the logit of classes_[1]; classes_[0] is its negative
        return -coef[0], -float(intercept[0])
    return coef[column], float(intercept[column] if intercept.size > column else intercept[0])


def _linear(classifier: Any, text: str, indices: list[int], top_k: int
            ) -> tuple[list[dict[str, Any]], str, None]:
    import numpy as np

    vectorizer, head = classifier.vectorizer, _head(classifier)
    x = vectorizer.transform([text]).tocsr()
    features, values = x.indices, x.data.astype(np.float64)
    words, grams = feature_spans(vectorizer, text)
    # With char n-grams beside the words, the evidence is per word: a piece like "cardi" means
    # little alone, and the words' weights are what sums to the score.
    by_word = getattr(vectorizer, "transformer_list", None) is not None
    names = {f: term for f, (term, _) in grams.items()}
    if any(int(f) not in names for f in features):
        all_names = vectorizer.get_feature_names_out()  # rare: a feature not found in the text
        names.update({int(f): str(all_names[f]) for f in features if int(f) not in names})
    rows = []
    for j in indices:
        parts = linear_score_parts(head, j, classifier.multi_label)
        if parts is None:
            rows.append({"score": None, "base_score": None, "delta": 0.0, "positive": [],
                         "negative": [], "spans": []})
            continue
        w, b = parts
        contributions = values * w[features]
        word_weights = np.zeros(len(words))
        for f, c in zip(features, contributions, strict=True):
            occurrences = grams.get(int(f), ("", []))[1]
            for covered in occurrences:
                for k in covered:
                    word_weights[k] += c / len(occurrences) / len(covered)
        if by_word:
            by_term: dict[str, float] = {}
            for (s, e), wt in zip(words, word_weights, strict=True):
                term = text[s:e].lower()
                by_term[term] = by_term.get(term, 0.0) + float(wt)
            for f, c in zip(features, contributions, strict=True):
                if int(f) not in grams:  # not located: still counted, under its own name
                    by_term[names[int(f)]] = by_term.get(names[int(f)], 0.0) + float(c)
            positive, negative = _top_terms(by_term, top_k)
        else:
            by_term = {names[int(f)]: float(c)
                       for f, c in zip(features, contributions, strict=True)}
            extra = {names[int(f)]: {"value": float(v), "coefficient": float(w[f])}
                     for f, v in zip(features, values, strict=True)}
            positive, negative = _top_terms(by_term, top_k, extra)
        rows.append({
            "score": float(contributions.sum() + b), "base_score": b, "delta": 0.0,
            "positive": positive, "negative": negative,
            "spans": sorted((s, e, float(wt)) for (s, e), wt
                            in zip(words, word_weights, strict=True) if wt != 0.0),
        })
    calibrated = "mean calibrated logit of the cross-validated SVMs"
    return rows, calibrated if _is_calibrated(head) else "logit", None


# ---- transformers: Integrated Gradients --------------------------------------------------------


def integrated_gradient_steps(n_tokens: int) -> int:
    return max(MIN_STEPS, min(MAX_STEPS, TOKEN_STEP_BUDGET // max(1, n_tokens)))


def _gradient_parts(classifier: Any, indices: list[int]) -> tuple[Any, Any, int, Callable]:
    """(embedding layer, tokenizer, max_length, scores(inputs_embeds, mask) -> (n, labels))."""
    import torch

    model = getattr(classifier, "model", None)
    if model is not None:
        def scores(embeds: Any, mask: Any) -> Any:
            return model(inputs_embeds=embeds, attention_mask=mask).logits.float()

        return model.get_input_embeddings(), classifier.tokenizer, classifier.max_length, scores
    # Frozen MiniLM encoder -> mean pooling -> L2 norm -> logistic regression, as the classifier
    # computes its features (baselines.encode_mean_pooled), made differentiable end to end.
    encoder, tokenizer, _plan = classifier._encoder_parts()
    config = getattr(classifier, "config", None)
    max_length = int(getattr(config, "max_length", 0) or 256)
    n_labels = len(classifier.label_names)
    weight = torch.zeros(n_labels, encoder.config.hidden_size)
    bias = torch.zeros(n_labels)
    for j in indices:
        parts = linear_score_parts(_head(classifier), j, classifier.multi_label)
        if parts is not None:
            weight[j] = torch.as_tensor(parts[0], dtype=torch.float32)
            bias[j] = parts[1]
    device = next(encoder.parameters()).device
    weight, bias = weight.to(device), bias.to(device)

    def pooled_scores(embeds: Any, mask: Any) -> Any:
        hidden = encoder(inputs_embeds=embeds, attention_mask=mask).last_hidden_state.float()
        m = mask.unsqueeze(-1).to(hidden.dtype)
        mean = (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
        return torch.nn.functional.normalize(mean, dim=-1) @ weight.T + bias

    return encoder.get_input_embeddings(), tokenizer, max_length, pooled_scores


def _gradients(classifier: Any, text: str, indices: list[int], top_k: int,
               n_steps: int | None) -> tuple[list[dict[str, Any]], str, int | None]:
    import torch
    from captum.attr import IntegratedGradients

    embedding, tokenizer, max_length, scores = _gradient_parts(classifier, indices)
    encoded = tokenizer(text, truncation=True, max_length=max_length,
                        return_offsets_mapping=True)
    device = embedding.weight.device
    ids = torch.tensor([encoded["input_ids"]], device=device)
    special_ids = set(tokenizer.all_special_ids)
    special = torch.tensor([[i in special_ids for i in encoded["input_ids"]]], device=device)
    filler = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    mask = torch.ones_like(ids)
    with torch.no_grad():
        inputs = embedding(ids).float()
        baseline = embedding(torch.where(special, ids, torch.full_like(ids, filler))).float()
        both = scores(torch.cat([inputs, baseline]), mask.expand(2, -1))
    n_tokens = ids.shape[1]
    steps = n_steps or integrated_gradient_steps(n_tokens)
    ig = IntegratedGradients(scores)
    words = _words(encoded, text)
    rows = []
    for j in indices:
        attributions, delta = ig.attribute(
            inputs, baselines=baseline, target=j, additional_forward_args=(mask,),
            n_steps=steps, internal_batch_size=max(1, BATCH_TOKENS // n_tokens),
            return_convergence_delta=True,
        )
        per_token = attributions.sum(dim=-1)[0].detach().cpu().double().numpy()
        spans = [(s, e, float(per_token[toks].sum())) for s, e, toks in words]
        by_word: dict[str, float] = {}
        for s, e, w in spans:
            term = text[s:e].lower()
            by_word[term] = by_word.get(term, 0.0) + w
        positive, negative = _top_terms(by_word, top_k)
        rows.append({"score": float(both[0, j]), "base_score": float(both[1, j]),
                     "delta": float(delta.reshape(-1)[0]), "steps": steps,
                     "positive": positive, "negative": negative,
                     "spans": [span for span in spans if span[2] != 0.0]})
    return rows, "logit", _truncated_at(encoded, text)


def _words(encoded: Any, text: str) -> list[tuple[int, int, list[int]]]:
    """(start, end, token positions) per word the tokenizer saw; special tokens have none."""
    offsets = encoded["offset_mapping"]
    try:
        word_ids = encoded.word_ids()
    except (AttributeError, ValueError):  # a slow tokenizer: every token is its own word
        word_ids = [i if e > s else None for i, (s, e) in enumerate(offsets)]
    words: dict[int, tuple[int, int, list[int]]] = {}
    for position, (word, (s, e)) in enumerate(zip(word_ids, offsets, strict=True)):
        if word is None or e <= s:
            continue
        start, end, tokens = words.get(word, (s, e, []))
        words[word] = (min(start, s), max(end, e), [*tokens, position])
    return sorted(words.values())


def _truncated_at(encoded: Any, text: str) -> int | None:
    """The character offset where the model stopped reading, when it did not read it all."""
    ends = [e for s, e in encoded["offset_mapping"] if e > s]
    last = max(ends) if ends else 0
    return last if text[last:].strip() else None


"""Where a TF-IDF vectorizer's features lie in a text: the words as character spans, and for
each feature found, the words it covers. explain.py spreads each feature's share of a linear
score over those words. Nothing here imports Django."""

from __future__ import annotations

import bisect
import re
from typing import Any

Occurrences = dict[int, tuple[str, list[tuple[int, ...]]]]


def feature_spans(vectorizer: Any, text: str) -> tuple[list[tuple[int, int]], Occurrences]:
    """The words of `text` as character spans, and for each feature found in it, its term and
    the words each of its occurrences covers: {feature index: (term, [(word index, ...)])}.

    A plain word vectorizer's features are its n-grams (word_ngrams). In a FeatureUnion the
    word members give the words and each member's features are offset by the columns before
    it; a char_wb member's n-gram lies inside one whitespace-separated token, so it covers the
    words it overlaps in that token, or all of the token's words when it overlaps none (a
    piece of punctuation), or the token itself, added as a word, when the token holds none.
    Other members give no spans; their contributions are still exact, only not located."""
    members = getattr(vectorizer, "transformer_list", None)
    if members is None:
        words, grams = word_ngrams(vectorizer, text)
        return words, {f: (term, [tuple(range(first, first + n)) for first, n in found])
                       for f, (term, found) in grams.items()}
    fitted = [(name, t) for name, t in members if t is not None and t != "drop"]
    columns, offsets = 0, {}
    for name, transformer in fitted:
        offsets[name] = columns
        vocabulary = getattr(transformer, "vocabulary_", None)
        columns += (len(vocabulary) if vocabulary is not None
                    else len(transformer.get_feature_names_out()))
    words: list[tuple[int, int]] = []
    index: dict[tuple[int, int], int] = {}
    out: Occurrences = {}
    for name, transformer in fitted:  # words first: the char pieces are laid onto them
        if getattr(transformer, "analyzer", None) != "word":
            continue
        found_words, grams = word_ngrams(transformer, text)
        for span in found_words:
            if span not in index:
                index[span] = len(words)
                words.append(span)
        local = [index[span] for span in found_words]
        for f, (term, found) in grams.items():
            out[offsets[name] + f] = (term, [tuple(local[first:first + n]) for first, n in found])
    for name, transformer in fitted:
        if getattr(transformer, "analyzer", None) == "char_wb" and transformer.tokenizer is None:
            for f, (term, found) in _char_wb_pieces(transformer, text, words).items():
                out[offsets[name] + f] = (term, found)
    return words, out


def _char_wb_pieces(vectorizer: Any, text: str, words: list[tuple[int, int]]) -> Occurrences:
    """A char_wb vectorizer's known n-grams in `text`, replaying scikit-learn's _char_wb_ngrams
    (each whitespace token padded with a space either side) with offsets kept; see
    feature_spans for which words each covers. May append token spans to `words`."""
    preprocessed, origin = _preprocess_with_offsets(vectorizer, text)
    if preprocessed is None:
        return {}
    tokens = [m.span() for m in re.finditer(r"\S+", preprocessed)]
    if [preprocessed[a:b] for a, b in tokens] != preprocessed.split():
        return {}  # a whitespace character re and str.split disagree on: not located
    starts = sorted((s, k) for k, (s, _) in enumerate(words))
    vocabulary = vectorizer.vocabulary_
    low, high = vectorizer.ngram_range
    out: Occurrences = {}
    for ts, te in tokens:
        first, last = origin[ts], origin[te - 1] + 1
        inside = [k for s, k in starts[bisect.bisect_left(starts, (first, -1)):]
                  if s < last and words[k][1] <= last]
        if not inside:
            words.append((first, last))
            inside = [len(words) - 1]
        padded = f" {preprocessed[ts:te]} "
        for n in range(low, high + 1):
            offset = 0
            while True:
                feature = vocabulary.get(padded[offset:offset + n])
                if feature is not None:
                    # the piece's characters in the token, padding left out
                    a, b = max(ts, ts + offset - 1), min(te, ts + offset + n - 1)
                    s, e = (origin[a], origin[b - 1] + 1) if b > a else (first, first)
                    covered = tuple(k for k in inside if words[k][0] < e and s < words[k][1])
                    out.setdefault(int(feature), (padded[offset:offset + n], []))[1].append(
                        covered or tuple(inside))
                if offset + n >= len(padded):
                    break
                offset += 1
            if offset == 0:  # scikit-learn counts a token shorter than n once
                break
    return out


def word_ngrams(vectorizer: Any, text: str
                ) -> tuple[list[tuple[int, int]], dict[int, tuple[str, list[tuple[int, int]]]]]:
    """The vectorizer's words in `text` as character spans, and where each known n-gram occurs.

    Returns (words, {feature index: (n-gram, [(first word, n)])}), replaying scikit-learn's
    word analyzer (preprocess, token pattern, stop words, n-grams) with offsets kept. Other
    analyzers give no spans; their contributions are still exact, only not located.
    """
    if vectorizer.analyzer != "word" or vectorizer.tokenizer is not None:
        return [], {}
    preprocessed, origin = _preprocess_with_offsets(vectorizer, text)
    if preprocessed is None:
        return [], {}
    pattern = re.compile(vectorizer.token_pattern)
    group = 1 if pattern.groups == 1 else 0  # scikit-learn's findall returns the one group
    stop = vectorizer.get_stop_words() or frozenset()
    tokens: list[str] = []
    words: list[tuple[int, int]] = []
    for match in pattern.finditer(preprocessed):
        start, end = match.span(group)
        token = match.group(group)
        if start == end or token in stop:
            continue
        tokens.append(token)
        words.append((origin[start], origin[end - 1] + 1))
    vocabulary = vectorizer.vocabulary_
    low, high = vectorizer.ngram_range
    grams: dict[int, tuple[str, list[tuple[int, int]]]] = {}
    for n in range(low, high + 1):
        for i in range(len(tokens) - n + 1):
            term = " ".join(tokens[i:i + n])
            feature = vocabulary.get(term)
            if feature is not None:
                grams.setdefault(int(feature), (term, []))[1].append((i, n))
    return words, grams


def _preprocess_with_offsets(vectorizer: Any, text: str) -> tuple[str | None, list[int]]:
    """The vectorizer's preprocessing of text, with each output character's source index."""
    preprocess = vectorizer.build_preprocessor()
    if vectorizer.preprocessor is not None:  # a custom one may not work character by character
        whole = preprocess(text)
        return (whole, list(range(len(text)))) if len(whole) == len(text) else (None, [])
    if text.isascii():
        return preprocess(text), list(range(len(text)))
    # Lowercasing and accent stripping act per character, but may change a character's length
    # (a ligature becomes two letters), so the map from output to input is built as we go.
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        out = preprocess(ch)
        chars.append(out)
        origin.extend([i] * len(out))
    return "".join(chars), origin

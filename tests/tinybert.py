"""A tiny BERT (about 40k parameters) built from scratch, for fast engine tests."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
DEMO_CSV = Path(__file__).resolve().parent / "fixtures" / "demo_slice.csv"
N_WORDS = 600


def _demo_words(limit: int = N_WORDS) -> list[str]:
    """The most frequent lowercase words of the demo slice, so few tokens become [UNK]."""
    counts: Counter[str] = Counter()
    with open(DEMO_CSV, encoding="utf-8-sig", newline="") as fh:
        for row in csv.DictReader(fh, delimiter=";"):
            text = f"{row['title']} {row['abstract']}".lower()
            counts.update(re.findall(r"[a-z]+", text))
    return [word for word, _ in counts.most_common(limit)]


def build_tiny_bert(directory: Path) -> Path:
    """Write a randomly initialised 2-layer BERT + WordPiece tokenizer into directory."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    digits = [str(d) for d in range(10)]
    punctuation = list(".,;:()-%/'\"[]+=<>")
    pieces = [f"##{ch}" for ch in letters + digits]
    vocab = SPECIAL + letters + digits + punctuation + pieces
    vocab += [w for w in _demo_words() if w not in set(vocab)]
    vocab_path = directory / "vocab.txt"
    vocab_path.write_text("\n".join(vocab) + "\n", encoding="utf-8")

    # vocab= (not vocab_file=): transformers 5 silently ignores vocab_file and yields 5 tokens.
    tokenizer = BertTokenizerFast(vocab=str(vocab_path), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory

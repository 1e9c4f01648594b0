"""What the embedding cache saves (issue 39): the same MiniLM-embedding fit, cold and warm.

Fits ``minilm_embed_logreg`` on the demo split (train and validation rows) twice in one run,
each time as a new classifier with no in-memory embeddings, the way a second search or job
starts: first with an empty cache folder, then with the folder the first fit filled. Prints one
JSON line with both times, the texts each had to embed, the ratio, and the cache's size.

    .venv/bin/python scripts/benchmark_embedding_cache.py [--csv PATH] [--rows N]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _bench_common import cpu_kind, load_split

from classification.ml_models import TrainConfig, create_classifier


def fit_seconds(train: object, val: object, config: TrainConfig) -> tuple[float, float]:
    clf = create_classifier("minilm_embed_logreg")
    started = time.perf_counter()
    clf.fit(train, val, config, lambda event: None, lambda: False)
    return time.perf_counter() - started, float(clf.timings.get("embedding_cache_hits", 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", default=None, help="a challenge-format file (default: demo)")
    parser.add_argument("--rows", type=int, default=None, help="a random sample of N rows")
    args = parser.parse_args()
    train, val, _ = load_split(args.csv, args.rows, seed=42)
    with tempfile.TemporaryDirectory(prefix="embedding-cache-") as folder:
        config = TrainConfig(embedding_cache_dir=folder)
        config.label_names = sorted(set(train.label_space()) | set(val.label_space()))
        config.multi_label = True
        cold, cold_hits = fit_seconds(train, val, config)
        warm, warm_hits = fit_seconds(train, val, config)
        size = sum(p.stat().st_size for p in Path(folder).rglob("*.npz"))
    print(json.dumps({
        "cpu": cpu_kind(), "texts": len(train) + len(val),
        "cold_seconds": round(cold, 1), "cold_cache_hits": int(cold_hits),
        "warm_seconds": round(warm, 1), "warm_cache_hits": int(warm_hits),
        "cold_over_warm": round(cold / warm, 1), "cache_mb": round(size / 2**20, 1)}))


if __name__ == "__main__":
    main()

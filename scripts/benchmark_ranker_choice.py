"""Does the ranker's out-of-fold judgement pick a candidate that ranks the unread records well?

On the first 2,000 records of demo_data/medlit_challenge.csv, for each label and each number
of decisions (a random sample, seed 1), judges the candidates as a session refresh does
(screening.ranker_choice.candidates_judge, vectors included) and scores every candidate,
fitted on the same decisions, by the average precision of the records not decided: the
judgement is good when its choice is at or near the best of those. One JSON line a case.

    DJANGO_SETTINGS_MODULE=medlitbot_project.settings_test .venv/bin/python \\
        scripts/benchmark_ranker_choice.py [--cache /tmp/embcache] [--decided 50 200]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
LABELS = ("oncological", "hepatorenal", "neurological")


def main(*, cache: str, decided_counts: list[int], records: int = 2000) -> None:
    from sklearn.metrics import average_precision_score

    from classification.engine.sentence_vectors import texts_embed
    from classification.engine.types import article_text
    from screening import ranker_choice

    with (ROOT / "demo_data" / "medlit_challenge.csv").open(encoding="utf-8-sig") as handle:
        rows = list(csv.DictReader(handle, delimiter=";"))[:records]
    texts = [article_text(r["title"], r["abstract"]) for r in rows]
    features = ranker_choice.Features(texts=texts, vectors=texts_embed(
        texts=texts, cache_dir=cache, cache_mb=4096))
    for label in LABELS:
        truth = np.array([int(label in r["group"].split("|")) for r in rows])
        for count in decided_counts:
            decided = np.random.default_rng(1).choice(len(texts), count, replace=False)
            rest = np.setdiff1d(np.arange(len(texts)), decided)
            start = time.perf_counter()
            judged = ranker_choice.candidates_judge(
                features=features, decided=list(decided), y=list(truth[decided]),
                with_vectors=True)
            took = time.perf_counter() - start
            unread = {c.name: round(float(average_precision_score(
                truth[rest], ranker_choice.candidate_scores(
                    candidate=c, features=features, decided=list(decided),
                    y=list(truth[decided]), rows=list(rest)))), 3)
                for c in ranker_choice.CANDIDATES}
            print(json.dumps({"label": label, "decided": count, "chosen": judged.candidate,
                              "judge_s": round(took, 1), "out_of_fold": judged.figures,
                              "unread_ap": unread, "best_unread": max(unread, key=unread.get)}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", default="/tmp/embcache", help="embedding cache folder")
    parser.add_argument("--decided", type=int, nargs="+", default=[50, 200])
    options = parser.parse_args()
    main(cache=options.cache, decided_counts=options.decided)

"""TF-IDF with and without metadata features (engine/metadata.py), and the two ways of adding them.

1. Which metadata the data at hand has: every file given (default: the demo CSV and the PubMed
   XML fixtures) is read with the app's own reader (dataset_management.articles) and the share
   of rows holding each field is printed. The demo data has none (title;abstract;group only),
   so its own scores cannot change; the PubMed XML fixtures are a smoke test of extraction and
   of the two model-facing forms (too few rows to train on).
2. The forms compared where the answer is known: the demo data (seeded 80/10/10 splits, one
   per seed) with a synthetic journal per row, drawn from its first label's own three journals
   with probability --fidelity and from six shared journals otherwise, plus two random MeSH
   check tags. Fidelity 0 is pure noise: a form must not lose text-only quality on it.
   Compared, each against the text-only model of the same seed:
   - appended: field tokens appended to the text, one vectorizer (what the app does);
   - block: the same tokens in their own binary, L2-normalised block beside the text's TF-IDF.
   These synthetic journals say how well each form uses a field, not what real journals add.

Usage: python scripts/evaluate_metadata.py [--seeds 42,43,44] [--fidelity 0.0,0.3]
       [--files a.xml,b.ris]
Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classification.engine import metadata  # noqa: E402
from classification.engine.baselines import SklearnClassifier  # noqa: E402
from classification.engine.data import read_challenge_csv, stratified_split  # noqa: E402
from classification.engine.types import TextData, TrainConfig  # noqa: E402
from dataset_management.articles import articles_read  # noqa: E402

DEMO = ROOT / "demo_data" / "medlit_challenge.csv"
FIXTURES = ROOT / "tests" / "fixtures" / "formats"
XML = [FIXTURES / n for n in ("pubmed_efetch.xml", "pubmed_efetch_trial.xml",
                              "pubmed_efetch_structured.xml", "pubmed.nbib", "refs.ris")]
SHARED = [f"General Journal {i}" for i in range(6)]
CHECK_TAGS = ("Humans", "Adult", "Aged", "Female", "Male", "Child")
FIELDS = [metadata.JOURNAL, metadata.MESH]


class BlockClassifier(SklearnClassifier):
    """TF-IDF of the text beside a separate binary block of the field tokens (the alternative
    the app does not take; measured here against it)."""

    def _split(self, texts: list[str]) -> tuple[list[str], list[str]]:
        pairs = [t.rsplit("\n\n", 1) for t in texts]
        return [p[0] for p in pairs], [p[1] if len(p) > 1 else "" for p in pairs]

    def _fit_features(self, texts: list[str]) -> Any:
        from sklearn.feature_extraction.text import CountVectorizer

        text, tokens = self._split(texts)
        self.block = CountVectorizer(binary=True, token_pattern=r"\S+", lowercase=False)
        super()._fit_features(text)
        self.block.fit(tokens)
        return self._features(texts)

    def _features(self, texts: list[str]) -> Any:
        from scipy.sparse import hstack
        from sklearn.preprocessing import normalize

        text, tokens = self._split(texts)
        return hstack([self.vectorizer.transform(text),
                       normalize(self.block.transform(tokens).astype("float32"))]).tocsr()


def coverage(path: Path) -> dict[str, Any]:
    """Rows and the share of them holding each field, as the app reads the file."""
    with articles_read(path=path, filename=path.name) as articles:
        rows = [metadata.metadata_extract(citation=a.citation, record=a.record)
                for a in articles if not a.problem]
    shares = {f: round(sum(bool(r.get(f)) for r in rows) / max(1, len(rows)), 3)
              for f in metadata.FIELDS}
    example = next((r for r in rows if r), {})
    return {"rows": len(rows), "share": shares,
            "present": metadata.metadata_fields_present(rows),
            "tokens": metadata.metadata_tokens(example, fields=metadata.FIELDS)[:160],
            "prefix": metadata.metadata_prefix(example, fields=metadata.FIELDS)[:160]}


def synthetic_metadata(data: TextData, *, fidelity: float, seed: int) -> list[dict[str, list]]:
    rng = random.Random(seed)
    out = []
    for labels in data.labels:
        first = sorted(labels)[0] if labels else "none"
        own = rng.random() < fidelity
        journal = f"{first.title()} Journal {rng.randrange(3)}" if own else rng.choice(SHARED)
        out.append({"journal": [journal], "mesh": rng.sample(CHECK_TAGS, k=2)})
    return out


def with_meta(data: TextData, meta: list[dict[str, list]]) -> TextData:
    return TextData(metadata.texts_with_metadata(data.texts, meta, fields=FIELDS,
                                                 style=metadata.TOKENS), data.labels)


def score(clf: SklearnClassifier, splits: tuple[TextData, ...], seed: int) -> dict[str, float]:
    train, val, test = splits
    clf.fit(train, val, TrainConfig(seed=seed), lambda e: None, lambda: False)
    m = clf.evaluate(test)
    return {"micro_f1": m["micro_f1"], "macro_f1": m["macro_f1"]}


def run_seed(data: TextData, *, seed: int, fidelities: list[float]) -> dict[str, Any]:
    splits = stratified_split(data, (0.8, 0.1, 0.1), seed=seed)
    out = {"text_only": score(SklearnClassifier("tfidf_logreg"), splits, seed)}
    for fidelity in fidelities:
        metas = [synthetic_metadata(s, fidelity=fidelity, seed=seed + i)
                 for i, s in enumerate(splits)]
        composed = tuple(with_meta(s, m) for s, m in zip(splits, metas, strict=True))
        out[f"appended@{fidelity:g}"] = score(SklearnClassifier("tfidf_logreg"), composed, seed)
        out[f"block@{fidelity:g}"] = score(BlockClassifier("tfidf_logreg"), composed, seed)
    return out


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for name in runs[0]:
        row = {}
        for metric in ("micro_f1", "macro_f1"):
            values = [r[name][metric] for r in runs]
            deltas = [r[name][metric] - r["text_only"][metric] for r in runs]
            row[metric] = round(statistics.mean(values), 4)
            row[f"{metric}_sd"] = round(statistics.stdev(values), 4) if len(values) > 1 else 0
            row[f"{metric}_vs_text"] = round(statistics.mean(deltas), 4)
        table[name] = row
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", default="42,43,44")
    parser.add_argument("--fidelity", default="0.0,0.3")
    parser.add_argument("--files", default="")
    args = parser.parse_args()
    files = [Path(f) for f in args.files.split(",") if f] or [DEMO, *XML]
    found = {p.name: coverage(p) for p in files}
    for name, c in found.items():
        print(f"{name}: {c['rows']} rows, fields present: {', '.join(c['present']) or 'none'} "
              f"(shares {c['share']})")
    seeds = [int(s) for s in args.seeds.split(",")]
    fidelities = [float(f) for f in args.fidelity.split(",")]
    data = read_challenge_csv(DEMO)
    runs = [run_seed(data, seed=s, fidelities=fidelities) for s in seeds]
    table = summary(runs)
    print(f"\nTF-IDF (tfidf_logreg) on the demo data, test split, mean over seeds {seeds}:")
    print(f"{'model':<16}{'micro-F1':>10}{'sd':>8}{'vs text':>9}{'macro-F1':>10}{'sd':>8}"
          f"{'vs text':>9}")
    for name, r in table.items():
        print(f"{name:<16}{r['micro_f1']:>10.4f}{r['micro_f1_sd']:>8.4f}"
              f"{r['micro_f1_vs_text']:>+9.4f}{r['macro_f1']:>10.4f}{r['macro_f1_sd']:>8.4f}"
              f"{r['macro_f1_vs_text']:>+9.4f}")
    print(json.dumps({"coverage": found, "seeds": seeds, "synthetic_journal": table}))


if __name__ == "__main__":
    main()

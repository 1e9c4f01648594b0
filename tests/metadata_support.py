"""A synthetic corpus whose label only the journal tells: every text is drawn from one shared
vocabulary whatever its label, the MeSH headings are the same check tags for both, and each
label has its own two journals. A model that reads the journal learns it; one that reads the
text alone is left at chance. Used by the metadata tests."""

from __future__ import annotations

import csv
import random
from pathlib import Path
from typing import Any

JOURNALS = {"cardiology": ("Heart Rhythm Letters", "Circulation Reports"),
            "neurology": ("Brain and Nerve Reports", "Neurology Weekly")}
CHECK_TAGS = ("Humans", "Adult", "Aged", "Female", "Male")
WORDS = [f"{a}{b}" for a in ("pa", "ro", "ti", "ske", "mul", "dar", "vo", "nek")
         for b in ("lan", "mir", "tov", "sel", "gup", "ra", "dex", "qua")]


def journal_corpus(n: int, *, seed: int) -> list[dict[str, Any]]:
    """n rows: title, abstract, journal, mesh (list), label; labels alternate."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = "cardiology" if i % 2 else "neurology"
        rows.append({
            "title": " ".join(rng.choices(WORDS, k=6)).capitalize(),
            "abstract": " ".join(rng.choices(WORDS, k=30)) + ".",
            "journal": rng.choice(JOURNALS[label]),
            "mesh": rng.sample(CHECK_TAGS, k=2),
            "label": label,
        })
    return rows


def journal_csv(path: Path, rows: list[dict[str, Any]], *, metadata: bool = True) -> Path:
    """The rows as a ';' CSV (a `group` label column); without metadata: no journal or MeSH."""
    columns = ["title", "abstract", *(["journal", "mesh"] if metadata else []), "group"]
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter=";")
        writer.writerow(columns)
        for row in rows:
            cells = {**row, "mesh": "; ".join(row["mesh"]), "group": row["label"]}
            writer.writerow([cells[c] for c in columns])
    return path

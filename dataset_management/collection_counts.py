"""A collection's counts, per file and in all (no Django settings read).

The rule that attributes each record: the files are taken in the order given (for files added
to a collection, its own rows come first), each file's records in their order. An article's
first record is counted in its file, as that file's article; every later record of it, from a
later file or a later row of the same file, is a duplicate removed, counted in the file it was
read from. The record kept for the article (collection_merge: the longest abstract) plays no
part, so a file that is an exact copy of an earlier one has every record removed, and the
earlier file only its own internal duplicates. For each file, identified = added + duplicates
removed + dropped, and the files' figures sum to the totals.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class FileCounts:
    name: str
    format: str = ""
    identified: int = 0
    duplicates_removed: int = 0
    near_matches: int = 0
    dropped: Counter = field(default_factory=Counter)
    added: int = 0  # articles first found in this file, kept in the collection

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "format": self.format, "identified": self.identified,
                "duplicates_removed": self.duplicates_removed, "added": self.added,
                "near_matches": self.near_matches, "dropped": dict(self.dropped)}

    def line(self) -> str:
        dropped = "".join(f", {n} dropped ({why})" for why, n in self.dropped.items())
        return (f"{self.name} ({self.format}): {self.identified} identified, "
                f"{self.duplicates_removed} duplicates removed, {self.added} articles added, "
                f"{self.near_matches} near matches to confirm{dropped}")


@dataclass
class MergeResult:
    path: Path
    labelled: bool
    files: list[FileCounts]
    written: int = 0
    merged_by: Counter = field(default_factory=Counter)
    # (row, row, reason, fingerprints, similarity): rows are 0-based positions in the merged
    # file; similarity is dedup.text_similarity of the two records kept.
    near: list[tuple[int, int, str, list[str], float]] = field(default_factory=list)
    # (row, its records' own lines, the rule that merged them): merged_groups.py's entries.
    groups: list[tuple[int, list[dict[str, Any]], str]] = field(default_factory=list)

    @property
    def duplicates_removed(self) -> int:
        return sum(f.duplicates_removed for f in self.files)

    @property
    def identified(self) -> int:
        return sum(f.identified for f in self.files)

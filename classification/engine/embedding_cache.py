"""Encoder outputs kept on disk, per text and encoder, so a text is embedded once (issue 39).

Embedding the demo's 2,855 texts with MiniLM costs minutes on a CPU; the head fitted on them
costs seconds. A search's trials already share one in-memory dict, but every new search, job or
node paid the minutes again. This cache keeps the vectors between them:

* A vector's key is the SHA-256 of its text, under a folder named for the encoder: a hash of
  the encoder's files (config, tokenizer, weights: their contents, not their paths or times, so
  a copy on another node hits) and the pooling and max_length that shaped the vector. Change a
  text and only that text misses; change the encoder and its whole folder is another.
* Vectors are written in blocks (one .npz per call that embedded something), each to a
  temporary name and then os.replace'd, so a reader never sees half a block and two writers
  never clobber each other.
* The cache is bounded: past ``max_bytes`` the least recently used blocks go first (reading a
  block touches it). A block that cannot be read is deleted and counts as a miss, never as an
  error: a cache must not fail the training it speeds up.

Pure (numpy and the standard library), like the rest of the engine.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import time
import zipfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

POOLING = "mean-normalized-v1"  # bump when encode_mean_pooled's output changes
_ENCODER_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
                  "special_tokens_map.json", "model.safetensors", "pytorch_model.bin")
_digests: dict[tuple[str, int, int], str] = {}  # (path, size, mtime_ns) -> sha256, per process


def _file_digest(path: Path) -> str:
    stat = path.stat()
    memo = (str(path), stat.st_size, stat.st_mtime_ns)
    if memo not in _digests:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        _digests[memo] = digest.hexdigest()
    return _digests[memo]


def encoder_key(*, model_dir: str, max_length: int, pooling: str = POOLING) -> str:
    """The name of an encoder's folder in the cache: what its vectors depend on, hashed."""
    digest = hashlib.sha256(f"{pooling}|{max_length}".encode())
    folder = Path(model_dir)
    for name in _ENCODER_FILES:
        if (folder / name).is_file():
            digest.update(f"|{name}:{_file_digest(folder / name)}".encode())
    return digest.hexdigest()[:32]


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class EmbeddingCache:
    """The vectors of one encoder under `root`, at most `max_bytes` for the whole root."""

    def __init__(self, root: str | os.PathLike[str], *, encoder: str, max_bytes: int) -> None:
        self.root = Path(root)
        self.folder = self.root / encoder
        self.max_bytes = max_bytes
        self.hits = 0

    def get(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vector of each text that has one."""
        wanted = {text_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        for block in self._blocks():
            keys_vectors = self._read(block)
            if keys_vectors is None:
                continue
            keys, vectors = keys_vectors
            used = False
            for key, vector in zip(keys, vectors, strict=True):
                text = wanted.get(str(key))
                if text is not None and text not in found:
                    found[text] = vector
                    used = True
            if used:
                _touch(block)
            if len(found) == len(wanted):
                break
        self.hits += len(found)
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep `vectors` (text -> vector) as one block, then trim the root to its bound."""
        if not vectors or self.max_bytes <= 0:
            return
        keys = np.array([text_key(t) for t in vectors], dtype="U64")
        stacked = np.stack([np.asarray(v, dtype=np.float32) for v in vectors.values()])
        name = hashlib.sha256("".join(sorted(keys.tolist())).encode()).hexdigest()[:32]
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".npz.part")
            with os.fdopen(handle, "wb") as out:
                np.savez(out, keys=keys, vectors=stacked)
            os.replace(temporary, self.folder / f"{name}.npz")
            _touch(self.folder / f"{name}.npz")
        except OSError as error:  # a full or read-only disk: the job goes on uncached
            logger.warning("embedding cache: could not write %s: %s", self.folder, error)
            return
        self.trim()

    def trim(self) -> None:
        """Delete the least recently used blocks of the whole root until it fits its bound."""
        blocks = []
        for block in self.root.glob("*/*.npz"):
            try:
                stat = block.stat()
            except OSError:
                continue  # removed by another process meanwhile
            blocks.append((stat.st_mtime_ns, stat.st_size, block))
        total = sum(size for _, size, _ in blocks)
        for _, size, block in sorted(blocks, key=lambda b: b[0]):
            if total <= self.max_bytes:
                break
            block.unlink(missing_ok=True)
            total -= size

    def _blocks(self) -> Iterable[Path]:
        if not self.folder.is_dir():
            return []
        # newest first: the blocks a search just wrote are the likeliest to hold its texts
        return sorted(self.folder.glob("*.npz"), key=_mtime, reverse=True)

    def _read(self, block: Path) -> tuple[np.ndarray, np.ndarray] | None:
        try:
            with np.load(block, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
            if len(keys) != len(vectors):
                raise ValueError("keys and vectors differ in length")
            return keys, vectors
        except FileNotFoundError:
            return None  # trimmed by another process meanwhile
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
            logger.warning("embedding cache: %s is unreadable (%s); deleted", block, error)
            block.unlink(missing_ok=True)
            return None


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


def _touch(path: Path) -> None:
    # An explicit time: the kernel stamps files from a coarse clock (a few ms), and two blocks
    # used within one tick would tie, leaving least-recently-used to chance.
    now = time.time_ns()
    with contextlib.suppress(OSError):  # trimmed by another process meanwhile
        os.utime(path, ns=(now, now))

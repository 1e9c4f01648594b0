"""core.filestore on a shared mount (file://): the same code path as S3, without a server.

A tree is readable only once its manifest is published, is fetched once per node and checked
against its hashes, is never sent twice, and the cache stays within its limit.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core import filestore


def _artifact(folder: Path) -> Path:
    (folder / "tokenizer").mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(os.urandom(200_000))
    (folder / "tokenizer" / "vocab.txt").write_text("[PAD]\n[CLS]\nheart\n")
    (folder / "manifest.json").write_text('{"model_type": "minilm"}')
    return folder


def _other_node(settings, tmp_path: Path, name: str) -> None:
    settings.FILE_CACHE_DIR = str(tmp_path / name / "cache")
    settings.MEDIA_ROOT = str(tmp_path / name / "media")


def test_a_tree_published_by_one_node_is_read_back_identically_by_another(
        shared_storage: Path, settings, tmp_path: Path) -> None:
    source = _artifact(tmp_path / "trained")
    digest = filestore.tree_publish(folder=source)
    assert len(digest) == 64
    assert (shared_storage / "trees" / digest / "MANIFEST.json").is_file()

    _other_node(settings, tmp_path, "web")
    local = filestore.tree_local(digest=digest)
    assert local == tmp_path / "web" / "cache" / "trees" / digest
    for path in source.rglob("*"):
        if path.is_file():
            assert (local / path.relative_to(source)).read_bytes() == path.read_bytes()
    # The second read is the cache's: the bucket can vanish and the node still has the model.
    (shared_storage / "trees" / digest / "files" / "model.safetensors").unlink()
    assert filestore.tree_local(digest=digest) == local


def test_the_same_bytes_are_one_tree_and_are_not_sent_again(
        shared_storage: Path, tmp_path: Path) -> None:
    first = filestore.tree_publish(folder=_artifact(tmp_path / "a"))
    marker = shared_storage / "trees" / first / "MANIFEST.json"
    sent_at = marker.stat().st_mtime_ns
    copy = tmp_path / "b"
    copy.mkdir()
    for path in (tmp_path / "a").rglob("*"):
        target = copy / path.relative_to(tmp_path / "a")
        if path.is_dir():
            target.mkdir(exist_ok=True)
        else:
            target.write_bytes(path.read_bytes())
    assert filestore.tree_publish(folder=copy) == first
    assert marker.stat().st_mtime_ns == sent_at


def test_a_tree_whose_manifest_is_not_published_yet_cannot_be_read(
        shared_storage: Path, settings, tmp_path: Path) -> None:
    digest = filestore.tree_publish(folder=_artifact(tmp_path / "trained"))
    # As if the upload stopped just before its last object.
    (shared_storage / "trees" / digest / "MANIFEST.json").unlink()
    _other_node(settings, tmp_path, "worker")
    with pytest.raises(FileNotFoundError):
        filestore.tree_local(digest=digest)
    assert not (tmp_path / "worker" / "cache" / "trees" / digest).exists()


def test_a_file_changed_in_the_bucket_is_refused_and_leaves_nothing_in_the_cache(
        shared_storage: Path, settings, tmp_path: Path) -> None:
    digest = filestore.tree_publish(folder=_artifact(tmp_path / "trained"))
    changed = shared_storage / "trees" / digest / "files" / "manifest.json"
    changed.write_text('{"model_type": "evil"}')
    _other_node(settings, tmp_path, "worker")
    with pytest.raises(filestore.FileStoreError, match="differs from what was published"):
        filestore.tree_local(digest=digest)
    cache = tmp_path / "worker" / "cache" / "trees"
    assert not cache.exists() or list(cache.iterdir()) == []


def test_single_files_are_fetched_once_by_path_and_deleted_everywhere(
        shared_storage: Path, settings, tmp_path: Path) -> None:
    name = "datasets/abc/rows-1.parquet"
    own = Path(settings.MEDIA_ROOT) / name
    own.parent.mkdir(parents=True)
    own.write_bytes(b"PAR1 rows")
    filestore.file_publish(name=name)
    assert filestore.file_local(name=name) == own  # the writer reads its own copy

    _other_node(settings, tmp_path, "worker")
    fetched = filestore.file_local(name=name)
    assert fetched == tmp_path / "worker" / "cache" / "files" / name
    assert fetched.read_bytes() == b"PAR1 rows"
    filestore.file_delete(name=name)
    assert not fetched.exists()
    assert not (shared_storage / "media" / name).exists()
    with pytest.raises(filestore.FileStoreError, match="neither on this machine"):
        filestore.file_local(name=name)


def test_the_cache_drops_least_recently_used_entries_beyond_its_limit(
        shared_storage: Path, settings, tmp_path: Path) -> None:
    settings.FILE_CACHE_MAX_MB = 1
    digests = []
    for i in range(3):
        folder = tmp_path / f"m{i}"
        folder.mkdir()
        (folder / "weights.bin").write_bytes(os.urandom(400_000))
        digests.append(filestore.tree_publish(folder=folder))
    trees = Path(settings.FILE_CACHE_DIR) / "trees"
    # Used long ago, oldest first; entries used within the grace are never dropped.
    for age, digest in zip((3000, 2000, 1000), digests, strict=True):
        stamp = time.time() - age
        os.utime(trees / digest, (stamp, stamp))
    removed = filestore.cache_trim()
    assert removed == [str(trees / digests[0])]
    assert sorted(p.name for p in trees.iterdir()) == sorted(digests[1:])
    assert filestore.cache_usage()["bytes"] <= 1024 * 1024
    assert filestore.tree_local(digest=digests[0]).is_dir()  # fetched again when needed

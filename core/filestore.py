"""Durable files across machines: Django's storage API, and a local cache on every node.

One machine (SHARED_STORAGE_URL empty, the default): MEDIA_ROOT and MODEL_ARTIFACT_ROOT are the
truth, every function here returns the local path it is given or does nothing, and nothing is
ever copied.

Several machines (``STORAGES["shared"]``, django-storages' S3 backend or a shared mount):

- A single file (a dataset's rows or upload, a batch's input or results) is published under
  ``media/<its path relative to MEDIA_ROOT>``. Those paths carry ids, UUIDs or content hashes and
  are never reused for other bytes, so a node caches a file by its path.
- A folder (a trained model, a checkpoint) is published as a tree named by its content hash:
  every file under ``trees/<digest>/files/``, then ``trees/<digest>/MANIFEST.json`` last. The
  database row that names the digest is written only after that, so a reader never sees half a
  tree, and a tree is fetched once per machine whatever the number of predictions.

Fetched copies live under FILE_CACHE_DIR (``files/<path>``, ``trees/<digest>/``), each written
under a temporary name and then ``os.replace``d into place; every file of a tree is checked
against the size and hash its manifest names (a single file is one object, whole or an error).
The cache is trimmed, least recently used first, to FILE_CACHE_MAX_MB.

On S3 the bytes stream between the local file and the bucket through boto3's transfer manager:
django-storages' open() would first hold a whole model in memory, and its save() buffers ten
8 MB parts (measured: +94 MB and +82 MB of RSS for a MiniLM; docs/figures/storage.md).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import FileSystemStorage, Storage, storages

logger = logging.getLogger(__name__)

MANIFEST = "MANIFEST.json"
CHUNK = 1024 * 1024
# An entry used this recently is never trimmed: a process may be about to open it.
TRIM_GRACE_SECONDS = 600


class FileStoreError(OSError):
    """A shared file that cannot be read back as it was published."""


def shared_enabled() -> bool:
    return "shared" in settings.STORAGES


def _storage() -> Storage:
    return storages["shared"]


def describe() -> str:
    """What the doctor and the docs call this node's storage."""
    if not shared_enabled():
        return f"local disk only ({settings.MEDIA_ROOT}, {settings.MODEL_ARTIFACT_ROOT})"
    return f"shared: {settings.SHARED_STORAGE_URL}, cache {settings.FILE_CACHE_DIR}"


def storage_check() -> str:
    """"" when the shared storage answers (or there is none); otherwise the problem, for
    /readyz and the doctor: no URL or host in it, since /readyz answers anyone. One HEAD
    request: cheap enough for every probe."""
    if not shared_enabled():
        return ""
    storage = _storage()
    if isinstance(storage, FileSystemStorage) and not Path(storage.location).is_dir():
        return "shared storage unreachable: its folder is not mounted"
    try:
        storage.exists("readyz")
    except Exception as exc:
        logger.warning("shared storage check failed: %s", exc)
        return f"shared storage unreachable ({type(exc).__name__})"
    return ""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _cache_root() -> Path:
    return Path(settings.FILE_CACHE_DIR)


def _touch(path: Path) -> None:
    # The cache is trimmed by last use; a failed touch only makes this entry look older.
    with contextlib.suppress(OSError):
        os.utime(path)


def _s3_object(name: str) -> Any | None:
    """The boto3 object behind a stored name when the shared storage is S3, else None."""
    storage = _storage()
    if not hasattr(storage, "bucket"):
        return None
    from storages.utils import clean_name

    # The key exactly as django-storages computes it for its own open() and save().
    return storage.bucket.Object(storage._normalize_name(clean_name(name)))


class _HashingSink:
    """Write-only, so boto3 writes the parts in order; hashes what passes through, so a fetched
    file is checked without being read back."""

    def __init__(self, out: Any, *, hashing: bool) -> None:
        self.out, self.sha, self.size = out, hashlib.sha256() if hashing else None, 0

    def write(self, data: bytes) -> int:
        self.out.write(data)
        if self.sha is not None:
            self.sha.update(data)
        self.size += len(data)
        return len(data)


def _download(name: str, target: Path, *, hashing: bool = True) -> tuple[int, str]:
    """Copy one stored object to `target` (a temporary name); returns (bytes, sha256, or ""
    without hashing). FileNotFoundError when there is no such object."""
    target.parent.mkdir(parents=True, exist_ok=True)
    obj = _s3_object(name)
    with target.open("wb") as out:
        sink = _HashingSink(out, hashing=hashing)
        if obj is None:
            with _storage().open(name, "rb") as source:
                while chunk := source.read(CHUNK):
                    sink.write(chunk)
        else:
            from botocore.exceptions import ClientError

            try:
                obj.download_fileobj(sink, Config=_storage().transfer_config)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey"):
                    raise FileNotFoundError(name) from exc
                raise
    return sink.size, sink.sha.hexdigest() if sink.sha is not None else ""


def _upload(local: Path, name: str) -> None:
    obj = _s3_object(name)
    if obj is not None:
        obj.upload_file(str(local), Config=_storage().transfer_config)
        return
    with local.open("rb") as handle:
        stored = _storage().save(name, File(handle, name=local.name))
    if stored != name:  # a backend that renamed instead of overwriting would lose the key
        raise FileStoreError(f"the shared storage stored {name} as {stored}")


# --- single files, by their path under MEDIA_ROOT -------------------------------------------

def _file_key(name: str) -> str:
    return f"media/{name}"


def file_publish(*, name: str) -> None:
    """Publish MEDIA_ROOT/<name>, just written by this node, for the other nodes."""
    if shared_enabled():
        _upload(Path(settings.MEDIA_ROOT) / name, _file_key(name))


def file_local(*, name: str) -> Path:
    """A readable local path for MEDIA_ROOT/<name>: this node's own copy, the cached one, or
    one fetched now. FileStoreError when the shared storage has no such file."""
    own = Path(settings.MEDIA_ROOT) / name
    if not shared_enabled() or own.is_file():
        return own
    cached = _cache_root() / "files" / name
    if cached.is_file():
        _touch(cached)
        return cached
    part = cached.with_name(f"{cached.name}.{uuid.uuid4().hex[:8]}.part")
    try:
        _download(_file_key(name), part, hashing=False)  # no published hash to check against
        os.replace(part, cached)
    except FileNotFoundError:
        raise FileStoreError(
            f"{name} is neither on this machine nor in the shared storage") from None
    finally:
        part.unlink(missing_ok=True)
    cache_trim()
    return cached


def file_delete(*, name: str) -> None:
    """Forget a file everywhere this node can reach: its own copy is the caller's to remove."""
    if not shared_enabled():
        return
    (_cache_root() / "files" / name).unlink(missing_ok=True)
    try:
        _storage().delete(_file_key(name))
    except Exception as exc:  # a leftover object costs space, never correctness
        logger.warning("could not delete shared file %s: %s", name, exc)


# --- folders, by content hash ---------------------------------------------------------------

def _tree_manifest(folder: Path, only: list[str] | None) -> bytes:
    tops = [folder / name for name in only] if only is not None else [folder]
    files = sorted(p for top in tops for p in ([top] if top.is_file() else top.rglob("*"))
                   if p.is_file())
    entries = [[p.relative_to(folder).as_posix(), _sha256(p), p.stat().st_size] for p in files]
    return json.dumps({"format": 1, "files": entries}, separators=(",", ":")).encode()


def _tree_key(digest: str, rel: str = "") -> str:
    return f"trees/{digest}/{rel}" if rel else f"trees/{digest}"


def tree_publish(*, folder: Path, only: list[str] | None = None) -> str:
    """Publish a finished folder, or only the named entries of it (folders or files); returns
    its digest ("" on one machine, where the folder itself is the truth). Files go first and the
    manifest last; a tree already there is not sent again. This node's cache gets the folder at
    once, so it never downloads its own work."""
    if not shared_enabled():
        return ""
    manifest = _tree_manifest(folder, only)
    digest = hashlib.sha256(manifest).hexdigest()
    storage = _storage()
    if not storage.exists(_tree_key(digest, MANIFEST)):
        for rel, _sha, _size in json.loads(manifest)["files"]:
            _upload(folder / rel, _tree_key(digest, f"files/{rel}"))
        part = folder.parent / f".{folder.name}.{uuid.uuid4().hex[:8]}.manifest"
        try:
            part.write_bytes(manifest)
            _upload(part, _tree_key(digest, MANIFEST))
        finally:
            part.unlink(missing_ok=True)
    _tree_cache_from(folder, digest, only)
    return digest


def _tree_cache_from(folder: Path, digest: str, only: list[str] | None) -> None:
    final = _cache_root() / "trees" / digest
    if final.is_dir():
        return
    part = final.with_name(f".{digest}.{uuid.uuid4().hex[:8]}.part")
    try:
        if only is None:
            shutil.copytree(folder, part, copy_function=_link_or_copy)
        for name in only or []:
            if (folder / name).is_file():
                part.mkdir(parents=True, exist_ok=True)
                _link_or_copy(str(folder / name), str(part / name))
            else:
                shutil.copytree(folder / name, part / name, copy_function=_link_or_copy)
        part.mkdir(parents=True, exist_ok=True)
        _settle(part, final)
    finally:
        shutil.rmtree(part, ignore_errors=True)
    cache_trim()


def _link_or_copy(source: str, target: str) -> None:
    # A hard link costs no space; across filesystems it cannot exist, so copy.
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _settle(part: Path, final: Path) -> None:
    """Move a finished temporary folder into place; a racing node's copy that landed first
    is as good as ours."""
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.replace(part, final)
    except OSError:
        if not final.is_dir():
            raise


def tree_local(*, digest: str) -> Path:
    """The published folder as a local path, fetched and verified on first use."""
    final = _cache_root() / "trees" / digest
    if final.is_dir():
        _touch(final)
        return final
    started = time.monotonic()
    storage = _storage()
    with storage.open(_tree_key(digest, MANIFEST), "rb") as handle:
        manifest = handle.read()
    if hashlib.sha256(manifest).hexdigest() != digest:
        raise FileStoreError(f"tree {digest}: its manifest does not match its name")
    part = final.with_name(f".{digest}.{uuid.uuid4().hex[:8]}.part")
    try:
        total = 0
        for rel, sha, size in json.loads(manifest)["files"]:
            if _download(_tree_key(digest, f"files/{rel}"), part / rel) != (size, sha):
                raise FileStoreError(f"tree {digest}: {rel} differs from what was published")
            total += size
        part.mkdir(parents=True, exist_ok=True)  # a tree may hold no file at all
        _settle(part, final)
    finally:
        shutil.rmtree(part, ignore_errors=True)
    logger.info("fetched tree %s (%.1f MB) in %.1f s", digest[:12], total / 1e6,
                time.monotonic() - started)
    cache_trim()
    return final


def tree_delete(*, digest: str) -> None:
    """Remove a published tree (the manifest first, so no reader starts on a half-deleted one)."""
    if not digest or not shared_enabled():
        return
    shutil.rmtree(_cache_root() / "trees" / digest, ignore_errors=True)
    storage = _storage()
    try:
        storage.delete(_tree_key(digest, MANIFEST))
        for name in _walk(storage, _tree_key(digest, "files")):
            storage.delete(name)
    except Exception as exc:
        logger.warning("could not delete shared tree %s: %s", digest[:12], exc)


def _walk(storage: Storage, prefix: str) -> list[str]:
    try:
        folders, files = storage.listdir(prefix)
    except FileNotFoundError:
        return []
    found = [f"{prefix}/{name}" for name in files]
    for folder in folders:
        found += _walk(storage, f"{prefix}/{folder}")
    return found


# --- the cache ------------------------------------------------------------------------------

def _entries() -> list[tuple[float, int, Path]]:
    """(last use, bytes, path) of every cached file and tree."""
    root = _cache_root()
    found: list[tuple[float, int, Path]] = []
    trees = root / "trees"
    if trees.is_dir():
        for tree in trees.iterdir():
            if tree.is_dir() and not tree.name.startswith("."):
                size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
                found.append((tree.stat().st_mtime, size, tree))
    files = root / "files"
    if files.is_dir():
        found += [(p.stat().st_mtime, p.stat().st_size, p)
                  for p in files.rglob("*") if p.is_file() and not p.name.endswith(".part")]
    return found


def cache_usage() -> dict[str, Any]:
    entries = _entries()
    return {"entries": len(entries), "bytes": sum(size for _, size, _ in entries),
            "limit_bytes": int(settings.FILE_CACHE_MAX_MB) * 1024 * 1024}


def cache_trim() -> list[str]:
    """Remove least recently used entries until the cache fits its limit; returns them."""
    limit = int(settings.FILE_CACHE_MAX_MB) * 1024 * 1024
    entries = sorted(_entries())
    total = sum(size for _, size, _ in entries)
    removed: list[str] = []
    now = time.time()
    for used, size, path in entries:
        if total <= limit:
            break
        if now - used < TRIM_GRACE_SECONDS:
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        total -= size
        removed.append(str(path))
    return removed

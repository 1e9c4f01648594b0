"""A disk that fills while an upload is saved (dataset import, web staging and confirm, batch
input) gives the person a plain reason, a 507 on the API, and leaves no row, no staged file
and no partial file.

A full disk cannot be made in CI, so `disk` makes every file opened for writing under
MEDIA_ROOT fail with the kernel's own error once a chosen number of bytes has been written
(the bytes before it do land, as on a real disk). The cleanup and the messages are the real
code. Where the tests run as root and may mount, one test also fills a real tmpfs.
"""

from __future__ import annotations

import errno
import io
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from core.diskspace import DISK_FULL_MESSAGE, DiskFull
from tests.bad_input_support import (
    api_client,
    api_upload,
    assert_nothing_kept,
    cli_refusal,
    web_confirm,
    web_upload,
)
from tests.batch_support import DEMO_SLICE
from tests.plugins.datasets import FORMATS

pytestmark = pytest.mark.django_db
CSV = (FORMATS / "comma.csv").read_bytes()


class _FillingFile:
    """A file whose writes stop with ENOSPC (or EDQUOT) once the shared budget is spent."""

    def __init__(self, real: Any, path: str, disk: _Disk) -> None:
        self._real, self._path, self._disk = real, path, disk

    def write(self, data: bytes) -> int:
        left = self._disk.left
        if left is not None and len(data) > left:
            self._real.write(data[:left])
            self._real.flush()
            self._disk.left = 0
            raise OSError(self._disk.errno, os.strerror(self._disk.errno), self._path)
        if left is not None:
            self._disk.left = left - len(data)
        return self._real.write(data)

    def __enter__(self) -> _FillingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._real.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class _Disk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.left: int | None = None  # None: not full yet
        self.errno = errno.ENOSPC

    def fills_after(self, n: int, *, code: int = errno.ENOSPC) -> None:
        self.left, self.errno = n, code


@pytest.fixture
def disk(media_root: Path, monkeypatch) -> _Disk:
    state = _Disk(media_root.resolve())
    real_open: Callable[..., Any] = io.open

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = real_open(file, mode, *args, **kwargs)
        writing = any(flag in mode for flag in "wax+")
        if writing and isinstance(file, str | os.PathLike) and \
                Path(file).resolve().is_relative_to(state.root):
            return _FillingFile(handle, str(file), state)
        return handle

    monkeypatch.setattr(io, "open", open_)  # what pathlib.Path.open calls
    return state


# --- the dataset service and the CLI ------------------------------------------------------------


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT], ids=["ENOSPC", "EDQUOT"])
def test_a_disk_full_while_the_upload_is_copied_keeps_nothing(import_file, disk, code) -> None:
    disk.fills_after(100, code=code)
    with pytest.raises(DiskFull) as caught:
        import_file(FORMATS / "comma.csv")
    assert caught.value.message == DISK_FULL_MESSAGE
    assert_nothing_kept()


def test_a_disk_full_while_the_rows_are_written_keeps_nothing(import_file, media_root,
                                                              monkeypatch) -> None:
    def write_batch(self: pq.ParquetWriter, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space "
                                    "left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_batch", write_batch)
    with pytest.raises(DiskFull):
        import_file(FORMATS / "comma.csv")
    assert_nothing_kept()


def test_another_os_error_is_not_called_a_full_disk(import_file, disk) -> None:
    disk.fills_after(100, code=errno.EIO)
    with pytest.raises(OSError, match="Input/output error") as caught:
        import_file(FORMATS / "comma.csv")
    assert caught.value.errno == errno.EIO
    assert_nothing_kept()


def test_the_cli_fails_in_one_line(user, disk) -> None:
    disk.fills_after(100)
    assert cli_refusal(FORMATS / "comma.csv", user) == DISK_FULL_MESSAGE
    assert_nothing_kept()


# --- the web upload and the API -----------------------------------------------------------------


def assert_upload_page_says_disk_full(response: Any) -> None:
    assert response.status_code == 507
    assert [str(m) for m in response.context["messages"]] == [DISK_FULL_MESSAGE]
    assert "Upload a dataset" in response.content.decode()


def test_a_disk_full_while_staging_shows_the_form_again(alice_client, disk) -> None:
    disk.fills_after(100)
    assert_upload_page_says_disk_full(web_upload(alice_client, "comma.csv", CSV))
    assert_nothing_kept()


def test_a_disk_full_in_the_preview_drops_the_staged_file(alice_client, disk, media_root: Path,
                                                          monkeypatch) -> None:
    # The preview copies the staged file into a temporary folder: put that on the full disk.
    scratch = media_root / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    disk.fills_after(len(CSV) + 10)  # the staged copy fits, the preview's does not
    assert_upload_page_says_disk_full(web_upload(alice_client, "comma.csv", CSV))
    assert_nothing_kept()


def test_a_disk_full_at_confirm_drops_the_staged_file_too(alice_client, disk,
                                                          media_root: Path) -> None:
    staged = web_upload(alice_client, "comma.csv", CSV)
    assert staged.status_code == 200
    assert list((media_root / "staging").rglob("comma.csv"))
    disk.fills_after(len(CSV) // 2)
    assert_upload_page_says_disk_full(web_confirm(alice_client, staged.context["staging"].token))
    assert_nothing_kept()


def test_the_api_answers_507(api_token, disk) -> None:
    disk.fills_after(100)
    response = api_upload(api_client(api_token), "comma.csv", CSV)
    assert response.status_code == 507
    assert response.json() == {"detail": DISK_FULL_MESSAGE}
    assert_nothing_kept()


# --- batches ------------------------------------------------------------------------------------


def test_a_batch_input_cut_short_leaves_no_row_and_no_part_file(user, trained_model,
                                                                disk) -> None:
    from classification.batches import services

    disk.fills_after(1000)
    with pytest.raises(DiskFull), DEMO_SLICE.open("rb") as handle:
        services.batch_job_create(owner=user, ml_model=trained_model,
                                  uploaded_file=SimpleUploadedFile("a.csv", handle.read()))
    assert_nothing_kept(datasets=1)  # the model's


def test_the_batch_api_answers_507_for_a_file_and_for_a_large_predict(trained_model, api_token,
                                                                      disk) -> None:
    client = api_client(api_token)
    disk.fills_after(1000)
    with DEMO_SLICE.open("rb") as handle:
        response = client.post(f"/api/models/{trained_model.pk}/batches/", {"file": handle},
                               format="multipart")
    assert response.status_code == 507
    assert response.json() == {"detail": DISK_FULL_MESSAGE}
    assert_nothing_kept(datasets=1)  # the model's

    disk.fills_after(1000)
    texts = [f"Heart failure outcomes in a cohort of {i} patients" for i in range(100)]
    response = client.post(f"/api/models/{trained_model.pk}/predict/", {"texts": texts},
                           format="json")
    assert response.status_code == 507
    assert response.json() == {"detail": DISK_FULL_MESSAGE}
    assert_nothing_kept(datasets=1)  # the model's


def test_the_classify_page_answers_507_with_the_reason(trained_model, alice_client,
                                                       disk) -> None:
    disk.fills_after(1000)
    response = alice_client.post(reverse("classification:batch_create"), {
        "model": trained_model.pk,
        "file": SimpleUploadedFile("demo_slice.csv", DEMO_SLICE.read_bytes(), "text/csv"),
    })
    assert response.status_code == 507
    assert DISK_FULL_MESSAGE in response.content.decode()
    assert_nothing_kept(datasets=1)  # the model's


# --- a real full disk ---------------------------------------------------------------------------


@pytest.fixture
def tiny_media(media_root: Path) -> Iterator[Path]:
    """MEDIA_ROOT on a 1 MB tmpfs, where the tests may mount one (root, not in most CI)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(media_root)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield media_root
    finally:
        subprocess.run(["umount", str(media_root)], check=True)


def test_a_real_full_disk_at_confirm_keeps_nothing(alice_client, tiny_media: Path) -> None:
    # Staged, it takes 600 kB of the 1 MB; its copy for the import cannot fit beside it.
    content = b"title,abstract,label\n" + b"".join(
        b"Study %d,Heart failure outcomes in cohort %d,%s\n" % (i, i, (b"a", b"b")[i % 2])
        for i in range(15_000)
    )[: 600_000].rsplit(b"\n", 1)[0] + b"\n"
    staged = web_upload(alice_client, "big.csv", content)
    assert staged.status_code == 200
    assert_upload_page_says_disk_full(web_confirm(alice_client, staged.context["staging"].token))
    assert_nothing_kept()

from pathlib import Path

from django.conf import settings

from tests.plugins.datasets import FORMATS, media_files


def test_a_traversal_filename_is_sanitised_and_stored_under_the_hash(import_file):
    ds = import_file(FORMATS / "comma.csv", filename="../../etc/passwd.csv")
    assert ds.original_filename == "passwd.csv"
    assert ds.original_file.name == f"datasets/{ds.content_hash}/original.csv"
    media = Path(settings.MEDIA_ROOT).resolve()
    for name in media_files():
        assert (media / name).resolve().is_relative_to(media)
    assert not (media.parent / "etc").exists()

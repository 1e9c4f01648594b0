"""A reference manager's RIS goes in, is classified by a real TF-IDF model, and comes out with
every record and every field it had, read back by rispy: the only differences are the predicted
labels, added as keywords behind the prefix, and one note with the probabilities."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from dataset_management.articles import articles_read
from tests.export_support import (
    PREFIX,
    RIS_LIBRARY,
    ris_parse,
    run_batch,
    without_added,
    write,
)

pytestmark = pytest.mark.django_db


def download(client, batch, fmt: str) -> str:
    response = client.get(reverse("classification:batch_download", args=[batch.pk.hex]),
                          {"format": fmt})
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content).decode("utf-8")


@pytest.mark.parametrize("options", [{}, {"enforce_list_tags": False}],
                         ids=["rispy defaults", "repeated tags kept"])
def test_a_batch_gives_every_ris_record_back_with_every_field(
    options, alice_client, user, media_root, tmp_path, trained_model
) -> None:
    batch = run_batch(owner=user, ml_model=trained_model,
                      path=write(tmp_path, "library.ris", RIS_LIBRARY))
    exported = download(alice_client, batch, "ris")
    before, after = ris_parse(RIS_LIBRARY, **options), ris_parse(exported, **options)
    assert len(after) == len(before) == 4
    labels = set(trained_model.label_names)
    for original, entry in zip(before, after, strict=True):
        kept, keywords, notes = without_added(entry)
        assert kept == original  # every field, in every record, as it was
        assert {k.removeprefix(PREFIX) for k in keywords} <= labels
        assert len(notes) == 1
    # The three records with text were classified: a probability for every label in the note.
    for entry in after[:3]:
        note = without_added(entry)[2][0]
        assert note.startswith(f"{PREFIX} probabilities ")
        assert all(f"{name}=" in note for name in labels)
    assert without_added(after[3])[1:] == ([], [f"{PREFIX} skipped: no text"])


def test_the_records_read_back_keep_their_identifiers_and_wrapped_text(
    alice_client, user, media_root, tmp_path, trained_model
) -> None:
    source = write(tmp_path, "library.ris", RIS_LIBRARY)
    batch = run_batch(owner=user, ml_model=trained_model, path=source)
    again = write(tmp_path, "again.ris", download(alice_client, batch, "ris"))

    def read(path):
        with articles_read(path=path, filename=path.name, overrides={"unlabelled": True}) as a:
            return [(x.identifiers, x.citation, x.title, x.abstract) for x in a]

    assert read(again) == read(source)
    first, second = read(source)[:2]
    assert first[0] == {"doi": "10.1093/eurheartj/ehab001", "id": "smith2021"}
    assert first[1] == {"authors": ["Smith, John", "Doe, Anne B."], "year": "2021",
                        "journal": "European Heart Journal"}
    assert second[0] == {"pmid": "31234567", "accession": "31234567"}
    assert second[3].endswith("with newly diagnosed glioblastoma; seizures were the most "
                              "common neurological event.")


def test_the_prefix_is_a_setting(alice_client, user, media_root, tmp_path, trained_model,
                                 settings) -> None:
    settings.EXPORT_LABEL_PREFIX = "Auto/"
    batch = run_batch(owner=user, ml_model=trained_model,
                      path=write(tmp_path, "library.ris", RIS_LIBRARY))
    entries = ris_parse(download(alice_client, batch, "ris"))
    added = [k for k in entries[0]["keywords"] if k.startswith("Auto/")]
    assert added
    assert not any(k.startswith(PREFIX) for k in entries[0]["keywords"])
    assert without_added(entries[0], prefix="Auto/")[0] == ris_parse(RIS_LIBRARY)[0]


def test_predict_out_ris_is_the_same_round_trip(tmp_path, trained_model) -> None:
    source = write(tmp_path, "library.ris", RIS_LIBRARY)
    out = io.StringIO()
    call_command("predict", str(trained_model.pk), str(source), "--out",
                 str(tmp_path / "labelled.ris"), stdout=out)
    assert "Wrote 3 predictions" in out.getvalue()
    assert "1 without text kept as skipped" in out.getvalue()
    after = ris_parse((tmp_path / "labelled.ris").read_text(encoding="utf-8"))
    assert [without_added(e)[0] for e in after] == ris_parse(RIS_LIBRARY)

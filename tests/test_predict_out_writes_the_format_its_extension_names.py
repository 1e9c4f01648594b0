"""`manage.py predict MODEL FILE --out OUT` writes CSV, RIS or JSON Lines after OUT's extension,
for any file import reads (a PubMed .nbib here), every article in file order."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.export_support import NBIB_PUBMED, PREFIX, ris_parse, write

pytestmark = pytest.mark.django_db
PMIDS = ["35000001", "35000002", "35000003"]


def predict(model, source, out) -> str:
    stdout = io.StringIO()
    call_command("predict", str(model.pk), str(source), "--out", str(out), stdout=stdout)
    return stdout.getvalue()


def test_each_extension_writes_its_format(tmp_path, trained_model) -> None:
    source = write(tmp_path, "pubmed.nbib", NBIB_PUBMED)
    labels = list(trained_model.label_names)

    assert "Wrote 3 predictions" in predict(trained_model, source, tmp_path / "out.csv")
    with (tmp_path / "out.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["text", "predicted_labels", *[f"p_{n}" for n in labels], "id",
                             "note"]
    assert [row["id"] for row in rows] == PMIDS
    assert rows[0]["text"].startswith("Statin therapy after acute coronary syndrome")

    predict(trained_model, source, tmp_path / "out.ris")
    entries = ris_parse((tmp_path / "out.ris").read_text(encoding="utf-8"))
    assert [e["accession_number"] for e in entries] == PMIDS
    assert all(any(k.startswith(PREFIX) for k in e["keywords"]) or
               e["notes"][0].startswith(f"{PREFIX} probabilities") for e in entries)

    predict(trained_model, source, tmp_path / "OUT.JSONL")
    lines = [json.loads(line) for line in (tmp_path / "OUT.JSONL").read_text().splitlines()]
    assert [line["identifiers"]["pmid"] for line in lines] == PMIDS
    assert set(lines[0]["probabilities"]) == set(labels)
    assert lines[0]["record"]["JT"] == ["Journal of the American College of Cardiology"]


def test_an_unknown_extension_is_refused_before_anything_is_read(tmp_path, trained_model):
    source = write(tmp_path, "pubmed.nbib", NBIB_PUBMED)
    with pytest.raises(CommandError, match=r"--out must end in \.csv, \.ris or \.jsonl"):
        predict(trained_model, source, tmp_path / "out.xlsx")
    assert not (tmp_path / "out.xlsx").exists()


def test_a_bad_file_fails_in_one_line_and_leaves_no_output(tmp_path, trained_model):
    source = write(tmp_path, "broken.ris", "TY  - JOUR\nTI  - A\nAB  - B\n")
    with pytest.raises(CommandError, match=r"RIS record 1 \(line 1\) has no ER tag"):
        predict(trained_model, source, tmp_path / "out.ris")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.ris"]

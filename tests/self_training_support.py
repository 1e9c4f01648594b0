"""Sources for the self-training tests: an unlabelled dataset holding copies of a labelled
dataset's validation and test rows written otherwise (text_key says they are the same), some
of its training rows, and texts it has never seen."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from classification.batches import storage
from classification.models import BatchJob
from dataset_management.selectors import dataset_split_examples

NEW_ARTICLES = [
    ("Beta-blockers after myocardial infarction in elderly patients",
     "Heart failure admissions fell with ventricle-protective treatment in cardiomyopathy."),
    ("Renal function decline in hepatorenal syndrome",
     "Kidney injury and liver cirrhosis outcomes after terlipressin in hepatoma patients."),
    ("Cognitive decline and dementia in memory clinic cohorts",
     "Neurodegeneration, Alzheimer disease biomarkers and brain atrophy in older adults."),
    ("Tumour response to chemotherapy in metastatic breast cancer",
     "Oncology outcomes of neoadjuvant treatment and survival in carcinoma patients."),
]


def disguised(text: str) -> tuple[str, str]:
    """The same article shouted and re-punctuated."""
    title, _, abstract = text.partition("\n\n")
    return title.upper() + "!!", abstract.replace(".", " ;")


def unlabelled_dataset(import_file: Callable[..., Any], labelled: Any, folder: Path,
                       *, copies: int = 3, train_rows: int = 2, variants: int = 0) -> Any:
    """An unlabelled dataset (title;abstract only) in `labelled`'s project: `copies` disguised
    validation and test rows of `labelled`, `train_rows` of its training rows as they are,
    `variants` of them with a sentence more (new texts, alike to what the model learned),
    and NEW_ARTICLES."""
    rows: list[tuple[str, str]] = []
    for split in ("validation", "test"):
        rows += [disguised(t) for t in
                 dataset_split_examples(dataset=labelled, split=split).texts[:copies]]
    rows += [tuple(t.partition("\n\n")[::2]) for t in
             dataset_split_examples(dataset=labelled, split="train").texts[:train_rows]]
    rows += [(t.partition("\n\n")[0], t.partition("\n\n")[2] + " A follow-up cohort agreed.")
             for t in dataset_split_examples(dataset=labelled, split="train").texts[:variants]]
    rows += NEW_ARTICLES
    path = folder / "unlabelled.csv"
    path.write_text("title;abstract\n" + "".join(
        f"{t.replace(';', ',')};{a.replace(';', ',')}\n" for t, a in rows), encoding="utf-8")
    return import_file(path, name="Unlabelled", project=labelled.project_id)


def batch_with(owner: Any, model: Any, articles: list[tuple[str, str]], *,
               status: str = BatchJob.Status.COMPLETED) -> BatchJob:
    """A batch of `model`'s project whose stored records are `articles` (title, abstract)."""
    batch = BatchJob.objects.create(owner=owner, ml_model=model, filename="articles.csv",
                                    status=status, total=len(articles), processed=len(articles))
    folder = storage.batch_folder(owner_id=owner.pk, batch_id=batch.pk)
    folder.mkdir(parents=True)
    (folder / storage.RESULT_NAME).write_text("row,title\n", encoding="utf-8")
    with (folder / storage.RECORDS_NAME).open("w", encoding="utf-8") as out:
        for row, (title, abstract) in enumerate(articles):
            out.write(json.dumps({"row": row, "title": title, "abstract": abstract,
                                  "identifiers": {}, "predicted_labels": [],
                                  "probabilities": {}, "note": ""}) + "\n")
    batch.result_path = storage.relative(folder / storage.RESULT_NAME)
    batch.save(update_fields=["result_path"])
    return batch

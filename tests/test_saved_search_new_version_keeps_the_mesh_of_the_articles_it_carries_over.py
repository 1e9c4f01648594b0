"""A saved search's second run makes a new version of its collection from the old rows and the
new articles: the old rows keep their MeSH headings, keywords and publication types in it, as
the first version had them (they used to come over as bare title and abstract, so every version
held metadata for its newest articles only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from classification.engine.metadata import metadata_extract
from dataset_management.models import Dataset
from dataset_management.selectors import dataset_rows_iter
from literature.models import SearchRun
from tests.eutils_support import ReplayServer, living_review, script_run
from tests.test_saved_search_run_imports_only_new_pmids_as_a_collection_version_with_a_digest import (  # noqa: E501
    run_once,
    server,  # noqa: F401
)

pytestmark = pytest.mark.django_db


def metadata_by_pmid(dataset: Dataset) -> dict[str, dict[str, list[str]]]:
    return {row["identifiers"]["pmid"]: metadata_extract(citation=row["citation"],
                                                        record=row["record"])
            for row in dataset_rows_iter(dataset=dataset)}


def test_the_rows_carried_into_the_second_version_keep_their_metadata(
        server: ReplayServer, user: Any, media_root: Path,  # noqa: F811
        tfidf_artifact: dict[str, Any]) -> None:
    search = living_review(user, tfidf_artifact)
    server.play(script_run("esearch_run1.xml"))
    first = run_once(search)
    server.play(script_run("esearch_run2.xml"))
    second = run_once(search)
    assert (first.status, second.status) == (SearchRun.Status.COMPLETED,) * 2, second.reason

    before, after = metadata_by_pmid(first.dataset), metadata_by_pmid(second.dataset)
    assert before["27797938"]["mesh"][:2] == ["Adenocarcinoma", "Adult"]  # the fixture has MeSH
    for pmid, fields in before.items():
        assert after[pmid] == fields, pmid

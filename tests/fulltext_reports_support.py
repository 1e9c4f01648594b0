"""Set-up for the full-text viewer and bulk-upload tests: a session over records with titles,
PMIDs and DOIs, all but the last included at title/abstract (so at full text)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile

from dataset_management.services import dataset_create_from_upload
from screening import selectors, services
from screening.models import Record
from tests.screening_support import Team, team_make

# (title, pmid, doi): the last one is excluded at title/abstract.
ARTICLES = [
    ("Statins for the primary prevention of cardiovascular events in adults", "31234567",
     "10.1000/statins.2020.01"),
    ("Exercise training after myocardial infarction: a randomised trial", "32345678",
     "https://doi.org/10.1000/EXERCISE-MI"),
    ("Aspirin and colorectal cancer incidence in a large cohort study", "33456789", ""),
    ("Mediterranean diet and the risk of type 2 diabetes in older women", "", ""),
    ("Vitamin D supplementation and fracture risk: a pooled analysis", "35678901",
     "10.1000/vitamin-d"),
    ("Smoking cessation with varenicline in adolescents", "36789012", "10.1000/varenicline"),
]


@dataclass
class Reports:
    team: Team
    session: Any
    records: list[Record]  # in ARTICLES' order


def reports_make(owner: Any, *, blind: bool = False, include_terms: str = "",
                 exclude_terms: str = "") -> Reports:
    """The team, a session over ARTICLES; every record but the last included at title/abstract
    (by both reviewers when `blind`: two reviewers per record, blinding left on)."""
    from screening import desk

    team = team_make(owner)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["title", "abstract", "label", "pmid", "doi"])
    for i, (title, pmid, doi) in enumerate(ARTICLES):
        writer.writerow([title, f"Abstract of: {title}.",
                         "oncological" if i % 2 else "cardiovascular", pmid, doi])
    team.dataset = dataset_create_from_upload(
        owner=owner, project=team.project, name="Articles",
        uploaded_file=SimpleUploadedFile("articles.csv", out.getvalue().encode()))
    session = services.session_create(user=team.maintainer, dataset=team.dataset, name="FT",
                                      labels=["oncological"], ranker_every=1000,
                                      reviewers_per_record=2 if blind else 1)
    if include_terms or exclude_terms:
        desk.session_desk_update(user=team.maintainer, session=session, criteria="",
                                 include_terms=include_terms, exclude_terms=exclude_terms,
                                 exclusion_reasons="Wrong population", screeners=[])
    by_title = {r.title: r for r in Record.objects.filter(session=session)}
    for person in [team.reviewer, team.reviewer2] if blind else [team.reviewer]:
        for _ in ARTICLES:
            record = selectors.record_next(user=person, session=session)
            value = "no" if record.title == ARTICLES[-1][0] else "yes"
            services.decision_record(user=person, record=record, values={"oncological": value})
    return Reports(team=team, session=session,
                   records=[Record.objects.get(pk=by_title[t].pk) for t, _p, _d in ARTICLES])

"""Set-up for the PRISMA tests: three exports of one search (tests/fixtures/dedup: 21 records,
6 duplicates) merged on import into the team's project, and a session of them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from io import StringIO
from typing import Any

from django.core.management import call_command

from dataset_management.models import Dataset
from screening import services
from screening.models import ScreeningSession
from tests.plugins.datasets import ROOT

DEDUP_FILES = [ROOT / "tests" / "fixtures" / "dedup" / name
               for name in ("pubmed_search.nbib", "embase_search.ris", "scopus_search.csv")]


def merged_session(team: Any, **options: Any) -> ScreeningSession:
    """Imported per file: pubmed_search.nbib 7, embase_search.ris 8, scopus_search.csv 6."""
    call_command("import_dataset", *map(str, DEDUP_FILES), "--name", "Living review",
                 "--owner", team.owner.username, "--project", str(team.project.pk),
                 "--unlabelled", stdout=StringIO())
    dataset = Dataset.objects.get(name="Living review", project=team.project)
    return services.session_create(user=team.maintainer, dataset=dataset, name="Merged",
                                   labels=["included"], **options)


def drawn(svg: str) -> str:
    """Every text of an SVG, its wrapped lines joined as one reads them."""
    root = ET.fromstring(svg)
    return " ".join(" ".join(" ".join(node.itertext()).split())
                    for node in root.iter("{http://www.w3.org/2000/svg}text"))


def page_svg(html: str) -> str:
    return html[html.index("<svg"):html.index("</svg>") + len("</svg>")]


def table(html: str) -> dict[str, int]:
    return {key: int(n) for key, n in re.findall(r'data-key="(\w+)">(?:<strong>)?(\d+)<', html)}

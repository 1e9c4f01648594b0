"""Reference-manager files for the export tests, as Zotero, EndNote and PubMed write them, and
helpers to run a batch on one and read its exports back."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import rispy

from classification.batches.services import batch_job_run
from classification.models import BatchJob, MLModel
from tests.batch_support import create_batch

PREFIX = "MedLitBot:"

# Four records: a Zotero journal article (T2 journal, repeated non-list tags, several URLs on one
# UR line, an unknown tag, a note), an EndNote one from PubMed (AN = PMID, DB/DP, wrapped
# abstract), a book chapter without abstract, and a record with no text at all (kept, skipped).
# Zotero writes a field on one line however long it is.
ZOTERO_ABSTRACT = ("Beta-blockers reduced mortality and hospital admissions for heart failure "
                   "after acute myocardial infarction in a cohort of 4,200 patients.")
RIS_LIBRARY = f"""\
TY  - JOUR
TI  - Beta-blockers after myocardial infarction in heart failure
AU  - Smith, John
AU  - Doe, Anne B.
T2  - European Heart Journal
J2  - Eur Heart J
PY  - 2021
DA  - 2021/03/04
VL  - 42
IS  - 9
SP  - 101
EP  - 110
DO  - 10.1093/eurheartj/ehab001
UR  - https://example.org/a;https://example.org/b
KW  - cardiology
KW  - beta-blockers
AB  - {ZOTERO_ABSTRACT}
N1  - Imported from the hospital library
C1  - Custom field one
C1  - Custom field one, again
XY  - A tag no reference manager defines
LA  - en
ID  - smith2021
ER  -

TY  - JOUR
DB  - PubMed
DP  - NLM
AN  - 31234567
TI  - Temozolomide and radiotherapy for glioblastoma: survival in a multicentre cohort
AU  - Rossi, Maria
A1  - Rossi, Maria
JF  - Journal of Neuro-Oncology
JO  - J Neurooncol
Y1  - 2019/06/01
AB  - Adding temozolomide to radiotherapy extended overall survival in adults with
      newly diagnosed glioblastoma; seizures were the most common neurological event.
M1  - 3
KW  - Glioblastoma/drug therapy
ER  -

TY  - CHAP
TI  - Chronic kidney disease and hepatorenal syndrome in cirrhosis
AU  - Lee, K
BT  - Hepatology handbook
PB  - Academic Press
CY  - London
PY  - 2018
ER  -

TY  - GEN
N1  - An empty reference: no title, no abstract
ER  -
"""

NBIB_PUBMED = """\
PMID- 35000001
OWN - NLM
STAT- MEDLINE
DP  - 2022 Jan 15
TI  - Statin therapy after acute coronary syndrome and recurrent myocardial
      infarction.
LID - 10.1016/j.jacc.2021.11.001 [doi]
AB  - Statin therapy lowered recurrent myocardial infarction and cardiovascular death in
      patients after an acute coronary syndrome.
FAU - Garcia, Elena
AU  - Garcia E
AD  - Department of Cardiology, University Hospital, 28000 Madrid, Spain. Very long
      affiliation lines wrap in MEDLINE exports.
FAU - Chen, Wei
AU  - Chen W
LA  - eng
PT  - Journal Article
TA  - J Am Coll Cardiol
JT  - Journal of the American College of Cardiology
VI  - 79
IP  - 2
PG  - 120-131
MH  - Myocardial Infarction/*drug therapy
MH  - Hydroxymethylglutaryl-CoA Reductase Inhibitors
AID - 10.1016/j.jacc.2021.11.001 [doi]
AID - S0735-1097(21)08000-1 [pii]

PMID- 35000002
OWN - NLM
DP  - 2020 Sep
TI  - Seizure outcomes after epilepsy surgery in children.
AB  - Two thirds of children were seizure-free two years after resective epilepsy surgery.
FAU - Novak, Petr
AU  - Novak P
TA  - Epilepsia
JT  - Epilepsia
AID - 10.1111/epi.16600 [doi]

PMID- 35000003
OWN - NLM
DP  - 2019
TI  - Liver cirrhosis and acute kidney injury: hepatorenal outcomes.
AB  - Terlipressin improved renal function in hepatorenal syndrome.
AU  - Khan A
TA  - Hepatology
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def run_batch(*, owner: Any, ml_model: MLModel, path: Path) -> BatchJob:
    """Create a batch for `path` and run it here, as the inference worker would."""
    batch = create_batch(owner=owner, ml_model=ml_model, path=path)
    assert batch_job_run(batch_id=batch.pk.hex) == "completed"
    batch.refresh_from_db()
    return batch


def ris_parse(text: str, **options: Any) -> list[dict[str, Any]]:
    """rispy's reading, unknown tags as plain dicts so records compare with ==."""
    entries = rispy.loads(text, **options)
    for entry in entries:
        if "unknown_tag" in entry:
            entry["unknown_tag"] = dict(entry["unknown_tag"])
    return entries


def without_added(entry: dict[str, Any], *, prefix: str = PREFIX) -> tuple[dict, list, list]:
    """(the entry less what an export adds, the keywords it added, the notes it added)."""
    entry = copy.deepcopy(entry)
    added_keywords = [k for k in entry.get("keywords", []) if k.startswith(prefix)]
    added_notes = [n for n in entry.get("notes", []) if n.startswith(prefix)]
    for name, added in (("keywords", added_keywords), ("notes", added_notes)):
        kept = [v for v in entry.get(name, []) if v not in added]
        if kept:
            entry[name] = kept
        else:
            entry.pop(name, None)
    return entry, added_keywords, added_notes

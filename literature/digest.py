"""A run's digest: "23 new articles; 7 predicted oncological, 4 predicted cardiovascular", with
the list of the new articles and each one's predicted labels; and the e-mail that carries it."""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.mail import send_mail

from classification.batches import storage
from classification.batches.selectors import batch_job_result_file
from classification.models import BatchJob
from literature.models import SearchRun

logger = logging.getLogger(__name__)

PUBMED_URL = "https://pubmed.ncbi.nlm.nih.gov/{pmid}/"
LIST_LIMIT = 2000  # digest items kept on the run; the collection holds every article


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def digest_text(*, new: int, counts: dict[str, int] | None, note: str = "") -> str:
    """The one line a page, the API and the e-mail lead with."""
    if new == 0:
        text = "No new articles since the last run."
    else:
        text = f"{_plural(new, 'new article')}"
        if counts is not None:
            ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
            predicted = [f"{n:,} predicted {label}" for label, n in ranked if n]
            text += "; " + (", ".join(predicted) if predicted else "none predicted in any label")
    return f"{text} ({note})" if note else text


def digest_items_plain(articles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The new articles before (or without) classification."""
    return [{"pmid": a.get("pmid", ""), "title": a.get("title", ""), "predicted_labels": None}
            for a in articles[:LIST_LIMIT]]


def digest_from_batch(*, batch: BatchJob,
                      items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The items with their predicted labels from the completed batch's records (JSON Lines,
    one per article, in input order, identifiers kept), and the count per label."""
    result = batch_job_result_file(batch=batch)
    records = Path(result).with_name(storage.RECORDS_NAME) if result else None
    predicted: dict[str, list[str]] = {}
    if records is not None and records.is_file():
        with records.open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    item = json.loads(line)
                    pmid = str((item.get("identifiers") or {}).get("pmid") or "")
                    predicted[pmid] = list(item.get("predicted_labels") or [])
    counts: Counter[str] = Counter()
    for labels in predicted.values():
        counts.update(labels)
    out = [{**item, "predicted_labels": predicted.get(item["pmid"], [])} for item in items]
    return out, dict(counts)


def digest_email_send(*, run: SearchRun) -> str:
    """Mail the digest to the search's owner when EMAIL_BACKEND is configured and the owner has
    an address and the run found something; the address mailed, or "" (a failure is logged
    and noted on the run, never raised: the run itself succeeded)."""
    owner = run.search.owner
    if not (settings.EMAIL_ENABLED and run.new and owner is not None and owner.email):
        return ""
    lines = [run.digest, "", f"Query: {run.query}", ""]
    for item in run.digest_items:
        labels = item.get("predicted_labels")
        shown = f" [{', '.join(labels) or 'no label'}]" if labels is not None else ""
        lines.append(f"- {item.get('title') or '(no title)'}{shown}\n  "
                     f"{PUBMED_URL.format(pmid=item.get('pmid'))}")
    subject = f"MedLitBot: {run.digest.split(';')[0]} for “{run.search.name}”"
    try:
        send_mail(subject[:200], "\n".join(lines), None, [owner.email])
    except Exception as exc:  # SMTP errors, refused connections: the digest is on the page
        logger.warning("digest e-mail for run %s not sent: %s", run.pk, exc)
        SearchRun.objects.filter(pk=run.pk).update(
            reason=f"The digest e-mail to {owner.email} was not sent ({exc}).")
        return ""
    SearchRun.objects.filter(pk=run.pk).update(emailed_to=owner.email)
    return owner.email

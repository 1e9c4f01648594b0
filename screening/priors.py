"""Prior knowledge: records the team already knows are relevant or irrelevant for a label.

A prior settles the label on its record as a resolution would (selectors.record_final_values
reads it, after a maintainer's resolution and before the reviewers' decisions), so the ranker
learns from it at once: a prior yes and a prior no are enough for the first ranking. It is no
screening: a record settled by priors alone is done with done_phase "prior", never counted in
final_count (the records screened), never served, never in the random sample's pool; for the
stopping rule a prior yes is a relevant record already found (docs/screening.md says why the
guarantee then still holds). Priors are set only in the ranked phase, on records nobody has
decided yet: once the random sample is drawn, every record of its pool must be read.

Records are chosen by a search (screening.record_search), by record ids, by PMIDs, or by a
file of included studies (RIS, CSV, PubMed XML... read with dataset_management's readers)
matched by PMID, then DOI, then normalised title.
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from core.queueing import task_send_on_commit
from projects import policy
from projects.services import activity_record
from screening import ranking, record_search, record_state, selectors
from screening.errors import ScreeningError
from screening.models import Decision, Prior, Record, ScreeningSession, Stage
from screening.visibility import session_sight

MAX_RECORDS = 5000
FILE_MAX_BYTES = 20 * 1024 * 1024
TITLE_COLUMNS = ("title", "article title", "primary_title", "ti")


def _title_key(value: str) -> str:
    decomposed = unicodedata.normalize("NFKD", str(value).casefold())
    return "".join(ch for ch in decomposed if ch.isalnum())


def _doi_key(value: str) -> str:
    return re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", str(value).strip(),
                  flags=re.IGNORECASE).lower().rstrip(".,;")


def _pmid_key(value: Any) -> str:
    return str(value).strip().removeprefix("PMID:").strip().lstrip("0")


def records_by_pmids(*, session: ScreeningSession, pmids: list[Any]) -> tuple[list[Record],
                                                                              list[str]]:
    """The session's records with these PMIDs (leading zeros ignored), and the PMIDs none has."""
    wanted = {_pmid_key(p): str(p) for p in pmids if _pmid_key(p)}
    found: dict[str, Record] = {}
    for record in session.records.defer("scores", "truth"):
        key = _pmid_key((record.identifiers or {}).get("pmid", ""))
        if key in wanted:
            found.setdefault(key, record)
    return list(found.values()), [wanted[k] for k in wanted if k not in found]


def records_by_ids(*, session: ScreeningSession, record_ids: list[Any]) -> tuple[list[Record],
                                                                                 list[str]]:
    try:
        wanted = [int(pk) for pk in record_ids]
    except (TypeError, ValueError):
        raise ScreeningError("`record_ids` is a list of record ids (whole numbers).") from None
    found = session.records.in_bulk(wanted)
    return list(found.values()), [str(pk) for pk in wanted if pk not in found]


def records_by_search(*, user: Any, session: ScreeningSession, query: str) -> list[Record]:
    if not " ".join(str(query or "").split()):
        raise ScreeningError("Search for some text: the query is empty.")
    sight = session_sight(user=user, session=session)
    return list(record_search.record_search(session=session, sight=sight, text=query)[
        :MAX_RECORDS + 1])


def records_by_file(*, session: ScreeningSession, upload: Any) -> tuple[list[Record],
                                                                       list[str]]:
    """The records a file of studies names (by PMID, then DOI, then normalised title), and the
    file's studies that match none (their titles)."""
    from dataset_management.articles import ArticleStream
    from dataset_management.mapping import ColumnMapping
    from dataset_management.readers import DatasetFileError, read_records

    if upload.size > FILE_MAX_BYTES:
        raise ScreeningError(f"A file of studies is at most {FILE_MAX_BYTES // 2**20} MB.")
    pool = list(session.records.defer("scores", "truth"))
    by = {"pmid": {}, "doi": {}, "title": {}}  # type: dict[str, dict[str, Record]]
    for record in pool:
        ids = record.identifiers or {}
        for kind, key in (("pmid", _pmid_key(ids.get("pmid", ""))),
                          ("doi", _doi_key(ids.get("doi", ""))),
                          ("title", _title_key(record.title))):
            if key:
                by[kind].setdefault(key, record)
    found: dict[int, Record] = {}
    missing: list[str] = []
    with tempfile.TemporaryDirectory(prefix="medlitbot-priors-") as tmp:
        path = Path(tmp) / "studies"
        with path.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        try:
            stream = read_records(path, filename=upload.name)
            # Identifiers and a title are enough here: no abstract column is asked for.
            title = next((c for c in stream.columns if c.strip().lower() in TITLE_COLUMNS), None)
            with ArticleStream(stream, ColumnMapping(title=title)) as articles:
                for article in articles:
                    ids = article.identifiers
                    record = (by["pmid"].get(_pmid_key(ids.get("pmid", "")))
                              or by["doi"].get(_doi_key(ids.get("doi", "")))
                              or by["title"].get(_title_key(article.title) or "-"))
                    if record is None:
                        missing.append(article.title or ids.get("pmid") or f"row {article.row}")
                    else:
                        found[record.pk] = record
        except DatasetFileError as exc:
            raise ScreeningError(f"The file could not be read: {exc}") from None
    return list(found.values()), missing


def _check(*, session: ScreeningSession, label: str, value: str) -> None:
    if session.phase != ScreeningSession.Phase.RANKED or session.sampling_started_at:
        raise ScreeningError("Prior knowledge is added in the ranked phase only: once the "
                             "random sample is drawn, each of its records must be read.")
    if label not in session.labels:
        raise ScreeningError(f"Choose one of the session's labels: {', '.join(session.labels)}.")
    if value not in ("yes", "no"):
        raise ScreeningError("A prior is yes (known relevant) or no (known irrelevant).")


def priors_set(*, user: Any, session: ScreeningSession, label: str, value: str,
               records: list[Record], how: str) -> dict[str, Any]:
    """Mark `records` known relevant (yes) or irrelevant (no) for `label`; what was set and
    what was left out (a record someone already decided keeps its decisions)."""
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=session)
    _check(session=session, label=label, value=value)
    if not records:
        raise ScreeningError("No record was chosen: nothing was marked.")
    if len(records) > MAX_RECORDS:
        raise ScreeningError(f"Mark at most {MAX_RECORDS} records at once; narrow the choice.")
    set_ids, left = [], []
    with transaction.atomic():
        for chosen in sorted(records, key=lambda r: r.pk):
            record = Record.objects.select_for_update().get(pk=chosen.pk)
            if (record.done and record.done_phase != "prior") or Decision.objects.filter(
                    record=record, stage=Stage.TITLE_ABSTRACT).exists():
                left.append({"record": record.pk, "position": record.position + 1,
                             "why": "already screened: its decisions stand"})
                continue
            Prior.objects.update_or_create(record=record, label=label, defaults={
                "value": value, "how": how[:300], "set_by": user})
            _finalise(record=record, session=session)
            set_ids.append(record.pk)
        if not set_ids:
            raise ScreeningError(f"None of the {len(left)} record(s) chosen was marked: each "
                                 "has been screened already, and its decisions stand.")
        activity_record(project=session.project_id, actor=user, verb="screening_prior",
                        subject=session, summary=f"{user.get_username()} marked "
                        f"{len(set_ids)} record(s) of “{session.name}” as known "
                        f"{'relevant' if value == 'yes' else 'irrelevant'} for {label} "
                        f"(prior knowledge, {how[:200]})")
    _ranking_request(session_id=session.pk)
    return {"label": label, "value": value, "how": how, "set": set_ids, "left": left}


def _finalise(*, record: Record, session: ScreeningSession) -> None:
    """The record's final values with its priors; done by priors alone is done_phase "prior",
    outside final_count (the records screened)."""
    final = selectors.record_final_values(record=record, session=session)
    done = all(label in final for label in session.labels)
    if done and not record.done:
        record.done_at, record.done_phase = timezone.now(), "prior"
    elif not done and record.done:
        record.done_at, record.done_phase = None, ""
    record.final, record.done = final, done
    record.save(update_fields=["final", "done", "done_at", "done_phase"])
    record_state.record_state_sync(record=record, session=session)


def _ranking_request(*, session_id: int) -> None:
    """Rank again now: priors do not move final_count, which paces the decisions' refreshes."""
    if not ranking.ranker_lock_take(session_id=session_id):
        return

    def unreachable(reason: str) -> None:
        ScreeningSession.objects.filter(pk=session_id).update(
            ranker_running_since=None, ranker_error=f"The ranking was not refreshed: {reason}")

    task_send_on_commit(name=ranking.TASK, args=(session_id,), on_unreachable=unreachable)


def prior_remove(*, user: Any, session: ScreeningSession, prior_id: Any) -> Prior:
    """Take a prior off its record (logged); refused (and kept) if the record's state may not
    go back, e.g. full-text work was done on it."""
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=session)
    prior = Prior.objects.filter(record__session=session, pk=prior_id).select_related(
        "record").first()
    if prior is None:
        raise ScreeningError("This session has no such prior.")
    with transaction.atomic():
        record = Record.objects.select_for_update().get(pk=prior.record_id)
        Prior.objects.filter(pk=prior.pk).delete()
        _finalise(record=record, session=session)
        activity_record(project=session.project_id, actor=user, verb="screening_prior_remove",
                        subject=session, summary=f"{user.get_username()} removed the prior "
                        f"{prior.label}={prior.value} ({prior.how}) from record "
                        f"{record.position + 1} of “{session.name}”")
    return prior


def prior_list(*, session: ScreeningSession) -> list[Prior]:
    return list(Prior.objects.filter(record__session=session)
                .select_related("record", "set_by").order_by("record__position", "label"))


def prior_payload(prior: Prior) -> dict[str, Any]:
    return {"id": prior.pk, "record": prior.record_id, "position": prior.record.position + 1,
            "title": prior.record.title[:200], "label": prior.label, "value": prior.value,
            "how": prior.how, "by": prior.set_by.get_username(),
            "at": prior.set_at.isoformat(), "shown": prior_shown(prior)}


def prior_shown(prior: Prior) -> str:
    """How exports and pages name it."""
    return f"prior knowledge (by {prior.set_by.get_username()}, {prior.how})"


def priors_count(*, session: ScreeningSession) -> int:
    """Records settled by priors alone (done, not screened)."""
    return session.records.filter(done=True, done_phase="prior").count()


def priors_choose(*, user: Any, session: ScreeningSession, query: Any = None,
                  record_ids: Any = None, pmids: Any = None, upload: Any = None
                  ) -> tuple[list[Record], str, list[str]]:
    """The records chosen by exactly one of a search, record ids, PMIDs or a file; how they
    were chosen (kept on each prior) and what named no record."""
    given = [name for name, value in (("query", query), ("record_ids", record_ids),
                                      ("pmids", pmids), ("file", upload))
             if value not in (None, "", [])]
    if len(given) != 1:
        raise ScreeningError("Choose the records one way: `query` (a search), `record_ids`, "
                             "`pmids`, or a `file` of included studies.")
    if query not in (None, ""):
        text = " ".join(str(query).split())
        return records_by_search(user=user, session=session, query=text), f"search “{text}”", []
    if upload is not None:
        found, missing = records_by_file(session=session, upload=upload)
        return found, f"file {upload.name}"[:300], missing
    listed = _as_list(record_ids if record_ids not in (None, "", []) else pmids)
    if record_ids not in (None, "", []):
        found, missing = records_by_ids(session=session, record_ids=listed)
        return found, "record ids", missing
    found, missing = records_by_pmids(session=session, pmids=listed)
    return found, "PMIDs", missing


def _as_list(value: Any) -> list[Any]:
    """A JSON list, or the page's text of ids separated by commas, spaces or new lines."""
    if isinstance(value, list):
        return value
    if isinstance(value, str | int):
        return [part for part in re.split(r"[\s,;]+", str(value)) if part]
    raise ScreeningError("Send the ids as a list (or as text separated by commas).")


def _value(data: Any, name: str) -> Any:
    """A JSON value, or a multipart form's (its lists come as repeated fields)."""
    if hasattr(data, "getlist") and len(data.getlist(name)) > 1:
        return data.getlist(name)
    return data.get(name)


def priors_post(*, user: Any, session: Any, data: Any, upload: Any) -> dict[str, Any]:
    """Shared by the API and the page: choose, then mark; ScreeningError says what is wrong."""
    if not hasattr(data, "get"):
        raise ScreeningError("Send a JSON object (or a form).")
    policy.require(user=user, action=policy.Action.MANAGE_SCREENING, obj=session)
    records, how, missing = priors_choose(
        user=user, session=session, query=_value(data, "query"),
        record_ids=_value(data, "record_ids"), pmids=_value(data, "pmids"), upload=upload)
    done = priors_set(user=user, session=session, label=str(data.get("label") or ""),
                      value=str(data.get("value") or ""), records=records, how=how)
    return {**done, "unmatched": missing[:200], "unmatched_count": len(missing)}

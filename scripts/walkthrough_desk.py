"""The review desk a methodologist signs, walked for real (issue 50's walk-through).

A collection of two exports made from demo_data/medlit_challenge.csv (an RIS "PubMed" export
of 1,800 records and a CSV "Embase" export of 800, overlapping by 300) is uploaded on the
upload page; its duplicates are judged on the near-matches page (side by side: one band
merged, one pair kept apart) and one merge is un-merged; two reviewers screen 100 records
blind (20 each by keyboard on the screen page, the other 80 each over the API with their
tokens), a maintainer resolves the conflicts by keyboard, the owner ends blinding, a tag is
defined and put and the records page filtered, the 10 records at full text get their PDFs in
one bulk upload (matched by DOI or title), the viewer draws one, both reviewers decide all 10
on the full-text pages, the PRISMA sources are named with their counts from before import,
and the diagram is downloaded as SVG, 300-dpi PNG and PDF.

As scripts/walkthrough_review.py: a fresh SQLite database and folders in a temporary
directory, gunicorn with the project's config, Debian's chromium driven by playwright. No
Celery worker runs: each import job a page queues (the collection, the merge, the un-merge)
is run by this script in-process with dataset_management.imports.import_job_run, the task's
own body, and the queues of this run are emptied at the end. Screenshots, the downloads and
summary.txt go to docs/figures/review_walkthrough/ (its other files are left as they are),
only once the whole walk has worked.

    nice -n 10 .venv/bin/python scripts/walkthrough_desk.py [--keep]

The reviewers' answers are scripted, not judged (walkthrough_review.hits counts oncology
terms): of the first 100 records in the session's order, the 8 with most terms are included
by both, the next 2 are unsure from both (so at full text too), the next 4 conflicts resolved
as no, the rest excluded by both.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import walkthrough_review as base

ROOT, FIGURES, LABEL = base.ROOT, base.FIGURES, base.LABEL
# Records per export; of them shared by both; of those, a year apart (near matches).
IN_A, IN_B, OVERLAP, NEAR = 1800, 800, 300, 20
SCREENED, BY_KEYS = 100, 20
SHOTS = ("5-collection-two-exports.png", "6-duplicates-side-by-side.png",
         "7-records-tags-filters.png", "8-fulltext-pdf-viewer.png",
         "9-prisma-2020-edited-sources.png", "10-screen-page-two-reviewers.png")
BOXES = {
    "identified": "Records identified", "duplicates_removed": "Duplicate records removed",
    "screened": "Records screened", "not_yet_screened": "Not yet screened",
    "excluded_at_screening": "Records excluded", "reports_sought": "Reports sought for retrieval",
    "reports_not_retrieved": "Reports not retrieved",
    "reports_assessed": "Reports assessed for eligibility",
    "reports_excluded": "Reports excluded", "studies_included": "Studies included in review"}


def articles() -> list[dict[str, str]]:
    """The demo data's distinct articles, in file order."""
    seen, out = set(), []
    with base.DEMO.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle, delimiter=";"):
            title, abstract = " ".join(row["title"].split()), " ".join(row["abstract"].split())
            key = (title.lower(), abstract.lower())
            if title and abstract and key not in seen:
                seen.add(key)
                out.append({"title": title, "abstract": abstract})
    return out


def exports(tmp: Path) -> tuple[Path, Path, dict[str, int]]:
    """Export A (RIS, a DOI and year each) and export B (CSV with a year); the last OVERLAP
    of A are B's first, NEAR of them under another DOI (kept apart for a person to judge)."""
    rows = articles()
    if len(rows) < IN_A + IN_B - OVERLAP:
        raise RuntimeError(f"the demo data has {len(rows)} distinct articles only")
    ris, table = tmp / "pubmed_search.ris", tmp / "embase_search.csv"
    with ris.open("w", encoding="utf-8") as out:
        for i, row in enumerate(rows[:IN_A]):
            out.write(f"TY  - JOUR\nTI  - {row['title']}\nAB  - {row['abstract']}\n"
                      f"PY  - {2000 + i % 20}\nDO  - 10.5555/medlitbot.{i}\nER  - \n\n")
    start = IN_A - OVERLAP
    with table.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["title", "abstract", "year", "doi"])
        for i, row in enumerate(rows[start:start + IN_B], start=start):
            # A near one: the same text under another DOI (a preprint and its paper?), which
            # keeps the two apart for a person to judge; the others carry no DOI here.
            doi = f"10.6666/embase.{i}" if start <= i < start + NEAR else ""
            writer.writerow([row["title"], row["abstract"], 2000 + i % 20, doi])
    return ris, table, {"distinct": IN_A + IN_B - OVERLAP}


def setup() -> dict[str, Any]:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from api.tokens import token_create
    from projects import services as project_services
    from projects.models import LastProject

    users = {name: get_user_model().objects.create_user(name, f"{name}@example.org",
                                                        base.PASSWORD)
             for name in ("owen", "mona", "rita", "remy")}
    project = project_services.project_create(user=users["owen"], name="Oncology review")
    for name, role in (("mona", "maintainer"), ("rita", "reviewer"), ("remy", "reviewer")):
        project_services.member_set(actor=users["owen"], project=project, member=users[name],
                                    role=role)
    for person in users.values():  # each login lands in the review's project, as if chosen
        LastProject.objects.update_or_create(user=person, defaults={"project": project})
    tokens = {name: token_create(user=users[name], name="walk")[1] for name in ("rita", "remy")}
    return {"users": users, "project": project, "tokens": tokens}


def job_run(page: Any) -> Any:
    """Run the import the page just queued, in-process as a worker would; its dataset."""
    from dataset_management.imports import import_job_run
    from dataset_management.models import ImportJob

    match = re.search(r"/imports/(\d+)/", page.url)
    if match is None:
        raise RuntimeError(f"no import was queued: the page is {page.url}")
    import_job_run(job_id=int(match.group(1)))
    job = ImportJob.objects.get(pk=int(match.group(1)))
    if job.dataset_id is None:
        raise RuntimeError(f"import {job.pk} ended {job.status}: {job.error_message}")
    return job.dataset


def collection(page: Any, url: str, ris: Path, table: Path, out: Path) -> Any:
    page.goto(f"{url}/datasets/upload/")
    page.set_input_files("#collection-files", [str(ris), str(table)])
    page.fill("#collection-name", "Oncology search, PubMed and Embase")
    page.check("#collection-form input[name=unlabelled]")
    page.click("#collection-form button[type=submit]")
    dataset = job_run(page)
    page.goto(f"{url}/datasets/{dataset.pk}/")
    page.screenshot(path=str(out / SHOTS[0]), full_page=True)
    return dataset


def duplicates(page: Any, url: str, dataset: Any, out: Path) -> tuple[Any, dict[str, Any]]:
    """Judge the near matches side by side (a band merged, one pair kept apart), then un-merge
    one merge; the version the session screens, and what was judged."""
    page.goto(f"{url}/datasets/{dataset.pk}/near-matches/")
    first = page.locator(".near-pair").first
    first.scroll_into_view_if_needed()
    page.screenshot(path=str(out / SHOTS[1]))
    pairs = page.locator(".near-pair").count()
    for band in page.locator("#near-bands tr[data-band]").all():
        band.locator("input[value=merge]").check()
    first.locator("input[value=split]").check()
    page.click("#near-matches-form button[type=submit]")
    merged = job_run(page)
    page.goto(f"{url}/datasets/{merged.pk}/near-matches/")
    page.locator("#merges-made tr[data-merge] button").first.click()
    final = job_run(page)
    return final, {"pairs_on_first_page": pairs, "after_merge": merged.row_count,
                   "after_unmerge": final.row_count, "before": dataset.row_count}


def screening_plan(session: Any) -> dict[int, dict[str, Any]]:
    """Per record position (1-based): each reviewer's key and reason number, the resolution."""
    from screening.models import Record

    first = list(Record.objects.filter(session=session).order_by("-priority", "position")
                 [:SCREENED])
    ranked = sorted(first, key=lambda r: -base.hits(f"{r.title} {r.abstract}",
                                                     base.INCLUDE_TERMS))
    plan = {}
    for rank, record in enumerate(ranked):
        animal = base.hits(f"{record.title} {record.abstract}", "rat, rats, mice, mouse")
        reason = 2 if animal else 1
        if rank < 8:
            entry = {"rita": ("y", 0), "remy": ("y", 0), "resolve": None}
        elif rank < 10:
            entry = {"rita": ("u", 0), "remy": ("u", 0), "resolve": None}
        elif rank < 14:
            entry = {"rita": ("y", 0), "remy": ("n", reason), "resolve": "n"}
        else:
            entry = {"rita": ("n", reason), "remy": ("n", reason), "resolve": None}
        plan[record.position + 1] = entry
    return plan


def screen_by_keys(page: Any, url: str, session: Any, who: str, plan: dict[int, Any],
                   shot: Path | None) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/screening/{session.pk}/screen/")
    for done in range(1, BY_KEYS + 1):
        page.wait_for_function(
            "() => /^Record \\d+/.test(document.getElementById('record-position').textContent)")
        at = base.position_on(page)
        if at not in plan:
            raise RuntimeError(f"{who} was handed record {at}, not one of the planned 100")
        key, reason = plan[at][who]
        if shot is not None and done == 3:
            page.screenshot(path=str(shot))
        if reason:
            page.keyboard.press(str(reason))
            expect(page.locator("#record-reason")).to_have_value(base.REASONS[reason - 1])
        page.keyboard.press(key)
        page.wait_for_function(
            "p => document.getElementById('record-position').textContent.split(' ')[1] !== p",
            arg=str(at))
    expect(page.locator("#save-status")).to_have_text("All saved.", timeout=60_000)


def api(url: str, token: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        f"{url}{path}", data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=60) as answer:
        return json.loads(answer.read())


def screen_by_api(url: str, token: str, session: Any, who: str, plan: dict[int, Any]) -> int:
    values = {"y": "yes", "n": "no", "u": "unsure"}
    done = 0
    for _ in range(SCREENED - BY_KEYS):
        record = api(url, token, f"/api/screening/{session.pk}/next/")["record"]
        if record is None or record["position"] not in plan:
            raise RuntimeError(f"{who} was handed {record and record['position']} by the API")
        key, reason = plan[record["position"]][who]
        body = {"record": record["id"], "values": {LABEL: values[key]}}
        if reason:
            body["reasons"] = {LABEL: base.REASONS[reason - 1]}
        api(url, token, f"/api/screening/{session.pk}/decide/", body)
        done += 1
    return done


def end_blinding(page: Any, url: str, session: Any) -> None:
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto(f"{url}/screening/{session.pk}/")
    with page.expect_navigation():
        page.click("#end-blinding")


def tags(pages: dict[str, Any], url: str, session: Any, out: Path) -> dict[str, str]:
    from playwright.sync_api import expect

    mona, rita = pages["mona"], pages["rita"]
    mona.goto(f"{url}/screening/{session.pk}/records/")
    everything = mona.inner_text("#records-count")
    mona.fill("#tag-define input[name=name]", "check-dose")
    with mona.expect_navigation():
        mona.click("#tag-define button")
    rita.goto(f"{url}/screening/{session.pk}/records/?stage=full_text")
    for i in range(3):
        with rita.expect_navigation():
            rita.locator("#records-table tbody tr").nth(i).locator(".tag-form button").click()
    mona.goto(f"{url}/screening/{session.pk}/records/")
    mona.select_option("#records-filter select[name=tag]", "check-dose")
    mona.select_option("#records-filter select[name=stage]", "full_text")
    with mona.expect_navigation():
        mona.click("#records-filter button")
    expect(mona.locator("#records-count")).not_to_have_text(everything)
    mona.screenshot(path=str(out / SHOTS[2]), full_page=True)
    narrowed = mona.inner_text("#records-count")
    mona.goto(f"{url}/screening/{session.pk}/records/?decision=unsure")
    return {"all": everything, "tag check-dose at full text": narrowed,
            "decision unsure": mona.inner_text("#records-count")}


def report_files(records: list[Any], tmp: Path) -> list[str]:
    """One PDF per record: named by its DOI when it has one, else known by its title."""
    folder = tmp / "reports"
    folder.mkdir()
    paths = []
    for i, record in enumerate(records):
        doi = (record.identifiers or {}).get("doi", "")
        name = f"{doi.replace('/', '_')}.pdf" if doi else f"scan-{i:03d}.pdf"
        pages = [record.title, f"Methods: we studied adults with cancer (report {i}).",
                 (record.abstract or "")[:140], "Results: survival and response are reported."]
        (folder / name).write_bytes(base.pdf_bytes(pages))
        paths.append(str(folder / name))
    return paths


def fulltext(pages: dict[str, Any], url: str, session: Any, tmp: Path,
             out: Path) -> dict[str, Any]:
    """The bulk upload, the viewer, and both reviewers' decisions on every report."""
    from playwright.sync_api import expect

    from screening import fulltext_selectors

    records = sorted((r for r, _ in fulltext_selectors.fulltext_records(session=session)),
                     key=lambda r: r.position)
    rita = pages["rita"]  # a screener attaches (the desk named the two reviewers)
    rita.goto(f"{url}/screening/{session.pk}/fulltext/bulk/")
    rita.set_input_files("#ft-bulk input[type=file]", report_files(records, tmp))
    started = time.monotonic()
    with rita.expect_navigation(timeout=120_000):
        rita.click("#ft-bulk button")
    bulk_s = time.monotonic() - started
    how = [row.inner_text() for row in rita.locator(
        "#ft-bulk-results tr[data-outcome=attached] .how").all()]
    rita.goto(f"{url}/screening/{session.pk}/fulltext/{records[0].pk}/")
    viewer = rita.locator("#ft-viewer")
    expect(viewer).to_have_attribute("data-state", "ready", timeout=60_000)
    expect(viewer.locator(".ft-page[data-page='1']")).to_have_attribute("data-drawn", "true")
    rita.screenshot(path=str(out / SHOTS[3]), full_page=True)
    for i, record in enumerate(records):
        reason = base.REASONS[2 + i % 2] if i % 5 in (1, 3) else ""  # 4 of 10 excluded
        for who in ("rita", "remy"):
            page = pages[who]
            page.goto(f"{url}/screening/{session.pk}/fulltext/{record.pk}/")
            page.check(f"#ft-decide input[value={'no' if reason else 'yes'}]")
            if reason:
                page.select_option("#ft-decide select", reason)
            with page.expect_navigation():
                page.click("#ft-decide-button")
    return {"at_full_text": len(records), "attached": len(how),
            "matched_by": {k: how.count(k) for k in sorted(set(how))},
            "bulk_upload_s": round(bulk_s, 1)}


def prisma(page: Any, url: str, session: Any, out: Path) -> dict[str, Any]:
    """Name the sources with their counts before import, check the diagram against the
    table, download SVG, PNG and PDF."""
    from playwright.sync_api import expect

    page.goto(f"{url}/screening/{session.pk}/prisma/")
    rows = page.locator("#prisma-sources-form tbody tr")
    named = {"pubmed_search.ris": ("PubMed (RIS export)", IN_A + 40),
             "embase_search.csv": ("Embase (CSV export)", IN_B + 10)}
    for i in range(rows.count()):
        file = rows.nth(i).get_attribute("data-file")
        name, identified = named[file]
        rows.nth(i).locator("input[name=name]").fill(name)
        rows.nth(i).locator("input[name=identified]").fill(str(identified))
    page.fill("#removed-automation", "30")
    page.fill("#removed-other", "12")
    with page.expect_navigation():
        page.click("#prisma-sources-save")
    expect(page.locator("#prisma-diagram svg")).to_contain_text("PubMed (RIS export)")
    page.screenshot(path=str(out / SHOTS[4]), full_page=True)
    table = {cell.get_attribute("data-key"): int(cell.inner_text())
             for cell in page.locator("#prisma-table td[data-key]").all()
             if cell.inner_text().strip().isdigit()}
    drawn = page.locator("#prisma-diagram svg").evaluate(
        "svg => Array.from(svg.querySelectorAll('text')).map(t => t.textContent"
        ".split(/\\s+/).join(' ').trim()).join(' ')")
    for key, words in BOXES.items():
        found = re.search(re.escape(words) + r" \(n = (\d+)\)", drawn)
        if (int(found.group(1)) if found else 0) != table.get(key, 0):
            raise RuntimeError(f"PRISMA's diagram and table differ on {key}: {drawn}")
    sizes = {}
    for link, name in (("#prisma-svg", "prisma-desk.svg"), ("#prisma-png", "prisma-desk.png"),
                       ("#prisma-pdf", "prisma-desk.pdf")):
        with page.expect_download() as download:
            page.click(link)
        download.value.save_as(out / name)
        sizes[name] = (out / name).stat().st_size
    return {"table": table, "downloads": sizes}


def timed(times: dict[str, float], step: str, started: float) -> float:
    now = time.monotonic()
    times[step] = round(now - started, 1)
    return now


def walk(browser: Any, server: base.Server, data: dict[str, Any], tmp: Path,
         out: Path) -> dict[str, Any]:
    from screening import services

    url, errors, times, found = server.url, [], {}, {}
    pages = {n: base.login(browser, url, n, errors) for n in ("mona", "rita", "remy", "owen")}
    at = time.monotonic()
    ris, table, found["exports"] = exports(tmp)
    dataset = collection(pages["mona"], url, ris, table, out)
    found["collection"] = {"articles": dataset.row_count, **_counts(dataset)}
    at = timed(times, "collection upload and import", at)
    final, found["duplicates"] = duplicates(pages["mona"], url, dataset, out)
    at = timed(times, "near matches judged, one un-merged", at)
    session = services.session_create(user=data["users"]["mona"], dataset=final,
                                      name="Cancer studies, two databases", labels=[LABEL],
                                      reviewers_per_record=2, ranker_every=1000)
    data["session"] = session
    base.desk(pages["mona"], url, data)
    plan = screening_plan(session)
    for who in ("rita", "remy"):
        screen_by_keys(pages[who], url, session, who, plan,
                       out / SHOTS[5] if who == "remy" else None)
        screen_by_api(url, data["tokens"][who], session, who, plan)
    at = timed(times, "100 records screened by two reviewers", at)
    found["conflicts_resolved"] = base.resolve_conflicts(pages["mona"], url, session, plan,
                                                         tmp / "conflict.png")
    end_blinding(pages["owen"], url, session)
    found["records_page"] = tags(pages, url, session, out)
    at = timed(times, "conflicts, blinding ended, tags and filters", at)
    found["fulltext"] = fulltext(pages, url, session, tmp, out)
    at = timed(times, "full text: bulk upload, viewer, 20 decisions", at)
    found["prisma"] = prisma(pages["mona"], url, session, out)
    timed(times, "PRISMA sources edited, checked and downloaded", at)
    return {**found, "timings_s": times, "browser_errors": errors}


def _counts(dataset: Any) -> dict[str, Any]:
    from dataset_management.collection import COUNTS_KEY

    counts = (dataset.report or {}).get(COUNTS_KEY) or {}
    return {"records_identified": counts.get("records_identified"),
            "duplicates_removed": counts.get("duplicates_removed"),
            "merged_by": counts.get("merged_by"),
            "near_matches": len(counts.get("near_matches") or []),
            "per_file": [{k: f.get(k) for k in ("name", "identified", "duplicates_removed",
                                                  "added", "near_matches")}
                         for f in counts.get("files") or []]}


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    tmp = Path(tempfile.mkdtemp(prefix="medlitbot-walkthrough-desk-"))
    prefix = base.environment(tmp)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = None
    try:
        data = setup()
        out = tmp / "figures"
        out.mkdir()
        server = base.Server(tmp).start()
        from playwright.sync_api import sync_playwright

        started = time.monotonic()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=base.CHROMIUM, headless=True,
                                         args=base.CHROMIUM_ARGS)
            try:
                found = walk(browser, server, data, tmp, out)
            finally:
                browser.close()
        found["total_s"] = round(time.monotonic() - started, 1)
        text = json.dumps(found, indent=2, default=str)
        (out / "summary-desk.json").write_text(text + "\n")
        FIGURES.mkdir(parents=True, exist_ok=True)
        for made in out.iterdir():  # the other walk's figures stay
            shutil.copy2(made, FIGURES / made.name)
        print(text)
        return 0
    finally:
        if server is not None:
            server.stop()
        try:
            base.queues_empty(prefix)
        except Exception as exc:  # the broker gone: nothing of ours is left in it either
            print(f"(could not empty the queues {prefix}*: {exc})", file=sys.stderr)
        if keep:
            print(f"(kept {tmp})", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

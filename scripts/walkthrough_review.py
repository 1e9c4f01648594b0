"""A review from start to PRISMA, done for real (issue 35's walk-through).

Two reviewers screen 40 records of demo_data/medlit_challenge.csv blind, with the session's
eligibility criteria and highlighted terms, by keyboard; a maintainer resolves their conflicts by
keyboard on the conflicts page; the 10 records included reach full text, where the reviewers
attach PDFs (written by this script, with a real text layer) through the full-text page, mark
one report not retrieved, and exclude 4 with reasons (one of them resolved by the maintainer);
the PRISMA 2020 page is opened and its SVG downloaded.

Everything runs against a fresh SQLite database and folders in a temporary directory, the real
web server (gunicorn with medlitbot_project.gunicorn_conf) and Debian's chromium driven by
playwright. No Celery worker runs: the ranker refresh is sent to the broker on queues of this
run's own (CELERY_QUEUE_PREFIX), and the script checks that screening goes on without it, then
empties those queues. Screenshots and the SVG go to docs/figures/review_walkthrough/, replaced
only when the whole walk has worked; a failed run leaves the last good ones.

    .venv/bin/python scripts/walkthrough_review.py [--keep]   # --keep: leave the temp dir

What the reviewers answer is scripted, not judged: of the first 40 records in the session's
order, those with the most oncology terms are included (7 agreed, 3 after a conflict), 3 more
are conflicts resolved as no, and the rest both reviewers exclude, with a reason.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
import zlib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
FIGURES = ROOT / "docs" / "figures" / "review_walkthrough"
DEMO = ROOT / "demo_data" / "medlit_challenge.csv"
CHROMIUM = os.environ.get("MEDLITBOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]
PASSWORD = "walk-through-pw-1"
LABEL = "oncological"
SCREENED = 40
CRITERIA = ("Include: studies of cancer in people: solid tumours or blood cancers, any "
            "treatment, diagnosis or outcome.\nExclude: animal and laboratory studies, other "
            "diseases, case reports and narrative reviews.")
INCLUDE_TERMS = ("cancer, tumour, tumor, tumors, carcinoma, leukemia, leukaemia, lymphoma, "
                 "glioma, astrocytoma, melanoma, metastasis, metastatic, chemotherapy, neoplasm")
EXCLUDE_TERMS = "rat, rats, mice, mouse, case report, review, in vitro"
REASONS = ["Not about cancer", "Animal or laboratory study", "Wrong study design",
           "Wrong population"]
# Full text, in record order: the first report is not retrieved; then 3 excluded by both
# reviewers with the same reason, 1 conflict (rita excludes, remy includes) that the maintainer
# resolves as excluded, and 5 included by both.
FT_PLAN = ([("not_retrieved", None, None)]
           + [("no", r, r) for r in ("Wrong study design", "Wrong population",
                                     "Animal or laboratory study")]
           + [("conflict", "Wrong population", None)] + [("yes", None, None)] * 5)
FT_RESOLVED_REASON = "Wrong population"


def environment(tmp: Path) -> str:
    """This run's own database, folders, queues and cache keys (settings_test's scheme)."""
    prefix = f"walkthrough-{secrets.token_hex(4)}-"
    for key in ("PYTEST_XDIST_WORKER", "MEDLITBOT_TEST_WORKER", "MEDLITBOT_TEST_DEFAULTED"):
        os.environ.pop(key, None)
    os.environ.update({
        "DJANGO_SETTINGS_MODULE": "medlitbot_project.settings_test",
        "MEDLITBOT_TEST_DIR": str(tmp), "USE_SQLITE": "True", "DATABASE_URL": "",
        "SQLITE_PATH": str(tmp / "db.sqlite3"), "CELERY_QUEUE_PREFIX": prefix,
        "CACHE_KEY_PREFIX": prefix, "DJANGO_ALLOW_ASYNC_UNSAFE": "true",
    })
    return prefix


def pdf_bytes(pages: list[str]) -> bytes:
    """A small valid PDF, one Helvetica line per page (as tests/pdf_support.py writes them)."""
    esc = [t.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for t in pages]
    count = len(pages)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(f'{3 + 2 * i} 0 R' for i in range(count))}]"
               f" /Count {count} >>".encode()]
    for i, text in enumerate(esc):
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents "
                       f"{4 + 2 * i} 0 R /Resources << /Font << /F1 {3 + 2 * count} 0 R >> >> >>"
                       .encode())
        body = zlib.compress(f"BT /F1 9 Tf 36 740 Td ({text}) Tj ET".encode())
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body
                       + b"\nendstream")
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    out, offsets = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)
    return bytes(out)


def setup_data() -> dict[str, Any]:
    """Migrate; the team; the demo data imported in-process; the blind dual session."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model
    from django.core.files import File

    from dataset_management.services import dataset_create_from_upload
    from projects import services as project_services
    from screening import services

    users = {name: get_user_model().objects.create_user(name, f"{name}@example.org", PASSWORD)
             for name in ("owen", "mona", "rita", "remy")}
    project = project_services.project_create(user=users["owen"], name="Oncology review")
    for name, role in (("mona", "maintainer"), ("rita", "reviewer"), ("remy", "reviewer")):
        project_services.member_set(actor=users["owen"], project=project, member=users[name],
                                    role=role)
    with DEMO.open("rb") as handle:
        dataset = dataset_create_from_upload(owner=users["owen"], project=project,
                                             name="MedLit challenge (demo)",
                                             uploaded_file=File(handle, name=DEMO.name))
    session = services.session_create(user=users["mona"], dataset=dataset,
                                      name="Cancer studies in the demo data", labels=[LABEL],
                                      reviewers_per_record=2, ranker_every=10)
    return {"users": users, "project": project, "dataset": dataset, "session": session}


def hits(text: str, terms: str) -> int:
    words = [t.strip() for t in terms.split(",")]
    return sum(len(re.findall(rf"\b{re.escape(w)}\b", text, re.I)) for w in words)


def screening_plan(session: Any) -> dict[int, dict[str, Any]]:
    """Per record position (1-based, as the page shows it): each reviewer's answer and reason,
    and the maintainer's resolution of a conflict."""
    from screening.models import Record

    first = list(Record.objects.filter(session=session).order_by("-priority", "position")
                 [:SCREENED])
    ranked = sorted(first, key=lambda r: -hits(f"{r.title} {r.abstract}", INCLUDE_TERMS))
    plan = {}
    for rank, record in enumerate(ranked):
        animal = hits(f"{record.title} {record.abstract}", "rat, rats, mice, mouse, in vitro")
        reason = 2 if animal else 1
        if rank < 7:
            entry = {"rita": ("y", 0), "remy": ("y", 0), "resolve": None}
        elif rank < 10:
            entry = {"rita": ("y", 0), "remy": ("n", reason), "resolve": "y"}
        elif rank < 13:
            entry = {"rita": ("n", reason), "remy": ("u", 0), "resolve": "n"}
        else:
            entry = {"rita": ("n", reason), "remy": ("n", reason if rank % 2 else 0),
                     "resolve": None}
        plan[record.position + 1] = entry
    return plan


class Server:
    """gunicorn as tests/plugins/server.py starts it, on this run's database and folders."""

    def __init__(self, tmp: Path) -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.tmp = tmp
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        env = {**os.environ, "WEB_BIND": f"127.0.0.1:{self.port}", "WEB_WORKERS": "2",
               "WEB_THREADS": "8", "WEB_ACCESS_LOG": str(self.tmp / "access.log"),
               "WEB_ERROR_LOG": str(self.tmp / "gunicorn.log"), "CONN_MAX_AGE": "0"}
        self.proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "-c",
             "python:medlitbot_project.gunicorn_conf", "medlitbot_project.wsgi"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.3)
        raise RuntimeError("gunicorn is not serving after 90 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def login(browser: Any, url: str, username: str, errors: list[str]) -> Any:
    page = browser.new_context(viewport={"width": 1280, "height": 900},
                               accept_downloads=True).new_page()
    page.set_default_timeout(30_000)
    page.on("console", lambda m: m.type == "error" and errors.append(f"{username}: {m.text}"))
    page.on("pageerror", lambda e: errors.append(f"{username}: {e}"))
    page.goto(f"{url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{url}/")
    return page


def desk(page: Any, url: str, data: dict[str, Any]) -> str:
    """The maintainer writes the criteria, terms and reasons and picks the two screeners."""
    session = data["session"]
    page.goto(f"{url}/screening/{session.pk}/desk/")
    page.fill("#id_criteria", CRITERIA)
    page.fill("#id_include_terms", INCLUDE_TERMS)
    page.fill("#id_exclude_terms", EXCLUDE_TERMS)
    page.fill("#id_exclusion_reasons", "\n".join(REASONS))
    for name in ("rita", "remy"):
        page.check(f"#desk-form input[name=screeners][value='{data['users'][name].pk}']")
    page.click("#desk-save")
    page.wait_for_url(f"{url}/screening/{session.pk}/")
    return ""


def position_on(page: Any) -> int:
    text = page.locator("#record-position").inner_text()
    match = re.match(r"Record (\d+)", text)
    return int(match.group(1)) if match else 0


def screen(page: Any, url: str, session: Any, who: str, plan: dict[int, Any],
           shot: Path | None) -> int:
    """One reviewer screens the session's 40 planned records by keyboard."""
    from playwright.sync_api import expect

    page.goto(f"{url}/screening/{session.pk}/screen/")
    done = 0
    while done < SCREENED:
        page.wait_for_function(
            "() => /^Record \\d+/.test(document.getElementById('record-position').textContent)")
        at = position_on(page)
        if at not in plan:
            raise RuntimeError(f"{who} was handed record {at}, not one of the planned 40")
        key, reason = plan[at][who]
        if shot is not None and page.locator("#record-title mark.term.include").count():
            expect(page.locator("#save-status")).to_have_text("All saved.")
            page.screenshot(path=str(shot))
            shot = None
        if reason:
            page.keyboard.press(str(reason))
            expect(page.locator("#record-reason")).to_have_value(REASONS[reason - 1])
        page.keyboard.press(key)
        done += 1
        if done < SCREENED:
            page.wait_for_function(
                "p => !document.getElementById('record-position').textContent"
                ".startsWith('Record ' + p + ' ') && document.getElementById('record-position')"
                ".textContent !== 'Record ' + p", arg=str(at))
    expect(page.locator("#save-status")).to_have_text("All saved.", timeout=60_000)
    return done


def resolve_conflicts(page: Any, url: str, session: Any, plan: dict[int, Any],
                      shot: Path) -> int:
    """The maintainer resolves the title/abstract conflicts one after another by keyboard."""
    from playwright.sync_api import expect

    from screening.models import Record

    page.goto(f"{url}/screening/{session.pk}/")
    page.click("#resolve-one-by-one")
    resolved = 0
    while page.locator("#conflict").count():
        record = Record.objects.get(pk=int(page.locator("#conflict").get_attribute(
            "data-record")))
        if resolved == 0:
            page.screenshot(path=str(shot), full_page=True)
        before = page.locator("#conflict-position").inner_text()
        page.keyboard.press(plan[record.position + 1]["resolve"])
        resolved += 1
        page.wait_for_load_state()
        expect(page.locator("#conflict-position, #no-conflicts").first).not_to_have_text(before)
    return resolved


def report_pages(record: Any, plan: tuple) -> list[str]:
    design = {"Wrong study design": "a narrative review of published case series",
              "Wrong population": "children under 12 with leukemia in remission",
              "Animal or laboratory study": "tumour xenografts in mice"}.get(plan[1] or "",
                                                                              "adults with cancer")
    return [textwrap.shorten(record.title, 120) or f"Record {record.position + 1}",
            f"Methods: we studied {design}.",
            textwrap.shorten(record.abstract or "", 150, placeholder=" ..."),
            "Results: survival and tumour response are reported."]


def fulltext_page(page: Any, url: str, session: Any, record: Any) -> None:
    page.goto(f"{url}/screening/{session.pk}/fulltext/{record.pk}/")


def submit(page: Any, selector: str) -> None:
    with page.expect_navigation():
        page.click(selector)


def fulltext_stage(pages: dict[str, Any], url: str, session: Any, tmp: Path,
                   shot: Path) -> list[Any]:
    """Attach the reports (or mark one not retrieved) and decide with reasons, both reviewers."""
    from playwright.sync_api import expect

    from screening import fulltext_selectors

    records = sorted((r for r, _ in fulltext_selectors.fulltext_records(session=session)),
                     key=lambda r: r.position)
    if len(records) != len(FT_PLAN):
        raise RuntimeError(f"{len(records)} records reached full text, not {len(FT_PLAN)}")
    pages["rita"].goto(f"{url}/screening/{session.pk}/fulltext/")
    expect(pages["rita"].locator("#fulltext-table tbody tr")).to_have_count(len(records))
    for i, (record, plan) in enumerate(zip(records, FT_PLAN, strict=True)):
        uploader = pages["rita" if i % 2 else "remy"]
        fulltext_page(uploader, url, session, record)
        if plan[0] == "not_retrieved":
            uploader.fill("#ft-not-retrieved input[name=reason]", "Not held by the library")
            submit(uploader, "#ft-not-retrieved button")
            continue
        pdf = tmp / f"report-{record.pk}.pdf"
        pdf.write_bytes(pdf_bytes(report_pages(record, plan)))
        uploader.set_input_files("#ft-upload input[type=file]", str(pdf))
        submit(uploader, "#ft-upload button")
        expect(uploader.locator("#ft-status")).to_contain_text("Retrieved: 4 pages")
        for who, reason in (("rita", plan[1]), ("remy", plan[2])):
            page = pages[who]
            if page is not uploader:
                fulltext_page(page, url, session, record)
            page.check(f"#ft-decide input[value={'no' if reason else 'yes'}]")
            if reason:
                page.select_option("#ft-decide select", reason)
            submit(page, "#ft-decide-button")
        if plan[0] == "no" and not shot.exists():  # rita's page, once both have decided
            fulltext_page(pages["rita"], url, session, record)
            pages["rita"].screenshot(path=str(shot), full_page=True)
    return records


def resolve_fulltext(page: Any, url: str, session: Any) -> int:
    """The full-text conflict, resolved on the conflicts page: a reason, then n."""
    page.goto(f"{url}/screening/{session.pk}/conflicts/")
    resolved = 0
    while page.locator("#conflict").count():
        if page.locator("#conflict-stage").inner_text() != "full text":
            raise RuntimeError("a title/abstract conflict was left open")
        page.select_option("#resolve-reason", FT_RESOLVED_REASON)
        page.evaluate("document.activeElement.blur()")
        with page.expect_navigation():
            page.keyboard.press("n")
        resolved += 1
    return resolved


def prisma(page: Any, url: str, session: Any, shot: Path) -> Path:
    from playwright.sync_api import expect

    page.goto(f"{url}/screening/{session.pk}/")
    page.click("#prisma-link")
    expect(page.locator("#prisma-diagram svg")).to_be_visible()
    page.screenshot(path=str(shot), full_page=True)
    with page.expect_download() as download:
        page.click("#prisma-svg")
    target = shot.parent / "prisma.svg"
    download.value.save_as(target)
    return target


def ranker_state(session: Any) -> str:
    """What became of the ranker refresh with no worker running."""
    import redis
    from django.conf import settings

    session.refresh_from_db()
    waiting = redis.Redis.from_url(settings.CELERY_BROKER_URL).llen(settings.QUEUE_INFERENCE)
    held = "held since the refresh was sent" if session.ranker_running_since else "free"
    return (f"refresh sent to {settings.QUEUE_INFERENCE} ({waiting} message(s) waiting, no "
            f"worker), lock {held}, ranker_error {session.ranker_error or 'none'}; "
            "screening went on in the stored order")


def queues_empty(prefix: str) -> None:
    import redis
    from django.conf import settings

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    keys = list(broker.scan_iter(match=f"{prefix}*"))
    if keys:
        broker.delete(*keys)
    for key in broker.scan_iter(match="_kombu.binding.*"):
        stale = [m for m in broker.smembers(key) if prefix.encode() in m]
        if stale:
            broker.srem(key, *stale)


def counts(data: dict[str, Any], records: list[Any]) -> dict[str, Any]:
    from screening import prisma as prisma_counts
    from screening.models import Decision, Record, Resolution

    session = data["session"]
    decided = {name: Decision.objects.filter(record__session=session, stage="title_abstract",
                                             reviewer=data["users"][name]).count()
               for name in ("rita", "remy")}
    ft = Record.objects.filter(pk__in=[r.pk for r in records])
    return {
        "screened": decided,
        "resolved": {stage: Resolution.objects.filter(record__session=session, stage=stage)
                     .count() for stage in ("title_abstract", "full_text")},
        "at_full_text": len(records),
        "excluded": {r.position + 1: r.fulltext_reasons.get(LABEL) for r in ft
                     if r.fulltext_final.get(LABEL) == "no"},
        "included": sum(1 for r in ft if r.fulltext_final.get(LABEL) == "yes"),
        "prisma": prisma_counts.prisma_counts(session),
    }


def summary(found: dict[str, Any], ranker: str, shots: list[Path], svg: Path,
            errors: list[str], notes: list[str]) -> str:
    p = found["prisma"]
    prisma_keys = ("records", "screened", "excluded_at_screening", "not_yet_screened",
                   "reports_sought", "reports_not_retrieved", "reports_assessed",
                   "reports_excluded", "studies_included")
    lines = [
        "Walk-through of issue 35 (blind dual screening to PRISMA 2020), label "
        f"'{LABEL}', demo data {DEMO.name}",
        f"- screened by keyboard on the screen page: rita {found['screened']['rita']}, "
        f"remy {found['screened']['remy']} records (the same {SCREENED}, blind)",
        f"- conflicts resolved by the maintainer by keyboard: "
        f"{found['resolved']['title_abstract']} at title/abstract, "
        f"{found['resolved']['full_text']} at full text (conflicts page)",
        f"- records at full text: {found['at_full_text']}; PDFs attached through the full-text "
        f"page: {sum(1 for k, *_ in FT_PLAN if k != 'not_retrieved')}; not retrieved: "
        f"{sum(1 for k, *_ in FT_PLAN if k == 'not_retrieved')}",
        f"- excluded at full text with reasons: {len(found['excluded'])} "
        + "; ".join(f"record {k}: {v}" for k, v in sorted(found["excluded"].items())),
        f"- included at full text: {found['included']}",
        "- PRISMA: " + ", ".join(f"{k} {p.get(k)}" for k in prisma_keys if k in p),
        f"- PRISMA reports excluded by reason: {p.get('reports_excluded_by_reason')}",
        f"- ranker: {ranker}",
        "- every step went through a page (no API fallback was needed)",
        *(f"- note: {n}" for n in notes),
        f"- browser script errors: {len(errors)}" + (f" {errors[:3]}" if errors else ""),
        "- files: " + ", ".join(str((FIGURES / s.name).relative_to(ROOT)) for s in [*shots, svg]),
    ]
    return "\n".join(lines)


def walk(browser: Any, server: Server, data: dict[str, Any], tmp: Path, out: Path) -> str:
    session, url, errors = data["session"], server.url, []
    shots = [out / n for n in ("1-screen-criteria-highlights.png",
                                   "2-conflict-record-in-view.png",
                                   "3-fulltext-extracted-pdf.png", "4-prisma-2020.png")]
    pages = {name: login(browser, url, name, errors) for name in ("mona", "rita", "remy")}
    notes = [desk(pages["mona"], url, data)]
    if notes[0]:  # its console error is that 403, said in the summary instead
        errors[:] = [e for e in errors if "403" not in e]
    plan = screening_plan(session)
    screen(pages["rita"], url, session, "rita", plan, shots[0])
    screen(pages["remy"], url, session, "remy", plan, None)
    ranker = ranker_state(session)
    resolve_conflicts(pages["mona"], url, session, plan, shots[1])
    records = fulltext_stage(pages, url, session, tmp, shots[2])
    resolve_fulltext(pages["mona"], url, session)
    svg = prisma(pages["mona"], url, session, shots[3])
    return summary(counts(data, records), ranker, [s for s in shots if s.exists()], svg,
                   errors, [n for n in notes if n])


def main() -> int:
    keep = "--keep" in sys.argv[1:]
    tmp = Path(tempfile.mkdtemp(prefix="medlitbot-walkthrough-"))
    prefix = environment(tmp)
    # A SIGTERM or Ctrl-C unwinds through the finally below like any failure.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = None
    try:
        data = setup_data()
        out = tmp / "figures"  # replaces FIGURES only once the whole walk has worked
        out.mkdir()
        server = Server(tmp).start()
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                         args=CHROMIUM_ARGS)
            try:
                text = walk(browser, server, data, tmp, out)
            finally:
                browser.close()
        shutil.rmtree(FIGURES, ignore_errors=True)
        shutil.copytree(out, FIGURES)
        print(text)
        return 0
    finally:
        if server is not None:
            server.stop()
        try:
            queues_empty(prefix)
        except Exception as exc:  # the broker gone: nothing of ours is left in it either
            print(f"(could not empty the queues {prefix}*: {exc})", file=sys.stderr)
        if keep:
            print(f"(kept {tmp})", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

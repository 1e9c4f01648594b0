"""A local E-utilities that replays recorded NCBI answers (tests/fixtures/eutils/SOURCE.md).

``ReplayServer`` listens on 127.0.0.1 on a free port; ``server.base_url`` is what
PUBMED_BASE_URL points at. A script maps each request to an answer:

* ``esearch``: one recorded file (or a list, one per call, the last repeated);
* ``efetch`` by history: ``{retstart: [answer, ...]}``, each call taking the next answer of its
  page's list (the last one repeats), so "a 500 then success" is ``[HTTP_500, "file.xml"]``;
* ``efetch`` by id (POST ``id=``): the recorded pages that hold those PMIDs, concatenated.

Every request is logged (endpoint, method, parameters, monotonic time) for the assertions.
Nothing leaves the machine.
"""

from __future__ import annotations

import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "eutils"
PAGES = {0: "efetch_pubmed1.xml", 2: "efetch_pubmed2.xml", 4: "efetch_pubmed4.xml"}


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


RATE_LIMITED = Answer(
    429, b'{"error":"API rate limit exceeded","api-key":"192.0.2.1","count":"4","limit":"3"}',
    (("Content-Type", "application/json"), ("Retry-After", "1")))
HTTP_500 = Answer(500, b"<html><head><title>500 Internal Server Error</title></head><body>"
                       b"<h1>Internal Server Error</h1></body></html>",
                  (("Content-Type", "text/html"),))


def recorded(name: str) -> Answer:
    return Answer(200, (FIXTURES / name).read_bytes(), (("Content-Type", "text/xml"),))


def truncated(name: str, size: int = 3000) -> Answer:
    """A page cut short: what a connection that dropped mid-answer leaves."""
    return Answer(200, (FIXTURES / name).read_bytes()[:size], (("Content-Type", "text/xml"),))


@dataclass
class Request:
    endpoint: str
    method: str
    params: dict[str, str]
    at: float


@dataclass
class Script:
    esearch: list[Answer] = field(default_factory=lambda: [recorded("esearch_run2.xml")])
    efetch: dict[int, list[Answer]] = field(
        default_factory=lambda: {k: [recorded(v)] for k, v in PAGES.items()})


def script_run(esearch: str, **pages: list[Answer]) -> Script:
    """The recorded search `esearch` with its pages as recorded, `pages` (e.g. ``p2=[...]``)
    replacing the answers of retstart 2."""
    efetch = {k: [recorded(v)] for k, v in PAGES.items()}
    for key, answers in pages.items():
        efetch[int(key.removeprefix("p"))] = answers
    return Script(esearch=[recorded(esearch)], efetch=efetch)


class ReplayServer:
    def __init__(self) -> None:
        self.script = Script()
        self.requests: list[Request] = []
        self._calls: dict[Any, int] = {}
        self._lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/entrez/eutils/"

    def play(self, script: Script) -> None:
        with self._lock:
            self.script, self._calls = script, {}
            self.requests.clear()

    def calls(self, endpoint: str) -> list[Request]:
        return [r for r in self.requests if r.endpoint == endpoint]

    def _next(self, key: Any, answers: list[Answer]) -> Answer:
        with self._lock:
            n = self._calls.get(key, 0)
            self._calls[key] = n + 1
        return answers[min(n, len(answers) - 1)]

    def answer(self, endpoint: str, params: dict[str, str]) -> Answer:
        if endpoint == "esearch.fcgi":
            return self._next("esearch", self.script.esearch)
        if endpoint != "efetch.fcgi":
            return Answer(404, b"no such E-utility")
        if "id" in params:
            return _by_id(params["id"].split(","))
        start = int(params.get("retstart", "0"))
        answers = self.script.efetch.get(start)
        if not answers:
            return Answer(200, b'<?xml version="1.0" ?>\n<PubmedArticleSet></PubmedArticleSet>')
        return self._next(("efetch", start), answers)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, body: str) -> None:
                url = urllib.parse.urlsplit(self.path)
                params = dict(urllib.parse.parse_qsl(url.query))
                params.update(urllib.parse.parse_qsl(body))
                endpoint = url.path.rsplit("/", 1)[-1]
                server.requests.append(Request(endpoint, self.command, params, time.monotonic()))
                answer = server.answer(endpoint, params)
                self.send_response(answer.status)
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def do_GET(self) -> None:
                self._serve("")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._serve(self.rfile.read(length).decode())

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def __enter__(self) -> ReplayServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _by_id(pmids: list[str]) -> Answer:
    """The recorded articles with these PMIDs, as one PubmedArticleSet (efetch by id)."""
    found = []
    for name in PAGES.values():
        text = (FIXTURES / name).read_text(encoding="utf-8")
        for article in re.findall(r"<PubmedArticle>.*?</PubmedArticle>", text, flags=re.S):
            pmid = re.search(r"<PMID[^>]*>(\d+)</PMID>", article)
            if pmid and pmid.group(1) in pmids:
                found.append(article)
    body = ('<?xml version="1.0" ?>\n<PubmedArticleSet>\n' + "\n".join(found)
            + "\n</PubmedArticleSet>\n")
    return Answer(200, body.encode(), (("Content-Type", "text/xml"),))


def free_port_refused() -> str:
    """A base URL on 127.0.0.1 where nothing listens: a connection there is refused at once."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/entrez/eutils/"


def living_review(owner: Any, artifact: dict[str, Any], *, schedule: str = "off") -> Any:
    """A project with a trained TF-IDF model (tests.plugins.browser's tfidf_artifact, whose
    labels include oncological) and a saved search that classifies with it."""
    from classification.models import MLModel
    from literature.services import saved_search_create
    from projects import services as project_services

    project = project_services.project_create(user=owner, name="Living review")
    model = MLModel.objects.create(
        owner=owner, project=project, name="Domains TF-IDF", model_type="tfidf_logreg",
        status=MLModel.Status.TRAINED, artifact_path=artifact["path"],
        label_names=artifact["labels"])
    return saved_search_create(user=owner, project=project, name="Telomeres and cancer",
                               query="cancer", ml_model=model, schedule=schedule)


def pubmed_settings(settings: Any, server: ReplayServer) -> None:
    """Point the app at the replay server, with pages of 2 and short backoffs."""
    settings.PUBMED_BASE_URL = server.base_url
    settings.PUBMED_PAGE_SIZE = 2
    settings.PUBMED_BACKOFF_SECONDS = 0.05
    settings.PUBMED_RETRIES = 2
    settings.PUBMED_EMAIL = "librarian@example.org"

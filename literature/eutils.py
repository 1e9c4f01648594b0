"""A small NCBI E-utilities client for saved PubMed searches. No Django here.

esearch with ``usehistory=y`` returns the query's PMIDs (in PubMed's order) and a WebEnv and
query_key naming the result set on NCBI's side; efetch then reads that set in pages of
``page_size`` (``retstart``/``retmax``) as PubMed XML. Only the pages that hold a PMID the caller
wants are fetched, so a monthly re-run of a living review reads one page, not the whole set;
any wanted PMID that those pages did not hold (NCBI's order shifted between the calls) is then
fetched by id.

Politeness and robustness, as NCBI asks (https://www.ncbi.nlm.nih.gov/books/NBK25497/):
``tool`` and ``email`` on every request, ``api_key`` when there is one, at most 3 requests a
second without a key and 10 with one (a ``RateLimiter``: literature/pubmed.py shares it across
processes through Redis), timeouts, and retries with exponential backoff on 429 and 5xx that
honour ``Retry-After``. A failure that no retry mends raises ``EutilsError`` whose ``reason`` is
the sentence shown to the person. A machine without a network fails at once: the DNS lookup is
given ``dns_timeout`` seconds, and a refused or unreachable connection is never retried.

HTTP is plain ``http.client`` (neither requests nor httpx is in requirements.txt): it gives a
connect timeout separate from the read timeout, which urllib does not.
"""

from __future__ import annotations

import email.utils
import http.client
import io
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, BinaryIO

from literature.ratelimit import LocalRateLimiter, RateLimiter

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
# PubMed's esearch hands out at most the first 10,000 PMIDs of a query (NCBI, 2022).
ESEARCH_MAX = 10_000
# A page of 500 articles is a few MB; far more than that is not an efetch answer.
MAX_ANSWER_BYTES = 200 * 2**20
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
NOTHING_IMPORTED = "Nothing was imported."

Parse = Callable[[BinaryIO], Iterable[dict[str, Any]]]


class EutilsError(Exception):
    """The run cannot go on; ``reason`` says why in words a librarian can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PubMedUnreachable(EutilsError):
    """No connection at all (no DNS, refused, unreachable, connect timeout): never retried."""


@dataclass(frozen=True)
class EutilsConfig:
    base_url: str = DEFAULT_BASE_URL
    api_key: str = ""
    email: str = ""
    tool: str = "medlitbot"
    page_size: int = 500
    connect_timeout: float = 4.0
    read_timeout: float = 60.0
    dns_timeout: float = 2.0
    retries: int = 4              # after the first try, for 429, 5xx and broken answers
    backoff_base: float = 1.0     # seconds; doubled each retry
    backoff_max: float = 60.0     # the longest wait, Retry-After included

    @property
    def rate(self) -> float:
        """Requests per second NCBI allows: 10 with an API key, else 3."""
        return 10.0 if self.api_key else 3.0


@dataclass(frozen=True)
class SearchResult:
    count: int
    pmids: list[str]
    webenv: str
    query_key: str
    translation: str = ""


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class EutilsClient:
    def __init__(self, config: EutilsConfig, *, limiter: RateLimiter | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if config.page_size < 1:
            raise ValueError("page_size must be at least 1")
        self.config = config
        self.limiter = limiter or LocalRateLimiter(rate=config.rate)
        self.sleep = sleep
        self.requests = 0
        base = urllib.parse.urlsplit(config.base_url if config.base_url.endswith("/")
                                     else config.base_url + "/")
        if base.scheme not in ("http", "https") or not base.hostname:
            raise EutilsError(f"PUBMED_BASE_URL {config.base_url!r} is not an http(s) URL.")
        self._base = base
        self._resolved = False

    # --- the two calls -----------------------------------------------------------------------

    def esearch(self, *, term: str, mindate: str = "", maxdate: str = "",
                datetype: str = "pdat") -> SearchResult:
        """The query's PMIDs (at most ESEARCH_MAX) with the history handle efetch pages by."""
        params = {"db": "pubmed", "term": term, "usehistory": "y", "retmax": str(ESEARCH_MAX),
                  "retstart": "0"}
        if mindate or maxdate:
            params |= {"datetype": datetype, "mindate": mindate or "1800",
                       "maxdate": maxdate or "3000"}
        body = self._call("esearch.fcgi", params, what="the search")
        result = _esearch_parse(body)
        if result.count > ESEARCH_MAX:
            raise EutilsError(
                f"The query finds {result.count:,} articles; E-utilities returns at most the "
                f"first {ESEARCH_MAX:,} of one search. Narrow it with date bounds or more "
                f"terms. {NOTHING_IMPORTED}")
        return result

    def articles(self, *, result: SearchResult, wanted: set[str], parse: Parse,
                 progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
        """The wanted PMIDs' articles, parsed by `parse`, in the search's order.

        Every page is read whole before the next is asked for; a page that `parse` cannot read
        is fetched again (it may have been cut short), then refused with its article numbers.
        `progress(pages_done, pages_total)` after each page.
        """
        size = self.config.page_size
        positions = [i for i, pmid in enumerate(result.pmids) if pmid in wanted]
        pages = sorted({i // size for i in positions})
        found: dict[str, dict[str, Any]] = {}
        for done, page in enumerate(pages, start=1):
            params = {"db": "pubmed", "query_key": result.query_key, "WebEnv": result.webenv,
                      "retstart": str(page * size), "retmax": str(size), "retmode": "xml"}
            first, last = page * size + 1, min((page + 1) * size, result.count)
            what = f"articles {first:,}-{last:,}" if last > first else f"article {first:,}"
            for article in self._parsed_page("efetch.fcgi", params, parse=parse, what=what):
                if article.get("pmid") in wanted:
                    found[article["pmid"]] = article
            if progress:
                progress(done, len(pages))
        missing = [pmid for pmid in result.pmids if pmid in wanted and pmid not in found]
        for chunk in (missing[i:i + size] for i in range(0, len(missing), size)):
            params = {"db": "pubmed", "id": ",".join(chunk), "retmode": "xml"}
            for article in self._parsed_page("efetch.fcgi", params, parse=parse, post=True,
                                             what=f"{len(chunk)} articles by PMID"):
                if article.get("pmid") in wanted:
                    found[article["pmid"]] = article
        return [found[pmid] for pmid in result.pmids if pmid in found]

    # --- requests ----------------------------------------------------------------------------

    def _parsed_page(self, endpoint: str, params: dict[str, str], *, parse: Parse, what: str,
                     post: bool = False) -> list[dict[str, Any]]:
        problem = ""
        for _attempt in range(2):
            body = self._call(endpoint, params, what=what, post=post)
            _efetch_error(body, what=what)
            try:
                return list(parse(io.BytesIO(body)))
            except Exception as exc:  # the reader's own error, ParseError, ValueError...
                problem = _first_line(exc).rstrip(".")
        raise EutilsError(f"PubMed's answer for {what} is not readable PubMed XML, twice "
                          f"({problem}). {NOTHING_IMPORTED}")

    def _call(self, endpoint: str, params: dict[str, str], *, what: str,
              post: bool = False) -> bytes:
        """One E-utilities answer's body, after the retries 429, 5xx and broken answers get."""
        params = {**params, "tool": self.config.tool}
        if self.config.email:
            params["email"] = self.config.email
        if self.config.api_key:
            params["api_key"] = self.config.api_key
        waited, last = 0.0, ""
        for attempt in range(self.config.retries + 1):
            self.limiter.wait()
            try:
                answer = self._request(endpoint, params, post=post)
            except PubMedUnreachable:
                raise
            except (TimeoutError, ConnectionError, http.client.HTTPException, OSError) as exc:
                last, delay = f"the answer broke off ({_first_line(exc)})", None
            else:
                if answer.status == 200 and not _rate_limited(answer.body):
                    return answer.body
                if answer.status not in RETRY_STATUSES and answer.status != 200:
                    raise EutilsError(f"PubMed refused {what} (HTTP {answer.status}: "
                                      f"{_snippet(answer.body)}). {NOTHING_IMPORTED}")
                # NCBI's over-the-limit answer may come with a 200 (NBK25497): a 429 all the same.
                status = 429 if answer.status == 200 else answer.status
                last = f"HTTP {status} {_status_words(status)}"
                delay = _retry_after(answer.headers.get("retry-after", ""))
            if attempt == self.config.retries:
                break
            pause = min(self.config.backoff_max,
                        delay if delay is not None else self.config.backoff_base * 2 ** attempt)
            waited += pause
            self.sleep(pause)
        raise EutilsError(f"PubMed kept failing on {what}: {last} after "
                          f"{self.config.retries + 1} tries over {waited:.0f} s. Try again "
                          f"later. {NOTHING_IMPORTED}")

    def _request(self, endpoint: str, params: dict[str, str], *, post: bool) -> _Answer:
        base, query = self._base, urllib.parse.urlencode(params)
        path = base.path + endpoint
        conn = self._connect()
        try:
            conn.sock.settimeout(self.config.read_timeout)
            headers = {"User-Agent": f"{self.config.tool} (E-utilities client)",
                       "Accept-Encoding": "identity"}
            if post:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
                conn.request("POST", path, body=query.encode(), headers=headers)
            else:
                conn.request("GET", f"{path}?{query}", headers=headers)
            response = conn.getresponse()
            body = response.read(MAX_ANSWER_BYTES + 1)
            if len(body) > MAX_ANSWER_BYTES:
                raise EutilsError(f"PubMed's answer passed {MAX_ANSWER_BYTES // 2**20} MB; "
                                  f"lower PUBMED_PAGE_SIZE. {NOTHING_IMPORTED}")
            self.requests += 1
            return _Answer(response.status,
                           {k.lower(): v for k, v in response.getheaders()}, body)
        finally:
            conn.close()

    def _connect(self) -> http.client.HTTPConnection:
        """An open connection (through the environment's proxy, if any), or PubMedUnreachable
        within about dns_timeout + connect_timeout seconds."""
        base = self._base
        port = base.port or (443 if base.scheme == "https" else 80)
        proxy = _proxy_for(base.scheme, base.hostname or "")
        target_host, target_port = (proxy.hostname or "", proxy.port or 80) if proxy else (
            base.hostname or "", port)
        if not self._resolved:
            _resolve(target_host, target_port, timeout=self.config.dns_timeout)
            self._resolved = True
        timeout = self.config.connect_timeout
        if base.scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                target_host, target_port, timeout=timeout, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(target_host, target_port, timeout=timeout)
        if proxy:
            conn.set_tunnel(base.hostname or "", port)
        try:
            conn.connect()
        except ssl.SSLError as exc:
            conn.close()
            raise PubMedUnreachable(f"The secure connection to {base.hostname} failed "
                                    f"({_first_line(exc)}). {NOTHING_IMPORTED}") from exc
        except (TimeoutError, OSError) as exc:
            conn.close()
            raise PubMedUnreachable(_unreachable_reason(target_host, target_port, exc,
                                                        timeout)) from exc
        return conn


# --- helpers -----------------------------------------------------------------------------------


def _resolve(host: str, port: int, *, timeout: float) -> None:
    """getaddrinfo in a thread, given `timeout` seconds: a resolver with no network to ask can
    otherwise hold a run for its own retries (tens of seconds)."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            box["error"] = exc

    thread = threading.Thread(target=work, name="eutils-dns", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise PubMedUnreachable(
            f"PubMed cannot be reached: looking up {host} got no answer within {timeout:g} s "
            f"(no network or no DNS on this server). {NOTHING_IMPORTED}")
    if "error" in box:
        raise PubMedUnreachable(
            f"PubMed cannot be reached: the name {host} does not resolve "
            f"({_first_line(box['error'])}; no network or no DNS on this server). "
            f"{NOTHING_IMPORTED}")


def _unreachable_reason(host: str, port: int, exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        what = f"no connection within {timeout:g} s"
    elif isinstance(exc, ConnectionRefusedError):
        what = "the connection was refused"
    else:
        what = _first_line(exc)
    return (f"PubMed cannot be reached from this server: {host}:{port}, {what} (no network, "
            f"a firewall, or a wrong PUBMED_BASE_URL). {NOTHING_IMPORTED}")


def _proxy_for(scheme: str, host: str) -> urllib.parse.SplitResult | None:
    """The https proxy the environment names (a CONNECT tunnel); never for plain http or this
    machine's own addresses (the tests' replay server)."""
    if scheme != "https" or host in ("localhost", "127.0.0.1", "::1"):
        return None
    proxy = urllib.request.getproxies().get("https")
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return parts if parts.hostname else None


def _retry_after(value: str) -> float | None:
    """Seconds from a Retry-After header: a number, or an HTTP date."""
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _esearch_parse(body: bytes) -> SearchResult:
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        raise EutilsError(f"PubMed's search answer is not readable XML ({exc}). "
                          f"{NOTHING_IMPORTED}") from exc
    error = (root.findtext("ERROR") or "").strip()
    if root.tag != "eSearchResult" or error:
        raise EutilsError(f"PubMed could not run the query: {error or _snippet(body)}. "
                          f"{NOTHING_IMPORTED}")
    try:
        count = int(root.findtext("Count") or "")
    except ValueError:
        raise EutilsError(f"PubMed's search answer has no count. {NOTHING_IMPORTED}") from None
    pmids = [(node.text or "").strip() for node in root.iterfind("IdList/Id")]
    webenv, key = root.findtext("WebEnv") or "", root.findtext("QueryKey") or ""
    if count and not (webenv and key):
        raise EutilsError(f"PubMed's search answer has no history (WebEnv, QueryKey). "
                          f"{NOTHING_IMPORTED}")
    return SearchResult(count=count, pmids=[p for p in pmids if p], webenv=webenv,
                        query_key=key, translation=root.findtext("QueryTranslation") or "")


def _rate_limited(body: bytes) -> bool:
    return body[:200].lstrip().startswith(b'{"error":"API rate limit exceeded"')


def _efetch_error(body: bytes, *, what: str) -> None:
    """efetch says "the history expired" in a 200 answer: <eFetchResult><ERROR>..."""
    head = body[:400].lstrip()
    if b"<eFetchResult" in head or head.startswith(b'{"error"'):
        raise EutilsError(f"PubMed could not return {what}: {_snippet(body)} (a search's "
                          f"history lasts about an hour; run it again). {NOTHING_IMPORTED}")


def _snippet(body: bytes, limit: int = 160) -> str:
    text = " ".join(body[:2000].decode("utf-8", "replace").split())
    return text[:limit] + ("…" if len(text) > limit else "") if text else "an empty answer"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _status_words(status: int) -> str:
    try:
        return f"({http.HTTPStatus(status).phrase})"
    except ValueError:
        return ""

"""Without a network, a run says so at once: a refused connection and a name that does not
resolve each fail within a second or two (never retried, never a hang), with a reason that says
PubMed cannot be reached and that nothing was imported."""

from __future__ import annotations

import time

import pytest

from literature.eutils import EutilsClient, EutilsConfig, PubMedUnreachable
from tests.eutils_support import free_port_refused


def test_a_refused_connection_is_reported_at_once_without_retries() -> None:
    client = EutilsClient(EutilsConfig(base_url=free_port_refused(), retries=4))
    started = time.monotonic()
    with pytest.raises(PubMedUnreachable) as caught:
        client.esearch(term="cancer")
    assert time.monotonic() - started < 1.0
    assert caught.value.reason.startswith("PubMed cannot be reached from this server: "
                                          "127.0.0.1:")
    assert "the connection was refused" in caught.value.reason
    assert caught.value.reason.endswith("Nothing was imported.")
    assert client.requests == 0


def test_a_name_that_does_not_resolve_is_reported_within_the_dns_timeout() -> None:
    # .invalid never resolves (RFC 2606): with or without a resolver, this is "no network".
    client = EutilsClient(EutilsConfig(base_url="https://eutils.medlitbot.invalid/entrez/eutils/",
                                       dns_timeout=2.0))
    started = time.monotonic()
    with pytest.raises(PubMedUnreachable) as caught:
        client.esearch(term="cancer")
    assert time.monotonic() - started < 2.5
    assert caught.value.reason.startswith("PubMed cannot be reached: ")
    assert "eutils.medlitbot.invalid" in caught.value.reason

"""The E-utilities client as this installation configures it (PUBMED_* settings).

The rate limit is shared through Redis by every process that reaches the same Redis (the cache's
server, CACHE_URL): NCBI counts requests per address, or per API key, not per process. Without a
Redis cache (kombu's filesystem broker set-up) it is kept per process, which is enough for the
one default-queue worker such an install runs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.conf import settings

from literature.eutils import EutilsClient, EutilsConfig
from literature.ratelimit import LocalRateLimiter, RateLimiter, RedisRateLimiter


def eutils_config() -> EutilsConfig:
    return EutilsConfig(
        base_url=settings.PUBMED_BASE_URL, api_key=settings.PUBMED_API_KEY,
        email=settings.PUBMED_EMAIL, tool=settings.PUBMED_TOOL,
        page_size=settings.PUBMED_PAGE_SIZE, connect_timeout=settings.PUBMED_CONNECT_TIMEOUT,
        read_timeout=settings.PUBMED_TIMEOUT, retries=settings.PUBMED_RETRIES,
        backoff_base=settings.PUBMED_BACKOFF_SECONDS,
    )


def rate_limiter(*, config: EutilsConfig) -> RateLimiter:
    url = getattr(settings, "CACHE_URL", "") or ""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return LocalRateLimiter(rate=config.rate)
    import redis

    # The key names the API key's hash (never the key), so two keys keep two budgets.
    who = hashlib.sha256(config.api_key.encode()).hexdigest()[:12] if config.api_key else "ip"
    prefix = settings.CACHES["default"].get("KEY_PREFIX") or "medlitbot"
    client: Any = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
    return RedisRateLimiter(client=client, key=f"{prefix}:eutils:next-slot:{who}",
                            rate=config.rate)


def eutils_client() -> EutilsClient:
    config = eutils_config()
    return EutilsClient(config, limiter=rate_limiter(config=config))


def pubmed_parse() -> Any:
    """The one PubMed XML parser (the dataset readers'): efetch pages read as uploads do."""
    from dataset_management.readers.pubmed_xml import pubmed_articles

    return pubmed_articles

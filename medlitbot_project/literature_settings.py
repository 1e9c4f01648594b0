"""Settings of the saved PubMed searches (literature/) and of the e-mail their digests go by.

Read from the same environment (and `.env`, which settings.py has loaded into it) as every
other setting, and star-imported by settings.py: they live here only so that settings.py stays
under the 450 lines a module may have. Every variable is in env.m1.example and
docs/literature.md.
"""

import environ
from django.core.exceptions import ImproperlyConfigured

env = environ.Env()

# NCBI asks every E-utilities client for a tool name and a contact e-mail; an API key raises the
# limit from 3 to 10 requests a second (shared by every worker through Redis).
PUBMED_API_KEY = env.str("PUBMED_API_KEY", default="")
PUBMED_EMAIL = env.str("PUBMED_EMAIL", default="")
PUBMED_TOOL = env.str("PUBMED_TOOL", default="medlitbot")
PUBMED_BASE_URL = env.str("PUBMED_BASE_URL",
                          default="https://eutils.ncbi.nlm.nih.gov/entrez/eutils/")
# Articles per efetch request (NCBI suggests a few hundred); 1 to 10,000.
PUBMED_PAGE_SIZE = env.int("PUBMED_PAGE_SIZE", default=500)
if not 1 <= PUBMED_PAGE_SIZE <= 10_000:
    raise ImproperlyConfigured(f"PUBMED_PAGE_SIZE={PUBMED_PAGE_SIZE} must be 1 to 10000.")
PUBMED_TIMEOUT = env.float("PUBMED_TIMEOUT", default=60.0)  # seconds to wait for an answer
PUBMED_CONNECT_TIMEOUT = env.float("PUBMED_CONNECT_TIMEOUT", default=4.0)
PUBMED_RETRIES = env.int("PUBMED_RETRIES", default=4)  # on 429, 5xx and broken answers
PUBMED_BACKOFF_SECONDS = env.float("PUBMED_BACKOFF_SECONDS", default=1.0)  # doubled per retry
# A run (queued or searching) with no sign of life for this long is failed by maintenance.
SEARCH_RUN_STALE_SECONDS = env.float("SEARCH_RUN_STALE_SECONDS", default=1800.0)

# E-mail (the digests): off unless EMAIL_BACKEND is set, e.g.
# django.core.mail.backends.smtp.EmailBackend with EMAIL_HOST and the rest.
EMAIL_ENABLED = bool(env.str("EMAIL_BACKEND", default=""))
if EMAIL_ENABLED:
    EMAIL_BACKEND = env.str("EMAIL_BACKEND")
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10.0)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="medlitbot@localhost")

__all__ = [name for name in dir() if name.isupper()]

"""Error tracking with Sentry, started from settings.py only when SENTRY_DSN is set.

Settings are read by every process before it runs anything (gunicorn's workers, each Celery
worker, beat, commands), so starting here covers web requests and tasks alike. The events carry
the exception and its stack trace but none of the data: no local variables or request bodies
(abstracts, labels), no user, cookies or credentials (send_default_pii off).
"""

from __future__ import annotations


def sentry_start(*, dsn: str, environment: str, traces_sample_rate: float) -> None:
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        environment=environment,
        # Performance traces cost a request's worth of spans each; off unless asked for.
        traces_sample_rate=traces_sample_rate,
        send_default_pii=False,
        include_local_variables=False,
        max_request_body_size="never",
    )

"""One JSON object per log line (LOG_FORMAT=json), for log shippers such as Vector or Loki."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

# Attributes every LogRecord has; anything else on a record came from `extra=` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value if isinstance(value, str | int | float | bool) else repr(value)
        return json.dumps(entry, ensure_ascii=False)


class ForbiddenInOneLine(logging.Filter):
    """On django.request: a 403 (PermissionDenied, a role refused) is logged as its one line,
    "Forbidden (Permission denied): /path", without the traceback Django attaches. A refusal
    is the policy working, not a fault; a traceback per refusal buried real errors in
    gunicorn.log."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True

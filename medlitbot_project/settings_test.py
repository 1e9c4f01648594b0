"""Settings for the test suite: the real settings, pointed at the tests' own resources.

Tests talk to the real Redis and PostgreSQL, but on their own Redis DB number and database name,
so a developer's running app is never touched.
"""

import os
import tempfile
from pathlib import Path

# Under pytest-xdist every worker is a test run of its own: its own scratch folder (so its own
# SQLite file, media, artifacts and logs), its own Redis DB numbers, queues and cache prefix.
# The controller imported these settings first and filled the environment with its own choices,
# which the workers inherit; a worker's first import forgets those (and only those) and chooses
# again. Subprocesses a worker starts (Celery, gunicorn) inherit the worker's choices unchanged.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER and os.environ.get("MEDLITBOT_TEST_WORKER") != _WORKER:
    for _key in os.environ.pop("MEDLITBOT_TEST_DEFAULTED", "").split(","):
        os.environ.pop(_key, None)
    os.environ.pop("MEDLITBOT_TEST_DIR", None)
    os.environ["MEDLITBOT_TEST_WORKER"] = _WORKER
_INDEX = int(_WORKER[2:]) if _WORKER[2:].isdigit() else -1
# Broker and cache DB per worker; start_m1.sh's tests use DB 12, a developer's app DB 0 and 1.
# Past the eighth worker the DBs repeat, still apart by queue names and key prefix.
_BROKER_DB = (13, 14, 15, 10, 9, 8, 7, 6)[_INDEX % 8] if _INDEX >= 0 else 13
_CACHE_DB = (11, 5, 4, 3, 2, 2, 2, 2)[_INDEX % 8] if _INDEX >= 0 else 11

_scratch = Path(os.environ.get("MEDLITBOT_TEST_DIR")
                or tempfile.mkdtemp(prefix=f"medlitbot-test-{_WORKER or 'run'}-"))
os.environ["MEDLITBOT_TEST_DIR"] = str(_scratch)  # worker subprocesses share the same folders
_defaulted: list[str] = []


def _default(key: str, value: str) -> None:
    """os.environ.setdefault that remembers what it filled, so xdist workers can choose again."""
    if key not in os.environ:
        os.environ[key] = value
        _defaulted.append(key)


# SQLite unless the run names its database (scripts/test.sh's PostgreSQL run): a developer's .env,
# whose DATABASE_URL may point at the team's PostgreSQL, never decides where the tests write.
_default("DATABASE_URL", "")
_default("REDIS_URL", f"redis://127.0.0.1:6379/{_BROKER_DB}")
# The throttles' cache on a Redis DB of its own, under this run's prefix (start_m1.sh's tests use
# DB 12 as their broker): the same counts in this process, its gunicorn and its workers.
_default("CACHE_URL", f"redis://127.0.0.1:6379/{_CACHE_DB}")
_default("CACHE_KEY_PREFIX", _scratch.name)
# Queues of this run's own: two suites on one machine never consume each other's messages.
_default("CELERY_QUEUE_PREFIX", f"{_scratch.name}-")
# Production mode (DEBUG=False) needs a real key; the tests' key is random per run.
_default("SECRET_KEY", "test-" + os.urandom(24).hex())
_default("MEDIA_ROOT", str(_scratch / "media"))
_default("MODEL_ARTIFACT_ROOT", str(_scratch / "artifacts"))
_default("MEDLITBOT_MODEL_DIR", str(_scratch / "models"))
_default("LOG_DIR", str(_scratch / "logs"))
_default("FILE_UPLOAD_TEMP_DIR", str(_scratch / "uploads"))
_default("STATIC_ROOT", str(_scratch / "static"))
(_scratch / "static").mkdir(exist_ok=True)  # WhiteNoise warns about a missing STATIC_ROOT
_default("ALLOW_MODEL_DOWNLOAD", "False")
# A job whose worker died stays stalled, as the tests of stalling read it; the tests of resuming
# by itself set TRAINING_AUTO_RESUMES themselves.
_default("TRAINING_AUTO_RESUMES", "0")
# Sessions rank on words only: the sentence encoder costs every process that refreshes a ranking
# seconds to load, and the flows under test do not depend on the features. The svm-embed ranker
# has its own tests (tests/test_screening_ranker_puts_sentence_vectors_beside_words*.py).
_default("SCREENING_RANKER", "svm")
if _defaulted and not _WORKER:
    os.environ["MEDLITBOT_TEST_DEFAULTED"] = ",".join(_defaulted)

from medlitbot_project.settings import *  # noqa: E402, F403
from medlitbot_project.settings import env  # noqa: E402

# Fault injection ("hang_in_loading", "hang_in_step", ...) is honoured only under these settings,
# so a production process can never be told to hang by an environment variable.
MEDLITBOT_FAULT_INJECTION = env.str("MEDLITBOT_FAULT_INJECTION", default="")

# clear() (the throttle tests call it) removes this run's keys only, not another run's.
if CACHES["default"]["BACKEND"].endswith(".RedisCache"):  # noqa: F405
    CACHES["default"]["BACKEND"] = "medlitbot_project.testing_cache.RunScopedRedisCache"  # noqa: F405

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Each test run gets its own SQLite file, so concurrent runs never share a test database; worker
# subprocesses are pointed at it by tests/plugins/worker.py.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(_scratch / "test_db.sqlite3")}  # noqa: F405

# Production serves collected files; the suite's gunicorn finds them in the apps and static/
# directly, so no test has to run collectstatic first.
WHITENOISE_USE_FINDERS = True

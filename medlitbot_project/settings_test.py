"""Settings for the test suite: the real settings, pointed at the tests' own resources.

Tests talk to the real Redis and PostgreSQL, but on their own Redis DB number and database name,
so a developer's running app is never touched.
"""

import os
import tempfile
from pathlib import Path

_scratch = Path(os.environ.get("MEDLITBOT_TEST_DIR") or tempfile.mkdtemp(prefix="medlitbot-test-"))
os.environ["MEDLITBOT_TEST_DIR"] = str(_scratch)  # worker subprocesses share the same folders
# SQLite unless the run names its database (scripts/test.sh's PostgreSQL run): a developer's .env,
# whose DATABASE_URL may point at the team's PostgreSQL, never decides where the tests write.
os.environ.setdefault("DATABASE_URL", "")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")
# The throttles' cache on a Redis DB of its own, under this run's prefix (start_m1.sh's tests use
# DB 12 as their broker): the same counts in this process, its gunicorn and its workers.
os.environ.setdefault("CACHE_URL", "redis://127.0.0.1:6379/11")
os.environ.setdefault("CACHE_KEY_PREFIX", _scratch.name)
# Queues of this run's own: two suites on one machine never consume each other's messages.
os.environ.setdefault("CELERY_QUEUE_PREFIX", f"{_scratch.name}-")
# Production mode (DEBUG=False) needs a real key; the tests' key is random per run.
os.environ.setdefault("SECRET_KEY", "test-" + os.urandom(24).hex())
os.environ.setdefault("MEDIA_ROOT", str(_scratch / "media"))
os.environ.setdefault("MODEL_ARTIFACT_ROOT", str(_scratch / "artifacts"))
os.environ.setdefault("MEDLITBOT_MODEL_DIR", str(_scratch / "models"))
os.environ.setdefault("LOG_DIR", str(_scratch / "logs"))
os.environ.setdefault("STATIC_ROOT", str(_scratch / "static"))
(_scratch / "static").mkdir(exist_ok=True)  # WhiteNoise warns about a missing STATIC_ROOT
os.environ.setdefault("ALLOW_MODEL_DOWNLOAD", "False")

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

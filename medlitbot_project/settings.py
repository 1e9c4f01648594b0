"""MedLitBot settings, read from the environment (and `.env`) with django-environ.

Every variable is documented in `env.m1.example`.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from medlitbot_project import backing

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# The process environment wins over .env, so tests and start_m1.sh can override single values.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

INSECURE_DEFAULT_SECRET_KEY = "django-insecure-medlitbot-development-key-change-me"

# Production is the default: a fresh install that forgot a setting must not show tracebacks.
# start_m1.sh writes a random SECRET_KEY into .env on first start; development sets DEBUG=True.
DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default=INSECURE_DEFAULT_SECRET_KEY)
if not DEBUG and SECRET_KEY in ("", INSECURE_DEFAULT_SECRET_KEY):
    raise ImproperlyConfigured(
        "SECRET_KEY is missing or still the development default, and DEBUG=False. "
        "Set SECRET_KEY in .env (python -c 'import secrets; print(secrets.token_urlsafe(50))')."
    )
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    # rest_framework.authtoken is gone: API tokens are hashed, named and expiring (api/tokens.py);
    # api/migrations/0002 moved its plain rows into api.ApiToken and dropped its table.
    "drf_spectacular",
    # Swagger UI's files as static files of our own origin: /api/docs/ needs no CDN (offline, CSP).
    "drf_spectacular_sidecar",
    "axes",
    "core",
    "projects",
    "dataset_management",
    "classification",
    "screening",
    "literature",
    "api",
]

MIDDLEWARE = [
    # First, so request latency includes every other middleware.
    "core.metrics.RequestMetricsMiddleware",
    # /healthz, /readyz, /metrics answered before ALLOWED_HOSTS and the HTTPS redirect: probes
    # and Prometheus call by IP over plain HTTP (core/views.py).
    "core.views.ProbeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "core.middleware.UploadSizeLimitMiddleware",
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    # request.project: the project the person is working in (projects/middleware.py).
    "projects.middleware.CurrentProjectMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.middleware.QueueUnavailableMiddleware",
    # A 429 for an address past LOGIN_FAILURES_PER_ADDRESS (core/loginthrottle.py).
    "core.loginthrottle.LoginLimitMiddleware",
    # Last, so a lockout answers before any view sees the credentials.
    "axes.middleware.AxesMiddleware",
]
AUTHENTICATION_BACKENDS = [
    # First: an address past its failed-login limit is refused before any password is checked.
    "core.loginthrottle.ClientAddressLoginLimitBackend",
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "medlitbot_project.urls"
WSGI_APPLICATION = "medlitbot_project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "projects.context.current_project",
            ],
        },
    },
]

# --- Database ---------------------------------------------------------------------------------
# DATABASE_URL selects PostgreSQL, else SQLite in SQLITE_PATH (WAL); a USE_SQLITE contradicting
# it stops the app with a message (medlitbot_project/backing.py says why).
DATABASES, SQLITE_PATH = backing.database_settings(env, base_dir=BASE_DIR)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

# --- Files ------------------------------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# Files browsers ask for at the site's root (/favicon.ico), served by WhiteNoise as they are.
WHITENOISE_ROOT = BASE_DIR / "static" / "root"
MEDIA_URL = "media/"
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / "media")
# Trained artifacts and job checkpoints; kept apart from uploads so backups can differ.
MODEL_ARTIFACT_ROOT = env.path("MODEL_ARTIFACT_ROOT", default=BASE_DIR / "model_artifacts")
# Pre-downloaded HF models, looked up as MEDLITBOT_MODEL_DIR/<model_type> before the HF cache.
MEDLITBOT_MODEL_DIR = env.path("MEDLITBOT_MODEL_DIR", default=BASE_DIR / "models")
ALLOW_MODEL_DOWNLOAD = env.bool("ALLOW_MODEL_DOWNLOAD", default=False)
MODEL_DOWNLOAD_TIMEOUT = env.float("MODEL_DOWNLOAD_TIMEOUT", default=120.0)
# Encoder outputs kept between jobs (classification/engine/embedding_cache.py); 0 MB: off.
EMBEDDING_CACHE_DIR = env.path("EMBEDDING_CACHE_DIR",
                               default=str(MODEL_ARTIFACT_ROOT("embedding_cache")))
EMBEDDING_CACHE_MB = env.int("EMBEDDING_CACHE_MB", default=2048)
# Sessions' ranker (screening/ranker.py): svm-embed (TF-IDF and MiniLM vectors) or svm (words).
SCREENING_RANKER = env.str("SCREENING_RANKER", default="svm-embed")

LOG_DIR = env.path("LOG_DIR", default=BASE_DIR / "logs")

# --- Several machines: shared storage (core/filestore.py, docs/deploy.md) ---------------------
# Empty (the default): every durable file lives on this machine's disk, under MEDIA_ROOT and
# MODEL_ARTIFACT_ROOT, and nothing is copied anywhere. `s3://bucket[/prefix]` publishes datasets,
# batch files, trained models and checkpoints to S3-compatible object storage through
# django-storages (AWS, MinIO, Ceph RGW; AWS_S3_ENDPOINT_URL for the last two), so any node can
# read what another wrote. `file:///mnt/share/medlitbot` does the same on a shared mount.
SHARED_STORAGE_URL = env.str("SHARED_STORAGE_URL", default="")
# What a node fetched from the shared storage, kept by content hash (models) or by a path never
# reused for other bytes (datasets, batch files); trimmed least recently used first.
FILE_CACHE_DIR = env.path("FILE_CACHE_DIR", default=BASE_DIR / "file_cache")
FILE_CACHE_MAX_MB = env.int("FILE_CACHE_MAX_MB", default=20 * 1024)
# The machine's name in job rows and heartbeats: the reaper checks PIDs only for jobs of this
# node and judges every other node's jobs by their heartbeat age alone.
NODE_NAME = env.str("NODE_NAME", default="")

# The local defaults, and "shared" when SHARED_STORAGE_URL is set (medlitbot_project/backing.py).
STORAGES = backing.storages_settings(env, shared_url=SHARED_STORAGE_URL)

MAX_UPLOAD_SIZE_MB = env.int("MAX_UPLOAD_SIZE_MB", default=250)
MAX_UPLOAD_SIZE = MAX_UPLOAD_SIZE_MB * 1024 * 1024
# An import stops at the first row past either cap, naming it (dataset_management/readers).
DATASET_MAX_ROWS = env.int("DATASET_MAX_ROWS", default=2_000_000)
DATASET_MAX_ROW_BYTES = env.int("DATASET_MAX_ROW_BYTES", default=1024 * 1024)
# Inflated MB a compressed upload (.xml.gz, XLSX) may reach as it streams; PubMed XML packs 8-10x.
DATASET_MAX_DECOMPRESSED_MB = env.int("DATASET_MAX_DECOMPRESSED_MB",
                                      default=10 * MAX_UPLOAD_SIZE_MB)
# POST /api/models/<pk>/predict/ answers inline up to this many texts; more become a batch job
# on the inference worker (202 + Location), so a web process never classifies for minutes.
SYNC_PREDICT_MAX_TEXTS = env.int("SYNC_PREDICT_MAX_TEXTS", default=64)
# RIS exports add each label as a KW keyword behind this prefix ("MedLitBot:cardiology"), apart
# from the record's own keywords in a reference manager; the probabilities go in an N1 note.
EXPORT_LABEL_PREFIX = env.str("EXPORT_LABEL_PREFIX", default="MedLitBot:")
# Past 5 MB an upload spools to disk, into a folder of its own; the first handler stops it at
# MAX_UPLOAD_SIZE as it streams, the last removes what killed uploads left (core/uploads.py).
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_TEMP_DIR = str(env.path("FILE_UPLOAD_TEMP_DIR", default=BASE_DIR / "tmp" / "uploads"))
FILE_UPLOAD_HANDLERS = ["core.uploads.SizeLimitedUploadHandler",
                        "django.core.files.uploadhandler.MemoryFileUploadHandler",
                        "core.uploads.SpoolUploadHandler"]
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# --- Training supervision ---------------------------------------------------------------------
HEARTBEAT_INTERVAL = env.float("HEARTBEAT_INTERVAL", default=5.0)
HEARTBEAT_TIMEOUT = env.float("HEARTBEAT_TIMEOUT", default=60.0)
STALL_TIMEOUT_FLOOR = env.float("STALL_TIMEOUT_FLOOR", default=120.0)
STALL_TIMEOUT_CEILING = env.float("STALL_TIMEOUT_CEILING", default=1800.0)
CANCEL_GRACE_SECONDS = env.float("CANCEL_GRACE_SECONDS", default=30.0)
JOB_HARD_TIME_LIMIT = env.float("JOB_HARD_TIME_LIMIT", default=6 * 3600.0)
PROGRESS_WRITE_INTERVAL = env.float("PROGRESS_WRITE_INTERVAL", default=1.0)
BATCH_SHARD_ROWS = env.int("BATCH_SHARD_ROWS", default=50_000)  # classification/batches/shards.py
# The training process's niceness: the web and the watchdog stay responsive. 0 = normal.
TRAINING_NICE = env.int("TRAINING_NICE", default=10)
TRAINING_AUTO_RESUMES = env.int("TRAINING_AUTO_RESUMES", default=2)  # classification/jobs/reaper

# --- Celery -----------------------------------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
# pathlib's Path: django-environ's has no "/", so the filesystem broker failed to load settings.
_broker_folder = Path(env.path("CELERY_FILESYSTEM_BROKER_DIR",
                               default=BASE_DIR / "logs" / "broker"))
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's embedded transport: messages are files, so no broker service is needed. Its
    # control folder (broadcasts) too, here: kombu's default is "control" in the CWD (/app).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_folder), "data_folder_out": str(_broker_folder),
        "processed_folder": str(_broker_folder / "processed"),
        "control_folder": str(_broker_folder / "control"), "store_processed": False,
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Redis redelivers an unacked message after this long. Training is acked on receipt
        # (acks_late stays off), but keep the window far past the hard time limit so no setting
        # change can ever hand a running job to a second worker.
        "visibility_timeout": int(JOB_HARD_TIME_LIMIT * 2),
    }
# Queues named for what they do. Training runs on a solo worker, one job at a time; batches and
# explanations on an inference worker, so they never wait behind a multi-hour training; the
# default queue carries maintenance. A prefix lets several installs (or test runs) share one
# Redis DB without consuming each other's messages.
CELERY_QUEUE_PREFIX = env.str("CELERY_QUEUE_PREFIX", default="")
QUEUE_TRAINING = f"{CELERY_QUEUE_PREFIX}training"
# Optional: one solo worker per GPU (started with CUDA_VISIBLE_DEVICES=<index>) consumes this.
# A job goes here only while such a worker is live, or when its person pinned it (device_queue);
# an install without GPUs never needs a worker for it.
QUEUE_TRAINING_GPU = f"{CELERY_QUEUE_PREFIX}training.gpu"
QUEUE_INFERENCE = f"{CELERY_QUEUE_PREFIX}inference"
QUEUE_DEFAULT = f"{CELERY_QUEUE_PREFIX}default"
CELERY_TASK_DEFAULT_QUEUE = QUEUE_DEFAULT
# The default route keeps the seed's `start_model_training.delay(...)` on the CPU queue; jobs
# created by the services name their queue explicitly (classification/jobs/routing.py).
CELERY_TASK_ROUTES = {
    "classification.tasks.start_model_training": {"queue": QUEUE_TRAINING},
    "classification.tasks.batch_*": {"queue": QUEUE_INFERENCE},  # batch_job_run, batch_shards_run
    "classification.tasks.evaluation_job_run": {"queue": QUEUE_INFERENCE},
    # ranker_refresh, session_vectors_fill, simulation_run
    "screening.tasks.*": {"queue": QUEUE_INFERENCE},
    "dataset_management.tasks.import_run": {"queue": QUEUE_DEFAULT},  # the inference worker's
    "literature.tasks.search_run_execute": {"queue": QUEUE_DEFAULT},
    "literature.tasks.saved_searches_tick": {"queue": QUEUE_DEFAULT},
}
# A publish to a broker that is down fails in about a second with a clear 503, not a long retry.
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECTION_TIMEOUT", default=2.0)
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5,
}
# Maintenance on a schedule (celery beat, started by start_m1.sh), not a cron line to forget.
MAINTENANCE_INTERVAL_SECONDS = env.float("MAINTENANCE_INTERVAL_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE = {
    "maintenance": {
        "task": "core.tasks.maintenance_run",
        "schedule": MAINTENANCE_INTERVAL_SECONDS,
        "options": {"queue": QUEUE_DEFAULT, "expires": MAINTENANCE_INTERVAL_SECONDS},
    },
    "saved_searches": {"task": "literature.tasks.saved_searches_tick", "schedule": 60.0,
                       "options": {"queue": QUEUE_DEFAULT, "expires": 60.0}},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(Path(LOG_DIR) / "celerybeat-schedule")
# Each worker writes a heartbeat row this often, from a thread, also while it trains.
WORKER_HEARTBEAT_INTERVAL = env.float("WORKER_HEARTBEAT_INTERVAL", default=5.0)
# A worker whose row is older than this is gone.
WORKER_HEARTBEAT_TIMEOUT = env.float("WORKER_HEARTBEAT_TIMEOUT", default=30.0)
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# A solo worker that prefetched a second training would sit on it for hours while another
# worker could have taken it.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Ack on receipt: a training killed mid-way is reconciled to "stalled" and resumed by a person
# from its checkpoint, never silently re-run from scratch by a redelivery.
CELERY_TASK_ACKS_LATE = False
CELERY_TASK_REJECT_ON_WORKER_LOST = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
from medlitbot_project.literature_settings import *  # noqa: E402, F403 (PUBMED_*, EMAIL_*)
from medlitbot_project.screening_settings import *  # noqa: E402, F403 (FULLTEXT_MAX_*)

# --- Cache: Django's RedisCache, one for every process and node (medlitbot_project/backing.py) --
CACHE_URL = env.str("CACHE_URL", default="") or backing.default_cache_url(
    redis_url=REDIS_URL, broker_url=CELERY_BROKER_URL, log_dir=LOG_DIR)
CACHES = backing.cache_settings(url=CACHE_URL,
                                key_prefix=env.str("CACHE_KEY_PREFIX", default="medlitbot"))

# --- Client addresses and login limits --------------------------------------------------------
# Reverse proxies in front of gunicorn that append to X-Forwarded-For. 0: the client address is
# REMOTE_ADDR and the header, which any client can send, is ignored (core/clientaddress.py).
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
# Failed password logins from one address, whatever the usernames, before its logins are
# refused until the window ends: spraying never reaches axes' per-username lockout
# (core/loginthrottle.py). 0 turns it off.
LOGIN_FAILURES_PER_ADDRESS = env.int("LOGIN_FAILURES_PER_ADDRESS", default=30)
LOGIN_FAILURE_WINDOW_MINUTES = env.float("LOGIN_FAILURE_WINDOW_MINUTES", default=10.0)
# Failed password logins for one account, from any addresses, within the same window before its
# logins are refused for a cool-off that doubles at each lockout within a day, up to a day
# (core/loginaccount.py). 0 turns it off.
LOGIN_FAILURES_PER_ACCOUNT = env.int("LOGIN_FAILURES_PER_ACCOUNT", default=10)
LOGIN_ACCOUNT_COOLOFF_MINUTES = env.float("LOGIN_ACCOUNT_COOLOFF_MINUTES", default=15.0)

# --- API --------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # "Authorization: Token <key>", checked against hashed, expiring, revocable tokens.
        "api.tokens.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # QueueUnavailable -> 503 and a cut-off upload -> 413, as on the pages (api/exceptions.py).
    "EXCEPTION_HANDLER": "api.exceptions.api_exception_handler",
    # Only views that name a scope are throttled: /api/token/ ("token"). Counted per client IP in
    # the shared cache; django-axes' lockout (below) is the per-account limit behind it.
    "DEFAULT_THROTTLE_RATES": {"token": env.str("API_TOKEN_THROTTLE_RATE", default="10/min")},
    # Else DRF trusts X-Forwarded-For: a new address named each time was never throttled.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
}
from medlitbot_project.api_settings import *  # noqa: E402, F403 (SPECTACULAR_SETTINGS)

# --- Security -----------------------------------------------------------------------------------
# HTTPS=True once a TLS-terminating proxy serves the site (docs/deploy.md): cookies become Secure,
# plain HTTP is redirected, HSTS is sent, and the proxy's X-Forwarded-Proto is trusted. Off by
# default because start_m1.sh serves plain HTTP on 127.0.0.1, where Secure cookies never return.
HTTPS = env.bool("HTTPS", default=False)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=HTTPS)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=HTTPS)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if HTTPS else 0)
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

# Content-Security-Policy (django-csp): only this origin's scripts, workers, styles, connections;
# the vendored Chart.js, pdf.js (and its worker) and Swagger UI are served from /static/.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "worker-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Login throttling and lockout (django-axes) for the web login, the admin and /api/token/.
# --- Projects, invitations and API tokens ------------------------------------------------------
INVITATION_DAYS = env.int("INVITATION_DAYS", default=7)
# Off: accounts are made by an administrator or through an invitation link only.
OPEN_SIGNUP = env.bool("OPEN_SIGNUP", default=False)
# How long an API token lives, and the longest a person may ask for (api/tokens.py).
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=30)

AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_MINUTES", default=15.0) / 60.0  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# No start-up banner: every manage.py command would print it to stderr.
AXES_VERBOSE = False
# 429 with "locked for N minutes after M failed attempts": JSON under /api/, a page elsewhere.
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "api.auth.lockout_response"
# The same client address as the throttles (TRUSTED_PROXY_COUNT above).
AXES_CLIENT_IP_CALLABLE = "core.clientaddress.client_address"

# Single sign-on with OpenID Connect (mozilla-django-oidc): off unless OIDC_RP_CLIENT_ID is set.
# Then /oidc/authenticate/ logs a person in through the provider, and the login page offers it.
# Only accounts that already exist (matched by e-mail) may log in, unless OIDC_CREATE_USER=True,
# as invitations stay the way in (docs/deploy.md, "Single sign-on").
OIDC_RP_CLIENT_ID = env.str("OIDC_RP_CLIENT_ID", default="")
OIDC_ENABLED = bool(OIDC_RP_CLIENT_ID)
if OIDC_ENABLED:
    OIDC_RP_CLIENT_SECRET = env.str("OIDC_RP_CLIENT_SECRET", default="")
    OIDC_RP_SIGN_ALGO = env.str("OIDC_RP_SIGN_ALGO", default="RS256")
    OIDC_RP_SCOPES = env.str("OIDC_RP_SCOPES", default="openid email profile")
    OIDC_OP_AUTHORIZATION_ENDPOINT = env.str("OIDC_OP_AUTHORIZATION_ENDPOINT", default="")
    OIDC_OP_TOKEN_ENDPOINT = env.str("OIDC_OP_TOKEN_ENDPOINT", default="")
    OIDC_OP_USER_ENDPOINT = env.str("OIDC_OP_USER_ENDPOINT", default="")
    OIDC_OP_JWKS_ENDPOINT = env.str("OIDC_OP_JWKS_ENDPOINT", default="")
    OIDC_CREATE_USER = env.bool("OIDC_CREATE_USER", default=False)
    # The signature is always checked; False only skips matching the token's key id, for a
    # provider whose tokens carry none (oidc-provider-mock, which the tests log in through).
    OIDC_VERIFY_KID = env.bool("OIDC_VERIFY_KID", default=True)
    # A created account is named after the person's e-mail address (unique, and readable).
    OIDC_USERNAME_ALGO = "api.oidc.oidc_username"
    LOGIN_REDIRECT_URL_FAILURE = "/accounts/login/?sso=failed"
    _oidc_missing = [name for name in (
        "OIDC_RP_CLIENT_SECRET", "OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT",
        "OIDC_OP_USER_ENDPOINT", *(["OIDC_OP_JWKS_ENDPOINT"] if OIDC_RP_SIGN_ALGO.startswith(
            ("RS", "ES", "PS")) else []),
    ) if not globals()[name]]
    if _oidc_missing:
        raise ImproperlyConfigured(
            "OIDC_RP_CLIENT_ID is set, so single sign-on is on, but these are missing: "
            + ", ".join(_oidc_missing) + " (docs/deploy.md, \"Single sign-on\")."
        )
    INSTALLED_APPS.append("mozilla_django_oidc")
    AUTHENTICATION_BACKENDS.append("mozilla_django_oidc.auth.OIDCAuthenticationBackend")

# Who may read /metrics: connections from these addresses or CIDR networks ("*" for anyone), by
# REMOTE_ADDR, never a forwarded header; or "Authorization: Bearer <METRICS_TOKEN>". A request
# through a proxy has the proxy's address (127.0.0.1 on this host): only the token opens it.
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=["127.0.0.1", "::1"])
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# /readyz fails ("disk"), naming the folder, when MEDIA_ROOT, MODEL_ARTIFACT_ROOT or
# FILE_CACHE_DIR has less free space than this.
READYZ_MIN_FREE_MB = env.int("READYZ_MIN_FREE_MB", default=1024)

LOG_FORMAT = env.str("LOG_FORMAT", default="plain")  # "json" for log shippers
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "core.logjson.JsonFormatter"},
    },
    "filters": {"forbidden_one_line": {"()": "core.logjson.ForbiddenInOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"},
                # A 403 is one line, not a traceback (core/logjson.py).
                "django.request": {"filters": ["forbidden_one_line"]}},
}

# --- Error tracking (optional) -------------------------------------------------------------------
# Off unless SENTRY_DSN is set (medlitbot_project/errortracking.py, docs/deploy.md).
SENTRY_DSN = env.str("SENTRY_DSN", default="")
if SENTRY_DSN:
    from medlitbot_project.errortracking import sentry_start

    sentry_start(dsn=SENTRY_DSN, environment=env.str("SENTRY_ENVIRONMENT", default="production"),
                 traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0))

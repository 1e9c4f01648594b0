"""The API's input limits and its documentation's settings (drf-spectacular), star-imported by
settings.py; they live here so that settings.py stays under the 450 lines a module may have.
"""

import environ

env = environ.Env()

# The longest text a route classifies or explains, in characters: the Classify form's title
# (2,000) and abstract (100,000) with the blank line between them. Longer is refused (400
# naming the cap) before any model reads it.
MAX_TEXT_CHARS = env.int("MAX_TEXT_CHARS", default=102_002)
# The largest body that is not an upload (JSON, a form) a route reads: refused (413) from its
# Content-Length before it is parsed. Uploads have MAX_UPLOAD_SIZE_MB.
MAX_BODY_MB = env.float("MAX_BODY_MB", default=4.0)

SPECTACULAR_SETTINGS = {
    "TITLE": "MedLitBot API",
    "DESCRIPTION": "Train and run classifiers for medical literature.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Jobs and models both have a "status"; name the two choice sets instead of hashing them.
    "ENUM_NAME_OVERRIDES": {
        "TrainingJobStatusEnum": "classification.models.TrainingJob.Status",
        "MLModelStatusEnum": "classification.models.MLModel.Status",
    },
    "ENUM_ADD_EXPLICIT_BLANK_NULL_CHOICE": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

"""The API documentation's settings (drf-spectacular), star-imported by settings.py.

They depend on nothing in the environment; they live here so that settings.py stays under the
450 lines a module may have.
"""

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

"""The request examples /api/docs/ offers, and the token view's, which lives in api/auth.py.

The page itself is drf-spectacular's split Swagger view (api/urls.py) over the Swagger UI that
drf-spectacular-sidecar ships as static files, so it works with no network and under the CSP.
"""

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_view

# --- Request examples ---------------------------------------------------------------------------
# Each example is a whole, valid request on its own: /api/docs/ offers them in a drop-down and
# "Try it out" sends the one picked. Ids are those of a fresh install (the demo dataset is 1);
# tests/test_api_docs_examples_are_valid_requests.py sends every one with its own rows' ids.

TOKEN_EXAMPLES = [
    OpenApiExample(
        "The demo account", request_only=True,
        value={"username": "demo", "password": "medlitbot-demo"},
        description="The account a fresh install logs in with (README, Using it).",
    ),
]

DATASET_UPLOAD_EXAMPLES = [
    OpenApiExample(
        "Columns detected", request_only=True, media_type="multipart/form-data",
        value={"name": "Cardiology abstracts", "description": "Screened in May", "project": 1},
        description="Pick the file in `file`; its title, abstract and label columns are found "
        "by their names. `project`: required when you are in more than one project.",
    ),
    OpenApiExample(
        "Columns named", request_only=True, media_type="multipart/form-data",
        value={
            "name": "Medical literature domains", "project": 1,
            "mapping": {"title_column": "title", "abstract_column": "abstract",
                        "label_column": "group", "label_separator": "|"},
            "seed": 7,
        },
        description="Pick the file in `file`; `mapping` says which columns to read.",
    ),
]

TRAINING_EXAMPLES = [
    OpenApiExample(
        "TF-IDF baseline", request_only=True,
        value={"dataset": 1, "model_type": "tfidf_logreg", "name": "Baseline"},
        description="Trains in seconds on a CPU.",
    ),
    OpenApiExample(
        "Fine-tuned MiniLM", request_only=True,
        value={"dataset": 1, "model_type": "minilm", "name": "MiniLM, 3 epochs",
               "config": {"epochs": 3, "batch_size": 16, "max_length": 256}},
        description="The bundled transformer; minutes on a GPU, longer on a CPU.",
    ),
    OpenApiExample(
        "Find the best model", request_only=True,
        value={"dataset": 1, "model_type": "search", "name": "Best of 10 minutes",
               "config": {"time_budget_minutes": 10,
                          "search_candidates": ["tfidf_logreg", "tfidf_svm", "minilm"]}},
        description="Tries and tunes the candidates with Optuna within the budget; the job's "
        "status lists the trials, and the winner becomes this model. Leave out "
        "search_candidates to try every kind available on the server.",
    ),
]

PREDICT_EXAMPLES = [
    OpenApiExample(
        "One text", request_only=True,
        value={"text": "Coronary stenting outcomes after acute myocardial infarction"},
    ),
    OpenApiExample(
        "Many texts", request_only=True,
        value={"texts": ["Seizure control with levetiracetam in adult epilepsy",
                         "Hepatorenal syndrome in decompensated cirrhosis"]},
    ),
    OpenApiExample(
        "Title and abstract pairs", request_only=True,
        value={"articles": [{
            "title": "Temozolomide in newly diagnosed glioblastoma",
            "abstract": "Radiotherapy plus temozolomide prolonged survival in adults.",
        }]},
    ),
]

PROJECT_CREATE_EXAMPLES = [
    OpenApiExample(
        "A team project", request_only=True, value={"name": "Cardiology screening"},
        description="You become its owner; add members at /api/projects/{id}/members/.",
    ),
]

PROJECT_RENAME_EXAMPLES = [
    OpenApiExample("A new name", request_only=True, value={"name": "Cardiology screening 2025"},
                   description="Owners only."),
]

MEMBER_ADD_EXAMPLES = [
    OpenApiExample(
        "By username", request_only=True, value={"username": "demo", "role": "reviewer"},
        description="A reviewer also classifies, explains and reviews; a viewer only sees and "
        "downloads; a maintainer also uploads, trains and deletes; an owner also manages members.",
    ),
    OpenApiExample(
        "By e-mail", request_only=True, value={"username": "demo@example.org", "role": "viewer"},
        description="The e-mail address of an existing account; someone without one needs an "
        "invitation link (the project page makes them).",
    ),
]

MEMBER_ROLE_EXAMPLES = [
    OpenApiExample("Make a maintainer", request_only=True, value={"role": "maintainer"}),
]


class TokenObtainApiExamples(OpenApiViewExtension):
    """The token view (api/auth.py) documented with its example, without changing the view."""

    target_class = "api.auth.TokenObtainApi"

    def view_replacement(self) -> type:
        documented = type(self.target.__name__, (self.target,), {"__doc__": self.target.__doc__})
        return extend_schema_view(post=extend_schema(examples=TOKEN_EXAMPLES))(documented)

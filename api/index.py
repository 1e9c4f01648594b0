"""GET /api/: the index of endpoints, so the API's front door answers instead of a 404."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

# (name, what it is for); the URLs come from the URLconf, so they never drift from it.
ENDPOINTS = [
    ("token", "POST username and password for a token; send it as 'Authorization: Token ...'"),
    ("token_list", "your API tokens (name, prefix, expiry; never the key); POST a name to make "
                   "one, DELETE /api/tokens/<id>/ to revoke one"),
    ("project_list", "your projects and your role in each; POST a name to create one; "
                     "members and activity at /api/projects/<id>/members/ and .../activity/"),
    ("dataset_list", "the datasets of your projects (?project=<id> narrows to one); POST a "
                     "file (multipart) to import one"),
    ("model_list", "the models of your projects (?project=<id> narrows to one)"),
    ("model_ensemble", "POST member_ids (trained models of one dataset) to combine them"),
    ("model_compare", "GET ?ids=1,2&on=test (or on=evaluation:<file sha256>): models on the "
                      "same rows, each metric with a 95% interval and paired tests"),
    ("job_list", "training jobs; POST to train a model"),
    ("batch_list", "batch classifications; POST a file to /api/models/<id>/batches/"),
    ("search_list", "saved PubMed searches; POST one to save it, POST "
                    "/api/searches/<id>/runs/ to run it (docs/literature.md)"),
    ("schema", "the OpenAPI schema"),
    ("docs", "interactive documentation (Swagger UI)"),
]


class ApiIndex(APIView):
    """The endpoints of this API, with one line each; needs no login."""

    permission_classes = [AllowAny]

    @extend_schema(exclude=True)
    def get(self, request: Request) -> Response:
        return Response({
            "name": "MedLitBot API",
            "endpoints": {
                name: {"url": reverse(f"api:{name}", request=request), "what": what}
                for name, what in ENDPOINTS
            },
        })

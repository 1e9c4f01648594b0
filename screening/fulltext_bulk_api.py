"""`POST /api/screening/<id>/fulltext/bulk/`: many reports' PDFs (multipart `files`, each a PDF
or a ZIP of PDFs) matched to the records at full text by DOI, PMID or title and attached as the
single upload attaches one (screening.fulltext_bulk). 200 with one result per file, in the
order sent: `outcome` attached, not_matched, ambiguous or refused, `how` (doi, pmid, title),
`record`, `row`, `title` and `detail` (why, for any but attached)."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.apidocs import FilePart
from screening import fulltext_bulk, selectors
from screening.errors import ScreeningError

BULK_BODY = {"multipart/form-data": inline_serializer("FullTextBulkUpload", fields={
    "files": serializers.ListField(child=FilePart(), help_text=(
        "The reports' PDFs, or ZIPs of them: one `files` part each")),
})}


class FullTextBulkApi(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(summary="Attach many reports' PDFs (multipart `files`, PDFs or ZIPs), each "
                           "matched to a record at full text by DOI, PMID or title; one result "
                           "per file", request=BULK_BODY, responses=None)
    def post(self, request: Request, pk: int) -> Response:
        session = selectors.session_get(user=request.user, pk=pk)
        try:
            results = fulltext_bulk.fulltext_bulk_attach(
                user=request.user, session=session, files=request.FILES.getlist("files"))
        except ScreeningError as exc:
            raise ValidationError({"files": [str(exc)]}) from None
        return Response({
            "attached": sum(r.outcome == fulltext_bulk.ATTACHED for r in results),
            "results": [r.as_dict() for r in results]})


urlpatterns = [
    path("screening/<int:pk>/fulltext/bulk/", FullTextBulkApi.as_view(),
         name="screening_fulltext_bulk"),
]

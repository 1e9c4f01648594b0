"""Swagger UI served from our own static files: drf-spectacular's default loads it from a CDN,
and MedLitBot must work with no network."""

from django.templatetags.static import static
from drf_spectacular.views import SpectacularSwaggerView


class OfflineSwaggerView(SpectacularSwaggerView):
    @staticmethod
    def _swagger_ui_resource(filename: str) -> str:
        return static(f"vendor/swagger-ui/{filename}")

    @staticmethod
    def _swagger_ui_favicon() -> str:
        return static("vendor/swagger-ui/favicon-32x32.png")

"""Swagger UI served from our own static files: drf-spectacular's default loads it from a CDN,
and MedLitBot must work with no network.

The split view serves the page's init script as a separate same-origin request (``?script``)
instead of inline, and the template drops the inline <style>, so the page runs under the
Content-Security-Policy without 'unsafe-inline'.
"""

from django.templatetags.static import static
from drf_spectacular.views import SpectacularSwaggerSplitView


class OfflineSwaggerView(SpectacularSwaggerSplitView):
    template_name = "api/swagger_ui.html"

    @staticmethod
    def _swagger_ui_resource(filename: str) -> str:
        return static(f"vendor/swagger-ui/{filename}")

    @staticmethod
    def _swagger_ui_favicon() -> str:
        return static("vendor/swagger-ui/favicon-32x32.png")

from django.urls import path, re_path

from screening import (
    fulltext_viewer,
    fulltext_views,
    priors_views,
    records_views,
    review_views,
    views,
)

app_name = "screening"

urlpatterns = [
    path("", views.session_list, name="list"),
    path("<int:pk>/", views.session_detail, name="detail"),
    path("simulations/", views.simulation_list, name="simulations"),
    path("simulations/<int:pk>/", views.simulation_detail, name="simulation"),
    path("<int:pk>/screen/", views.screen_page, name="screen"),
    path("<int:pk>/summary.json", views.summary_json, name="summary_json"),
    path("<int:pk>/next.json", views.next_json, name="next_json"),
    path("<int:pk>/decide.json", views.decide_json, name="decide_json"),
    path("<int:pk>/desk/", views.session_desk, name="desk"),
    path("<int:pk>/fulltext/", fulltext_views.fulltext_list, name="fulltext"),
    path("<int:pk>/fulltext/<int:record_id>/", fulltext_views.fulltext_record,
         name="fulltext_record"),
    path("<int:pk>/fulltext/<int:record_id>/pdf", fulltext_viewer.fulltext_pdf,
         name="fulltext_pdf"),
    path("<int:pk>/fulltext/bulk/", fulltext_viewer.fulltext_bulk_page, name="fulltext_bulk"),
    path("<int:pk>/recent.json", views.recent_json, name="recent_json"),
    path("<int:pk>/conflicts/", review_views.conflicts_page, name="conflicts"),
    path("<int:pk>/prisma/", review_views.prisma_page, name="prisma"),
    path("<int:pk>/prisma/sources/", review_views.prisma_sources, name="prisma_sources"),
    re_path(r"^(?P<pk>[0-9]+)/prisma\.(?P<fmt>svg|png|pdf)$", review_views.prisma_download,
            name="prisma_download"),
    path("<int:pk>/unblind/", review_views.blinding_end, name="unblind"),
    re_path(r"^(?P<pk>[0-9]+)/export/(?P<fmt>csv|ris|jsonl|prisma)/$", views.session_export,
            name="export"),
    re_path(r"^(?P<pk>[0-9]+)/(?P<action>resolve|sampling|stop|train)/$", views.session_action,
            name="action"),
    *records_views.urlpatterns,
    *priors_views.urlpatterns,
]

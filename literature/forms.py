"""The saved search's form (the page's and, for its checks, the API's)."""

from __future__ import annotations

from typing import Any

from django import forms

from literature.models import SavedSearch


class SavedSearchForm(forms.Form):
    name = forms.CharField(max_length=200)
    query = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}), max_length=4000,
        help_text="As typed in PubMed, e.g. <code>pancreatic cancer[tiab] AND telomere*</code>.")
    mindate = forms.DateField(required=False, label="Published from",
                              help_text="YYYY-MM-DD; leave empty for no bound.")
    maxdate = forms.DateField(required=False, label="Published until")
    collection = forms.ModelChoiceField(
        queryset=None, required=False, label="Collection",
        empty_label="A new collection (made by the first run)",
        help_text="An unlabelled dataset of this project; each run that finds new articles "
                  "makes a new version of it.")
    ml_model = forms.ModelChoiceField(queryset=None, required=False,
                                      label="Classify new articles with",
                                      empty_label="No model (import only)")
    schedule = forms.ChoiceField(choices=SavedSearch.Schedule.choices, required=False,
                                 initial=SavedSearch.Schedule.OFF)

    def __init__(self, *args: Any, collections: Any, models: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = collections
        self.fields["ml_model"].queryset = models

    def search_kwargs(self) -> dict[str, Any]:
        return {key: self.cleaned_data.get(key) for key in self.fields}


def form_initial(search: SavedSearch) -> dict[str, Any]:
    return {"name": search.name, "query": search.query, "mindate": search.mindate,
            "maxdate": search.maxdate, "collection": search.collection_id,
            "ml_model": search.ml_model_id, "schedule": search.schedule}

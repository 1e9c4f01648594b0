"""The review desk's form: criteria, terms, exclusion reasons and screeners of a session."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.utils.html import format_html


class ScreenerChoice(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        return obj.get_username()


class DeskForm(forms.Form):
    criteria = forms.CharField(required=False, max_length=20_000, widget=forms.Textarea(
        attrs={"rows": 8}), help_text="Eligibility criteria, shown beside every record")
    include_terms = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea(
        attrs={"rows": 3}), help_text="Terms highlighted in green: one a line or comma-separated")
    exclude_terms = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea(
        attrs={"rows": 3}), help_text="Terms highlighted in red")
    exclusion_reasons = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea(
        attrs={"rows": 5}), help_text="One reason a line: optional on a “no” at title/abstract, "
                                      "required at full text")
    screeners = ScreenerChoice(queryset=None, required=False,
                               widget=forms.CheckboxSelectMultiple,
                               help_text="None ticked: every member with the reviewer role")

    def __init__(self, *args: Any, members: Any, creator: str = "",
                 may_choose: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        screeners = self.fields["screeners"]
        screeners.queryset = get_user_model().objects.filter(
            pk__in=[m.user_id for m in members]).order_by("username")
        if not may_choose:
            # Disabled, Django keeps the initial choice whatever is posted: the other fields
            # still save, and the service refuses a forged change all the same.
            screeners.disabled = True
            # A field's help text is rendered as HTML: the name goes in escaped.
            screeners.help_text = format_html("Chosen by the session’s creator ({}) or an owner "
                                              "of the project", creator or "gone")

    @staticmethod
    def initial_of(session: Any) -> dict[str, Any]:
        return {"criteria": session.criteria,
                "include_terms": "\n".join(session.include_terms or []),
                "exclude_terms": "\n".join(session.exclude_terms or []),
                "exclusion_reasons": "\n".join(session.exclusion_reasons or []),
                "screeners": list(session.screeners.all())}

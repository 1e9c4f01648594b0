"""Forms of the project pages: names, members, invitations, and sign-up through an invitation."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

from .models import Role


class ProjectNameForm(forms.Form):
    name = forms.CharField(max_length=200, label="Project name")


class MemberAddForm(forms.Form):
    identifier = forms.CharField(max_length=254, label="Username or e-mail")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.VIEWER)


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class InvitationForm(forms.Form):
    """An invitation is for one e-mail unless the owner ticks `anyone`: such a link admits
    whoever holds it, so it is capped at the reviewer role (services.invitation_create)."""

    role = forms.ChoiceField(choices=Role.choices, initial=Role.REVIEWER)
    email = forms.EmailField(
        required=False, label="E-mail of the invitee",
        help_text="Only a user with this e-mail can accept the invitation.",
    )
    anyone = forms.BooleanField(
        required=False, label="No e-mail: a link for anyone who holds it (reviewer at most)",
    )


class SignupForm(UserCreationForm):
    """Django's own checks (unique username, password validators, typed twice) plus an e-mail.

    The e-mail is required and unique: owners add colleagues by it, and two accounts answering
    to one address would make that ambiguous.
    """

    email = forms.EmailField(label="E-mail")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"].strip()
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(
                "An account with this e-mail already exists: log in instead.")
        return email

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["username"].widget.attrs.update(autocomplete="username", autofocus=True)
        self.fields["email"].widget.attrs.update(autocomplete="email")

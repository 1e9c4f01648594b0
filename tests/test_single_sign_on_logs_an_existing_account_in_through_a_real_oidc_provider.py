"""Single sign-on, end to end: gunicorn with OIDC_* set, and oidc-provider-mock (a maintained
OpenID provider for tests, built on Authlib) as a real local process. The client is registered
with the provider, so its secret and redirect address are checked; the ID token is RS256 and
verified against the provider's JWKS (by signature only: the mock's tokens name no key id).

- A person whose e-mail matches an account is logged in as that account.
- Someone the provider knows but this site does not is sent back to the login page with a
  sentence, and no account is made (OIDC_CREATE_USER is off by default).
- Without OIDC_RP_CLIENT_ID (the suite's own settings) there is no /oidc/ and no button.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client

from tests.plugins.server import AppServer, free_port

PROVIDER = Path(sys.executable).parent / "oidc-provider-mock"
ALICE = {"sub": "alice-at-idp", "email": "alice@example.org", "email_verified": True,
         "name": "Alice"}
STRANGER = {"sub": "stranger-at-idp", "email": "stranger@example.org", "email_verified": True}


@pytest.fixture
def provider(tmp_path: Path) -> Iterator[str]:
    if not PROVIDER.exists() and shutil.which("oidc-provider-mock") is None:
        pytest.skip("oidc-provider-mock is not installed (requirements-dev.txt)")
    port = free_port()
    log = (tmp_path / "provider.log").open("wb")
    proc = subprocess.Popen(
        [str(PROVIDER), "--port", str(port), "--require-registration", "true",
         "--user-claims", json.dumps(ALICE), "--user-claims", json.dumps(STRANGER)],
        env={**os.environ, "AUTHLIB_INSECURE_TRANSPORT": "1"}, stdout=log, stderr=log,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if requests.get(f"{url}/.well-known/openid-configuration", timeout=1).ok:
                    break
            except requests.ConnectionError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail("oidc-provider-mock did not start:\n"
                            + (tmp_path / "provider.log").read_text())
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


@pytest.fixture
def site(provider: str, transactional_db: None, tmp_path: Path) -> Iterator[AppServer]:
    """gunicorn with single sign-on on, as a deployment would configure it from discovery."""
    discovery = requests.get(f"{provider}/.well-known/openid-configuration", timeout=5).json()
    server = AppServer(tmp_path / "gunicorn", WEB_WORKERS="1")
    client = requests.post(f"{provider}/oauth2/clients", timeout=5, json={
        "redirect_uris": [f"{server.url}/oidc/callback/"],
        "token_endpoint_auth_method": "client_secret_post",
    }).json()
    server.env.update({
        "OIDC_RP_CLIENT_ID": client["client_id"],
        "OIDC_RP_CLIENT_SECRET": client["client_secret"],
        "OIDC_OP_AUTHORIZATION_ENDPOINT": discovery["authorization_endpoint"],
        "OIDC_OP_TOKEN_ENDPOINT": discovery["token_endpoint"],
        "OIDC_OP_USER_ENDPOINT": discovery["userinfo_endpoint"],
        "OIDC_OP_JWKS_ENDPOINT": discovery["jwks_uri"],
        # The mock signs with one key and names none; the signature is still verified.
        "OIDC_VERIFY_KID": "False",
    })
    server.start()
    yield server
    server.stop()


def sign_on(site: AppServer, sub: str) -> tuple[requests.Session, requests.Response]:
    """Press "Log in with single sign-on", pick `sub` on the provider's form, follow back."""
    browser = requests.Session()
    start = browser.get(f"{site.url}/oidc/authenticate/", allow_redirects=False, timeout=10)
    assert start.status_code == 302, start.text
    authorize = start.headers["Location"]
    assert "state=" in authorize
    assert "nonce=" in authorize
    form = browser.post(authorize, data={"sub": sub}, allow_redirects=False, timeout=10)
    assert form.status_code == 302, form.text
    callback = form.headers["Location"]
    assert callback.startswith(f"{site.url}/oidc/callback/?"), callback
    back = browser.get(callback, allow_redirects=False, timeout=30)
    assert back.status_code == 302, (back.text, site.log()[-3000:])
    return browser, back


def test_an_existing_account_is_logged_in_through_the_provider(site, user) -> None:
    login_page = requests.get(f"{site.url}/accounts/login/", timeout=10).text
    assert 'href="/oidc/authenticate/"' in login_page
    assert "single sign-on" in login_page

    browser, back = sign_on(site, ALICE["sub"])
    assert urljoin(site.url, back.headers["Location"]) == f"{site.url}/"
    dashboard = browser.get(f"{site.url}/", allow_redirects=False, timeout=10)
    assert dashboard.status_code == 200
    assert '<span class="who">alice</span>' in dashboard.text
    assert get_user_model().objects.count() == 1, "matched by e-mail, not made anew"


def test_someone_without_an_account_is_told_and_none_is_made(site, user) -> None:
    browser, back = sign_on(site, STRANGER["sub"])
    assert back.headers["Location"] == "/accounts/login/?sso=failed"
    page = browser.get(urljoin(site.url, back.headers["Location"]), timeout=10).text
    assert "Single sign-on did not log you in" in page
    assert not get_user_model().objects.filter(email=STRANGER["email"]).exists()
    assert browser.get(f"{site.url}/", allow_redirects=False, timeout=10).status_code == 302


@pytest.mark.django_db
def test_without_its_settings_there_is_no_single_sign_on() -> None:
    assert Client().get("/oidc/authenticate/").status_code == 404
    assert "single sign-on" not in Client().get("/accounts/login/").content.decode()

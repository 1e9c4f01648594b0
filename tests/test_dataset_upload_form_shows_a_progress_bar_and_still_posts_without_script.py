"""The upload page carries a <progress> bar driven by its own static script (no inline script:
the CSP allows 'self' only), and the form still posts on its own without the script.

The script's behaviour is run under node against a stand-in page (form, bar, XMLHttpRequest):
upload progress shows as percent and MB, the server's page replaces the document, a redirect is
followed. A real browser run of it is not part of this file.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

SCRIPT = Path(__file__).resolve().parents[1] / "static" / "js" / "dataset_upload.js"


def test_the_page_has_the_bar_and_includes_the_script(alice_client) -> None:
    response = alice_client.get(reverse("datasets:upload"))
    html = response.content.decode()
    assert response.status_code == 200
    form = re.search(r'<form method="post" enctype="multipart/form-data"[^>]*id="upload-form"'
                     r'.*?</form>', html, re.S)
    assert form, "the form posts multipart on its own, with or without the script"
    assert re.search(r'<div id="upload-progress"[^>]*hidden>\s*<progress max="100"', form[0])
    assert 'type="submit"' in form[0]
    assert '<script src="/static/js/dataset_upload.js"></script>' in html
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "inline script breaks the CSP"
    assert "script-src 'self'" in response["Content-Security-Policy"]


# A stand-in for the page the template draws: just what the script touches.
DRIVER = r"""
const fs = require("fs"), vm = require("vm");
const log = {written: null, assigned: null, sent: null};
function el(extra) { return Object.assign({hidden: true, textContent: "", attrs: {},
  removeAttribute(n) { delete this.value; }, getAttribute(n) { return this.attrs[n] || null; }},
  extra); }
const bar = el({value: 0}), text = el(), button = el({disabled: false});
const box = el({querySelector: (s) => s === "progress" ? bar : text});
let submit = null;
const form = el({querySelector: () => button, addEventListener: (t, f) => { submit = f; }});
let xhr = null;
class XHR { constructor() { xhr = this; this.upload = {}; }
  open(m, u) { this.method = m; this.url = u; } send(body) { log.sent = body; } }
const page = "https://medlitbot.test/datasets/upload/";
const context = {URL, XMLHttpRequest: XHR, FormData: class { constructor(f) { this.f = f; } },
  window: null, document: {getElementById: (id) => ({"upload-form": form,
    "upload-progress": box})[id], open() {}, write(h) { log.written = h; }, close() {}}};
context.window = Object.assign(context, {location: {href: page,
  assign(u) { log.assigned = u; }}});
vm.runInNewContext(fs.readFileSync(process.argv[2], "utf8"), context);
const out = {};
submit({preventDefault() { out.prevented = true; }});
out.method = xhr.method; out.url = xhr.url; out.disabled = button.disabled;
out.sentForm = log.sent.f === form;
xhr.upload.onprogress({lengthComputable: true, loaded: 5 * 1048576, total: 20 * 1048576});
out.progress = [box.hidden, bar.value, text.textContent];
xhr.upload.onload(); out.reading = [text.textContent, "value" in bar];
xhr.responseURL = page; xhr.responseText = "<html>preview</html>"; xhr.onload();
out.written = log.written;
xhr.responseURL = "https://medlitbot.test/accounts/login/?next=/datasets/upload/";
xhr.onload(); out.assigned = log.assigned;
xhr.onerror(); out.failed = [text.textContent, button.disabled];
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_script_shows_progress_then_the_servers_answer(tmp_path: Path) -> None:
    driver = tmp_path / "driver.js"
    driver.write_text(DRIVER)
    run = subprocess.run(["node", str(driver), str(SCRIPT)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["prevented"]
    assert out["method"] == "POST"
    assert out["url"] == "https://medlitbot.test/datasets/upload/"
    assert out["sentForm"]
    assert out["disabled"]
    assert out["progress"] == [False, 25, "Uploading… 25% (5.0 MB of 20.0 MB)"]
    assert out["reading"] == ["Uploaded; reading the file…", False]
    assert out["written"] == "<html>preview</html>"
    assert out["assigned"] == "https://medlitbot.test/accounts/login/?next=/datasets/upload/"
    assert out["failed"][0].startswith("The upload stopped")
    assert out["failed"][1] is False

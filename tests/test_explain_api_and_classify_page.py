"""Explanations through the doors people use: the API endpoint and the Classify page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.plugins.browser import log_in

pytestmark = pytest.mark.django_db
TITLE = "Coronary stenting after acute myocardial infarction"
ABSTRACT = ("Patients with heart failure and coronary artery disease underwent percutaneous "
            "coronary intervention; cardiac mortality and ventricular function were followed.")


@pytest.fixture
def api(api_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_token}")
    return client


def _url(model: Any) -> str:
    return f"/api/models/{model.pk}/explain/"


def test_the_api_explains_the_predicted_labels_with_spans_into_the_text(
    api: APIClient, trained_model: Any
) -> None:
    response = api.post(_url(trained_model), {"title": TITLE, "abstract": ABSTRACT},
                        format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["model_id"] == trained_model.pk
    assert body["method"] == "linear"
    assert body["truncated_at"] is None
    assert body["text"] == f"{TITLE}\n\n{ABSTRACT}"
    predicted = api.post(f"/api/models/{trained_model.pk}/predict/", {"text": body["text"]},
                         format="json").json()["predictions"][0]
    rows = body["explanations"]
    assert [row["label"] for row in rows] == predicted["labels"]  # by default, the predicted
    row = next(row for row in rows if row["label"] == "cardiovascular")
    assert row["probability"] == pytest.approx(predicted["probabilities"]["cardiovascular"])
    assert row["predicted"] is True
    assert 0.5 < row["probability"] <= 1.0
    assert row["delta"] == 0.0
    assert row["positive"]
    # char n-grams beside the words: the terms are the words that pieces and n-grams sum into
    assert {"term", "weight"} <= set(row["positive"][0])
    assert row["positive"][0]["term"] in body["text"].lower()
    assert all(t["weight"] > 0 for t in row["positive"])
    assert all(t["weight"] < 0 for t in row["negative"])
    for start, end, _weight in row["spans"]:
        assert isinstance(start, int)
        assert isinstance(end, int)
        assert body["text"][start:end].strip() == body["text"][start:end]
    assert sum(w for _, _, w in row["spans"]) + row["base_score"] == pytest.approx(row["score"])
    top_words = {body["text"][s:e].lower() for s, e, _ in
                 sorted(row["spans"], key=lambda span: -span[2])[:5]}
    assert top_words & {"coronary", "cardiac", "heart", "myocardial", "ventricular"}


def test_the_api_takes_text_chosen_labels_and_top_k(api: APIClient, trained_model: Any) -> None:
    response = api.post(_url(trained_model), {
        "text": ABSTRACT, "labels": ["oncological", "cardiovascular"], "top_k": 2,
    }, format="json")
    assert response.status_code == 200, response.content
    rows = response.json()["explanations"]
    assert [row["label"] for row in rows] == ["oncological", "cardiovascular"]
    assert rows[0]["predicted"] is False
    assert all(len(row["positive"]) <= 2 and len(row["negative"]) <= 2 for row in rows)


@pytest.mark.parametrize(("payload", "message"), [
    ({}, "Give either text"),
    ({"text": "heart", "title": "heart"}, "Give either text"),
    ({"title": "  ", "abstract": ""}, "Give either text"),
    ({"text": "heart", "labels": ["dermatology"]}, "Unknown label 'dermatology'"),
    ({"text": "heart " * 20_001}, "At most 102,002 characters per text (MAX_TEXT_CHARS)"),
])
def test_the_api_refuses_what_it_cannot_explain(
    api: APIClient, trained_model: Any, payload: dict, message: str
) -> None:
    response = api.post(_url(trained_model), payload, format="json")
    assert response.status_code == 400
    assert message in response.content.decode()


def test_another_users_model_is_a_404_and_an_untrained_one_a_400(
    api: APIClient, trained_model: Any, rows: Any, user: Any, other_api_token: str
) -> None:
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Token {other_api_token}")
    assert other.post(_url(trained_model), {"text": TITLE}, format="json").status_code == 404
    assert api.post("/api/models/999999/explain/", {"text": TITLE},
                    format="json").status_code == 404
    assert APIClient().post(_url(trained_model), {"text": TITLE},
                            format="json").status_code in (401, 403)
    untrained = rows.model(user, status="training", name="Untrained")
    response = api.post(_url(untrained), {"text": TITLE}, format="json")
    assert response.status_code == 400
    assert "not trained" in response.json()["detail"]


def test_a_busy_process_answers_503_with_retry_after(
    api: APIClient, trained_model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from classification.mlmodels import explanations

    # Pretend the model needs gradients and every slot is taken.
    monkeypatch.setattr(explanations, "explanation_method", lambda _clf: "integrated_gradients")
    monkeypatch.setattr(explanations, "_gradient_slots", threading.BoundedSemaphore(1))
    monkeypatch.setattr(explanations, "EXPLAIN_WAIT_SECONDS", 0.01)
    explanations._gradient_slots.acquire()
    response = api.post(_url(trained_model), {"text": TITLE}, format="json")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "try again" in response.json()["detail"]


def test_the_endpoint_is_in_the_schema(api: APIClient) -> None:
    schema = api.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/models/{id}/explain/"]["post"]
    assert set(operation["responses"]) >= {"200", "400", "404", "503"}


def _classify(client: Any, model: Any, **extra: str) -> Any:
    return client.post("/classify/", {"model": model.pk, "title": TITLE, "abstract": ABSTRACT,
                                      **extra})


def test_the_classify_page_offers_explain_per_label_and_shows_highlights(
    alice_client: Any, trained_model: Any
) -> None:
    page = _classify(alice_client, trained_model).content.decode()
    buttons = re.findall(r'name="explain" value="([^"]+)"', page)
    assert sorted(buttons) == sorted(trained_model.label_names)
    assert 'data-explain-url="/classify/explain/"' in page
    assert "js/explain.js" in page
    assert 'class="hl ' not in page

    page = _classify(alice_client, trained_model, explain="cardiovascular").content.decode()
    assert 'id="explanation"' in page
    assert "Why “cardiovascular”?" in page
    marks = re.findall(r'<mark class="hl (pos|neg) l([1-5])" title="[^"]+">([^<]+)</mark>', page)
    assert marks, "no highlighted word"
    strongest = [word.lower() for sign, level, word in marks if sign == "pos" and level == "5"]
    assert strongest
    assert set(strongest) <= {w.lower() for w in re.findall(r"\w+", f"{TITLE} {ABSTRACT}")}
    assert "Pushes up" in page
    assert "Pushes down" in page
    assert "style=" not in page.split('id="explanation"')[1], "CSP: no inline styles"


def test_the_explain_card_view_answers_for_the_owner_only(
    alice_client: Any, bob_client: Any, trained_model: Any
) -> None:
    data = {"model": trained_model.pk, "title": TITLE, "abstract": ABSTRACT,
            "label": "oncological"}
    response = alice_client.post("/classify/explain/", data)
    assert response.status_code == 200
    card = response.content.decode()
    assert card.lstrip().startswith('<div class="card mt-1 explanation" id="explanation"')
    assert "Why not “oncological”?" in card
    assert "<mark class=\"hl" in card

    assert bob_client.post("/classify/explain/", data).status_code == 404
    assert alice_client.post("/classify/explain/", {**data, "model": "x"}).status_code == 404
    assert alice_client.get("/classify/explain/").status_code == 405
    unknown = alice_client.post("/classify/explain/", {**data, "label": "<b>nope</b>"})
    assert unknown.status_code == 400
    assert "&lt;b&gt;nope&lt;/b&gt;" in unknown.content.decode()
    empty = alice_client.post("/classify/explain/", {**data, "title": "", "abstract": ""})
    assert empty.status_code == 400
    assert "Give a title, an abstract, or both." in empty.content.decode()


@pytest.mark.browser
@pytest.mark.timeout(300)
def test_in_a_browser_explain_swaps_in_the_highlights_under_the_csp(
    start_app_server: Any, chromium_browser: Any, transactional_db: None, user: Any, rows: Any,
    tfidf_artifact: dict[str, Any], screenshot_dir: Any,
) -> None:
    """explain.js: the click fetches only the card; no navigation, no CSP violation."""
    model = rows.model(user, rows.dataset(user, label_names=tfidf_artifact["labels"]),
                       name="Trained TF-IDF", artifact_path=tfidf_artifact["path"],
                       label_names=tfidf_artifact["labels"])
    server = start_app_server()
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, server.url, "alice", "alice-pass-123")
    page.goto(f"{server.url}/classify/?model={model.pk}")
    page.fill("#id_title", TITLE)
    page.fill("#id_abstract", ABSTRACT)
    page.click("#classify-form button:has-text('Classify')")
    page.wait_for_selector("button.explain-button")
    page.evaluate("() => { window.sameDocument = true; }")
    page.click("button.explain-button[value='cardiovascular']")
    page.wait_for_selector("#explanation mark.hl.pos")
    assert page.evaluate("() => window.sameDocument === true"), "the page was reloaded"
    assert "Why “cardiovascular”?" in page.inner_text("#explanation h2")
    colour = page.evaluate("() => getComputedStyle(document.querySelector("
                           "'#explanation .explain-text mark.hl.pos')).backgroundColor")
    assert colour.startswith("rgba(47, 125, 79")
    assert page.locator("#explanation .terms li").count() > 0
    page.screenshot(path=str(screenshot_dir / "classify-explanation.png"), full_page=True)
    assert problems == []
    context.close()

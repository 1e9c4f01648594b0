// The Classify page's Explain buttons. Without JavaScript each button submits the article form
// again with its label and the page comes back with the explanation; with it, only the
// explanation card is fetched (classify_explain renders the same template, escaped by Django)
// and swapped in, so the text, the result and the scroll position stay as they are.
(function () {
  "use strict";
  var form = document.getElementById("classify-form");
  if (!form) return;

  function slot() {
    return document.getElementById("explanation");
  }

  function show(html) {
    var current = slot();
    var holder = document.createElement("div");
    holder.innerHTML = html; // server-rendered and auto-escaped; CSP forbids any inline script
    var card = holder.querySelector("#explanation");
    if (!card) throw new Error("no explanation in the answer");
    if (!current) return;
    current.replaceWith(card);
    card.scrollIntoView({ behavior: "smooth", block: "nearest" });
  }

  function busy(button, on) {
    button.disabled = on;
    button.classList.toggle("busy", on);
    document.querySelectorAll(".explain-button.current").forEach(function (b) {
      b.classList.remove("current");
    });
    if (!on) button.classList.add("current");
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-explain-url]") : null;
    if (!button || !window.fetch || !window.FormData) return;
    event.preventDefault();
    var data = new FormData(form);
    data.append("label", button.value);
    var current = slot();
    if (current) {
      current.classList.add("card", "mt-1", "explanation", "loading");
      current.textContent = "Explaining “" + button.value + "”…";
    }
    busy(button, true);
    fetch(button.getAttribute("data-explain-url"), {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-Requested-With": "XMLHttpRequest" },
    })
      .then(function (response) {
        return response.text().then(function (html) {
          var type = response.headers.get("Content-Type") || "";
          if (type.indexOf("text/html") !== 0 || response.status === 404) {
            throw new Error("HTTP " + response.status);
          }
          show(html); // 400 and 503 come as a card holding the message
        });
      })
      .catch(function (error) {
        var target = slot();
        if (target) target.textContent = "The explanation could not be loaded (" + error.message + ").";
      })
      .then(function () {
        busy(button, false);
      });
  });
})();

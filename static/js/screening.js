/* Screening: the keyboard-first screening page (y/n/u per label, next record prefetched so it
   shows on keydown) and the session page's panel, polled as decisions come in. */
(function () {
  "use strict";

  function csrf() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  // A refusal (403 for a reviewer removed mid-session, 404, 503) may come back as an HTML page:
  // it rejects with the server's detail when there is one, never with a JSON parse error.
  function answer(r) {
    return r.json().catch(function () { return {}; }).then(function (d) {
      if (!r.ok) throw new Error(d.detail || "The server answered " + r.status + "; nothing was changed.");
      return d;
    });
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(answer);
  }

  function screenPage(root) {
    var labels = root.getAttribute("data-labels").split("|");
    var nextUrl = root.getAttribute("data-next-url");
    var decideUrl = root.getAttribute("data-decide-url");
    var current = null, upcoming = null, answers = {}, at = 0, finished = false;
    // Answers on their way to the server, by record id: the next record asked for must not be
    // one of them, or a slow save would hand the reviewer back the record just answered.
    var inFlight = {}, saving = Promise.resolve(), asked = 0;
    var error = document.getElementById("screen-error");

    function fail(exc) {
      error.hidden = false; error.textContent = exc.message;
    }

    function excluded() {
      var ids = Object.keys(inFlight);
      if (current) ids.push(String(current.id));
      return ids.length ? "?exclude=" + ids.join(",") : "";
    }

    // Asks for the record after the one on screen (or for the one to show, when none is). Only
    // the newest question's answer counts: an older one may name a record answered since.
    function fetchNext() {
      var ticket = ++asked;
      return getJSON(nextUrl + excluded()).then(function (d) {
        if (ticket !== asked) return;
        var record = d.record && !inFlight[d.record.id] ? d.record : null;
        if (current) { upcoming = record && record.id !== current.id ? record : null; return; }
        if (record) { show(record); fetchNext(); return; }
        finished = Object.keys(inFlight).length === 0; draw();
      }, fail);
    }

    function draw() {
      document.getElementById("record").hidden = !current;
      document.getElementById("screen-done").hidden = !!current || !finished;
      if (!current) return;
      document.getElementById("record-position").textContent = "Record " + current.position + (current.ext_id ? " · " + current.ext_id : "");
      document.getElementById("record-title").textContent = current.title;
      document.getElementById("record-abstract").textContent = current.abstract;
      document.getElementById("record-note").value = current.note || "";
      var box = document.getElementById("record-labels");
      box.textContent = "";
      labels.forEach(function (label, i) {
        var row = document.createElement("div");
        row.className = "screen-label" + (i === at ? " active" : "");
        row.setAttribute("data-label", label);
        row.textContent = label + ": ";
        // The highlighted label (the one the next key answers) in the app's own badge colours.
        var value = document.createElement("span");
        value.className = "badge " + (i === at ? "running" : "local");
        value.textContent = answers[label] || current.mine[label] || "?";
        row.appendChild(value);
        box.appendChild(row);
      });
    }

    function show(record) {
      current = record; answers = {}; at = 0; draw();
    }

    function save(record, values, note) {
      return fetch(decideUrl, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
        body: JSON.stringify({ record: record.id, values: values, note: note }),
      }).then(answer).then(function () { error.hidden = true; error.textContent = ""; }, fail);
    }

    function advance() {
      var values = answers, note = document.getElementById("record-note").value, decided = current;
      inFlight[decided.id] = true;
      if (upcoming) { show(upcoming); } else { current = null; draw(); }
      upcoming = null;
      fetchNext();
      // One save at a time, in the order answered.
      saving = saving.then(function () { return save(decided, values, note); }).then(function () {
        delete inFlight[decided.id];
        if (!current || !upcoming) return fetchNext();
      });
    }

    document.addEventListener("keydown", function (event) {
      if (!current || event.target.id === "record-note") return;
      // Ctrl+R, Alt+N and the like belong to the browser, not to the decision.
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      var key = event.key.toLowerCase();
      var value = { y: "yes", n: "no", u: "unsure" }[key];
      if (value) {
        event.preventDefault();
        answers[labels[at]] = value;
        at = Math.min(labels.length - 1, at + 1);
        if (labels.every(function (l) { return answers[l]; })) { advance(); } else { draw(); }
      } else if (key === "tab" || key === "arrowdown") {
        event.preventDefault(); at = (at + 1) % labels.length; draw();
      } else if (key === "arrowup") {
        event.preventDefault(); at = (at + labels.length - 1) % labels.length; draw();
      }
    });

    fetchNext();
  }

  function sessionPanel(panel) {
    var url = panel.getAttribute("data-summary-url");
    var every = parseInt(panel.getAttribute("data-poll-ms"), 10) || 3000;
    // The conflicts list carries forms (with their CSRF token), so it is re-read from the page
    // itself, and only when the number changes: a note being typed into a form is kept.
    function refreshConflicts() {
      return fetch(window.location.href, { credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("conflicts");
          var shown = document.getElementById("conflicts");
          if (fresh && shown) shown.replaceWith(document.importNode(fresh, true));
        });
    }
    function cell(table, label, cls, text) {
      var row = document.querySelector("#" + table + " tr[data-label='" + label + "']");
      if (row) row.querySelector("." + cls).textContent = text;
    }
    function poll() {
      getJSON(url).then(function (s) {
        document.getElementById("remaining").textContent = s.remaining;
        s.stopping.forEach(function (x) {
          cell("stopping-table", x.label, "claim", x.claimable_recall.toFixed(3));
          cell("stopping-table", x.label, "needed", x.more_needed);
          cell("stopping-table", x.label, "sample", x.sampled + " / " + x.k);
          cell("stopping-table", x.label, "p", x.p_value.toFixed(4));
        });
        s.agreement.forEach(function (a) {
          cell("agreement-table", a.label, "n", a.n);
          cell("agreement-table", a.label, "pa", a.percent_agreement === null ? "–" : a.percent_agreement + "%");
          cell("agreement-table", a.label, "kappa", a.kappa_display);
        });
        // Absent while the session is blind for this person (they do not see the conflicts).
        var count = document.getElementById("conflict-count");
        if (count && count.textContent !== String(s.conflicts)) {
          refreshConflicts();
        }
        var ranking = document.getElementById("ranking");
        if (s.ranker_error) { ranking.textContent = s.ranker_error; ranking.className = "small error"; }
        else if (s.ranking_refreshed_at) { ranking.textContent = "Ranking refreshed " + s.ranking_refreshed_at; }
      }).catch(function () {});
    }
    window.setInterval(poll, every);
  }

  var root = document.getElementById("screen");
  if (root) screenPage(root);
  var panel = document.getElementById("session-panel");
  if (panel) sessionPanel(panel);
})();
